/* hsa-harness: what runs on the main process's devices: copies, kernel
   dispatches (kernel object, grid, work-group, segment sizes, kernarg
   contents) for several teams and threads settings, async runs, and
   several host threads at once.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hsa-harness.h"

bool
get_dispatch (int i, struct dispatch *d)
{
  memset (d, 0, sizeof *d);
  int n = f_dispatch_info (i, &d->p, &d->agent, d->kernel, sizeof d->kernel,
			   d->kargs, sizeof d->kargs);
  d->nkargs = n > 0 ? (n - 1) / 8 : 0;
  return n > 0;
}

bool
run_one (int dev, void *fn, void *tgt_vars, void **args, struct dispatch *d)
{
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, p_run (dev, fn, tgt_vars, args));
  int after = f_dispatch_count ();
  if (fatal || after == before)
    {
      fprintf (stderr, "  (run: %s)\n", fatal ? last_error () : "no dispatch");
      return false;
    }
  return get_dispatch (after - 1, d);
}

static bool
geometry_is (const struct dispatch *d, unsigned teams, unsigned threads)
{
  bool ok = (d->p.grid[0] == teams && d->p.grid[1] == 64
	     && d->p.grid[2] == threads && d->p.wg[0] == 1
	     && d->p.wg[1] == 64 && d->p.wg[2] == threads);
  if (!ok)
    fprintf (stderr, "  (grid %u,%u,%u work-group %u,%u,%u; want %u,64,%u "
	     "and 1,64,%u)\n", d->p.grid[0], d->p.grid[1], d->p.grid[2],
	     d->p.wg[0], d->p.wg[1], d->p.wg[2], teams, threads, threads);
  return ok;
}

void
test_memory (void)
{
  long bad = bad_calls ();
  char src[1000], back[1000];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (char) (i * 7);
  void *a = p_alloc (0, sizeof src), *b = p_alloc (0, sizeof src);
  check ("alloc", a != NULL && b != NULL);
  if (a == NULL || b == NULL)
    return;
  memset (back, 0, sizeof back);
  check ("host2dev, dev2dev, dev2host round trip",
	 p_host2dev (0, a, src, sizeof src)
	 && p_dev2dev (0, b, a, sizeof src)
	 && p_dev2host (0, back, b, sizeof back)
	 && memcmp (src, back, sizeof src) == 0);
  check ("free", p_free (0, a) && p_free (0, b));
  void *big = p_alloc (1, (size_t) 64 << 20);
  check ("64 MiB on device 1", big != NULL && p_free (1, big));
  check_no_bad_calls ("memory: no invalid runtime calls", bad);
}

void
test_launch (void)
{
  if (tab0 == NULL || tab1 == NULL)
    {
      check ("launch: images loaded", false);
      return;
    }
  long bad = bad_calls ();
  const struct ok_tgt_desc *td = target_for (our_desc, 0x906);
  void *tv = p_alloc (0, 64);
  struct dispatch d;
  for (size_t k = 0; k < nfuncs; k++)
    {
      bool ran = run_one (0, (void *) tab0[k].start, tv, NULL, &d);
      checkf (ran, "kernel %zu: dispatched", k);
      if (!ran)
	continue;
      char want[160];
      snprintf (want, sizeof want, "%s.kd", td->func_names[k]);
      uintptr_t obj = 0;
      uint64_t priv = 0, extra = 0;
      f_symbol (want, 0, &obj, &priv, NULL, &extra);
      checkf (strcmp (d.kernel, want) == 0 && d.p.kernel_object == obj,
	      "kernel %zu: the kernel object of %.100s", k, want);
      checkf (d.p.private_size == priv
	      && d.p.group_size == (uint32_t) (extra >> 32),
	      "kernel %zu: segment sizes of its descriptor", k);
      const struct ok_kernel_info *ki = &td->kernel_info[k];
      checkf (ki->private_segment_size == priv
	      && ki->group_segment_size == (uint32_t) (extra >> 32)
	      && ki->kernarg_size == (uint32_t) extra && ki->vgprs > 0
	      && ki->sgprs > 0,
	      "kernel %zu: mkoffload's kernel info agrees with the code"
	      " object", k);
      checkf ((d.p.header & 0xff) == 2 && (d.p.setup & 3) == 3
	      && d.p.completion_signal != 0,
	      "kernel %zu: a kernel-dispatch packet, 3 dimensions, a"
	      " completion signal", k);
      checkf (d.nkargs >= 5 && d.kargs[0] == (uintptr_t) tv
	      && d.kargs[2] == d.p.kernarg_address + 40 && d.kargs[3] != 0
	      && d.kargs[4] != 0,
	      "kernel %zu: kernargs: tgt_vars, then the output, heap and"
	      " arena pointers", k);
    }
  /* Geometry: one work-group per team, 64 lanes by one wavefront per
     thread.  The fake's agents have 60 compute units.  */
  void *fn = (void *) tab0[0].start;
  check ("defaults on gfx906: 60 teams (one per CU), 16 wavefronts",
	 run_one (0, fn, tv, NULL, &d) && geometry_is (&d, 60, 16));
  void *a1[] = { ARG_TEAMS (3), ARG_LIMIT (2), NULL };
  check ("num_teams 3, thread_limit 2",
	 run_one (0, fn, tv, a1, &d) && geometry_is (&d, 3, 2));
  void *a2[] = { ARG_TEAMS (5), NULL };
  check ("num_teams 5: 16 wavefronts",
	 run_one (0, fn, tv, a2, &d) && geometry_is (&d, 5, 16));
  void *a3[] = { ARG_LIMIT (4096), NULL };
  check ("thread_limit 4096: capped at 16 wavefronts",
	 run_one (0, fn, tv, a3, &d) && geometry_is (&d, 60, 16));
  void *a4[] = { ARG_LIMIT (1), NULL };
  check ("thread_limit 1: one wavefront",
	 run_one (0, fn, tv, a4, &d) && geometry_is (&d, 60, 1));
  check ("defaults on gfx900: 4 wavefronts (GCC's gfx900 workaround)",
	 run_one (1, (void *) tab1[0].start, tv, NULL, &d)
	 && geometry_is (&d, 60, 4) && d.agent == 1);
  /* The arena holds a slice per team; it must have grown for more.  */
  void *a5[] = { ARG_TEAMS (200), ARG_LIMIT (1), NULL };
  check ("num_teams 200",
	 run_one (0, fn, tv, a5, &d) && geometry_is (&d, 200, 1)
	 && d.kargs[4] != 0);
  p_free (0, tv);
  check_no_bad_calls ("launch: no invalid runtime calls", bad);
}

