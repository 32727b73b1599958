/* cuda-harness: what the device code of GCC 13 to 16 expects of the
   loader, decided by what each module has: the map of `declare target
   indirect' functions (GCC 14's flat form, GCC 16's hash table), the
   reverse-offload table and the requests a running kernel makes (served
   during run and async_run, for libgomp 13's and 14's
   GOMP_PLUGIN_target_rev), and GCC 15+'s constructors and destructors.
   See cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"
#include "gcc-nvptx-image.h"

typedef int (*load6_fn) (int, unsigned, const void *, struct ok_addr_pair **,
			 uint64_t **, uint64_t *);

/* load_image as libgomp 13+ calls it, with REV (NULL: the program does
   not require reverse offload) and the host table of indirect functions
   HOST (NULL: none).  */
static int
load6 (int dev, unsigned ver, const void *data, struct ok_addr_pair **t,
       uint64_t **rev, uint64_t *host)
{
  *t = NULL;
  return ((load6_fn) (void *) p_load_image) (dev, ver, data, t, rev, host);
}

/* BASE (malloc'd; freed here) followed by the strings after it, up to a
   NULL (malloc'd).  */
static char * __attribute__ ((sentinel))
ptx_then (char *base, ...)
{
  va_list ap;
  va_start (ap, base);
  for (const char *more; (more = va_arg (ap, const char *)) != NULL;)
    {
      char *s = NULL;
      if (asprintf (&s, "%s%s", base, more) < 0)
	abort ();
      free (base);
      base = s;
    }
  va_end (ap);
  return base;
}

/* The main test PTX for sm_90 with EXTRA declarations after it
   (malloc'd).  */
static char *
ptx_plus (const char *marker, const char *extra)
{
  return ptx_then (make_ptx ("sm_90", marker), extra, NULL);
}

/* The 8-byte device variable NAME of the latest module: its value, 0
   when it has none.  */
static uint64_t
pointer_var (const char *name)
{
  uintptr_t a = 0;
  size_t s = 0;
  uint64_t v = 0;
  if (f_global (name, &a, &s) && s == sizeof v)
    memcpy (&v, (const void *) a, sizeof v);
  return v;
}

/* A load of DATA (VER) on device 0 with HOST and REV that must fail with
   one error containing the NULL-ended needles, leaving no module,
   device memory or page-locked memory behind.  */
static void
refused (const char *name, const void *data, unsigned ver, uint64_t *host,
	 bool want_rev, ...)
{
  long modules = f_outstanding ("module"), mem = f_outstanding ("mem");
  long pinned = f_outstanding ("host");
  int e = errors_now ();
  struct ok_addr_pair *t;
  uint64_t *rev = NULL;
  int n = load6 (0, ver, data, &t, want_rev ? &rev : NULL, host);
  checkf (n == -1, "%s: refused", name);
  va_list ap;
  va_start (ap, want_rev);
  checkf (verror_says (e, ap), "%s: message", name);
  va_end (ap);
  checkf (f_outstanding ("module") == modules && f_outstanding ("mem") == mem
	  && f_outstanding ("host") == pinned && rev == NULL,
	  "%s: nothing left behind", name);
  harness_undo_load (n, t, 0, ver, data);
}

/* ------------------------------------------------------------------ */
/* `declare target indirect' functions.  */

static const char ind_table[] =
  ".visible .global .align 8 .u64 $offload_ind_func_table[] ="
  " { ind_f1, ind_f2, ind_f3 };\n";
static const char map_var[] =
  ".visible .global .align 8 .u64 __gomp_indirect_addr_map;\n";
static const char hmap_var[] =
  ".visible .global .align 8 .u64 __gomp_indirect_addr_hmap;\n";

/* Whether the flat map at MAP has the N pairs HOST[i] -> device address
   of symbol NAMES[i], then a 0.  */
static bool
flat_map_is (uint64_t map, const uint64_t *host, const char *const *names,
	     int n)
{
  if (map == 0)
    return false;
  const uint64_t *w = (const uint64_t *) (uintptr_t) map;
  for (int i = 0; i < n; i++)
    if (w[2 * i] != host[i] || w[2 * i + 1] != f_symbol_address (names[i]))
      {
	fprintf (stderr, "  (pair %d: %#llx -> %#llx)\n", i,
		 (unsigned long long) w[2 * i],
		 (unsigned long long) w[2 * i + 1]);
	return false;
      }
  return w[2 * n] == 0;
}

