/* Every thread that runs a region's code answers as the device: the
   threads of parallel regions inside a target region (teams distribute
   parallel for, parallel sections, loops of every schedule, nested
   parallel regions, tasks run by any thread of the team) get the
   region's device from omp_get_device_num (), omp_is_initial_device ()
   and acc_on_device (), as on a GPU; host threads, before and after,
   get the host's answers.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 2 } */
/* { dg-set-target-env-var OMP_MAX_ACTIVE_LEVELS 2 } */

#include <openacc.h>

#include "okt-check.h"

#define N 64
#define T 4

/* What the calling thread answers, in one int: the device number, 1000
   more when it says it is the initial device, 10000 more when
   acc_on_device says it is not on a device.  */
OKT_BEGIN_DECLARE_TARGET
static int
answers (void)
{
  return (omp_get_device_num () + (omp_is_initial_device () ? 1000 : 0)
	  + (acc_on_device (acc_device_not_host) ? 0 : 10000));
}
#pragma omp end declare target

static int got[N], thr[N];

/* Check GOT[0..N) against device D's answers; 1 when more than one
   thread ran the iterations (THR).  */
static int
check_device (int d, const char *what)
{
  int initial = okt_region_initial_device ();
  int threads = 0;
  for (int i = 0; i < N; i++)
    {
      int want = d + (initial > 0 ? 1000 : 0);
      if (got[i] != want && !(initial < 0 && got[i] == d + 1000))
	{
	  fprintf (stderr, "%s on device %d: iteration %d (thread %d)"
		   " answered %d, want %d\n", what, d, i, thr[i], got[i],
		   want);
	  abort ();
	}
      threads |= thr[i] != 0;
    }
  return threads;
}

int
main (void)
{
  okt_require_devices ();
  int host = omp_get_initial_device ();

  for (int d = 0; d < 2; d++)
    {
      int many = 0;
#pragma omp target teams distribute parallel for device(d) \
	num_teams(1) num_threads(T) schedule(static, 1) map(from: got, thr)
      for (int i = 0; i < N; i++)
	{
	  got[i] = answers ();
	  thr[i] = omp_get_thread_num ();
	}
      many |= check_device (d, "teams distribute parallel for");

      /* Every schedule GCC calls a different entry point for.  */
#pragma omp target device(d) map(from: got, thr)
      {
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
	for (int i = 0; i < N; i++)
	  got[i] = answers (), thr[i] = omp_get_thread_num ();
      }
      many |= check_device (d, "parallel for schedule(dynamic)");
#pragma omp target device(d) map(from: got, thr)
      {
#pragma omp parallel for num_threads(T) schedule(guided)
	for (int i = 0; i < N; i++)
	  got[i] = answers (), thr[i] = omp_get_thread_num ();
      }
      many |= check_device (d, "parallel for schedule(guided)");
#pragma omp target device(d) map(from: got, thr)
      {
#pragma omp parallel for num_threads(T) schedule(runtime)
	for (int i = 0; i < N; i++)
	  got[i] = answers (), thr[i] = omp_get_thread_num ();
      }
      many |= check_device (d, "parallel for schedule(runtime)");
#pragma omp target device(d) map(from: got, thr)
      {
#pragma omp parallel sections num_threads(T)
	{
#pragma omp section
	  for (int i = 0; i < N / 2; i++)
	    got[i] = answers (), thr[i] = omp_get_thread_num ();
#pragma omp section
	  for (int i = N / 2; i < N; i++)
	    got[i] = answers (), thr[i] = omp_get_thread_num ();
	}
      }
      check_device (d, "parallel sections");

      /* A task reduction (GOMP_parallel_reductions); tasks that any
	 thread of the team may run, in the team's final barrier too.  */
      int sum = 0;
#pragma omp target device(d) map(from: got, thr) map(tofrom: sum)
      {
#pragma omp parallel num_threads(T) reduction(task, +: sum)
	{
#pragma omp single nowait
	  for (int i = 0; i < N; i++)
#pragma omp task in_reduction(+: sum)
	    {
	      got[i] = answers ();
	      thr[i] = omp_get_thread_num ();
	      sum += got[i];
	    }
	}
      }
      check_device (d, "tasks");
      int initial = okt_region_initial_device ();
      OKT_CHECK (initial < 0 || sum == N * (d + (initial ? 1000 : 0)));

      /* Nested parallel regions.  */
#pragma omp target device(d) map(from: got, thr)
      {
#pragma omp parallel num_threads(2)
	{
	  int outer = omp_get_thread_num ();
#pragma omp parallel num_threads(2)
	  {
	    int k = outer * 2 + omp_get_thread_num ();
	    for (int i = k; i < N; i += 4)
	      got[i] = answers (), thr[i] = k;
	  }
	}
      }
      many |= check_device (d, "nested parallel regions");
      /* The host has more than one CPU: the teams had more than one
	 thread.  */
      OKT_CHECK (many || omp_get_num_procs () == 1);
    }

  /* The host's threads, after all that.  */
#pragma omp parallel for num_threads(T) schedule(static, 1)
  for (int i = 0; i < N; i++)
    got[i] = answers ();
  for (int i = 0; i < N; i++)
    OKT_CHECK (got[i] == host + 1000 + 10000);
  OKT_CHECK (answers () == host + 1000 + 10000);
  return 0;
}
