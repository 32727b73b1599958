/* plugin-harness: the plugin's answers in the ABI of each libgomp it may
   be loaded by (GCC 12 to 16), on emulated devices.  The stand-in plays
   the libgomp of one GCC version per child process
   (offloadkit_standin_libgomp_gcc), since the plugin detects it once.

   Checked per version: GOMP_OFFLOAD_version, get_num_devices with
   "requires" masks (-1 when unmet), load_image's extra arguments and
   trailing entry (__gomp_device_num, or the 16-byte ICV block from 13),
   library versions in the version word; and the entry points added by
   libgomp 14 and 16 (memset, memcpy2d, memcpy3d), byte by byte; and
   those of libgomp 15 and 16 (get_uid, managed memory,
   is_accessible_ptr, page-locked host memory); and reverse offload from
   libgomp 13.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-abi.h"
#include "gomp-standin.h"
#include "offload-desc.h"
#include "plugin-harness.h"

/* The entry points as libgomp 13+ declares them.  */
typedef int (*get_num_devices_13) (unsigned);
typedef int (*load_image_14) (int, unsigned, const void *,
			      struct ok_addr_pair **, uint64_t **,
			      uint64_t *);
typedef bool (*memset_fn) (int, void *, int, size_t);

/* ------------------------------------------------------------------ */
/* A one-function, one-variable image.  */

static __thread int abi_device_num = -1;

static int *
abi_device_num_slot (void)
{
  return &abi_device_num;
}

/* Reports the device number the plugin set for the region's thread.  */
static void
abi_region (void **tgt_vars)
{
  long *out = tgt_vars[0];
  out[0] = abi_device_num;
}

static int abi_var = 3;
static void *const abi_funcs[] = { (void *) abi_region };
static void *const abi_vars[] = { &abi_var, (void *) sizeof abi_var };
static const char *const abi_func_names[] = { "abi_region" };
static const char *const abi_var_names[] = { "abi_var" };
static const unsigned char abi_ptx[] = "// not really PTX\n";
static struct ok_tgt_desc abi_tgt;
static struct ok_openmp_target abi_desc;

/* *DESC and its one image *TGT (the PTX stand-in): NFUNCS functions
   FUNCS, named FUNC_NAMES, and one variable, VARS (its address and
   size), named VAR_NAMES.  */
static void
abi_make_desc (struct ok_openmp_target *desc, struct ok_tgt_desc *tgt,
	       void *const *funcs, uint32_t nfuncs,
	       const char *const *func_names, void *const *vars,
	       const char *const *var_names)
{
  *tgt = (struct ok_tgt_desc) {
    .device_type = OK_GOMP_DEVICE_NVIDIA_PTX, .image_format = OK_IMAGE_PTX,
    .image_start = abi_ptx, .image_end = abi_ptx + sizeof abi_ptx,
    .num_funcs = nfuncs, .num_vars = 1,
    .func_names = func_names, .var_names = var_names };
  *desc = (struct ok_openmp_target) {
    .host = { funcs, funcs + nfuncs, vars, vars + 2 },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .num_targets = 1, .targets = tgt,
    .device_num_slot = abi_device_num_slot };
}

static void
abi_build (void)
{
  abi_make_desc (&abi_desc, &abi_tgt, abi_funcs, 1, abi_func_names,
		 abi_vars, abi_var_names);
}

/* ------------------------------------------------------------------ */
/* Reverse offload (emu-rev.c): the plugin takes a call of GOMP_target_ext
   for the host fallback with a function of a loaded image, made on a
   region's thread, and hands it to GOMP_PLUGIN_target_rev, with the
   host's bytes in the variables' globals meanwhile; it passes the others
   on to libgomp's (the stand-in's).  The harness calls the plugin's
   interceptor itself: there is no GOT slot of it here to redirect.  */

typedef void (*target_ext_fn) (int, void (*) (void *), size_t, void **,
			       size_t *, unsigned short *, unsigned int,
			       void **, void **);
static target_ext_fn abi_intercept;

static int abi_rev_var = 3;
static int abi_rev_seen_var = -100, abi_rev_seen_device_num = -100;

/* The ancestor region's host function, which the stand-in does not
   run, and a function of no image.  */
static void
abi_rev_body (void *arg)
{
  (void) arg;
}

static void
abi_rev_other (void *arg)
{
  (void) arg;
}