/* GCC 16's device code's lookup (libgomp/hashtab.h's htab_find over
   libgomp/config/accel/target-indirect.c's entries), written from GCC's
   source for this test: the device address for HOST in the table at MAP,
   0 when it is not there.  */
static uint64_t
hash_lookup (uint64_t map, uint64_t host)
{
  const uint64_t *hdr = (const uint64_t *) (uintptr_t) map;
  uint64_t size = hdr[0];
  const uint64_t *entries = hdr + 4;	/* 32-byte header.  */
  uint32_t hash = (uint32_t) (host ^ (host >> 32));
  uint32_t index = hash % (uint32_t) size;
  uint32_t hash2 = 1 + hash % ((uint32_t) size - 2);
  for (uint64_t probes = 0; probes <= size; probes++)
    {
      const uint64_t *e = entries + 2 * index;
      if (e[0] == 0 && e[1] == 0)
	return 0;
      if (e[0] == host)
	return e[1];
      index += hash2;
      if (index >= size)
	index -= (uint32_t) size;
    }
  return 0;
}

static void
test_indirect_flat (unsigned ver)
{
  char *ptx = ptx_then (ptx_plus ("which_ind14", ""), ind_table, map_var,
			 NULL);
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx);
  uint64_t host[3] = { 0x401000, 0x402000, 0x403000 };
  static const char *const names[3] = { "ind_f1", "ind_f2", "ind_f3" };
  long mem = f_outstanding ("mem");
  long bad = bad_calls ();
  struct ok_addr_pair *t;
  int n = load6 (0, ver, &im.d, &t, NULL, host);
  check ("indirect, GCC 14's form: loads", n == NFUNCS + NVARS + 1);
  uint64_t map = pointer_var ("__gomp_indirect_addr_map");
  check ("indirect, GCC 14's form: host -> device pairs, then 0",
	 flat_map_is (map, host, names, 3));
  check ("indirect, GCC 14's form: the map in device memory",
	 f_outstanding ("mem") > mem);
  if (n > 0)
    free (t);
  check ("indirect, GCC 14's form: unload", p_unload_image (0, ver, &im.d));
  check ("indirect, GCC 14's form: map freed at unload",
	 f_outstanding ("mem") == mem);
  check_no_bad_calls ("indirect, GCC 14's form: no invalid driver calls",
		      bad);
  free (ptx);
}

/* GCC 16's device code has both variables: the hash table is written,
   sized as GCC 16's plugin sizes it (7 entries: a table of 7 that grows
   to 13 at the seventh).  */
static void
test_indirect_hash (unsigned ver)
{
  char *ptx = ptx_then (ptx_plus ("which_ind16", ""),
			 ".visible .global .align 8 .u64"
			 " $offload_ind_func_table[] ="
			 " { h1, h2, h3, h4, h5, h6, h7 };\n", map_var,
			 hmap_var, NULL);
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx);
  uint64_t host[7];
  static const char *const names[7] = { "h1", "h2", "h3", "h4", "h5", "h6",
					"h7" };
  for (int i = 0; i < 7; i++)
    host[i] = 0x7ffc12340000ull + 0x40 * (uint64_t) i;
  long mem = f_outstanding ("mem");
  struct ok_addr_pair *t;
  int n = load6 (0, ver, &im.d, &t, NULL, host);
  check ("indirect, GCC 16's form: loads", n == NFUNCS + NVARS + 1);
  uint64_t map = pointer_var ("__gomp_indirect_addr_hmap");
  check ("indirect, GCC 16's form: __gomp_indirect_addr_map left NULL",
	 pointer_var ("__gomp_indirect_addr_map") == 0);
  const uint64_t *hdr = (const uint64_t *) (uintptr_t) map;
  check ("indirect, GCC 16's form: table of 13, prime index 1, 7 elements,"
	 " none deleted", map != 0 && hdr[0] == 13 && hdr[1] == 7
	 && hdr[2] == 0 && (uint32_t) hdr[3] == 1);
  bool found = map != 0;
  for (int i = 0; found && i < 7; i++)
    found = hash_lookup (map, host[i]) == f_symbol_address (names[i]);
  check ("indirect, GCC 16's form: the device's lookup finds every function",
	 found);
  check ("indirect, GCC 16's form: the device's lookup misses others",
	 map != 0 && hash_lookup (map, 0x401000) == 0);
  if (n > 0)
    free (t);
  check ("indirect, GCC 16's form: unload", p_unload_image (0, ver, &im.d));
  check ("indirect, GCC 16's form: map freed", f_outstanding ("mem") == mem);
  free (ptx);
}

