/* Start-up benchmark: the program a user writes first.  One small target
   region, then exit.  Right after the region it prints the monotonic clock
   ("okb-end-ns N"), which spawn-timer subtracts from the moment it started
   the process: process start to the end of the first target region,
   libgomp's device initialisation and image load included.  It also says
   whether the region ran on a device ("okb-on-device 1"), so that a
   silent host fallback cannot pass for a fast start.  */

#include <omp.h>
#include <stdio.h>

#include "okb-util.h"

int
main (void)
{
  int x = 41, on_device = 0;

#pragma omp target map(tofrom: x) map(from: on_device)
  {
    x++;
    on_device = !omp_is_initial_device ();
  }

  long long end = okb_now_ns ();
  printf ("okb-end-ns %lld\nokb-on-device %d\n", end, on_device);
  return x == 42 ? 0 : 1;
}