static void
abi_rev_during (void)
{
  abi_rev_seen_var = abi_rev_var;
  abi_rev_seen_device_num = abi_device_num;
}

/* OUT: the variable and the device number after the request, the address
   array's and the local's addresses.  */
static void
abi_rev_region (void **tgt_vars)
{
  long *out = tgt_vars[0];
  abi_rev_var = 30;
  int local = 7;
  void *addrs[2] = { &local, &abi_rev_var };
  size_t sizes[2] = { sizeof local, sizeof abi_rev_var };
  unsigned short kinds[2] = { 3, 3 };	/* tofrom */
  abi_intercept (-2, abi_rev_body, 2, addrs, sizes, kinds, 0, NULL, NULL);
  out[0] = abi_rev_var;
  out[1] = abi_device_num;
  out[2] = (long) (uintptr_t) addrs;
  out[3] = (long) (uintptr_t) &local;
  /* Not the host fallback, or no function of the tables.  */
  abi_intercept (0, abi_rev_body, 0, NULL, NULL, NULL, 0, NULL, NULL);
  abi_intercept (-2, abi_rev_other, 0, NULL, NULL, NULL, 0, NULL, NULL);
}

static void *const abi_rev_funcs[] = { (void *) abi_rev_region,
				       (void *) abi_rev_body };
static void *const abi_rev_vars[] = { &abi_rev_var,
				      (void *) sizeof abi_rev_var };
static const char *const abi_rev_func_names[] = { "abi_rev_region",
						   "abi_rev_body" };
static const char *const abi_rev_var_names[] = { "abi_rev_var" };
static struct ok_tgt_desc abi_rev_tgt;
static struct ok_openmp_target abi_rev_desc;

static void
abi_rev (int gcc)
{
  check ("init", p_init_device (0));
  check ("the interceptor",
	 standin_plugin_sym ("offloadkit_emu_target_ext", &abi_intercept));
  if (abi_intercept == NULL)
    return;
  abi_make_desc (&abi_rev_desc, &abi_rev_tgt, abi_rev_funcs, 2,
		 abi_rev_func_names, abi_rev_vars, abi_rev_var_names);
  load_image_14 load = (load_image_14) (void *) p_load_image;
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = NULL;
  unsigned ver = OK_GOMP_VERSION_PACK (OK_GOMP_VERSION_OF_GCC (gcc),
				       OK_DEV_VERSION);
  int n = load (0, ver, &abi_rev_desc, &t, &rev, NULL);
  check ("load", n == 4 && t != NULL);
  if (n != 4 || t == NULL)
    {
      fprintf (stderr, "load_image: %d: %s\n", n, last_error ());
      return;
    }
  check ("reverse-offload table: each function its own address",
	 rev != NULL && rev[0] == (uintptr_t) abi_rev_region
	 && rev[1] == (uintptr_t) abi_rev_body);
  int icvs[4] = { 5, 1, 8, 64 };
  p_host2dev (0, (void *) t[3].start, icvs, OK_GOMP_ICVS_SIZE);

  long *out = p_alloc (0, 4 * sizeof (long));
  void **tv = p_alloc (0, sizeof (void *));
  p_host2dev (0, tv, &out, sizeof out);
  standin_rev_reset ();
  standin_target_ext_reset ();
  standin_rev_during = abi_rev_during;
  p_run (0, (void *) abi_rev_region, tv, NULL);
  standin_rev_during = NULL;
  long got[4] = { 0 };
  p_dev2host (0, got, out, sizeof got);
  struct standin_rev r = standin_rev_now ();
  check ("one request", r.calls == 1);
  check ("request: the function, its arrays, the device number",
	 r.fn == (uintptr_t) abi_rev_body && r.mapnum == 2
	 && r.devaddrs == (uint64_t) got[2] && r.dev_num == 5);
  check ("request: libgomp reads the region's address array",
	 r.copied && r.addrs[0] == (uint64_t) got[3]
	 && r.addrs[1] == (uintptr_t) &abi_rev_var);
  check ("during the request: the host's variable, the host's device"
	 " number", abi_rev_seen_var == 3 && abi_rev_seen_device_num == -1);
  check ("after it: the device's again", got[0] == 30 && got[1] == 5);
  struct standin_target_ext x = standin_target_ext_now ();
  check ("other calls go on to libgomp's",
	 x.calls == 2 && x.device == -2 && x.fn == (void *) abi_rev_other);
  abi_intercept (-2, abi_rev_body, 0, NULL, NULL, NULL, 0, NULL, NULL);
  check ("outside a region too",
	 standin_target_ext_now ().calls == 3 && standin_rev_now ().calls == 1);
  check ("the host's variable stays", abi_rev_var == 3);
  /* The region's stack was reachable for the request only.  */
  int e = errors_now ();
  check ("copies outside device memory are refused again",
	 !p_dev2host (0, got, (void *) got[3], sizeof (int))
	 && error_says (e, "not inside one live allocation", NULL));
  p_free (0, out);
  p_free (0, tv);
  free (rev);
  free (t);
  check ("unload", p_unload_image (0, ver, &abi_rev_desc));
  check ("fini", p_fini_device (0));
}