/* An image in GCC's format with IND_FN_NUM of them.  */
static void
test_indirect_gcc (void)
{
  const unsigned gver = OK_GOMP_VERSION_PACK (3, OK_GCC_DEV_VERSION_NVPTX);
  char *ptx = ptx_then (make_ptx ("sm_80", "which_gcc_ind"),
			 ind_table, map_var, NULL);
  struct ok_gcc_ptx_obj objs[1] = { { ptx, strlen (ptx) + 1 } };
  static const char *const gvars[] = { "hv_counter" };
  static const struct ok_gcc_fn_launch fns[] = { { "k_plain", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, gvars, 1, fns, 1, 3 };
  uint64_t host[3] = { 0x501000, 0x502000, 0x503000 };
  static const char *const names[3] = { "ind_f1", "ind_f2", "ind_f3" };
  struct ok_addr_pair *t;
  int n = load6 (0, gver, &g, &t, NULL, host);
  check ("indirect, GCC's format: loads", n == 3);
  check ("indirect, GCC's format: the map",
	 flat_map_is (pointer_var ("__gomp_indirect_addr_map"), host, names,
		      3));
  if (n > 0)
    free (t);
  check ("indirect, GCC's format: unload", p_unload_image (0, gver, &g));
  g.ind_fn_num = 2;
  refused ("indirect, GCC's format, 2 said, 3 in the table", &g, gver, host,
	   false, "$offload_ind_func_table", "24 bytes",
	   "expected 2 functions, 16 bytes", NULL);
  free (ptx);
}

static void
test_indirect_refused (unsigned ver)
{
  uint64_t host[3] = { 0x401000, 0x402000, 0x403000 };
  struct image im;
  char *ptx = ptx_plus ("which_ind_bad", map_var);
  image_init (&im);
  image_add_ptx (&im, ptx);
  refused ("indirect, no $offload_ind_func_table", &im.d, ver, host, false,
	   "no table of them ($offload_ind_func_table)", NULL);
  free (ptx);
  char *p2 = NULL;
  if (asprintf (&p2, "%s%s", ind_table, ".visible .global .align 4 .u32"
		" __gomp_indirect_addr_map;\n") < 0)
    abort ();
  ptx = ptx_plus ("which_ind_bad2", p2);
  free (p2);
  image_init (&im);
  image_add_ptx (&im, ptx);
  refused ("indirect, map variable of 4 bytes", &im.d, ver, host, false,
	   "'__gomp_indirect_addr_map' has 4 bytes", "expected a pointer",
	   NULL);
  free (ptx);
  ptx = ptx_plus ("which_ind_bad3", ".visible .global .align 4 .u32"
		  " $offload_ind_func_table[3];\n"
		  ".visible .global .align 8 .u64 __gomp_indirect_addr_map;\n");
  image_init (&im);
  image_add_ptx (&im, ptx);
  refused ("indirect, table of 12 bytes", &im.d, ver, host, false,
	   "has 12 bytes, expected a multiple of 8 bytes", NULL);
  free (ptx);
}

/* ------------------------------------------------------------------ */
/* Reverse offload.  */

/* The device table of an image whose second function (k_maxntid) is an
   ancestor region's.  */
static const char rev_table[] =
  ".visible .global .align 8 .u64 $offload_func_table[] ="
  " { 0, k_maxntid$nohost, 0 };\n";
static const char rev_var[] =
  ".visible .global .align 8 .u64 __gomp_rev_offload_var;\n";

/* Arm a request of kernel KERNEL for FN with MAPNUM mappings at ADDRS.  */
static void
arm_request (const char *kernel, uint64_t fn, uint64_t mapnum, void *addrs)
{
  unsigned long long args[5] = { fn, mapnum, (uintptr_t) addrs, 0x5100,
				 0x6100 };
  f_rev_request (kernel, args, 0);
}

/* The request armed by arm_request reached GOMP_PLUGIN_target_rev as the
   CALLS-th call, with its fields and the address array's contents.  */
static bool
request_arrived (int calls, uint64_t fn, void *addrs)
{
  struct standin_rev r = standin_rev_now ();
  bool ok = (r.calls == calls && r.fn == fn && r.mapnum == 2
	     && r.devaddrs == (uintptr_t) addrs && r.sizes == 0x5100
	     && r.kinds == 0x6100 && r.dev_num == 0 && r.copied
	     && r.addrs[0] == 0x1111 && r.addrs[1] == 0x2222);
  if (!ok)
    fprintf (stderr, "  (target_rev: %d calls, fn %#llx, mapnum %llu,"
	     " addrs %#llx [%#llx %#llx], copied %d)\n", r.calls,
	     (unsigned long long) r.fn, (unsigned long long) r.mapnum,
	     (unsigned long long) r.devaddrs, (unsigned long long) r.addrs[0],
	     (unsigned long long) r.addrs[1], r.copied);
  return ok;
}

/* Requests during run and async_run, with libgomp's GCC version in
   PREFIX.  */
static void
test_rev_serve (const char *prefix, unsigned ver)
{
  char *ptx = ptx_then (ptx_plus ("which_rev", ""),
			 rev_table, rev_var, NULL);
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx);
  uint64_t words[2] = { 0x1111, 0x2222 };
  void *addrs = p_alloc (0, sizeof words);
  p_host2dev (0, addrs, words, sizeof words);
  long pinned = f_outstanding ("host");
  long bad = bad_calls ();
  uint64_t fn = f_symbol_address ("k_maxntid$nohost");

  struct ok_addr_pair *t;
  uint64_t *rev = NULL;
  int n = load6 (0, ver, &im.d, &t, &rev, NULL);
  checkf (n == NFUNCS + NVARS + 1, "%s: image with reverse offload loads",
	  prefix);
  checkf (rev != NULL && rev[0] == 0 && rev[1] == fn && rev[2] == 0,
	  "%s: rev_fn_table: the device table", prefix);
  uint64_t block = pointer_var ("__gomp_rev_offload_var");
  checkf (block != 0 && f_outstanding ("host") == pinned + 1,
	  "%s: __gomp_rev_offload_var: a page-locked block", prefix);
  free (rev);
  if (n <= 0)
    {
      free (ptx);
      return;
    }

  standin_rev_reset ();
  long served = f_rev_served ();
  arm_request ("k_plain", fn, 2, addrs);
  p_run (0, (void *) t[0].start, NULL, NULL);
  checkf (request_arrived (1, fn, addrs),
	  "%s: run: the request reaches GOMP_PLUGIN_target_rev", prefix);
  checkf (f_rev_served () == served + 1 && pointer_var ("__gomp_rev_offload_var")
	  == block && ((const uint64_t *) (uintptr_t) block)[0] == 0,
	  "%s: run: the kernel went on after it", prefix);

  int token;
  completions_reset ();
  arm_request ("k_regs", fn, 2, addrs);
  p_async_run (0, (void *) t[2].start, NULL, NULL, &token);
  wait_completions (1, 10);
  checkf (completions_now () == 1 && request_arrived (2, fn, addrs),
	  "%s: async_run: the request reaches GOMP_PLUGIN_target_rev, then"
	  " the completion", prefix);
  checkf (f_rev_served () == served + 2, "%s: async_run: served", prefix);

  /* No request: a launch of it waits as any other.  */
  p_run (0, (void *) t[1].start, NULL, NULL);
  checkf (standin_rev_now ().calls == 2, "%s: run without a request",
	  prefix);
  free (t);
  checkf (p_unload_image (0, ver, &im.d), "%s: unload", prefix);
  checkf (f_outstanding ("host") == pinned, "%s: block freed at unload",
	  prefix);
  checkf (bad_calls () == bad, "%s: no invalid driver calls", prefix);
  p_free (0, addrs);
  free (ptx);
}

