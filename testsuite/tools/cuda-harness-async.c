/* cuda-harness: asynchronous runs (completions from another thread,
   only once the kernels are done) and several host threads launching at
   once on both devices.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cuda-harness.h"

void
test_async (void)
{
  long bad = bad_calls ();
  int token1, token2;
  completions_reset ();
  int before = f_launch_count ();
  p_async_run (0, (void *) tab0[0].start, NULL, NULL, &token1);
  wait_completions (1, 10);
  check ("async_run: completion called", completions_now () == 1);
  check ("async_run: with its async_data", last_completion () == &token1);
  check ("async_run: completion from another thread",
	 !pthread_equal (completion_thread (), pthread_self ()));
  check ("async_run: one launch", f_launch_count () == before + 1);

  /* While the kernel is held back, the completion must wait.  */
  f_gate (1);
  completions_reset ();
  void *a[] = { ARG_TEAMS (2), NULL };
  p_async_run (0, (void *) tab0[0].start, NULL, a, &token1);
  p_async_run (0, (void *) tab0[2].start, NULL, NULL, &token2);
  struct timespec pause = { 0, 300 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  check ("async_run: no completion before the kernels finish",
	 completions_now () == 0);
  /* A synchronous copy on another stream is not held up by them.  */
  void *p = p_alloc (0, 64);
  int v = 3;
  check ("copy while kernels run", p != NULL && p_host2dev (0, p, &v,
							   sizeof v));
  f_gate (0);
  wait_completions (2, 10);
  check ("async_run: both completions after the kernels finish",
	 completions_now () == 2);
  p_free (0, p);
  check_no_bad_calls ("async: no invalid driver calls", bad);
}

/* Several host threads launching at once, on both devices.  */
void
test_threads (void)
{
  long bad = bad_calls ();
  const struct ok_addr_pair *t1 = tab1;
  if (!tab1_ok)
    {
      check ("threads: image on device 1", false);
      return;
    }
  int before = f_launch_count ();
  void *fns[6];
  for (int i = 0; i < 6; i++)
    fns[i] = (void *) (i % 2 == 0 ? tab0 : t1)[i % 3].start;
  harness_hammer_threads (fns);
  check ("threads: 240 launches", f_launch_count () == before + 240);
  bool devs_ok = true;
  int on1 = 0;
  for (int i = before; i < before + 240; i++)
    {
      struct launch l;
      get_launch (i, &l);
      on1 += l.device == 1;
      devs_ok &= l.stream > 2;
    }
  check ("threads: half the launches on device 1 (its context)", on1 == 120);
  check ("threads: every launch on a stream of its own", devs_ok);
  check_no_bad_calls ("threads: no invalid driver calls", bad);
}
