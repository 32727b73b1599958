/* cuda-harness: the image the plugin picks for a device's compute
   capability (exact cubin, same-major lower-minor cubin, else PTX, else a
   clear error), and a real cubin from ptxas.  Each runs in a child, over
   a fresh plugin with the fake's FAKECUDA_SM.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda-harness.h"

extern char **environ;

/* D, whose targets are IM's, as a descriptor of version 2 (an earlier
   mkoffload's, whose targets array has the shorter entries in V2).  */
static void
as_version_2 (const struct image *im, struct ok_tgt_desc_v2 *v2,
	      struct ok_openmp_target *d)
{
  *d = im->d;
  d->desc_version = 2;
  for (uint32_t i = 0; i < im->d.num_targets; i++)
    memcpy (&v2[i], &im->t[i], sizeof v2[i]);
  d->targets = (const struct ok_tgt_desc *) (const void *) v2;
}

/* Images of cubins for several architectures and, optionally, PTX; in a
   descriptor of version 2 when V2.  */
static void
child_pick (int device_sm, const int *archs, int narchs, bool with_ptx,
	    const char *expect_marker, const char *what, bool v2)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  unsigned char *cubins[6];
  char *ptx = NULL;
  for (int i = 0; i < narchs; i++)
    {
      char marker[32];
      size_t size;
      snprintf (marker, sizeof marker, "which_sm%d", archs[i]);
      /* Alternate the e_flags encodings.  */
      cubins[i] = make_cubin (archs[i], i % 2 == 1, marker, 0, &size);
      image_add (&im, OK_IMAGE_CUBIN, (unsigned) archs[i], cubins[i], size);
    }
  if (with_ptx)
    {
      char target[16];
      snprintf (target, sizeof target, "sm_%d", device_sm);
      ptx = make_ptx (target, "which_ptx");
      image_add_ptx (&im, ptx);
    }
  struct ok_tgt_desc_v2 v2_targets[6];
  struct ok_openmp_target v2_desc;
  if (v2)
    as_version_2 (&im, v2_targets, &v2_desc);
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, v2 ? &v2_desc : &im.d);
  checkf (t != NULL, "%s: loads", what);
  checkf (t != NULL && loaded_marker (expect_marker), "%s: picked %s", what,
	  expect_marker);
  if (strcmp (expect_marker, "which_ptx") == 0)
    checkf (f_calls ("cuLinkComplete") > links, "%s: PTX was JIT-linked",
	    what);
  else
    checkf (f_calls ("cuLinkComplete") == links,
	    "%s: cubin loaded without the JIT linker", what);
  free (t);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  for (int i = 0; i < narchs; i++)
    free (cubins[i]);
  free (ptx);
}

void
child_sm86 (void)
{
  static const int archs[] = { 80, 86, 90 };
  child_pick (86, archs, 3, true, "which_sm86", "exact sm_86 cubin", false);
}

void
child_sm86_v2 (void)
{
  static const int archs[] = { 80, 86, 90 };
  child_pick (86, archs, 3, true, "which_sm86",
	      "exact sm_86 cubin", true);
}

void
child_sm87 (void)
{
  static const int archs[] = { 80, 86, 90 };
  child_pick (87, archs, 3, true, "which_sm86",
	      "sm_87 device: highest lower-minor cubin", false);
}

void
child_sm89_ptx (void)
{
  static const int archs[] = { 90, 75 };
  child_pick (89, archs, 2, true, "which_ptx",
	      "sm_89 device, cubins of other majors: PTX", false);
}

void
child_sm89_ptx_v2 (void)
{
  static const int archs[] = { 90, 75 };
  child_pick (89, archs, 2, true, "which_ptx",
	      "the PTX after two cubins", true);
}

void
child_sm90_no_match (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  size_t s1, s2;
  unsigned char *c80 = make_cubin (80, false, "which_sm80", 0, &s1);
  unsigned char *c100 = make_cubin (100, false, "which_sm100", 0, &s2);
  image_add (&im, OK_IMAGE_CUBIN, 80, c80, s1);
  image_add (&im, OK_IMAGE_CUBIN, 100, c100, s2);
  bad_load ("no usable cubin and no PTX", &im.d, version, "sm_90", "sm_80",
	    "sm_100", "PTX", NULL);
  /* The pool's first chunk cannot be allocated.  */
  f_fail ("cuMemAlloc_v2");
  int e = errors_now ();
  check ("small allocation without memory: NULL", p_alloc (0, 100) == NULL);
  check ("small allocation without memory: message",
	 error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", NULL));
  f_fail (NULL);
  void *p = p_alloc (0, 100);
  check ("small allocation works again", p != NULL && p_free (0, p));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  free (c80);
  free (c100);
}

/* A real cubin from ptxas, for the device's architecture.  */
void
child_real_cubin (void)
{
  char dir[] = "/tmp/cuda-harness-ptxas-XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      check ("temporary directory", false);
      return;
    }
  char ptxfile[300], cubinfile[300];
  snprintf (ptxfile, sizeof ptxfile, "%s/k.ptx", dir);
  snprintf (cubinfile, sizeof cubinfile, "%s/k.cubin", dir);
  char *ptx = make_ptx ("sm_80", "which_real");
  FILE *f = fopen (ptxfile, "w");
  fputs (ptx, f);
  fclose (f);
  free (ptx);
  char *argv[] = { (char *) ptxas_path, (char *) "-arch=sm_80",
		   (char *) "-o", cubinfile, ptxfile, NULL };
  pid_t pid;
  int status = -1;
  if (posix_spawn (&pid, ptxas_path, NULL, NULL, argv, environ) == 0)
    waitpid (pid, &status, 0);
  check ("ptxas made a cubin", status == 0);
  FILE *cf = fopen (cubinfile, "rb");
  unsigned char *cubin = NULL;
  long size = 0;
  if (cf != NULL)
    {
      fseek (cf, 0, SEEK_END);
      size = ftell (cf);
      rewind (cf);
      cubin = malloc ((size_t) size);
      if (fread (cubin, 1, (size_t) size, cf) != (size_t) size)
	size = 0;
      fclose (cf);
    }
  unlink (ptxfile);
  unlink (cubinfile);
  rmdir (dir);
  if (size == 0)
    {
      free (cubin);
      return;
    }
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 80, cubin, (size_t) size);
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, &im.d);
  check ("real sm_80 cubin loads", t != NULL && loaded_marker ("which_real"));
  check ("real cubin: not JIT-linked", f_calls ("cuLinkComplete") == links);
  if (t != NULL)
    {
      int v = 0;
      p_dev2host (0, &v, (void *) t[NFUNCS].start, sizeof v);
      check ("real cubin: initial value of a variable", v == 5);
      check ("real cubin: variable sizes",
	     t[NFUNCS].end - t[NFUNCS].start == 4
	     && t[NFUNCS + 1].end - t[NFUNCS + 1].start == 32);
    }
  free (t);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  free (cubin);
}