/* What does not give a block, and what is refused.  */
static void
test_rev_other (unsigned ver)
{
  long pinned = f_outstanding ("host");
  struct ok_addr_pair *t;
  uint64_t *rev = NULL;
  struct image im;

  /* Every entry 0: no ancestor region in this image.  */
  char *zero = NULL, *ptx = NULL;
  if (asprintf (&zero, "%s%s", ".visible .global .align 8 .u64"
		" $offload_func_table[] = { 0, 0, 0 };\n", rev_var) < 0)
    abort ();
  ptx = ptx_plus ("which_rev0", zero);
  image_init (&im);
  image_add_ptx (&im, ptx);
  int n = load6 (0, ver, &im.d, &t, &rev, NULL);
  check ("reverse offload, table of zeros: no rev_fn_table, no block",
	 n > 0 && rev == NULL && pointer_var ("__gomp_rev_offload_var") == 0
	 && f_outstanding ("host") == pinned);
  harness_undo_load (n, t, 0, ver, &im.d);
  free (ptx);

  /* A table, but no GOMP_target_ext in the device code.  */
  ptx = ptx_plus ("which_rev_novar", rev_table);
  image_init (&im);
  image_add_ptx (&im, ptx);
  rev = NULL;
  n = load6 (0, ver, &im.d, &t, &rev, NULL);
  check ("reverse offload without __gomp_rev_offload_var: no table, no"
	 " block", n > 0 && rev == NULL && f_outstanding ("host") == pinned);
  harness_undo_load (n, t, 0, ver, &im.d);
  free (ptx);

  /* Not asked for: the variable stays NULL, and the device code skips
     the region (the fake drops the request).  */
  char *both = NULL;
  if (asprintf (&both, "%s%s", rev_table, rev_var) < 0)
    abort ();
  ptx = ptx_plus ("which_rev_nowant", both);
  image_init (&im);
  image_add_ptx (&im, ptx);
  n = load6 (0, ver, &im.d, &t, NULL, NULL);
  check ("no reverse offload required: no block",
	 n > 0 && pointer_var ("__gomp_rev_offload_var") == 0
	 && f_outstanding ("host") == pinned);
  int calls = standin_rev_now ().calls;
  long bad = bad_calls ();
  arm_request ("k_plain", 0x1234, 2, NULL);
  if (n > 0)
    p_run (0, (void *) t[0].start, NULL, NULL);
  check ("no reverse offload required: a kernel's request is skipped",
	 standin_rev_now ().calls == calls && bad_calls () == bad);
  harness_undo_load (n, t, 0, ver, &im.d);
  free (ptx);

  ptx = ptx_plus ("which_rev_notab", rev_var);
  image_init (&im);
  image_add_ptx (&im, ptx);
  refused ("reverse offload, no $offload_func_table", &im.d, ver, NULL, true,
	   "(__gomp_rev_offload_var)", "no table of their functions"
	   " ($offload_func_table)", NULL);
  free (ptx);
  char *short_tab = NULL;
  if (asprintf (&short_tab, "%s%s", ".visible .global .align 8 .u64"
		" $offload_func_table[] = { 0, k_maxntid$nohost };\n",
		rev_var) < 0)
    abort ();
  ptx = ptx_plus ("which_rev_short", short_tab);
  image_init (&im);
  image_add_ptx (&im, ptx);
  refused ("reverse offload, table of 2 for 3 functions", &im.d, ver, NULL,
	   true, "$offload_func_table", "has 16 bytes, expected 24 for 3"
	   " functions", NULL);
  free (ptx);
  free (short_tab);
  free (zero);
  free (both);
}

