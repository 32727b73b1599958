/* The thread_limit clause of a target construct sets the thread limit
   that the region sees, and a region without the clause sees the default
   again, although emulated devices run all their regions on one thread.  */
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
#pragma omp master
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
  return 0;
}
