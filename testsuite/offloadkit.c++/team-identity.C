// Every thread of a parallel region inside a target region answers as the
// device (offloadkit.c/team-identity.c says why): here from a member
// function and a function object's call operator run by a parallel loop
// in a region, and from tasks.  (No lambda defined in the region: GCC
// 12's g++ crashes on one there.)
// { dg-do run }
// { dg-set-target-env-var OFFLOADKIT_EMULATE 2 }

#include <cstdio>
#include <cstdlib>

#include "okt-check.h"

const int N = 48, T = 4;

OKT_BEGIN_DECLARE_TARGET
struct probe
{
  int base;
  int ask () const { return base + omp_get_device_num (); }
};

struct where
{
  int operator() () const { return omp_get_device_num (); }
};
#pragma omp end declare target

int
main ()
{
  okt_require_devices ();
  int host = omp_get_initial_device ();
  for (int d = 0; d < 2; d++)
    {
      int got[N], via_functor[N], from_task[N], threads = 0;
#pragma omp target device(d) map(from: got, via_functor, from_task, threads)
      {
	probe p = { 100 };
	where w;
#pragma omp parallel for num_threads(T) schedule(static, 1) \
	reduction(max: threads)
	for (int i = 0; i < N; i++)
	  {
	    got[i] = p.ask ();
	    via_functor[i] = w ();
	    threads = omp_get_thread_num () > threads
		      ? omp_get_thread_num () : threads;
	  }
#pragma omp parallel num_threads(T)
#pragma omp single nowait
	for (int i = 0; i < N; i++)
#pragma omp task firstprivate(i)
	  from_task[i] = omp_get_device_num ();
      }
      OKT_CHECK (threads > 0 || omp_get_num_procs () == 1);
      for (int i = 0; i < N; i++)
	{
	  if (got[i] != 100 + d || via_functor[i] != d || from_task[i] != d)
	    {
	      std::fprintf (stderr, "device %d, iteration %d: %d %d %d\n", d,
			    i, got[i], via_functor[i], from_task[i]);
	      std::abort ();
	    }
	}
    }
  int got[N];
#pragma omp parallel for num_threads(T)
  for (int i = 0; i < N; i++)
    got[i] = omp_get_device_num ();
  for (int i = 0; i < N; i++)
    OKT_CHECK (got[i] == host);
  return 0;
}
