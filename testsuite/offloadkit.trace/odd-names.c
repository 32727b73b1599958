/* For trace.exp: a kernel whose name holds quotes, backslashes, control
   characters and non-ASCII bytes must still give one INFO line per event
   and a valid JSON profile.  No compiler makes such names, so this program
   plays libgomp itself (like tools/plugin-harness): it is built without
   offloading, dlopens the plugin given as its argument, provides the
   GOMP_PLUGIN_* callbacks (tools/gomp-standin.c, linked with -rdynamic;
   plugin errors are shown on stderr), and runs one region, whose
   descriptor names it oddly, on an emulated device.

   Usage: odd-names PLUGIN.so  (OFFLOADKIT_EMULATE etc. come from the
   caller).  Exit status 0 when every plugin call succeeded.  */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-abi.h"
#include "gomp-standin.h"
#include "offload-desc.h"

/* The region: doubles the int its first mapped address points to.  */
static void
region (void **vars)
{
  *(int *) vars[0] *= 2;
}

/* trace.exp expects exactly this name (also in the profile, decoded).  */
static const char *const func_names[] = {
  "odd \"quoted\" \\back\\slashed\\ \ttab\nnewline\x01 caf\xc3\xa9 \xff end"
};
static void *const funcs[] = { (void *) region };
static const unsigned char fake_image[] = "// not PTX\n";

#define FAIL(what) \
  do { fprintf (stderr, "odd-names: %s failed\n", what); return 1; } \
  while (0)

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: odd-names PLUGIN.so\n");
      return 2;
    }
  standin_init ("odd-names");
  standin_show_errors = true;
  if (!standin_open_plugin (argv[1]))
    return 2;

  struct ok_tgt_desc tgt = {
    .device_type = OK_GOMP_DEVICE_NVIDIA_PTX, .image_format = OK_IMAGE_PTX,
    .image_start = fake_image, .image_end = fake_image + sizeof fake_image,
    .num_funcs = 1, .num_vars = 0, .func_names = func_names,
    .var_names = NULL };
  struct ok_openmp_target desc = {
    .host = { funcs, funcs + 1, NULL, NULL },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .num_targets = 1, .targets = &tgt };
  unsigned version = OK_GOMP_VERSION_PACK (OK_GOMP_VERSION, OK_DEV_VERSION);

  if (p_get_num_devices () < 1)
    FAIL ("get_num_devices");
  if (!p_init_device (0))
    FAIL ("init_device");
  struct ok_addr_pair *table = NULL;
  if (p_load_image (0, version, &desc, &table) != 2)
    FAIL ("load_image");
  int value = 21;
  int *dval = p_alloc (0, sizeof value);
  void **dvars = p_alloc (0, sizeof (void *));
  if (dval == NULL || dvars == NULL)
    FAIL ("alloc");
  if (!p_host2dev (0, dval, &value, sizeof value)
      || !p_host2dev (0, dvars, &dval, sizeof dval))
    FAIL ("host2dev");
  p_run (0, (void *) table[0].start, dvars, NULL);
  value = 0;
  if (!p_dev2host (0, &value, dval, sizeof value))
    FAIL ("dev2host");
  if (value != 42)
    FAIL ("the region");
  if (!p_free (0, dval) || !p_free (0, dvars))
    FAIL ("free");
  if (!p_unload_image (0, version, &desc))
    FAIL ("unload_image");
  free (table);
  if (!p_fini_device (0))
    FAIL ("fini_device");
  puts ("odd-names: ok");
  return 0;
}