/* The request block of a GCC-format image.  */
static void
test_rev_gcc (void)
{
  const unsigned gver = OK_GOMP_VERSION_PACK (2, OK_GCC_DEV_VERSION_NVPTX);
  char *ptx = ptx_then (make_ptx ("sm_80", "which_gcc_rev"),
			 ".visible .global .align 8 .u64"
			 " $offload_func_table[] = { k_plain$nohost };\n",
			 rev_var, NULL);
  struct ok_gcc_ptx_obj objs[1] = { { ptx, strlen (ptx) + 1 } };
  static const struct ok_gcc_fn_launch fns[] = { { "k_plain", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, NULL, 0, fns, 1, 0 };
  struct ok_addr_pair *t;
  uint64_t *rev = NULL;
  int n = load6 (0, gver, &g, &t, &rev, NULL);
  check ("reverse offload, GCC's format: rev_fn_table",
	 n == 2 && rev != NULL
	 && rev[0] == f_symbol_address ("k_plain$nohost")
	 && pointer_var ("__gomp_rev_offload_var") != 0);
  free (rev);
  harness_undo_load (n, t, 0, gver, &g);
  free (ptx);
}

/* A kernel that faults while its waiter polls for requests: reported
   with the call that saw it, and the device is given up.  Last: the
   device stays broken.  */
static void
test_rev_fault (unsigned ver)
{
  char *ptx = ptx_then (ptx_plus ("which_rev_fault", ""),
			 rev_table, rev_var, NULL);
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx);
  struct ok_addr_pair *t;
  uint64_t *rev = NULL;
  int n = load6 (0, ver, &im.d, &t, &rev, NULL);
  free (rev);
  if (n > 0)
    {
      f_fail ("kernel_fault@1");
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) t[0].start, NULL, NULL));
      f_fail (NULL);
      check ("reverse offload, kernel faults: fatal", fatal);
      check ("reverse offload, kernel faults: message",
	     error_says (e, "kernel 'k_plain'", "cuStreamQuery",
			 "CUDA_ERROR_LAUNCH_FAILED", NULL));
      e = errors_now ();
      check ("reverse offload, kernel faults: unload quietly",
	     p_unload_image (0, ver, &im.d) && errors_now () == e);
      free (t);
    }
  free (ptx);
}