/* ------------------------------------------------------------------ */
/* Children.  */

struct abi_child
{
  int gcc;			/* The libgomp played.  */
  unsigned mask;		/* For get_num_devices.  */
  int expect;			/* Its answer.  */
  void (*fn) (int gcc);		/* More checks, or NULL.  */
};

static bool
abi_child_body (void *arg)
{
  const struct abi_child *c = arg;
  offloadkit_standin_libgomp_gcc = c->gcc;
  setenv ("OFFLOADKIT_EMULATE", "2", 1);
  if (!standin_open_plugin (plugin_path))
    return false;
  unsigned want = OK_GOMP_VERSION_OF_GCC (c->gcc);
  check ("version", p_version () == want);
  get_num_devices_13 num = (get_num_devices_13) (void *) p_get_num_devices;
  int n = num (c->mask);
  if (n != c->expect)
    fprintf (stderr, "get_num_devices (%#x): %d, expected %d\n", c->mask, n,
	     c->expect);
  check ("get_num_devices", n == c->expect);
  check ("get_num_devices again", num (c->mask) == c->expect);
  if (c->fn != NULL)
    c->fn (c->gcc);
  standin_close_plugin ();
  return true;
}

static void
abi_child (const char *what, int gcc, unsigned mask, int expect,
	   void (*fn) (int), bool quiet)
{
  char name[128];
  snprintf (name, sizeof name, "abi %d: %s", gcc, what);
  struct abi_child c = { gcc, mask, expect, fn };
  standin_in_child (name, abi_child_body, &c, quiet);
}

/* The device number a region of the loaded images sees.  */
static long
abi_region_device_num (void)
{
  long *out = p_alloc (0, sizeof (long));
  void **tv = p_alloc (0, sizeof (void *));
  p_host2dev (0, tv, &out, sizeof out);
  p_run (0, (void *) abi_region, tv, NULL);
  long seen = -9;
  p_dev2host (0, &seen, out, sizeof seen);
  p_free (0, out);
  p_free (0, tv);
  return seen;
}