void
test_async (void)
{
  if (tab0 == NULL)
    return;
  long bad = bad_calls ();
  completions_reset ();
  f_gate (1);
  int token;
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, p_async_run (0, (void *) tab0[0].start, NULL,
					   NULL, &token));
  check ("async_run returns while the kernel is pending",
	 !fatal && completions_now () == 0);
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  check ("no completion before the kernel completes",
	 completions_now () == 0);
  f_gate (0);
  wait_completions (1, 10);
  check ("async completion: once, with its async_data",
	 completions_now () == 1 && last_completion () == &token);
  check ("async completion: from another thread",
	 completions_now () == 1
	 && !pthread_equal (completion_thread (), pthread_self ()));
  check ("async: one dispatch", f_dispatch_count () == before + 1);
  check_no_bad_calls ("async: no invalid runtime calls", bad);
}

void
test_threads (void)
{
  if (tab0 == NULL || tab1 == NULL)
    return;
  long bad = bad_calls ();
  int before = f_dispatch_count ();
  void *fns[6];
  for (int i = 0; i < 6; i++)
    fns[i] = (void *) (i % 2 == 0 ? tab0 : tab1)[0].start;
  harness_hammer_threads (fns);
  check ("threads: 240 dispatches", f_dispatch_count () == before + 240);
  int on1 = 0;
  for (int i = before; i < before + 240; i++)
    {
      struct dispatch d;
      get_dispatch (i, &d);
      on1 += d.agent == 1;
    }
  check ("threads: half the dispatches on device 1's agent", on1 == 120);
  check_no_bad_calls ("threads: no invalid runtime calls", bad);
}
