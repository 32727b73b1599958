/* For trace.exp: a kernel whose name holds quotes, backslashes, control
   characters and non-ASCII bytes must still give one INFO line per event
   and a valid JSON profile.  No compiler makes such names, so this program
   plays libgomp itself (like tools/plugin-harness): it is built without
   offloading, dlopens the plugin given as its argument, provides the
   GOMP_PLUGIN_* callbacks (it is linked with -rdynamic), and runs one
   region, whose descriptor names it oddly, on an emulated device.

   Usage: odd-names PLUGIN.so  (OFFLOADKIT_EMULATE etc. come from the
   caller).  Exit status 0 when every plugin call succeeded.  */

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-abi.h"
#include "offload-desc.h"

void *
GOMP_PLUGIN_malloc (size_t n)
{
  void *p = malloc (n);
  if (p == NULL)
    abort ();
  return p;
}

void *
GOMP_PLUGIN_malloc_cleared (size_t n)
{
  void *p = calloc (1, n);
  if (p == NULL)
    abort ();
  return p;
}

void *
GOMP_PLUGIN_realloc (void *p, size_t n)
{
  p = realloc (p, n);
  if (p == NULL)
    abort ();
  return p;
}

void
GOMP_PLUGIN_target_task_completion (void *data)
{
  (void) data;
}

void
GOMP_PLUGIN_debug (int kind, const char *msg, ...)
{
  (void) kind;
  (void) msg;
}

void
GOMP_PLUGIN_error (const char *msg, ...)
{
  va_list ap;
  va_start (ap, msg);
  fputs ("odd-names: plugin error: ", stderr);
  vfprintf (stderr, msg, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

void
GOMP_PLUGIN_fatal (const char *msg, ...)
{
  va_list ap;
  va_start (ap, msg);
  fputs ("odd-names: plugin fatal error: ", stderr);
  vfprintf (stderr, msg, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (3);
}

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
  void *h = dlopen (argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      fprintf (stderr, "odd-names: %s\n", dlerror ());
      return 2;
    }
#define SYM(var, name) \
  *(void **) &var = dlsym (h, "GOMP_OFFLOAD_" name); \
  if (var == NULL) FAIL ("dlsym " name)
  int (*num_devices) (void);
  bool (*init_device) (int), (*fini_device) (int);
  int (*load_image) (int, unsigned, const void *, struct ok_addr_pair **);
  bool (*unload_image) (int, unsigned, const void *);
  void *(*alloc) (int, size_t);
  bool (*dev_free) (int, void *);
  bool (*host2dev) (int, void *, const void *, size_t);
  bool (*dev2host) (int, void *, const void *, size_t);
  void (*run) (int, void *, void *, void **);
  SYM (num_devices, "get_num_devices");
  SYM (init_device, "init_device");
  SYM (fini_device, "fini_device");
  SYM (load_image, "load_image");
  SYM (unload_image, "unload_image");
  SYM (alloc, "alloc");
  SYM (dev_free, "free");
  SYM (host2dev, "host2dev");
  SYM (dev2host, "dev2host");
  SYM (run, "run");

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

  if (num_devices () < 1)
    FAIL ("get_num_devices");
  if (!init_device (0))
    FAIL ("init_device");
  struct ok_addr_pair *table = NULL;
  if (load_image (0, version, &desc, &table) != 2)
    FAIL ("load_image");
  int value = 21;
  int *dval = alloc (0, sizeof value);
  void **dvars = alloc (0, sizeof (void *));
  if (dval == NULL || dvars == NULL)
    FAIL ("alloc");
  if (!host2dev (0, dval, &value, sizeof value)
      || !host2dev (0, dvars, &dval, sizeof dval))
    FAIL ("host2dev");
  run (0, (void *) table[0].start, dvars, NULL);
  value = 0;
  if (!dev2host (0, &value, dval, sizeof value))
    FAIL ("dev2host");
  if (value != 42)
    FAIL ("the region");
  if (!dev_free (0, dval) || !dev_free (0, dvars))
    FAIL ("free");
  if (!unload_image (0, version, &desc))
    FAIL ("unload_image");
  free (table);
  if (!fini_device (0))
    FAIL ("fini_device");
  puts ("odd-names: ok");
  return 0;
}