/* load_image as libgomp GCC passes its arguments; the trailing entry.  */
static void
abi_load (int gcc)
{
  check ("init", p_init_device (0));
  abi_build ();
  load_image_14 load = (load_image_14) (void *) p_load_image;
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = (uint64_t *) &t;	/* Not NULL: the plugin must clear it.  */
  uint64_t ind[1] = { 0 };
  unsigned lib = OK_GOMP_VERSION_OF_GCC (gcc);
  unsigned ver = OK_GOMP_VERSION_PACK (lib, OK_DEV_VERSION);
  int n = load (0, ver, &abi_desc, &t, gcc >= 13 ? &rev : NULL,
		gcc >= 14 ? ind : NULL);
  check ("funcs + vars + 1 entries", n == 3 && t != NULL);
  if (n != 3 || t == NULL)
    {
      fprintf (stderr, "load_image: %d: %s\n", n, last_error ());
      return;
    }
  if (gcc >= 13)
    check ("no reverse-offload table", rev == NULL);
  size_t size = gcc >= 13 ? OK_GOMP_ICVS_SIZE : sizeof (int);
  check ("trailing entry's size",
	 t[2].start != 0 && t[2].end - t[2].start == size);
  unsigned char zero[OK_GOMP_ICVS_SIZE] = { 0 }, got[OK_GOMP_ICVS_SIZE];
  memset (got, 0xff, sizeof got);
  check ("trailing entry: dev2host",
	 p_dev2host (0, got, (void *) t[2].start, size));
  check ("trailing entry starts zeroed", memcmp (got, zero, size) == 0);

  /* libgomp writes its number of the device there: the int, or the
     first member of struct gomp_offload_icvs.  */
  int icvs[4] = { 5, 1, 8, 64 };
  check ("trailing entry: host2dev of libgomp's values",
	 p_host2dev (0, (void *) t[2].start, icvs, size));
  check ("region sees the device number libgomp wrote",
	 abi_region_device_num () == 5);
  free (t);
  check ("unload", p_unload_image (0, ver, &abi_desc));

  /* The version word may carry the library version of any libgomp up to
     the running one's (the wrapper registers in its compiler's form).  */
  for (unsigned l = 1; l <= OK_GOMP_VERSION_MAX; l++)
    {
      char name[96];
      unsigned v = OK_GOMP_VERSION_PACK (l, OK_DEV_VERSION);
      int e = errors_now ();
      t = NULL;
      rev = NULL;
      n = load (0, v, &abi_desc, &t, gcc >= 13 ? &rev : NULL, NULL);
      snprintf (name, sizeof name, "image of library version %u %s", l,
		l <= lib ? "accepted" : "refused");
      if (l <= lib)
	check (name, n == 3 && p_unload_image (0, v, &abi_desc));
      else
	check (name, n == -1 && error_says (e, "needs libgomp version", NULL));
      free (t);
    }
  check ("fini", p_fini_device (0));
}

/* ------------------------------------------------------------------ */
/* Two images on one device, as a program and a shared library: libgomp
   13+ enters one ICV block per device in its address map (a second would
   stop it with "Duplicate node"), so the plugin gives it the first image's
   and fills the other images' blocks itself.  */

static int abi_var_b = 4;
static void *const abi_funcs_b[] = { (void *) abi_region };
static void *const abi_vars_b[] = { &abi_var_b, (void *) sizeof abi_var_b };
static struct ok_openmp_target abi_desc_b;

/* Load DESC as libgomp GCC does; its table (3 entries), or NULL.  */
static struct ok_addr_pair *
abi_load_one (int gcc, const struct ok_openmp_target *desc, const char *what)
{
  load_image_14 load = (load_image_14) (void *) p_load_image;
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = NULL;
  unsigned ver = OK_GOMP_VERSION_PACK (OK_GOMP_VERSION_OF_GCC (gcc),
				       OK_DEV_VERSION);
  int n = load (0, ver, desc, &t, gcc >= 13 ? &rev : NULL, NULL);
  check (what, n == 3 && t != NULL);
  if (n != 3)
    {
      fprintf (stderr, "load_image: %d: %s\n", n, last_error ());
      free (t);
      return NULL;
    }
  return t;
}

static void
abi_two_images (int gcc)
{
  check ("init", p_init_device (0));
  abi_build ();
  abi_desc_b = abi_desc;
  abi_desc_b.host = (struct ok_host_table) { abi_funcs_b, abi_funcs_b + 1,
					      abi_vars_b, abi_vars_b + 2 };
  unsigned ver = OK_GOMP_VERSION_PACK (OK_GOMP_VERSION_OF_GCC (gcc),
				       OK_DEV_VERSION);
  int icvs[4] = { 6, 1, 8, 64 };
  size_t size = gcc >= 13 ? OK_GOMP_ICVS_SIZE : sizeof (int);
  struct ok_addr_pair *a = abi_load_one (gcc, &abi_desc, "first image loads");
  struct ok_addr_pair *b = NULL;
  if (a == NULL)
    return;
  check ("first image: its block for libgomp", a[2].start != 0);
  p_host2dev (0, (void *) a[2].start, icvs, size);
  b = abi_load_one (gcc, &abi_desc_b, "second image loads");
  if (b == NULL)
    return;
  if (gcc >= 13)
    check ("second image: no second block for libgomp",
	   b[2].start == 0 && b[2].end == 0);
  else
    check ("second image: its own device number for libgomp",
	   b[2].start != 0 && b[2].start != a[2].start);
  if (gcc < 13)
    p_host2dev (0, (void *) b[2].start, icvs, size);
  check ("second image's region sees the ICVs libgomp wrote",
	 abi_region_device_num () == 6);
  free (b);
  check ("unload second", p_unload_image (0, ver, &abi_desc_b));

  /* The first image goes before another comes: its block is kept.  */
  check ("unload first", p_unload_image (0, ver, &abi_desc));
  free (a);
  b = abi_load_one (gcc, &abi_desc_b, "an image after the first is gone");
  if (b == NULL)
    return;
  if (gcc >= 13)
    {
      check ("later image: no second block for libgomp", b[2].start == 0);
      check ("later image: its region sees the ICVs libgomp wrote",
	     abi_region_device_num () == 6);
    }
  free (b);
  check ("unload", p_unload_image (0, ver, &abi_desc_b));
  check ("fini", p_fini_device (0));
}

