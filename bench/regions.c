/* Host cost of small target regions: an empty one, or one that maps 64
   bytes tofrom; built with -fopenacc instead of -fopenmp, an empty OpenACC
   compute region launched asynchronously (acc-async: the batch's launches
   on one queue, then one wait for them, which the batch's time
   includes).  After a warm-up (device initialisation, image load, 100
   regions), BATCHES batches of ITERS regions are timed with the monotonic
   clock; each batch gives a time per region, and the median batch is
   reported in nanoseconds ("okb-region-ns median=... min=... max=...").
   With BATCHES 0 nothing is timed: ITERS regions run once after the
   warm-up (for counting what a region costs in driver calls,
   gcc-plugin-fake.sh).

   Usage: regions empty|map64|acc-async [ITERS [BATCHES]]
   (defaults 2000 and 7)  */

#include <omp.h>
#ifdef _OPENACC
#include <openacc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "okb-util.h"

#define MAX_BATCHES 100

static unsigned char buf[64];

static void
region_empty (void)
{
#pragma omp target
  {
  }
}

static void
region_map64 (void)
{
#pragma omp target map(tofrom: buf)
  {
    buf[0]++;
  }
}

#ifdef _OPENACC
static void
region_acc_async (void)
{
#pragma acc parallel async(1)
  {
  }
}

static void
finish_acc_async (void)
{
#pragma acc wait(1)
}
#endif

int
main (int argc, char **argv)
{
  void (*region) (void) = NULL;
  void (*finish) (void) = NULL;
  if (argc > 1 && strcmp (argv[1], "empty") == 0)
    region = region_empty;
  else if (argc > 1 && strcmp (argv[1], "map64") == 0)
    region = region_map64;
#ifdef _OPENACC
  else if (argc > 1 && strcmp (argv[1], "acc-async") == 0)
    {
      region = region_acc_async;
      finish = finish_acc_async;
    }
#endif
  int iters = argc > 2 ? atoi (argv[2]) : 2000;
  int batches = argc > 3 ? atoi (argv[3]) : 7;
  if (region == NULL || iters < 1 || batches < 0 || batches > MAX_BATCHES)
    {
      fprintf (stderr, "usage: regions empty|map64|acc-async [ITERS [BATCHES"
	       " (0..%d)]]\n", MAX_BATCHES);
      return 2;
    }

  /* Warm-up; also learn where regions run.  */
  int on_device = 0;
#ifdef _OPENACC
  /* Not acc_on_device in a region: GCC folds it in host code, which an
     emulated device runs.  */
#pragma acc parallel
  {
  }
  on_device = acc_get_device_type () != acc_device_host;
#else
#pragma omp target map(from: on_device)
  on_device = !omp_is_initial_device ();
#endif
  for (int i = 0; i < 100; i++)
    region ();
  if (finish != NULL)
    finish ();

  if (batches == 0)
    {
      for (int i = 0; i < iters; i++)
	region ();
      if (finish != NULL)
	finish ();
      printf ("okb-regions-run %d\n", iters);
    }
  else
    {
      double ns[MAX_BATCHES];
      for (int b = 0; b < batches; b++)
	{
	  long long t0 = okb_now_ns ();
	  for (int i = 0; i < iters; i++)
	    region ();
	  if (finish != NULL)
	    finish ();
	  ns[b] = (double) (okb_now_ns () - t0) / iters;
	}
      double lo = okb_min (ns, batches), hi = okb_max (ns, batches);
      printf ("okb-region-ns median=%.1f min=%.1f max=%.1f iters=%d"
	      " batches=%d\n", okb_median (ns, batches), lo, hi, iters,
	      batches);
    }
  printf ("okb-on-device %d\n", on_device);
  return 0;
}
