/* cuda-harness: kernel launches through the plugin: geometry for
   num_teams and thread_limit, parameters, GCC's soft stacks, kernel
   attributes from PTX directives, and launches that fail; in a child, a
   device without streams.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda-harness.h"

bool
get_launch (int i, struct launch *l)
{
  memset (l, 0, sizeof *l);
  return f_launch_info (i, l->name, sizeof l->name, l->grid, l->block,
			&l->shmem, &l->stream, &l->stream_flags, &l->device,
			l->params) != 0;
}

/* Run kernel K on DEV with ARGS; return the launch record.  */
static bool
run_one (int dev, int k, void *tgt_vars, void **args, struct launch *l)
{
  int before = f_launch_count ();
  void *fn = (void *) (dev == 0 ? tab0[k].start : 0);
  p_run (dev, fn, tgt_vars, args);
  return f_launch_count () == before + 1 && get_launch (before, l);
}

static bool
dims_are (const struct launch *l, unsigned gx, unsigned bx, unsigned by)
{
  bool ok = l->grid[0] == gx && l->grid[1] == 1 && l->grid[2] == 1
	    && l->block[0] == bx && l->block[1] == by && l->block[2] == 1;
  if (!ok)
    fprintf (stderr, "  (grid %u,%u,%u block %u,%u,%u; expected %u,1,1"
	     " %u,%u,1)\n", l->grid[0], l->grid[1], l->grid[2], l->block[0],
	     l->block[1], l->block[2], gx, bx, by);
  return ok;
}