/* ------------------------------------------------------------------ */
/* libgomp 14 and 16's copies and memset, on emulated devices.  */

static void
abi_memory (int gcc)
{
  (void) gcc;
  memset_fn ms;
  memcpy2d_fn m2;
  memcpy3d_fn m3;
  check ("memset exported", standin_plugin_sym ("GOMP_OFFLOAD_memset", &ms));
  check ("memcpy2d exported",
	 standin_plugin_sym ("GOMP_OFFLOAD_memcpy2d", &m2));
  check ("memcpy3d exported",
	 standin_plugin_sym ("GOMP_OFFLOAD_memcpy3d", &m3));
  if (ms == NULL || m2 == NULL || m3 == NULL)
    return;
  check ("init", p_init_device (0) && p_init_device (1));

  /* memset, larger than the core's 64 KiB buffer, and inside a range.  */
  size_t big = 200 * 1024 + 3;
  unsigned char *p = p_alloc (0, big), *back = malloc (big);
  check ("memset: whole", ms (0, p, 0x1ab, big));
  check ("memset: part", ms (0, p + 70000, 0x11, 5));
  check ("memset: nothing", ms (0, p, 0x22, 0));
  memset (back, 0, big);
  p_dev2host (0, back, p, big);
  bool ok = true;
  for (size_t i = 0; i < big; i++)
    ok &= back[i] == (i >= 70000 && i < 70005 ? 0x11 : 0xab);
  check ("memset: every byte", ok);
  int e = errors_now ();
  check ("memset past the allocation fails", !ms (0, p + big - 2, 0, 4));
  check ("memset past the allocation: one message",
	 errors_now () == e + 1);
  e = errors_now ();
  check ("memset on an uninitialised device fails", !ms (2, p, 0, 1));
  check ("memset on an uninitialised device: message",
	 error_says (e, "no device 2", NULL));
  p_free (0, p);
  free (back);

  /* 2D: a 3 x 4 block of a 6 x 10 int array at (2, 3), to a 5 x 7 array
     at (1, 2), host to device, device to device, device to host.  */
  enum { R = 6, C = 10, R2 = 5, C2 = 7 };
  int src[R][C], dst[R2][C2], dst2[R2][C2];
  for (int i = 0; i < R * C; i++)
    ((int *) src)[i] = i;
  int *d = p_alloc (0, sizeof dst), *d2 = p_alloc (0, sizeof dst2);
  memset (dst, 0xee, sizeof dst);
  p_host2dev (0, d, dst, sizeof dst);
  p_host2dev (0, d2, dst, sizeof dst);
  size_t is = sizeof (int);
  check ("memcpy2d: host to device",
	 m2 (0, -1, 4 * is, 3, d, 2 * is, 1, C2 * is, src, 3 * is, 2, C * is)
	 == 1);
  check ("memcpy2d: device to device",
	 m2 (0, 0, 4 * is, 3, d2, 2 * is, 1, C2 * is, d, 2 * is, 1, C2 * is)
	 == 1);
  memset (dst2, 0, sizeof dst2);
  check ("memcpy2d: device to host",
	 m2 (-1, 0, C2 * is, R2, dst2, 0, 0, C2 * is, d2, 0, 0, C2 * is)
	 == 1);
  ok = true;
  for (int i = 0; i < R2; i++)
    for (int j = 0; j < C2; j++)
      {
	bool in = i >= 1 && i < 4 && j >= 2 && j < 6;
	int want = in ? src[i + 1][j + 1] : (int) 0xeeeeeeee;
	ok &= dst2[i][j] == want;
      }
  check ("memcpy2d: every element", ok);
  check ("memcpy2d: between two devices left to libgomp",
	 m2 (1, 0, is, 1, d, 0, 0, is, d2, 0, 0, is) == -1);
  e = errors_now ();
  check ("memcpy2d: overflowing offsets fail",
	 m2 (0, -1, is, 1, d, SIZE_MAX / 2, 4, C2 * is, src, 0, 0, is) == 0
	 && errors_now () == e + 1);
  e = errors_now ();
  check ("memcpy2d: a row outside the allocation fails",
	 m2 (0, -1, is, 2, d, 0, R2, C2 * is, src, 0, 0, is) == 0
	 && errors_now () == e + 1);
  p_free (0, d);
  p_free (0, d2);

  /* 3D: a 2 x 2 x 3 block of a 3 x 4 x 5 array at (1, 1, 2), to the
     origin of a 2 x 3 x 4 device array, and back to a host array at
     (1, 2, 1) of 3 x 4 x 5.  */
  int a[3][4][5], b[3][4][5];
  int *dd = standin_rect3d_start (1, a, b);
  standin_rect3d_copy (m3, 1, a, b, dd, "memcpy3d: host to device",
		       "memcpy3d: device to host");
  standin_rect3d_check (1, a, b, dd);
  check ("memcpy3d: nothing to copy", m3 (1, -1, 0, 0, 0, dd, 0, 0, 0, 0, 0,
					   a, 0, 0, 0, 0, 0) == 1);
  p_free (1, dd);
  check ("fini", p_fini_device (0) && p_fini_device (1));
}

