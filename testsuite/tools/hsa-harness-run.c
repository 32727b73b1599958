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

/* GCC 13's struct kernargs_abi.  */
struct kernargs_v3
{
  int64_t tgt_vars, unused, out_ptr, heap_ptr, arena_ptr, stack_ptr;
  int32_t arena_size_per_team, stack_size_per_thread;
};

static size_t
block_size (uint64_t addr, uint64_t *base)
{
  uintptr_t b = 0;
  size_t size = 0;
  if (!f_block ((uintptr_t) addr, &b, &size))
    return 0;
  *base = b;
  return size;
}

bool
v3_args_are (const struct dispatch *d, void *tv, unsigned teams,
	     unsigned threads, size_t arena, size_t stack, uint32_t group)
{
  if (d->nkargs < 7)
    {
      fprintf (stderr, "  (%d kernarg words)\n", d->nkargs);
      return false;
    }
  struct kernargs_v3 k;
  memcpy (&k, d->kargs, sizeof k);
  uint64_t base = 0;
  size_t heap_block = block_size ((uint64_t) k.heap_ptr, &base);
  bool heap_ok = heap_block >= 4096 + 8 && base == (uint64_t) k.heap_ptr
		 && *(int64_t *) (uintptr_t) k.heap_ptr + 8
		    <= (int64_t) heap_block;
  size_t need = teams * arena + (size_t) teams * threads * stack;
  size_t eph_block = block_size ((uint64_t) k.arena_ptr, &base);
  bool eph_ok = base == (uint64_t) k.arena_ptr && eph_block >= need
		&& (uint64_t) k.stack_ptr == (uint64_t) k.arena_ptr
					     + teams * arena;
  bool ok = k.tgt_vars == (int64_t) (uintptr_t) tv && k.unused == 0
	    && (uint64_t) k.out_ptr == d->p.kernarg_address + V3_OUTPUT
	    && heap_ok && eph_ok
	    && k.arena_size_per_team == (int32_t) arena
	    && k.stack_size_per_thread == (int32_t) stack
	    && d->p.group_size == group;
  if (!ok)
    fprintf (stderr, "  (kernargs %#llx %#llx out %#llx heap %#llx (block"
	     " %zu) arena %#llx stack %#llx (block %zu, need %zu) sizes %d %d;"
	     " LDS %u, want %u)\n", (unsigned long long) k.tgt_vars,
	     (unsigned long long) k.unused, (unsigned long long) k.out_ptr,
	     (unsigned long long) k.heap_ptr, heap_block,
	     (unsigned long long) k.arena_ptr, (unsigned long long) k.stack_ptr,
	     eph_block, need, k.arena_size_per_team, k.stack_size_per_thread,
	     (unsigned) d->p.group_size, (unsigned) group);
  return ok;
}

uint32_t
v3_lds (unsigned teams, uint32_t own)
{
  unsigned per_cu = teams / 60;
  uint32_t lds = per_cu ? 65536 / per_cu : 65536;
  return own > lds ? own : lds;
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
  const struct ok_tgt_desc *td = target_for (our_desc, agent_arch[0]);
  bool v3 = tgt_is_v3 (td);
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
      /* GCC 13+'s device code gets more LDS than the kernel's own: GCC
	 14+'s runtime keeps its team data and low-latency heap there.  */
      uint32_t own_lds = (uint32_t) (extra >> 32);
      checkf (d.p.private_size == priv
	      && d.p.group_size == (v3 ? v3_lds (d.p.grid[0], own_lds)
				       : own_lds),
	      "kernel %zu: segment sizes of its descriptor%s", k,
	      v3 ? ", the LDS shared out between teams" : "");
      const struct ok_kernel_info *ki = &td->kernel_info[k];
      checkf (ki->private_segment_size == priv
	      && ki->group_segment_size == own_lds
	      && ki->kernarg_size == (uint32_t) extra && ki->vgprs > 0
	      && ki->sgprs > 0,
	      "kernel %zu: mkoffload's kernel info agrees with the code"
	      " object", k);
      checkf ((d.p.header & 0xff) == 2 && (d.p.setup & 3) == 3
	      && d.p.completion_signal != 0,
	      "kernel %zu: a kernel-dispatch packet, 3 dimensions, a"
	      " completion signal", k);
      if (v3)
	checkf (v3_args_are (&d, tv, d.p.grid[0], d.p.wg[2], 64 * 1024,
			     32 * 1024, v3_lds (d.p.grid[0], own_lds)),
		"kernel %zu: version 3 kernargs: tgt_vars, then the output,"
		" heap, arena and stack pointers and sizes", k);
      else
	checkf (d.nkargs >= 5 && d.kargs[0] == (uintptr_t) tv
		&& d.kargs[2] == d.p.kernarg_address + V2_OUTPUT
		&& d.kargs[3] != 0 && d.kargs[4] != 0,
		"kernel %zu: version 2 kernargs: tgt_vars, then the output,"
		" heap and arena pointers", k);
    }
  /* Geometry: one work-group per team, 64 lanes by one wavefront per
     thread.  The fake's agents have 60 compute units.  */
  void *fn = (void *) tab0[0].start;
  checkf (run_one (0, fn, tv, NULL, &d) && geometry_is (&d, 60, 16),
	  "defaults on %s: 60 teams (one per CU), 16 wavefronts",
	  agent_name[0]);
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
  /* GCC's plugin gives a gfx900 agent 4 wavefronts by default.  */
  unsigned waves1 = agent_arch[1] == 0x900 ? 4 : 16;
  checkf (run_one (1, (void *) tab1[0].start, tv, NULL, &d)
	  && geometry_is (&d, 60, waves1) && d.agent == 1,
	  "defaults on %s: %u wavefronts%s", agent_name[1], waves1,
	  waves1 == 4 ? " (GCC's gfx900 workaround)" : "");
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
