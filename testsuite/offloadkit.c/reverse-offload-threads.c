/* Reverse offload from the threads of a parallel region inside a target
   region on the emulated device: each thread's ancestor regions run on
   the host, one at a time, and copy between the device's data and the
   host's.  And from regions of two devices launched by two host threads
   at once.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 2 } */

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

#pragma omp begin declare target
int count;
#pragma omp end declare target

/* The host's COUNT, by name, seen from ancestor regions: never the
   devices'.  */
static int host_count_seen;

__attribute__ ((noipa)) static void
note_count (void)
{
  if (count != 0)
    __atomic_store_n (&host_count_seen, count, __ATOMIC_SEQ_CST);
}

/* Host thread D launches ROUNDS regions on device D, each with an
   ancestor region; true when all gave the right values.  */
static int
two_devices (int d, int rounds)
{
  int ok = 1;
  for (int k = 0; k < rounds; k++)
    {
      int x = -1, r = -1;
#pragma omp target device(d) map(to: x) map(from: r)
      {
	x = k + 1;
	count++;
#pragma omp target device(ancestor: 1) map(always, tofrom: x)
	{
	  x *= 2;
	  note_count ();
	}
	r = x;
      }
      ok &= x == 2 * (k + 1) && r == x;
    }
  return ok;
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

  int ok[2] = { 0, 0 };
#pragma omp parallel num_threads(2)
  {
    int d = omp_get_thread_num ();
    ok[d] = two_devices (d, 50);
  }
  OKT_CHECK (ok[0] && ok[1]);
  OKT_CHECK (host_count_seen == 0 && count == 0);
  for (int d = 0; d < 2; d++)
    {
#pragma omp target update from(count) device(d)
      OKT_CHECK (count == 50);
      count = 0;
    }
  return 0;
}