/* ------------------------------------------------------------------ */
/* libgomp 15 and 16's get_uid, managed memory, is_accessible_ptr and
   page-locked host memory, on emulated devices.  */

static void
abi_entries_uid (void)
{
  const char *(*uid) (int);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_get_uid", &uid))
    {
      check ("get_uid exported", false);
      return;
    }
  const char *u0 = uid (0), *u1 = uid (1);
  char want0[64], want1[64];
  snprintf (want0, sizeof want0, "offloadkit-emulated-%s-0", p_get_name ());
  snprintf (want1, sizeof want1, "offloadkit-emulated-%s-1", p_get_name ());
  check ("get_uid: stable, one per emulated device and plugin",
	 u0 != NULL && u1 != NULL && strcmp (u0, want0) == 0
	 && strcmp (u1, want1) == 0);
  free ((void *) u0);
  free ((void *) u1);
}

/* Managed memory is one block that the host and the device's copies
   (and regions) see at the same address.  */
static void
abi_entries_managed (void)
{
  void *(*ma) (int, size_t);
  bool (*mf) (int, void *);
  int (*acc) (int, const void *, size_t);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_managed_alloc", &ma)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_free", &mf)
      || !standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc))
    {
      check ("managed memory and is_accessible_ptr exported", false);
      return;
    }
  int *m = ma (0, 32 * sizeof (int));
  check ("managed_alloc", m != NULL);
  if (m == NULL)
    return;
  for (int i = 0; i < 32; i++)
    m[i] = 3 * i;
  int back[32];
  check ("managed memory: the device copies what the host wrote",
	 p_dev2host (0, back, m, sizeof back)
	 && memcmp (back, m, sizeof back) == 0);
  int one = -5;
  check ("managed memory: the host reads what the device copy wrote",
	 p_host2dev (0, m + 7, &one, sizeof one) && m[7] == -5);
  check ("is_accessible_ptr: managed memory", acc (0, m, sizeof back) == 1);
  check ("is_accessible_ptr: another device's managed memory",
	 acc (1, m, sizeof back) == 0);
  check ("is_accessible_ptr: past its end",
	 acc (0, m + 16, sizeof back) == 0);
  int local[4];
  check ("is_accessible_ptr: other host memory",
	 acc (0, local, sizeof local) == 0);
  char *d = p_alloc (1, 1000);
  check ("is_accessible_ptr: device memory", acc (1, d + 10, 990) == 1);
  p_free (1, d);
  check ("is_accessible_ptr: freed device memory", acc (1, d, 1) == 0);
  check ("managed_free", mf (0, m));
  int e = errors_now ();
  check ("managed_free twice fails", !mf (0, m));
  check ("managed_free twice: one message", errors_now () == e + 1);
}

/* Page-locked host memory: mapped pages, locked (when RLIMIT_MEMLOCK
   allows), recorded; the nvptx plugin only.  */
