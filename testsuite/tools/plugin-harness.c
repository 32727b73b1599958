/* Unit tests of a built offloadkit plugin, without libgomp.

   Usage: plugin-harness PLUGIN.so

   Plays libgomp's part: dlopens the plugin, provides the GOMP_PLUGIN_*
   callbacks it binds to (gomp-standin.c; this program is linked with
   -rdynamic), builds image descriptors in memory around real host
   functions and variables, and drives the GOMP_OFFLOAD_* entry points on
   emulated devices.  Prints one "PASS: name" or "FAIL: name" line per
   check (plugin.exp turns them into DejaGnu results) and exits with 1 if
   any check failed.

   Environment checks (device counts, silence without devices) each run in
   a forked child, because the plugin reads OFFLOADKIT_EMULATE once.  */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "desc-check.h"
#include "gomp-abi.h"
#include "gomp-standin.h"
#include "offload-desc.h"
#include "plugin-harness.h"

const char *plugin_path;

/* ------------------------------------------------------------------ */
/* Environment checks, each in a child process.  */

typedef void (*child_fn) (void);

struct child
{
  const char *value;
  child_fn fn;
};

static bool
child_body (void *arg)
{
  const struct child *c = arg;
  if (c->value != NULL)
    setenv ("OFFLOADKIT_EMULATE", c->value, 1);
  else
    unsetenv ("OFFLOADKIT_EMULATE");
  if (!standin_open_plugin (plugin_path))
    return false;
  c->fn ();
  standin_close_plugin ();
  return true;
}

/* Run FN in a child with OFFLOADKIT_EMULATE set to VALUE (NULL: unset).
   The child's stderr goes to a file; if STDERR_EMPTY, check that the
   plugin printed nothing there.  */
static void
in_child (const char *name, const char *value, child_fn fn, bool stderr_empty)
{
  struct child c = { value, fn };
  standin_in_child (name, child_body, &c, stderr_empty);
}

static void
child_identity (void)
{
  check ("version", p_version () == OK_GOMP_VERSION);
  check ("name", strcmp (p_get_name (), "nvptx") == 0);
  check ("type", p_get_type () == OK_GOMP_DEVICE_NVIDIA_PTX);
  check ("caps", p_get_caps () == OK_GOMP_CAP_OPENMP_400);
}