/* ------------------------------------------------------------------ */
/* The areas.  */

/* Loaded by libgomp 13: reverse offload, the copies through the
   plugin's callbacks.  */
void
child_devcode13 (void)
{
  /* The program requires reverse offload, which CUDA devices serve.  */
  check ("a device for a program that requires reverse_offload",
	 (p_get_num_devices) (OK_GOMP_REQUIRES_REVERSE_OFFLOAD
			      | OK_GOMP_REQUIRES_TARGET_USED) == 1);
  check ("init", p_init_device (0));
  test_rev_serve ("reverse offload, libgomp 13",
		  OK_GOMP_VERSION_PACK (2, OK_DEV_VERSION));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* Loaded by libgomp 14: indirect functions in both forms, reverse
   offload with the copies through GOMP_OFFLOAD_dev2host.  */
void
child_devcode14 (void)
{
  const unsigned ver3 = OK_GOMP_VERSION_PACK (3, OK_DEV_VERSION);
  check ("a device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  test_indirect_flat (ver3);
  test_indirect_hash (ver3);
  test_indirect_gcc ();
  test_indirect_refused (ver3);
  test_rev_serve ("reverse offload, libgomp 14", ver3);
  test_rev_other (ver3);
  test_rev_gcc ();
  test_rev_fault (ver3);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* The constructor and destructor kernels, in the main process (played as
   libgomp 12: what runs depends on the device code only).  */
static const char ctors[] =
  ".visible .entry __do_global_ctors__entry\n{\n  ret;\n}\n"
  ".visible .entry __do_global_dtors__entry\n{\n  ret;\n}\n";
static const char ctors_mgomp[] =
  ".visible .entry __do_global_ctors__entry__mgomp (.param .u64 %in_ar0)\n"
  "{\n  ret;\n}\n"
  ".visible .entry __do_global_dtors__entry__mgomp (.param .u64 %in_ar0)\n"
  "{\n  ret;\n}\n";

/* Whether launch I ran kernel NAME on one thread, on a stream of the
   plugin's.  */
static bool
cdtor_launch (int i, const char *name, struct launch *l)
{
  bool ok = (get_launch (i, l) && strcmp (l->name, name) == 0
	     && l->grid[0] == 1 && l->grid[1] == 1 && l->grid[2] == 1
	     && l->block[0] == 1 && l->block[1] == 1 && l->block[2] == 1
	     && l->stream > 2);
  if (!ok)
    fprintf (stderr, "  (launch %d: '%s', grid %u block %u)\n", i, l->name,
	     l->grid[0], l->block[0]);
  return ok;
}

static void
test_cdtors_of (const char *what, const char *extra, const char *ctor,
		const char *dtor, bool mgomp)
{
  char *ptx = ptx_plus ("which_ctors", extra);
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx);
  long bad = bad_calls ();
  struct launch l;
  int before = f_launch_count ();
  struct ok_addr_pair *t = load (0, &im.d);
  checkf (t != NULL && f_launch_count () == before + 1
	  && cdtor_launch (before, ctor, &l),
	  "%s: the constructors' kernel at load", what);
  if (mgomp)
    checkf (l.params[0] != 0 && l.params[0] % 16 == 0,
	    "%s: its parameter is the top of a soft stack", what);
  free (t);
  before = f_launch_count ();
  checkf (p_unload_image (0, version, &im.d)
	  && f_launch_count () == before + 1
	  && cdtor_launch (before, dtor, &l),
	  "%s: the destructors' kernel at unload", what);
  char name[128];
  snprintf (name, sizeof name, "%s: no invalid driver calls", what);
  check_no_bad_calls (name, bad);
  free (ptx);
}

void
test_cdtors (void)
{
  /* The images of the other areas have none: no launch at load.  */
  struct image im;
  image_init (&im);
  image_add_ptx (&im, ptx90);
  int before = f_launch_count ();
  struct ok_addr_pair *t = load (0, &im.d);
  check ("no constructors: no launch at load or unload",
	 t != NULL && p_unload_image (0, version, &im.d)
	 && f_launch_count () == before);
  free (t);

  test_cdtors_of ("constructors", ctors, "__do_global_ctors__entry",
		  "__do_global_dtors__entry", false);
  test_cdtors_of ("constructors, -mgomp", ctors_mgomp,
		  "__do_global_ctors__entry__mgomp",
		  "__do_global_dtors__entry__mgomp", true);

  /* In GCC's format too.  */
  char *ptx = ptx_plus ("which_gcc_ctors", ctors);
  struct ok_gcc_ptx_obj objs[1] = { { ptx, strlen (ptx) + 1 } };
  static const struct ok_gcc_fn_launch fns[] = { { "k_plain", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, NULL, 0, fns, 1, 0 };
  const unsigned gver = OK_GOMP_VERSION_PACK (1, OK_GCC_DEV_VERSION_NVPTX);
  struct launch l;
  before = f_launch_count ();
  int n = p_load_image (0, gver, &g, &t);
  check ("GCC's format: the constructors' kernel at load",
	 n == 2 && cdtor_launch (before, "__do_global_ctors__entry", &l));
  if (n > 0)
    free (t);
  before = f_launch_count ();
  check ("GCC's format: the destructors' kernel at unload",
	 p_unload_image (0, gver, &g)
	 && cdtor_launch (before, "__do_global_dtors__entry", &l));
  free (ptx);

  /* Failures: the load is refused, the unload reported.  */
  ptx = ptx_plus ("which_ctors_fail", ctors);
  image_init (&im);
  image_add_ptx (&im, ptx);
  long modules = f_outstanding ("module");
  f_fail ("cuLaunchKernel@1");
  bad_load ("constructors fail", &im.d, version, "kernel"
	    " '__do_global_ctors__entry'", "cuLaunchKernel", NULL);
  f_fail (NULL);
  t = load (0, &im.d);
  f_fail ("cuLaunchKernel@1");
  int e = errors_now ();
  bool unloaded = p_unload_image (0, version, &im.d);
  f_fail (NULL);
  check ("destructors fail: unload reports it",
	 t != NULL && !unloaded
	 && error_says (e, "'__do_global_dtors__entry'", "cuLaunchKernel",
			NULL));
  check ("destructors fail: the module is unloaded all the same",
	 f_outstanding ("module") == modules);
  free (t);
  free (ptx);
}