static void
abi_entries_page_locked (void)
{
  bool (*pa) (void **, size_t);
  bool (*pf) (void *);
  int (*acc) (int, const void *, size_t);
  bool exported
    = (standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_alloc", &pa)
       && standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_free", &pf)
       && standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc));
  if (strcmp (p_get_name (), "nvptx") != 0)
    {
      check ("page-locked host memory: not in the gcn plugin", !exported);
      return;
    }
  check ("page-locked host memory: exported", exported);
  if (!exported)
    return;
  void *z = (void *) 1;
  check ("page_locked_host_alloc of nothing: NULL", pa (&z, 0) && z == NULL);
  void *p = NULL;
  check ("page_locked_host_alloc", pa (&p, 5000));
  if (p == NULL)
    {
      unsupported ("page-locked host memory (mlock refused)");
      return;
    }
  memset (p, 0x3d, 5000);
  check ("page-locked memory: page-aligned", ((uintptr_t) p & 4095) == 0);
  check ("is_accessible_ptr: page-locked memory", acc (0, p, 5000) == 1);
  int e = errors_now ();
  check ("page_locked_host_free of its inside fails",
	 !pf ((char *) p + 8) && errors_now () == e + 1);
  check ("page_locked_host_free", pf (p));
  e = errors_now ();
  check ("page_locked_host_free twice fails", !pf (p));
  check ("page_locked_host_free twice: one message",
	 error_says (e, "page-locked", NULL));
}

static void
abi_entries (int gcc)
{
  (void) gcc;
  check ("init", p_init_device (0) && p_init_device (1));
  abi_entries_uid ();
  abi_entries_managed ();
  abi_entries_page_locked ();
  check ("fini", p_fini_device (0) && p_fini_device (1));
}

void
abi_tests (void)
{
  const unsigned ua = OK_GOMP_REQUIRES_UNIFIED_ADDRESS;
  const unsigned usm = OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY;
  const unsigned ro = OK_GOMP_REQUIRES_REVERSE_OFFLOAD;
  const unsigned used = OK_GOMP_REQUIRES_TARGET_USED;
  const unsigned self = OK_GOMP_REQUIRES_SELF_MAPS;

  for (int gcc = 12; gcc <= 16; gcc++)
    {
      abi_child ("no requirements", gcc, 0, 2, NULL, true);
      /* libgomp 12 passes no mask: whatever is in the register is not
	 read.  13 and 14 would map data as ever: no device is counted.
	 From 15 the emulated devices, which run host code, are devices
	 with the host's memory.  */
      abi_child ("unified_shared_memory", gcc, usm,
		 gcc >= 15 ? 2 : gcc >= 13 ? -1 : 2, NULL, true);
      abi_child ("load_image", gcc, 0, 2, abi_load, false);
      abi_child ("two images", gcc, 0, 2, abi_two_images, false);
    }
  abi_child ("unified_address", 13, ua | used, 2, NULL, true);
  /* Emulated devices take reverse offload on from libgomp 13 (the
     stand-in has a GOMP_target_ext to pass calls on to).  */
  abi_child ("unified_address, reverse_offload", 13, ua | ro | used, 2,
	     NULL, true);
  abi_child ("reverse_offload", 12, ro, 2, NULL, true);
  abi_child ("reverse offload", 13, ro | used, 2, abi_rev, false);
  abi_child ("reverse offload", 14, ro | used, 2, abi_rev, false);
  abi_child ("reverse offload", 16, ro | used, 2, abi_rev, false);
  abi_child ("self_maps", 14, self, -1, NULL, true);
  abi_child ("self_maps", 15, self, 2, NULL, true);
  abi_child ("self_maps, unified_address", 16, self | ua | used, 2, NULL,
	     true);
  abi_child ("an unknown requirement", 14, 0x800, -1, NULL, true);
  abi_child ("memset, memcpy2d, memcpy3d", 16, 0, 2, abi_memory, false);
  abi_child ("memset, memcpy2d, memcpy3d", 12, 0, 2, abi_memory, false);
  abi_child ("get_uid, managed, accessible, page-locked", 15, 0, 2,
	     abi_entries, false);
  abi_child ("get_uid, managed, accessible, page-locked", 16, 0, 2,
	     abi_entries, false);
}
