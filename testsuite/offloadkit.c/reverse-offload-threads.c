/* Reverse offload from the threads of a parallel region inside a target
   region on the emulated device: each thread's ancestor regions run on
   the host, one at a time, and copy between the device's data and the
   host's.  */
/* { dg-do run } */

/* Before okt-check.h, whose functions have target regions.  */
#pragma omp requires reverse_offload

#include "okt-check.h"

#define N 16

/* Host code only: what the ancestor regions call.  */
static int seen[N];
static int in_flight, most_in_flight;

__attribute__ ((noipa)) static void
note (int i, int value)
{
  int now = __atomic_add_fetch (&in_flight, 1, __ATOMIC_SEQ_CST);
  if (now > most_in_flight)
    most_in_flight = now;
  seen[i] = value;
  __atomic_sub_fetch (&in_flight, 1, __ATOMIC_SEQ_CST);
}

int
main (void)
{
  okt_require_devices ();
  int acc[N], results[N], threads = 0;
  for (int i = 0; i < N; i++)
    {
      acc[i] = 1000 + i;
      results[i] = -1;
      seen[i] = -1;
    }
#pragma omp target map(to: acc) map(from: results, threads)
  {
    for (int i = 0; i < N; i++)
      acc[i] = i;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
      threads = omp_get_num_threads ();
#pragma omp for schedule(static, 1)
      for (int i = 0; i < N; i++)
	{
	  int v = 10 * i;
#pragma omp target device(ancestor: 1) map(always, tofrom: acc[i:1]) \
  firstprivate(v)
	  {
	    acc[i] += v;
	    note (i, acc[i]);
	  }
	  results[i] = acc[i];
	}
    }
  }
  OKT_CHECK (threads > 1);
  for (int i = 0; i < N; i++)
    {
      /* The host's array got each device value plus 10 i; the device's
	 copy got the result back.  */
      OKT_CHECK (acc[i] == 11 * i);
      OKT_CHECK (results[i] == 11 * i);
      OKT_CHECK (seen[i] == 11 * i);
    }
  OKT_CHECK (most_in_flight == 1);
  return 0;
}
