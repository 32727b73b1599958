/* The thread_limit clause of a target construct sets the thread limit
   that the region sees, and a region without the clause sees the default
   again.  More generally, settings one region changes do not leak into
   the next: each region starts from the global ones, as libgomp's own
   host fallback does.  */
/* { dg-do run } */
/* { dg-set-target-env-var OMP_THREAD_LIMIT 6 } */

#include "okt-check.h"

int
main (void)
{
  okt_require_devices ();
  OKT_CHECK (omp_get_thread_limit () == 6);

  int lim = -1, team = -1;
#pragma omp target thread_limit(3) map(from: lim, team)
  {
    lim = omp_get_thread_limit ();
#pragma omp parallel num_threads(5)
#pragma omp masked
    team = omp_get_num_threads ();
  }
  OKT_CHECK (lim == 3);
  OKT_CHECK (team >= 1 && team <= 3);

#pragma omp target map(from: lim)
  lim = omp_get_thread_limit ();
  OKT_CHECK (lim == 6);

  int big = 1000;
#pragma omp target thread_limit(big) map(from: lim)
  lim = omp_get_thread_limit ();
  OKT_CHECK (lim == 1000);

#pragma omp target thread_limit(2) map(from: lim) nowait
  lim = omp_get_thread_limit ();
#pragma omp taskwait
  OKT_CHECK (lim == 2);

#pragma omp target map(from: lim) nowait
  lim = omp_get_thread_limit ();
#pragma omp taskwait
  OKT_CHECK (lim == 6);

  /* The host's own limit never changed.  */
  OKT_CHECK (omp_get_thread_limit () == 6);
  /* omp_set_num_threads in one region does not carry into the next.  */
  int host_max = omp_get_max_threads (), max = -1;
#pragma omp target
  omp_set_num_threads (host_max + 3);
#pragma omp target map(from: max)
  max = omp_get_max_threads ();
  OKT_CHECK (max == host_max);
  OKT_CHECK (omp_get_max_threads () == host_max);
  return 0;
}