void
test_launch (void)
{
  long bad = bad_calls ();
  void **tv = p_alloc (0, 4 * sizeof (void *));
  struct launch l;

  /* The fake: 4 SMs of 65536 registers; kernels use 32 registers unless
     .maxnreg says otherwise, and 1024 threads unless .maxntid does.  */
  check ("run, no arguments: one launch", run_one (0, 0, tv, NULL, &l));
  check ("launch: the kernel's name", strcmp (l.name, "k_plain") == 0);
  check ("launch: default 8 warps, 65536 / (32 * 32 * 8) * 4 SMs = 32 teams",
	 dims_are (&l, 32, 32, 8));
  check ("launch: tgt_vars passed through",
	 l.params[0] == (uintptr_t) tv);
  check ("launch: 128 KiB stack per warp", l.params[2] == 128 * 1024);
  check ("launch: stacks are device memory", l.params[1] != 0);
  check ("launch: on a stream of its own, not the legacy default stream",
	 l.stream != 0 && l.stream != 1 && l.stream != 2);
  check ("launch: non-blocking stream", (l.stream_flags & 1) != 0);
  check ("launch: device 0", l.device == 0);
  check ("launch: no dynamic shared memory", l.shmem == 0);

  long allocs = f_calls ("cuMemAlloc_v2");
  unsigned long long stacks = l.params[1];
  check ("run again", run_one (0, 0, tv, NULL, &l));
  check ("stacks reused: no new allocation",
	 f_calls ("cuMemAlloc_v2") == allocs && l.params[1] == stacks);

  void *a1[] = { ARG_TEAMS (4), NULL };
  check ("num_teams 4", run_one (0, 0, tv, a1, &l) && dims_are (&l, 4, 32, 8));
  /* GCC's nvptx runtime runs one OpenMP thread per warp: thread_limit
     counts warps.  */
  void *a2[] = { ARG_LIMIT (6), NULL };
  check ("thread_limit 6: block (32, 6, 1)",
	 run_one (0, 0, tv, a2, &l) && l.block[0] == 32 && l.block[1] == 6
	 && l.block[2] == 1);
  void *a2b[] = { ARG_LIMIT (1), NULL };
  check ("thread_limit 1: one warp",
	 run_one (0, 0, tv, a2b, &l) && l.block[0] == 32 && l.block[1] == 1);
  void *a3[] = { ARG_TEAMS (3), ARG_LIMIT (20), NULL };
  check ("num_teams 3, thread_limit 20: grid 3, 20 warps",
	 run_one (0, 0, tv, a3, &l) && dims_are (&l, 3, 32, 20));
  void *a4[] = { ARG_TEAMS (2), ARG_LIMIT (4096), NULL };
  check ("thread_limit 4096: capped at 32 warps",
	 run_one (0, 0, tv, a4, &l) && dims_are (&l, 2, 32, 32));
  /* Kernel attributes come from PTX directives (the fake's cubins have
     none).  */
  struct ok_addr_pair *pt = load (0, &ptx_im.d);
  check ("PTX image on device 0", pt != NULL);
  if (pt != NULL)
    {
      void *a5[] = { ARG_TEAMS (2), NULL };
      int before = f_launch_count ();
      p_run (0, (void *) pt[1].start, tv, a5);
      check ("kernel with .maxntid 128: 4 warps",
	     get_launch (before, &l) && dims_are (&l, 2, 32, 4)
	     && strcmp (l.name, "k_maxntid") == 0);
      p_run (0, (void *) pt[2].start, tv, NULL);
      check ("kernel with .maxnreg 64: 65536 / (64 * 32 * 8) * 4 = 16 teams",
	     get_launch (before + 1, &l) && dims_are (&l, 16, 32, 8));
      free (pt);
      check ("PTX image on device 0: unload",
	     p_unload_image (0, version, &ptx_im.d));
    }
  void *a7[] = { ARG_TEAMS (5000), NULL };
  check ("num_teams 5000: capped at the 32 teams the device holds",
	 run_one (0, 0, tv, a7, &l) && dims_are (&l, 32, 32, 8));
  check ("run with NULL tgt_vars", run_one (0, 0, NULL, NULL, &l)
	 && l.params[0] == 0);
  check_no_bad_calls ("launches: no invalid driver calls", bad);

  /* A region makes two driver calls, as GCC's plugin: the launch and the
     wait for it; the context is the one this thread made current before,
     not asked for again.  */
  long launches = f_calls ("cuLaunchKernel");
  long syncs = f_calls ("cuStreamSynchronize");
  long gets = f_calls ("cuCtxGetCurrent");
  long sets = f_calls ("cuCtxSetCurrent");
  check ("run: a launch and a wait, no context query",
	 run_one (0, 0, tv, NULL, &l)
	 && f_calls ("cuLaunchKernel") == launches + 1
	 && f_calls ("cuStreamSynchronize") == syncs + 1
	 && f_calls ("cuCtxGetCurrent") == gets
	 && f_calls ("cuCtxSetCurrent") == sets);

  /* The program's own CUDA code switches the thread to no context, or to
     device 1's: the driver refuses the launch of device 0's kernel, and
     the plugin makes device 0's context current and launches again.  */
  harness_fn set_current = harness_fake_fn ("cuCtxSetCurrent");
  harness_fn retain = harness_fake_fn ("cuDevicePrimaryCtxRetain");
  harness_fn release = harness_fake_fn ("cuDevicePrimaryCtxRelease_v2");
  void *other = NULL;
  bool have_other = retain (&other, 1) == 0;
  for (int round = 0; round < (have_other ? 2 : 1); round++)
    {
      const char *what = round == 0 ? "no context" : "device 1's context";
      long bad1 = bad_calls ();
      launches = f_calls ("cuLaunchKernel");
      set_current (round == 0 ? NULL : other);
      checkf (run_one (0, 0, tv, NULL, &l) && l.device == 0,
	      "the program left %s current: the region runs on device 0",
	      what);
      checkf (bad_calls () == bad1 + 1
	      && f_calls ("cuLaunchKernel") == launches + 2,
	      "the program left %s current: one launch refused, then made"
	      " again", what);
      gets = f_calls ("cuCtxGetCurrent");
      checkf (run_one (0, 0, tv, NULL, &l)
	      && f_calls ("cuCtxGetCurrent") == gets,
	      "the program left %s current: the next region as before",
	      what);
    }
  if (have_other)
    release (1);

  /* Failures.  */
  const char *const fails[][2] = {
    { "cuLaunchKernel", "cuLaunchKernel" },
    { "cuStreamSynchronize", "cuStreamSynchronize" },
  };
  for (int i = 0; i < 2; i++)
    {
      f_fail (fails[i][0]);
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) tab0[0].start, tv, NULL));
      f_fail (NULL);
      checkf (fatal, "failed %s: the run is fatal", fails[i][0]);
      checkf (error_says (e, "k_plain", "device 0", fails[i][1],
			  "CUDA_ERROR_LAUNCH_FAILED", NULL),
	      "failed %s: message", fails[i][0]);
    }
  /* A trap in the kernel (abort, assert, Fortran STOP) shows only as
     CUDA_ERROR_LAUNCH_FAILED at the synchronisation: say what it may be.  */
  {
    f_fail ("cuStreamSynchronize");
    int e = errors_now ();
    volatile bool fatal;
    STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) tab0[0].start, tv, NULL));
    f_fail (NULL);
    check ("kernel failure: the message suggests abort",
	   fatal && error_says (e, "k_plain", "CUDA_ERROR_LAUNCH_FAILED",
				"perhaps abort was called", NULL));
    /* In GCC's nvptx plugin's words first, which libgomp's tests match
       (stop-1.f).  */
    static const char gcc_words[] = "cuStreamSynchronize error: unspecified"
      " launch failure (perhaps abort was called) [offloadkit-nvptx: ";
    check ("kernel failure: GCC's words first",
	   strncmp (last_error (), gcc_words, sizeof gcc_words - 1) == 0);
  }
  check ("runs work after failed launches", run_one (0, 0, tv, NULL, &l));

  /* async_run whose launch fails: nothing started, no completion.  */
  {
    f_fail ("cuLaunchKernel");
    int e = errors_now (), c = completions_now (), token;
    volatile bool fatal;
    STANDIN_CATCH_FATAL (fatal, p_async_run (0, (void *) tab0[0].start, tv,
					     NULL, &token));
    f_fail (NULL);
    check ("failed async launch: fatal", fatal);
    check ("failed async launch: message",
	   error_says (e, "k_plain", "cuLaunchKernel",
		       "CUDA_ERROR_LAUNCH_FAILED", NULL));
    struct timespec pause = { 0, 100 * 1000 * 1000 };
    nanosleep (&pause, NULL);
    check ("failed async launch: no completion", completions_now () == c);
  }

  /* Stacks cannot be allocated: on device 1, which has none cached
     yet.  */
  if (tab1_ok)
    {
      f_fail ("cuMemAlloc_v2");
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (1, (void *) tab1[0].start, NULL,
						 NULL));
      f_fail (NULL);
      check ("stacks out of memory: fatal", fatal);
      check ("stacks out of memory: message",
	     error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", "k_plain", NULL));
      int before = f_launch_count ();
      p_run (1, (void *) tab1[0].start, NULL, NULL);
      check ("runs work after it", f_launch_count () == before + 1);
    }
  p_free (0, tv);
}

/* FAKECUDA_FAIL=cuStreamCreate: a launch has no stream.  */
void
child_no_stream (void)
{
  check ("1 device", p_get_num_devices () == 1);
  if (!p_init_device (0))
    {
      /* Refusing the device is fine too, if it says why.  */
      check ("init refused: message", strstr (last_error (), "cuStreamCreate")
	     != NULL);
      check_no_leaks ("after the failed init");
      return;
    }
  struct image im;
  image_init (&im);
  char *ptx = make_ptx ("sm_90", "which_ptx");
  image_add_ptx (&im, ptx);
  struct ok_addr_pair *t = load (0, &im.d);
  check ("load", t != NULL);
  if (t != NULL)
    {
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) t[0].start, NULL, NULL));
      check ("run without a stream: fatal", fatal);
      check ("run without a stream: message",
	     error_says (e, "cuStreamCreate", "device 0", NULL));
    }
  free (t);
  free (ptx);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}
