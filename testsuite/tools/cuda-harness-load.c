/* cuda-harness: images loaded on the two devices of the main process:
   the image picked, the address table (functions, variable addresses and
   sizes, link variables, __gomp_device_num, __nvptx_clocktick), JIT
   linking of PTX, and images in GCC's own format.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"
#include "gcc-nvptx-image.h"

/* The main image's variable entries on device 0.  */
static const struct ok_addr_pair *const var0 = tab0 + NFUNCS;

static bool
entry_size (const struct ok_addr_pair *e, size_t size)
{
  return e->start != 0 && e->end - e->start == size;
}

void
test_load (void)
{
  long bad = bad_calls ();
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, &main_im.d);
  check ("cubin image: load", t != NULL);
  if (t == NULL)
    return;
  memcpy (tab0, t, sizeof tab0);
  free (t);
  check ("cubin image: sm_90 cubin chosen", loaded_marker ("which_sm90"));
  check ("cubin image: no JIT link", f_calls ("cuLinkComplete") == links);
  bool funcs_ok = true;
  for (int i = 0; i < NFUNCS; i++)
    {
      funcs_ok &= tab0[i].start != 0 && tab0[i].end == tab0[i].start + 1;
      for (int j = 0; j < i; j++)
	funcs_ok &= tab0[i].start != tab0[j].start;
    }
  check ("function entries distinct, END = START + 1", funcs_ok);
  uintptr_t a = 0;
  size_t s = 0;
  f_global ("hv_counter", &a, &s);
  check ("int variable: the module's global, host size",
	 var0[0].start == a && entry_size (&var0[0], sizeof hv_counter));
  f_global ("hv_array", &a, &s);
  check ("array variable: the module's global, host size",
	 var0[1].start == a && entry_size (&var0[1], sizeof hv_array));
  f_global ("hv_link", &a, &s);
  check ("link variable: the module's pointer",
	 var0[2].start == a && entry_size (&var0[2], sizeof (void *)));
  f_global ("__gomp_device_num", &a, &s);
  check ("device-num entry: __gomp_device_num",
	 var0[3].start == a && entry_size (&var0[3], sizeof (int)));
  int v = 0;
  check ("variable readable", p_dev2host (0, &v, (void *) var0[0].start,
					 sizeof v));
  check ("variable: the image's initial value", v == 5);
  double arr[4] = { 0 };
  p_dev2host (0, arr, (void *) var0[1].start, sizeof arr);
  check ("array: the image's initial values", arr[0] == 1 && arr[3] == 4);
  check ("host variables untouched", hv_counter == 1 && hv_array[0] == 0);
  f_global ("__nvptx_clocktick", &a, &s);
  double tick = 0;
  if (a != 0)
    memcpy (&tick, (void *) a, sizeof tick);
  check ("__nvptx_clocktick = 1e-3 / clock rate in kHz",
	 tick > 0.99e-3 / 1500000 && tick < 1.01e-3 / 1500000);
  int devnum = 0;
  check ("device-num entry writable",
	 p_host2dev (0, (void *) var0[3].start, &devnum, sizeof devnum));
  check_no_bad_calls ("load: no invalid driver calls", bad);

  /* The same image on device 1, then PTX on device 1.  */
  t = load (1, &main_im.d);
  check ("device 1: load", t != NULL);
  check ("device 1: its own variables", t != NULL
	 && t[NFUNCS].start != var0[0].start);
  if (t != NULL)
    {
      memcpy (tab1, t, sizeof tab1);
      tab1_ok = true;
    }
  free (t);
  links = f_calls ("cuLinkComplete");
  long modules = f_outstanding ("module");
  t = load (1, &ptx_im.d);
  check ("PTX image (cubin only for sm_80): load", t != NULL);
  check ("PTX image: JIT-linked", f_calls ("cuLinkComplete") == links + 1
	 && loaded_marker ("which_ptx"));
  check ("PTX image: link state destroyed", f_outstanding ("link") == 0);
  check ("PTX image: one more module", f_outstanding ("module")
	 == modules + 1);
  if (t != NULL)
    {
      v = 0;
      p_dev2host (1, &v, (void *) t[NFUNCS].start, sizeof v);
      check ("PTX image: initial value", v == 5);
      check ("PTX image: link variable is a pointer",
	     entry_size (&t[NFUNCS + 2], sizeof (void *)));
    }
  free (t);
  check ("PTX image: unload", p_unload_image (1, version, &ptx_im.d));

  /* An image without __gomp_device_num or __nvptx_clocktick.  */
  char *bare = strdup (ptx90);
  memcpy (strstr (bare, ".visible .global .align 4 .u32 __gomp_device_num"),
	  "//", 2);
  memcpy (strstr (bare, ".visible .global .align 8 .f64 __nvptx_clocktick"),
	  "//", 2);
  struct image bim;
  image_init (&bim);
  image_add_ptx (&bim, bare);
  t = load (1, &bim.d);
  check ("image without __gomp_device_num: loads", t != NULL);
  check ("image without __gomp_device_num: entry {0, 0}",
	 t != NULL && t[NFUNCS + NVARS].start == 0
	 && t[NFUNCS + NVARS].end == 0);
  free (t);
  check ("image without __gomp_device_num: unload",
	 p_unload_image (1, version, &bim.d));
  free (bare);
  check ("PTX image: module unloaded", f_outstanding ("module") == modules);
  check_no_bad_calls ("device 1 loads: no invalid driver calls", bad);
}

