/* Round trip of an empty target region: launch, wait, return.  After a
   warm-up (device initialisation, image load, first launch), BATCHES
   batches of ITERS regions are timed with the monotonic clock; each batch
   gives a time per region and the median batch is reported, in
   microseconds ("okb-region-us median=... min=... max=...").

   Usage: empty-region [ITERS [BATCHES]]   (defaults 2000 and 7)  */

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "okb-util.h"

#define MAX_BATCHES 100

int
main (int argc, char **argv)
{
  int iters = argc > 1 ? atoi (argv[1]) : 2000;
  int batches = argc > 2 ? atoi (argv[2]) : 7;
  if (iters < 1 || batches < 1 || batches > MAX_BATCHES)
    {
      fprintf (stderr, "usage: empty-region [ITERS [BATCHES (1..%d)]]\n",
	       MAX_BATCHES);
      return 2;
    }

  /* Warm-up; also learn where regions run.  */
  int on_device = 0;
#pragma omp target map(from: on_device)
  on_device = !omp_is_initial_device ();
  for (int i = 0; i < 100; i++)
    {
#pragma omp target
      {
      }
    }

  double us[MAX_BATCHES];
  for (int b = 0; b < batches; b++)
    {
      long long t0 = okb_now_ns ();
      for (int i = 0; i < iters; i++)
	{
#pragma omp target
	  {
	  }
	}
      us[b] = (okb_now_ns () - t0) / 1e3 / iters;
    }

  double lo = okb_min (us, batches), hi = okb_max (us, batches);
  printf ("okb-region-us median=%.3f min=%.3f max=%.3f iters=%d batches=%d\n",
	  okb_median (us, batches), lo, hi, iters, batches);
  printf ("okb-on-device %d\n", on_device);
  return 0;
}