static void
child_no_devices (void)
{
  check ("count 0", p_get_num_devices () == 0);
  check ("count again 0", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

static void
child_zero (void)
{
  check ("count 0", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

static void
child_three (void)
{
  check ("count 3", p_get_num_devices () == 3);
  check ("no error", errors_now () == 0);
  int e = errors_now ();
  check ("device out of range: init fails", !p_init_device (3));
  check ("device out of range: message",
	 error_says (e, "no device 3", "has 3", NULL));
  e = errors_now ();
  check ("uninitialised device: alloc fails", p_alloc (1, 8) == NULL);
  check ("uninitialised device: message",
	 error_says (e, "not initialised", NULL));
  check ("init and fini device 2", p_init_device (2) && p_fini_device (2));
}

/* OFFLOADKIT_EMULATE as a list naming plugins: this one is "nvptx".  */
static void
child_two (void)
{
  check ("count 2", p_get_num_devices () == 2);
  check ("no error", errors_now () == 0);
}

static void
child_zero_quiet (void)
{
  check ("count 0", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

static void
child_invalid (void)
{
  check ("count 0", p_get_num_devices () == 0);
  check ("count again 0",
	 p_get_num_devices () == 0);
  check ("one error naming it",
	 error_says (0, "OFFLOADKIT_EMULATE", NULL));
}

/* ------------------------------------------------------------------ */
/* Images.  */

/* The `declare target' variables of the test image and their initial
   values as the wrapper's constructor would have recorded them.  */
static int hv_counter = 5;
static double hv_array[4] = { 1, 2, 3, 4 };
static int hv_link[8];
static unsigned char hv_snapshot[sizeof hv_counter + sizeof hv_array];
static const unsigned char *hv_snapshot_ptr;

/* A second image without a snapshot: device copies start from the host
   contents at load time.  */
static long hv2_value = 7;
static const unsigned char *hv2_snapshot_ptr;

static pthread_t region_thread;

/* The variables' device addresses on device 0 and 1 (entries of the first
   image).  */
static struct ok_addr_pair vars0[4], vars1[4];

/* Region: counter += 1; store it and the array sum at tgt_vars[0].  */
static void
region_count (void **tgt_vars)
{
  region_thread = pthread_self ();
  long *out = tgt_vars[0];
  hv_counter++;
  out[0] = hv_counter;
  out[1] = (long) (hv_array[0] + hv_array[1] + hv_array[2] + hv_array[3]);
}

/* Region using the link array both ways, as compiled code does: its body
   through the mapped address in tgt_vars[1], host functions it calls
   through the host object.  Sums the array into tgt_vars[0] as seen
   through the host object, then writes an element each way.  */
static void
region_link (void **tgt_vars)
{
  long *out = tgt_vars[0];
  int *mapped = tgt_vars[1];
  long sum = 0;
  for (int i = 0; i < 8; i++)
    sum += hv_link[i];
  out[0] = sum;
  out[1] = mapped != NULL ? mapped[7] : -1;
  hv_link[0] = 99;
  if (mapped != NULL)
    mapped[1] = 55;
}

/* Region that waits for the test to let it go.  */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static int gated_runs;
static int gated_started;

static void
region_gated (void **tgt_vars)
{
  (void) tgt_vars;
  pthread_mutex_lock (&gate_lock);
  gated_started++;
  pthread_cond_broadcast (&gate_cond);
  while (!gate_open)
    pthread_cond_wait (&gate_cond, &gate_lock);
  gated_runs++;
  pthread_mutex_unlock (&gate_lock);
}

static void
region_hv2 (void **tgt_vars)
{
  long *out = tgt_vars[0];
  out[0] = hv2_value;
  hv2_value = -1;
}

/* Region that launches another; the plugin must refuse, not hang.  */
static int nested_device;
static bool nested_refused;

static void
region_nested (void **tgt_vars)
{
  STANDIN_CATCH_FATAL (nested_refused,
		       p_run (nested_device, (void *) region_count, tgt_vars,
			      NULL));
}

/* Region that copies its own device's variable: must see the device
   value, not the host one parked there during the launch.  */
static int inner_seen;

static void
region_inner_copy (void **tgt_vars)
{
  (void) tgt_vars;
  hv_counter = 777;
  inner_seen = 0;
  p_dev2host (0, &inner_seen, (void *) vars0[0].start, sizeof inner_seen);
}

/* Region that writes a variable through the device address it is given
   in tgt_vars[1] and reads it back by name, as code with a map(always)
   clause of a declare target variable and a function it calls do: both
   must be the same place.  */
static void
region_alias (void **tgt_vars)
{
  long *out = tgt_vars[0];
  int *counter = tgt_vars[1];
  *counter = 1234;
  out[0] = hv_counter;
  hv_counter = 4321;
  out[1] = *counter;
}

/* The wrapper's "current emulated device" slot, as mkoffload's wrapper
   defines it.  */
static __thread int harness_device_num = -1;

static int *
harness_device_num_slot (void)
{
  return &harness_device_num;
}

/* Region that reports the device number the plugin set for its thread.  */
static void
region_devnum (void **tgt_vars)
{
  long *out = tgt_vars[0];
  out[0] = harness_device_num;
}

/* The wrapper's device exit slot (descriptor version 4), as mkoffload's
   wrapper defines it, counting the plugin's requests for it.  */
static __thread ok_device_exit_fn *harness_device_exit;
static int harness_exit_slot_asks;

static ok_device_exit_fn **
harness_device_exit_slot (void)
{
  __atomic_add_fetch (&harness_exit_slot_asks, 1, __ATOMIC_RELAXED);
  return &harness_device_exit;
}

/* Region that reports whether the plugin gave its thread a device exit.  */
static void
region_exit_slot (void **tgt_vars)
{
  long *out = tgt_vars[0];
  out[0] = harness_device_exit != NULL;
}

static void *const funcs[] = { (void *) region_count, (void *) region_link,
			       (void *) region_gated, (void *) region_nested,
			       (void *) region_inner_copy, (void *) region_alias,
			       (void *) region_devnum,
			       (void *) region_exit_slot };
static void *const vars[] = {
  &hv_counter, (void *) sizeof hv_counter,
  hv_array, (void *) sizeof hv_array,
  hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
};
#define NFUNCS (sizeof funcs / sizeof funcs[0])
#define NVARS (sizeof vars / sizeof vars[0] / 2)
_Static_assert (sizeof vars0 / sizeof vars0[0] == NVARS + 1,
		"vars0 holds the variables and device_num");

static const unsigned char fake_ptx[] = "// not really PTX\n";
static const char *const func_names[] = { "f0", "f1", "f2", "f3", "f4", "f5",
					  "f6", "f7" };
_Static_assert (sizeof func_names / sizeof func_names[0] == NFUNCS,
		"one name per function");
static const char *const var_names[] = { "hv_counter", "hv_array",
					 "hv_link" };

static struct ok_tgt_desc tgt;
static struct ok_openmp_target desc;

static void *const funcs2[] = { (void *) region_hv2 };
static void *const vars2[] = { &hv2_value, (void *) sizeof hv2_value };
static const char *const func_names2[] = { "g0" };
static const char *const var_names2[] = { "hv2_value" };
static struct ok_tgt_desc tgt2;
static struct ok_openmp_target desc2;

static const unsigned version = OK_GOMP_VERSION_PACK (1, OK_DEV_VERSION);

static void
build_descriptors (void)
{
  /* Initial values differ from the current host values on purpose.  */
  int c0 = 42;
  double a0[4] = { 10, 20, 30, 40 };
  memcpy (hv_snapshot, &c0, sizeof c0);
  memcpy (hv_snapshot + sizeof c0, a0, sizeof a0);
  hv_snapshot_ptr = hv_snapshot;

  tgt = (struct ok_tgt_desc) {
    .device_type = OK_GOMP_DEVICE_NVIDIA_PTX, .image_format = OK_IMAGE_PTX,
    .image_start = fake_ptx, .image_end = fake_ptx + sizeof fake_ptx,
    .num_funcs = NFUNCS, .num_vars = NVARS,
    .func_names = func_names, .var_names = var_names };
  desc = (struct ok_openmp_target) {
    .host = { funcs, funcs + NFUNCS, vars, vars + 2 * NVARS },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .num_targets = 1, .targets = &tgt,
    .host_var_init = &hv_snapshot_ptr,
    .device_num_slot = harness_device_num_slot,
    .device_exit_slot = harness_device_exit_slot };

  tgt2 = tgt;
  tgt2.num_funcs = 1;
  tgt2.num_vars = 1;
  tgt2.func_names = func_names2;
  tgt2.var_names = var_names2;
  desc2 = desc;
  desc2.host = (struct ok_host_table) { funcs2, funcs2 + 1, vars2, vars2 + 2 };
  desc2.targets = &tgt2;
  desc2.host_var_init = &hv2_snapshot_ptr;
}

static bool
entry_is (const struct ok_addr_pair *e, uintptr_t start, size_t size)
{
  return e->start == start && e->end - e->start == size;
}

/* A load that must fail with a message containing NEEDLE1 and NEEDLE2.  */
static void
bad_load (const char *name, unsigned ver, const void *data,
	  const char *needle1, const char *needle2)
{
  struct ok_addr_pair *table = NULL;
  int e = errors_now ();
  char buf[256];
  int n = p_load_image (0, ver, data, &table);
  snprintf (buf, sizeof buf, "%s: load_image returns -1", name);
  check (buf, n == -1);
  snprintf (buf, sizeof buf, "%s: message", name);
  check (buf, error_says (e, needle1, needle2, NULL));
  if (n > 0)
    {
      free (table);
      p_unload_image (0, ver, data);
    }
}

static void
test_bad_images (void)
{
  struct ok_openmp_target d;
  struct ok_tgt_desc t;
  char found[64], devver[16];

  d = desc;
  d.magic = 0x12345678;
  bad_load ("bad magic", version, &d, "0x54494b4f", "0x12345678");

  /* Versions 2 (an earlier mkoffload's) to OK_DESC_VERSION are read; one
     before or after them is refused with the range.  */
  snprintf (found, sizeof found, "expected %u to %u", OK_DESC_VERSION_MIN,
	    OK_DESC_VERSION);
  d = desc;
  d.desc_version = 7;
  bad_load ("bad descriptor version", version, &d, "version 7", found);
  d.desc_version = OK_DESC_VERSION_MIN - 1;
  bad_load ("descriptor version 1", version, &d, "version 1,", found);
  d.desc_version = OK_DESC_VERSION + 1;
  char next[32], next_name[48];
  snprintf (next, sizeof next, "version %u,", OK_DESC_VERSION + 1);
  snprintf (next_name, sizeof next_name, "descriptor version %u",
	    OK_DESC_VERSION + 1);
  bad_load (next_name, version, &d, next, found);

  /* OpenACC dimensions with a flag this plugin does not know.  */
  struct ok_oacc_dims dims[NFUNCS] = { { { 0 }, 0 } };
  dims[NFUNCS - 1].flags = OK_OACC_FN | 0x4;
  d = desc;
  t = tgt;
  t.oacc_dims = dims;
  d.targets = &t;
  bad_load ("OpenACC dimension flags", version, &d, "flags 0x5",
	    "OK_OACC_FN");

  d = desc;
  d.dev_version = 3;
  snprintf (found, sizeof found, "expected %u", OK_DEV_VERSION);
  snprintf (devver, sizeof devver, "%u", OK_DEV_VERSION);
  bad_load ("bad descriptor device version", version, &d, "device version 3",
	    found);

  bad_load ("bad device version in version word",
	    OK_GOMP_VERSION_PACK (1, 0x1234), &desc, "4660", devver);
  bad_load ("newer libgomp version", OK_GOMP_VERSION_PACK (2, OK_DEV_VERSION),
	    &desc, "version 2", "version 1");
  bad_load ("GCC-format image",
	    OK_GOMP_VERSION_PACK (1, OK_GCC_DEV_VERSION_NVPTX), &desc,
	    "device version 1", "rebuild with offloadkit's mkoffload");
  bad_load ("no descriptor", version, NULL, "no offload descriptor", NULL);

  d = desc;
  t = tgt;
  t.device_type = OK_GOMP_DEVICE_GCN;
  d.targets = &t;
  bad_load ("wrong device type", version, &d, "device type 5",
	    "found device type: 8");

  d = desc;
  t = tgt;
  t.num_funcs = NFUNCS + 1;
  d.targets = &t;
  char counts[64], nfuncs[32];
  snprintf (nfuncs, sizeof nfuncs, "%zu functions", NFUNCS + 1);
  snprintf (counts, sizeof counts, "host table %zu and %zu", NFUNCS, NVARS);
  bad_load ("function count mismatch", version, &d, nfuncs, counts);

  d = desc;
  t = tgt;
  t.num_vars = 1;
  d.targets = &t;
  bad_load ("variable count mismatch", version, &d, "1 variables", counts);

  d = desc;
  d.host.vars_end = vars + 2 * NVARS - 1;
  bad_load ("odd variable table", version, &d, "malformed host table", NULL);

  d = desc;
  d.flags = 4;
  bad_load ("descriptor flags", version, &d, "flags 0x4", "expected 0");

  d = desc;
  d.targets = NULL;
  bad_load ("no image table", version, &d, "no image table", NULL);

  d = desc;
  t = tgt;
  t.flags = 1;
  d.targets = &t;
  bad_load ("image flags", version, &d, "flags 0x1", "expected 0");

  d = desc;
  t = tgt;
  t.func_names = NULL;
  d.targets = &t;
  bad_load ("no function names", version, &d, "name table", NULL);

  int e = errors_now ();
  check ("unload of unknown image fails",
	 !p_unload_image (0, version, &desc2));
  check ("unload of unknown image: message",
	 error_says (e, "not loaded", NULL));
}

/* Load DESC on device DEV; return the table or NULL.  */
static struct ok_addr_pair *
load (int dev, const struct ok_openmp_target *d, int expect)
{
  struct ok_addr_pair *table = NULL;
  int n = p_load_image (dev, version, d, &table);
  if (n != expect)
    {
      fprintf (stderr, "  (load_image on %d returned %d, expected %d: %s)\n",
	       dev, n, expect, last_error ());
      free (table);
      return NULL;
    }
  return table;
}

static int
dev_int (int dev, uintptr_t addr)
{
  int v = 0;
  p_dev2host (dev, &v, (void *) addr, sizeof v);
  return v;
}

/* A descriptor of version 2, as an earlier mkoffload laid it out: its
   targets array has the shorter entries.  A gcn image comes first, so
   that the nvptx one is found only at version 2's stride.  */
static void
test_desc_v2 (void)
{
  struct ok_tgt_desc_v2 v2[2];
  memset (v2, 0, sizeof v2);
  v2[0].device_type = OK_GOMP_DEVICE_GCN;
  v2[0].image_format = OK_IMAGE_GCN;
  v2[0].arch = 0x906;
  v2[0].image_start = v2[0].image_end = fake_ptx;
  v2[1].device_type = tgt.device_type;
  v2[1].image_format = tgt.image_format;
  v2[1].image_start = tgt.image_start;
  v2[1].image_end = tgt.image_end;
  v2[1].num_funcs = tgt.num_funcs;
  v2[1].num_vars = tgt.num_vars;
  v2[1].func_names = tgt.func_names;
  v2[1].var_names = tgt.var_names;
  struct ok_openmp_target d = desc;
  d.desc_version = 2;
  d.num_targets = 2;
  d.targets = (const struct ok_tgt_desc *) (const void *) v2;

  check ("version 2: the second target found at its stride",
	 ok_desc_target_at (&d, 1) == (const void *) &v2[1]);
  check ("version 2: no OpenACC dimensions",
	 ok_desc_oacc_dims (&d, ok_desc_target_at (&d, 1)) == NULL);
  struct ok_addr_pair *t = load (0, &d, NFUNCS + NVARS + 1);
  check ("version 2: loads", t != NULL);
  if (t == NULL)
    return;
  bool funcs_ok = true;
  for (size_t i = 0; i < NFUNCS; i++)
    funcs_ok &= entry_is (&t[i], (uintptr_t) funcs[i], 1);
  check ("version 2: function entries", funcs_ok);
  free (t);
  check ("version 2: unloads", p_unload_image (0, version, &d));
}

/* A descriptor of version 3 ends before device_exit_slot: the plugin
   must not read it (here it is there, and counts).  */
static void
test_desc_v3 (void)
{
  struct ok_openmp_target d = desc;
  d.desc_version = 3;
  int asks = __atomic_load_n (&harness_exit_slot_asks, __ATOMIC_RELAXED);
  struct ok_addr_pair *t = load (0, &d, NFUNCS + NVARS + 1);
  check ("version 3: loads", t != NULL);
  if (t == NULL)
    return;
  free (t);
  long *out = p_alloc (0, sizeof (long));
  void **tv = p_alloc (0, sizeof (void *));
  p_host2dev (0, tv, &out, sizeof out);
  p_run (0, (void *) region_exit_slot, tv, NULL);
  long res = -1;
  p_dev2host (0, &res, out, sizeof res);
  check ("version 3: no device exit for the region", res == 0);
  check ("version 3: its device exit slot never read",
	 __atomic_load_n (&harness_exit_slot_asks, __ATOMIC_RELAXED) == asks);
  p_free (0, out);
  p_free (0, tv);
  check ("version 3: unloads", p_unload_image (0, version, &d));
}

static void
test_load_table (void)
{
  struct ok_addr_pair *t = load (0, &desc, NFUNCS + NVARS + 1);
  check ("load_image count", t != NULL);
  if (t == NULL)
    return;
  bool funcs_ok = true;
  for (size_t i = 0; i < NFUNCS; i++)
    funcs_ok &= entry_is (&t[i], (uintptr_t) funcs[i], 1);
  check ("load_image: function entries", funcs_ok);
  const struct ok_addr_pair *v = &t[NFUNCS];
  check ("load_image: int variable size", entry_is (&v[0], v[0].start, 4));
  check ("load_image: array variable size",
	 entry_is (&v[1], v[1].start, sizeof hv_array));
  check ("load_image: link variable is a pointer slot",
	 entry_is (&v[2], v[2].start, sizeof (void *)));
  /* An ordinary variable's device address is its host global, so that a
     region reaches it at one place by name and by address; its device
     bytes are kept apart (checked by value below).  */
  check ("load_image: variables at their host addresses",
	 v[0].start == (uintptr_t) &hv_counter
	 && v[1].start == (uintptr_t) hv_array);
  check ("load_image: link variable has its own slot",
	 v[2].start != (uintptr_t) hv_link);
  check ("load_image: device_num entry",
	 v[3].start != 0 && v[3].end - v[3].start == sizeof (int));
  check ("load_image: initial value from the snapshot",
	 dev_int (0, v[0].start) == 42);
  double a[4] = { 0 };
  p_dev2host (0, a, (void *) v[1].start, sizeof a);
  check ("load_image: array from the snapshot", a[0] == 10 && a[3] == 40);
  void *slot = (void *) 1;
  p_dev2host (0, &slot, (void *) v[2].start, sizeof slot);
  check ("load_image: link slot starts NULL", slot == NULL);
  int devnum = 0;
  check ("device_num: host2dev", p_host2dev (0, (void *) v[3].start, &devnum,
					     sizeof devnum));
  check ("host variables untouched by loading",
	 hv_counter == 5 && hv_array[0] == 1);

  int e = errors_now ();
  struct ok_addr_pair *t2 = NULL;
  check ("same image twice: -1", p_load_image (0, version, &desc, &t2) == -1);
  check ("same image twice: message", error_says (e, "already loaded", NULL));

  e = errors_now ();
  check ("free of a variable copy fails", !p_free (0, (void *) v[0].start));
  check ("free of a variable copy: message",
	 error_says (e, "loaded image", NULL));
  free (t);
}

static void
test_memory (void)
{
  unsigned char buf[100], back[100];
  unsigned char *p = p_alloc (0, 100);
  check ("alloc", p != NULL);
  if (p == NULL)
    return;
  memset (back, 0, sizeof back);
  check ("dev2host", p_dev2host (0, back, p, 100));
  check ("new memory is poisoned", back[0] == 0xa5 && back[99] == 0xa5);
  for (int i = 0; i < 100; i++)
    buf[i] = (unsigned char) i;
  check ("host2dev", p_host2dev (0, p, buf, 100));
  memset (back, 0, sizeof back);
  p_dev2host (0, back, p, 100);
  check ("round trip", memcmp (buf, back, 100) == 0);
  unsigned char *q = p_alloc (0, 50);
  check ("dev2dev", q != NULL && p_dev2dev (0, q, p + 10, 50));
  p_dev2host (0, back, q, 50);
  check ("dev2dev contents", memcmp (back, buf + 10, 50) == 0);
  check ("zero-length copy", p_host2dev (0, p + 100, buf, 0));

  int e = errors_now ();
  check ("copy past the end fails", !p_host2dev (0, p + 90, buf, 20));
  check ("copy past the end: message",
	 error_says (e, "invalid size: copy to device memory",
		     "runs past the end of the allocation", NULL));
  e = errors_now ();
  check ("copy from past the end fails", !p_dev2host (0, back, p + 95, 10));
  check ("copy from past the end: message",
	 error_says (e, "invalid size: copy from device memory", NULL));
  e = errors_now ();
  check ("copy to host memory fails", !p_host2dev (0, back, buf, 10));
  check ("copy to host memory: message",
	 error_says (e, "invalid device address",
		     "is not inside one live allocation", NULL));
  e = errors_now ();
  check ("dev2dev across allocations fails", !p_dev2dev (0, q, p + 60, 50));
  check ("dev2dev across allocations: message",
	 error_says (e, "invalid size", "runs past the end", NULL));
  e = errors_now ();
  check ("free of an inner pointer fails", !p_free (0, p + 1));
  /* GCC's nvptx plugin's words, whole; the detail in the debug output.  */
  check ("free of an inner pointer: message",
	 error_says (e, "invalid device address", NULL)
	 && strcmp (last_error (), "invalid device address") == 0
	 && strstr (last_debug (), "not at its start") != NULL);

  void *z1 = p_alloc (0, 0), *z2 = p_alloc (0, 0);
  check ("alloc (0) gives unique pointers", z1 && z2 && z1 != z2);
  check ("free of alloc (0)", p_free (0, z1) && p_free (0, z2));
  check ("free", p_free (0, p) && p_free (0, q));
  e = errors_now ();
  check ("double free fails", !p_free (0, p));
  check ("double free: message",
	 error_says (e, "not device memory", "freed already", NULL));
  e = errors_now ();
  check ("copy to freed memory fails", !p_host2dev (0, q, buf, 1));
  check ("copy to freed memory: message", error_says (e, "live", NULL));
  check ("free (NULL) is harmless", p_free (0, NULL));
}


static void
test_run (void)
{
  long *out = p_alloc (0, 2 * sizeof (long));
  void **tv = p_alloc (0, sizeof (void *));
  p_host2dev (0, tv, &out, sizeof out);

  p_run (0, (void *) region_count, tv, NULL);
  long res[2] = { 0, 0 };
  p_dev2host (0, res, out, sizeof res);
  check ("run: region saw the device value", res[0] == 43);
  check ("run: region saw the device array", res[1] == 100);
  check ("run: host variable unchanged", hv_counter == 5);
  check ("run: device variable changed", dev_int (0, vars0[0].start) == 43);
  check ("run: on another thread",
	 !pthread_equal (region_thread, pthread_self ()));

  int v = 1000;
  p_host2dev (0, (void *) vars0[0].start, &v, sizeof v);
  void *args[] = { (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_NUM_TEAMS
					 | (4 << OK_GOMP_TARGET_ARG_VALUE_SHIFT)),
		   (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_THREAD_LIMIT
					 | OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM),
		   (void *) (uintptr_t) 64, NULL };
  p_run (0, (void *) region_count, tv, args);
  check ("run: target arguments decoded",
	 strstr (last_debug (), "num_teams 4, thread_limit 64") != NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("run after host2dev to a variable", res[0] == 1001);
  check ("run: host variable still unchanged", hv_counter == 5);

  /* Entries for one device type carry that device's own ids (GCN's id 1
     is a pointer to kernel attributes), so only all-device entries
     count; and a value word of 0 is a value, not the end.  */
  static int attrs;
  void *args2[] = {
    (void *) (uintptr_t) (OK_GOMP_DEVICE_NVIDIA_PTX
			  | OK_GOMP_TARGET_ARG_NUM_TEAMS
			  | (9 << OK_GOMP_TARGET_ARG_VALUE_SHIFT)),
    (void *) (uintptr_t) (OK_GOMP_DEVICE_NVIDIA_PTX
			  | OK_GOMP_TARGET_ARG_NUM_TEAMS
			  | OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM), &attrs,
    (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_THREAD_LIMIT
			  | OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM), NULL,
    (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_NUM_TEAMS
			  | (3 << OK_GOMP_TARGET_ARG_VALUE_SHIFT)),
    NULL };
  p_run (0, (void *) region_count, tv, args2);
  check ("run: device-specific target arguments ignored, a zero value read",
	 strstr (last_debug (), "num_teams 3, thread_limit 0") != NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("run with device-specific target arguments", res[0] == 1002);

  /* Link variable: map a buffer and point the slot at it, as libgomp
     does.  */
  int pattern[8];
  for (int i = 0; i < 8; i++)
    pattern[i] = i + 1;
  memset (hv_link, 0, sizeof hv_link);
  int *buf = p_alloc (0, sizeof pattern);
  void **tv2 = p_alloc (0, 2 * sizeof (void *));
  void *tv2_init[2] = { out, buf };
  p_host2dev (0, tv2, tv2_init, sizeof tv2_init);
  p_host2dev (0, buf, pattern, sizeof pattern);
  p_host2dev (0, (void *) vars0[2].start, &buf, sizeof buf);
  p_run (0, (void *) region_link, tv2, NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("link variable: host object shows the mapped data", res[0] == 36);
  check ("link variable: mapped address shows the mapped data", res[1] == 8);
  int back[8];
  p_dev2host (0, back, buf, sizeof back);
  check ("link variable: write through the host object kept",
	 back[0] == 99 && back[7] == 8);
  check ("link variable: write through the mapped address kept",
	 back[1] == 55);
  check ("link variable: host untouched", hv_link[0] == 0 && hv_link[1] == 0
	 && hv_link[7] == 0);
  /* Unmapped again (libgomp leaves the slot dangling): must not crash.  */
  int e = errors_now ();
  p_free (0, buf);
  void *tv2_none[2] = { out, NULL };
  p_host2dev (0, tv2, tv2_none, sizeof tv2_none);
  p_run (0, (void *) region_link, tv2, NULL);
  p_dev2host (0, res, out, sizeof res);
  /* The region used the host object then, as host fallback would.  */
  check ("link variable: dangling slot ignored",
	 res[0] == 0 && errors_now () == e);
  hv_link[0] = 0;
  p_free (0, tv2);
  check ("run: no errors", true);

  int before = dev_int (0, vars0[0].start);
  p_run (0, (void *) region_inner_copy, tv, NULL);
  check ("copy inside a region sees the device value",
	 inner_seen == 777 && hv_counter == 5
	 && dev_int (0, vars0[0].start) == 777);
  p_host2dev (0, (void *) vars0[0].start, &before, sizeof before);

  void **tv3 = p_alloc (0, 2 * sizeof (void *));
  void *tv3_init[2] = { out, (void *) vars0[0].start };
  p_host2dev (0, tv3, tv3_init, sizeof tv3_init);
  p_run (0, (void *) region_alias, tv3, NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("variable: write through the device address seen by name",
	 res[0] == 1234);
  check ("variable: write by name seen through the device address",
	 res[1] == 4321 && dev_int (0, vars0[0].start) == 4321);
  check ("variable: host untouched by either", hv_counter == 5);
  p_host2dev (0, (void *) vars0[0].start, &before, sizeof before);
  p_free (0, tv3);

  /* libgomp stores its number of the device in the image's device_num;
     the region's thread gets it through the wrapper's slot.  */
  int devnum = 7;
  p_host2dev (0, (void *) vars0[3].start, &devnum, sizeof devnum);
  p_run (0, (void *) region_devnum, tv, NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("device number set for the region", res[0] == 7);
  check ("device number not set for the launching thread",
	 harness_device_num == -1);
  devnum = 0;
  p_host2dev (0, (void *) vars0[3].start, &devnum, sizeof devnum);

  /* And, from descriptor version 4, the device exit of Fortran STOP.  */
  p_run (0, (void *) region_exit_slot, tv, NULL);
  p_dev2host (0, res, out, sizeof res);
  check ("device exit set for the region", res[0] == 1);
  check ("device exit not set for the launching thread",
	 harness_device_exit == NULL);

  /* Nested launches, same device and another one.  */
  for (int d = 0; d < 2; d++)
    {
      int e = errors_now ();
      nested_device = d;
      p_run (0, (void *) region_nested, tv, NULL);
      check (d == 0 ? "nested launch on the same device refused"
	     : "nested launch on another device refused", nested_refused);
      check (d == 0 ? "nested launch: message" : "nested launch 2: message",
	     error_says (e, "inside a target region", NULL));
    }

  p_free (0, out);
  p_free (0, tv);
}

static bool copier_done;

static void *
copier (void *arg)
{
  (void) arg;
  int v = 0;
  p_dev2host (0, &v, (void *) vars0[0].start, sizeof v);
  pthread_mutex_lock (&gate_lock);
  copier_done = true;
  pthread_mutex_unlock (&gate_lock);
  return NULL;
}

static void
test_async (void)
{
  int token1, token2;
  completions_reset ();
  gate_open = false;
  gated_runs = 0;
  p_async_run (0, (void *) region_gated, NULL, NULL, &token1);
  p_async_run (0, (void *) region_gated, NULL, NULL, &token2);
  check ("async_run returns before the region ends",
	 completions_now () == 0 && gated_runs == 0);
  pthread_mutex_lock (&gate_lock);
  gate_open = true;
  pthread_cond_broadcast (&gate_cond);
  pthread_mutex_unlock (&gate_lock);
  wait_completions (2, 10);
  check ("async_run: both completions called", completions_now () == 2);
  check ("async_run: in order", last_completion () == &token2);

  /* While a region runs, copies to variable copies wait for it; copies to
     other memory do not.  */
  gate_open = false;
  completions_reset ();
  gated_started = 0;
  p_async_run (0, (void *) region_gated, NULL, NULL, &token1);
  /* Start the copier only once the region is running (and so holds the
     device's variables), or it could copy before the region begins.  */
  pthread_mutex_lock (&gate_lock);
  while (gated_started == 0)
    pthread_cond_wait (&gate_cond, &gate_lock);
  pthread_mutex_unlock (&gate_lock);
  pthread_t th;
  copier_done = false;
  pthread_create (&th, NULL, copier, NULL);
  void *user = p_alloc (0, 16);
  int zero = 0;
  check ("copy to plain memory during a region",
	 p_host2dev (0, user, &zero, sizeof zero));
  p_free (0, user);
  struct timespec pause = { 0, 200 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  pthread_mutex_lock (&gate_lock);
  bool early = copier_done;
  gate_open = true;
  pthread_cond_broadcast (&gate_cond);
  pthread_mutex_unlock (&gate_lock);
  pthread_join (th, NULL);
  wait_completions (1, 10);
  check ("copy to a variable waits for the running region",
	 !early && copier_done && gated_runs == 3);

  /* A synchronous run queued behind asynchronous ones waits for them.  */
  gate_open = false;
  completions_reset ();
  p_async_run (1, (void *) region_gated, NULL, NULL, &token1);
  pthread_mutex_lock (&gate_lock);
  gate_open = true;
  pthread_cond_broadcast (&gate_cond);
  pthread_mutex_unlock (&gate_lock);
  p_run (1, (void *) region_gated, NULL, NULL);
  int c = completions_now ();
  check ("run after async_run: queue order", c == 1 && gated_runs == 5);
}

/* Two host threads hammer two devices at once.  */
struct hammer
{
  int dev;
  uintptr_t counter;
  long *out;
  void **tv;
};

static void *
hammer (void *arg)
{
  struct hammer *h = arg;
  for (int i = 0; i < 200; i++)
    {
      p_run (h->dev, (void *) region_count, h->tv, NULL);
      int v = 0;
      p_dev2host (h->dev, &v, (void *) h->counter, sizeof v);
    }
  return NULL;
}

static void
test_two_devices (void)
{
  struct ok_addr_pair *t = load (1, &desc, NFUNCS + NVARS + 1);
  check ("second device: load", t != NULL);
  if (t == NULL)
    return;
  memcpy (vars1, t + NFUNCS, sizeof vars1);
  free (t);
  check ("second device: initial value", dev_int (1, vars1[0].start) == 42);
  check ("second device: own copies",
	 dev_int (0, vars0[0].start) != dev_int (1, vars1[0].start));

  int e = errors_now ();
  void *mem1 = p_alloc (1, 4);
  check ("device 0 rejects device 1's memory",
	 !p_dev2host (0, &(int) { 0 }, mem1, 4));
  check ("device 0 rejects device 1's memory: message",
	 error_says (e, "live", NULL));
  p_free (1, mem1);

  struct hammer h[2];
  int start[2] = { 0, 0 };
  for (int d = 0; d < 2; d++)
    {
      h[d].dev = d;
      h[d].counter = (d == 0 ? vars0 : vars1)[0].start;
      h[d].out = p_alloc (d, 2 * sizeof (long));
      h[d].tv = p_alloc (d, sizeof (void *));
      p_host2dev (d, h[d].tv, &h[d].out, sizeof h[d].out);
      start[d] = dev_int (d, h[d].counter);
    }
  pthread_t th[2];
  for (int d = 0; d < 2; d++)
    pthread_create (&th[d], NULL, hammer, &h[d]);
  for (int d = 0; d < 2; d++)
    pthread_join (th[d], NULL);
  check ("concurrent runs: device 0 counted",
	 dev_int (0, h[0].counter) == start[0] + 200);
  check ("concurrent runs: device 1 counted",
	 dev_int (1, h[1].counter) == start[1] + 200);
  check ("concurrent runs: host untouched", hv_counter == 5);
  for (int d = 0; d < 2; d++)
    {
      p_free (d, h[d].out);
      p_free (d, h[d].tv);
    }
}

/* Unloads DESC2 from device 0 on a thread of its own (see
   test_unload_behind_nowait).  */
static bool unloaded, unload_done;

static void *
unloader (void *arg)
{
  (void) arg;
  bool ok = p_unload_image (0, version, &desc2);
  pthread_mutex_lock (&gate_lock);
  unloaded = ok;
  unload_done = true;
  pthread_cond_broadcast (&gate_cond);
  pthread_mutex_unlock (&gate_lock);
  return NULL;
}

/* An image unloaded while a nowait region of its device is still queued
   (behind a region of another device, which the emulated devices run
   one at a time): the unload waits for the region, which runs, and both
   complete.  It once deadlocked: the unload held the device's images
   while waiting for the region, which needed them.  */
static bool
test_unload_behind_nowait (void)
{
  int token1, token2;
  gate_open = false;
  gated_started = 0;
  gated_runs = 0;
  unload_done = false;
  completions_reset ();
  p_async_run (1, (void *) region_gated, NULL, NULL, &token1);
  pthread_mutex_lock (&gate_lock);
  while (gated_started == 0)
    pthread_cond_wait (&gate_cond, &gate_lock);
  pthread_mutex_unlock (&gate_lock);
  p_async_run (0, (void *) region_gated, NULL, NULL, &token2);
  pthread_t th;
  pthread_create (&th, NULL, unloader, NULL);
  struct timespec pause = { 0, 200 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  pthread_mutex_lock (&gate_lock);
  gate_open = true;
  pthread_cond_broadcast (&gate_cond);
  struct timespec limit;
  clock_gettime (CLOCK_REALTIME, &limit);
  limit.tv_sec += 20;
  while (!unload_done
	 && pthread_cond_timedwait (&gate_cond, &gate_lock, &limit) == 0)
    ;
  bool done = unload_done;
  pthread_mutex_unlock (&gate_lock);
  check ("unload behind a queued nowait region: returns", done);
  if (!done)
    {
      /* The threads that hang hold the plugin's locks: stop here.  */
      fflush (stdout);
      _exit (check_summary ());
    }
  pthread_join (th, NULL);
  wait_completions (2, 10);
  check ("unload behind a queued nowait region: both regions ran and"
	 " completed", gated_runs == 2 && completions_now () == 2);
  return unloaded;
}

static void
test_second_image (void)
{
  struct ok_addr_pair *t = load (0, &desc2, 3);
  check ("second image: load", t != NULL);
  if (t == NULL)
    return;
  check ("second image: value from the host without snapshot",
	 dev_int (0, t[1].start) == 7);
  long *out = p_alloc (0, 2 * sizeof (long));
  void **tv = p_alloc (0, sizeof (void *));
  p_host2dev (0, tv, &out, sizeof out);
  long v = 0;
  p_run (0, (void *) region_hv2, tv, NULL);
  p_dev2host (0, &v, out, sizeof v);
  check ("second image: run", v == 7 && hv2_value == 7);
  long dv = 0;
  p_dev2host (0, &dv, (void *) t[1].start, sizeof dv);
  check ("second image: device write", dv == -1);
  /* The first image's variables are swapped too.  */
  p_run (0, (void *) region_count, tv, NULL);
  check ("two images: both swapped", hv_counter == 5 && hv2_value == 7);
  p_free (0, out);
  p_free (0, tv);
  check ("second image: unload", test_unload_behind_nowait ());
  int e = errors_now ();
  check ("second image: copy to unloaded variable fails",
	 !p_host2dev (0, (void *) t[1].start, &v, sizeof v));
  check ("second image: message", error_says (e, "live", NULL));
  free (t);
}

static void
test_reload (void)
{
  check ("unload", p_unload_image (0, version, &desc));
  int e = errors_now ();
  check ("unload twice fails", !p_unload_image (0, version, &desc));
  check ("unload twice: message", error_says (e, "not loaded", NULL));
  struct ok_addr_pair *t = load (0, &desc, NFUNCS + NVARS + 1);
  check ("reload", t != NULL);
  if (t == NULL)
    return;
  check ("reload: fresh initial value",
	 dev_int (0, t[NFUNCS].start) == 42);
  free (t);
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: %s PLUGIN.so\n", argv[0]);
      return 2;
    }
  plugin_path = argv[1];
  standin_init ("plugin-harness");
  standin_verbose = getenv ("HARNESS_VERBOSE") != NULL;

  in_child ("identity", NULL, child_identity, true);
  in_child ("no devices", NULL, child_no_devices, true);
  in_child ("OFFLOADKIT_EMULATE=0", "0", child_zero, true);
  in_child ("OFFLOADKIT_EMULATE=", "", child_zero, true);
  in_child ("OFFLOADKIT_EMULATE=3", "3", child_three, false);
  in_child ("OFFLOADKIT_EMULATE=abc", "abc", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=-1", "-1", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=2x", "2x", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=99999", "99999", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=nvptx:2", "nvptx:2", child_two, false);
  in_child ("OFFLOADKIT_EMULATE=gcn:1,nvptx:2", "gcn:1,nvptx:2", child_two,
	    false);
  in_child ("OFFLOADKIT_EMULATE=gcn:3", "gcn:3", child_zero_quiet, true);
  in_child ("OFFLOADKIT_EMULATE=nvptx:", "nvptx:", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=:2", ":2", child_invalid, false);
  in_child ("OFFLOADKIT_EMULATE=nvptx:2,gcn", "nvptx:2,gcn", child_invalid,
	    false);
  abi_tests ();

  setenv ("OFFLOADKIT_EMULATE", "2", 1);
  if (!standin_open_plugin (plugin_path))
    return 2;
  check ("two emulated devices", p_get_num_devices () == 2);
  check ("init devices", p_init_device (0) && p_init_device (1));
  build_descriptors ();
  test_bad_images ();
  test_desc_v2 ();
  test_desc_v3 ();
  test_load_table ();

  /* Keep the first image's variable entries for the later tests.  */
  {
    struct ok_addr_pair *t = NULL;
    /* Reload to learn the addresses (load_image's table was freed).  */
    p_unload_image (0, version, &desc);
    t = load (0, &desc, NFUNCS + NVARS + 1);
    if (t != NULL)
      memcpy (vars0, t + NFUNCS, sizeof vars0);
    free (t);
  }
  test_memory ();
  test_run ();
  test_async ();
  test_two_devices ();
  test_second_image ();
  test_reload ();

  check ("fini device 0", p_fini_device (0));
  check ("fini device 1", p_fini_device (1));
  int e = errors_now ();
  check ("alloc after fini fails", p_alloc (0, 1) == NULL);
  check ("alloc after fini: message", error_says (e, "not initialised", NULL));
  /* Devices can start again, with nothing loaded.  */
  check ("init again", p_init_device (0));
  e = errors_now ();
  check ("nothing loaded after fini", !p_unload_image (0, version, &desc)
	 && error_says (e, "not loaded", NULL));
  check ("fini again", p_fini_device (0));

  standin_close_plugin ();
  return check_summary ();
}