/* The image in GCC's own format (device version 1), as GCC 12's nvptx
   mkoffload emits it (layout: gcc-nvptx-image.h, which the end-to-end
   tests in offloadkit.cuda check against a program GCC built).  */
void
test_gcc_image (void)
{
  const unsigned gver = OK_GOMP_VERSION_PACK (1, OK_GCC_DEV_VERSION_NVPTX);
  char *ptx = make_ptx ("sm_80", "which_gcc");
  struct ok_gcc_ptx_obj objs[1] = { { ptx, strlen (ptx) + 1 } };
  static const char *const gvars[] = { "hv_counter", "hv_array" };
  static const struct ok_gcc_fn_launch fns[] = {
    { "k_plain", { 0, 0, 0 } }, { "k_regs", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, gvars, 2, fns, 2, 0 };
  long bad = bad_calls ();
  struct ok_addr_pair *t = NULL;
  int n = p_load_image (0, gver, &g, &t);
  check ("GCC-format image: fn_num + var_num + 1 entries", n == 5);
  if (n == 5)
    {
      check ("GCC-format image: JIT-linked", loaded_marker ("which_gcc"));
      check ("GCC-format image: functions",
	     t[0].start != 0 && t[1].start != 0 && t[0].start != t[1].start);
      uintptr_t a = 0;
      f_global ("hv_array", &a, NULL);
      check ("GCC-format image: variable address and size",
	     t[3].start == a && entry_size (&t[3], 32));
      f_global ("__gomp_device_num", &a, NULL);
      check ("GCC-format image: device-num entry",
	     t[4].start == a && entry_size (&t[4], 4));
      /* A launch of its kernel.  */
      int before = f_launch_count ();
      p_run (0, (void *) t[1].start, NULL, NULL);
      char name[64] = "";
      f_launch_info (before, name, sizeof name, NULL, NULL, NULL, NULL, NULL,
		     NULL, NULL);
      check ("GCC-format image: run launches its kernel",
	     f_launch_count () == before + 1 && strcmp (name, "k_regs") == 0);
      free (t);
      check ("GCC-format image: unload", p_unload_image (0, gver, &g));
    }
  check_no_bad_calls ("GCC-format image: no invalid driver calls", bad);

  struct ok_gcc_nvptx_data b = g;
  b.ptx_num = 0;
  bad_load ("GCC-format image without PTX", &b, gver, "PTX", NULL);
  b = g;
  b.ptx_objs = NULL;
  bad_load ("GCC-format image with NULL PTX table", &b, gver, "PTX", NULL);
  struct ok_gcc_ptx_obj cut[1] = { { ptx, 40 } };
  b = g;
  b.ptx_objs = cut;
  bad_load ("GCC-format image, PTX not NUL-terminated", &b, gver, "PTX",
	    NULL);
  /* Bytes after the NUL: not what GCC's mkoffload makes (the size is
     sizeof the string), and the driver would be given them.  */
  size_t plen = strlen (ptx);
  char *tail = malloc (plen + 8);
  memcpy (tail, ptx, plen + 1);
  memcpy (tail + plen + 1, "garbage", 7);
  struct ok_gcc_ptx_obj trailing[1] = { { tail, plen + 8 } };
  b = g;
  b.ptx_objs = trailing;
  bad_load ("GCC-format image, bytes after the PTX's NUL", &b, gver,
	    "PTX module 1 of 1", "NUL-terminated", NULL);
  free (tail);
  struct ok_gcc_fn_launch missing[] = { { "k_nowhere", { 0, 0, 0 } } };
  b = g;
  b.fn_descs = missing;
  b.fn_num = 1;
  bad_load ("GCC-format image naming a missing kernel", &b, gver,
	    "k_nowhere", NULL);
  free (ptx);
}

/* PTX with FROM replaced by TO (malloc'd).  */
static char *
ptx_with (const char *ptx, const char *from, const char *to)
{
  const char *at = strstr (ptx, from);
  char *s = NULL;
  if (at == NULL
      || asprintf (&s, "%.*s%s%s", (int) (at - ptx), ptx, to,
		   at + strlen (from)) < 0)
    abort ();
  return s;
}

/* Loaded by libgomp 14 (the stand-in plays it): the trailing entry is the
   16-byte __gomp_additional_icvs, in our images and GCC's.  */
void
child_libgomp14 (void)
{
  harness_libgomp14 ();
  check ("init", p_init_device (0));
  static const char devnum[] = ".visible .global .align 4 .u32"
    " __gomp_device_num;";
  char *base = make_ptx ("sm_90", "which_icvs");
  char *icvs = ptx_with (base, devnum, ".visible .global .align 4 .u32"
			 " __gomp_additional_icvs[4];");
  char *small = ptx_with (base, devnum, ".visible .global .align 4 .u32"
			  " __gomp_additional_icvs;");
  const unsigned ver3 = OK_GOMP_VERSION_PACK (3, OK_DEV_VERSION);
  int e;

  struct image im;
  image_init (&im);
  image_add_ptx (&im, icvs);
  struct ok_addr_pair *t = NULL;
  int n = standin_load_image_14 (0, ver3, &im.d, &t);
  check ("image with __gomp_additional_icvs: loads",
	 n == NFUNCS + NVARS + 1);
  uintptr_t a = 0;
  size_t s = 0;
  f_global ("__gomp_additional_icvs", &a, &s);
  check ("trailing entry: __gomp_additional_icvs, 16 bytes",
	 n > 0 && s == 16 && t[NFUNCS + NVARS].start == a
	 && entry_size (&t[NFUNCS + NVARS], 16));
  int values[4] = { 0, 0, 4, 8 };
  check ("trailing entry writable",
	 n > 0 && p_host2dev (0, (void *) t[NFUNCS + NVARS].start, values,
			      sizeof values));
  free (t);
  check ("unload", p_unload_image (0, ver3, &im.d));

  /* libgomp has indirect functions, the image's device code has nothing
     to map them with (cuda-harness-devcode.c has the images that do).  */
  {
    int (*load6) (int, unsigned, const void *, struct ok_addr_pair **,
		  uint64_t **, uint64_t *)
      = (int (*) (int, unsigned, const void *, struct ok_addr_pair **,
		  uint64_t **, uint64_t *)) (void *) p_load_image;
    uint64_t ind[2] = { 0x1234, 0x5678 };
    e = errors_now ();
    t = NULL;
    check ("image with indirect functions: refused",
	   load6 (0, ver3, &im.d, &t, NULL, ind) == -1);
    check ("image with indirect functions: message",
	   error_says (e, "`declare target indirect' functions",
		       "neither __gomp_indirect_addr_hmap nor"
		       " __gomp_indirect_addr_map", NULL));
  }

  /* GCC 12's variable is not what libgomp 14 wants: no entry.  */
  image_init (&im);
  image_add_ptx (&im, base);
  n = standin_load_image_14 (0, ver3, &im.d, &t);
  check ("image with only __gomp_device_num: entry {0, 0}",
	 n == NFUNCS + NVARS + 1 && t[NFUNCS + NVARS].start == 0
	 && t[NFUNCS + NVARS].end == 0);
  free (t);
  check ("unload", p_unload_image (0, ver3, &im.d));

  /* One of another size would be fatal in libgomp: refused.  */
  image_init (&im);
  image_add_ptx (&im, small);
  e = errors_now ();
  n = standin_load_image_14 (0, ver3, &im.d, &t);
  check ("__gomp_additional_icvs of 4 bytes: refused", n == -1);
  check ("__gomp_additional_icvs of 4 bytes: message",
	 error_says (e, "'__gomp_additional_icvs' has 4 bytes", "expected 16",
		     NULL));

  /* GCC's own format (nvptx device version 1 in every GCC).  */
  const unsigned gver = OK_GOMP_VERSION_PACK (3, OK_GCC_DEV_VERSION_NVPTX);
  char *g80 = make_ptx ("sm_80", "which_gcc14");
  char *gptx = ptx_with (g80, devnum, ".visible .global .align 4 .u32"
			 " __gomp_additional_icvs[4];");
  free (g80);
  struct ok_gcc_ptx_obj objs[1] = { { gptx, strlen (gptx) + 1 } };
  static const char *const gvars[] = { "hv_counter" };
  static const struct ok_gcc_fn_launch fns[] = { { "k_plain", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, gvars, 1, fns, 1, 2 };
  e = errors_now ();
  n = standin_load_image_14 (0, gver, &g, &t);
  check ("GCC-format image with indirect functions, no host table:"
	 " refused", n == -1);
  check ("GCC-format image with indirect functions, no host table:"
	 " message", error_says (e, "2 `declare target indirect' functions",
				 "no host table", NULL));
  g.ind_fn_num = 0;
  n = standin_load_image_14 (0, gver, &g, &t);
  check ("GCC-format image: 3 entries", n == 3);
  /* libgomp has the first image's block of the device (long unloaded:
     libgomp keeps it), so this one's is {0, 0} and filled by the plugin
     with what libgomp wrote there.  */
  f_global ("__gomp_additional_icvs", &a, &s);
  int got[4] = { -1, -1, -1, -1 };
  check ("GCC-format image: no second ICV block for libgomp",
	 n == 3 && t[2].start == 0 && t[2].end == 0);
  check ("GCC-format image: its ICV block holds libgomp's values",
	 n == 3 && s == 16 && p_dev2host (0, got, (void *) a, sizeof got)
	 && memcmp (got, values, sizeof got) == 0);
  if (n > 0)
    free (t);
  check ("GCC-format image: unload", p_unload_image (0, gver, &g));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  free (base);
  free (icvs);
  free (small);
  free (gptx);
}
