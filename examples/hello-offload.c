/* Say where a target region ran.

   The region writes to a variable mapped with map(to:).  On a device with
   its own memory (a GPU, or offloadkit's emulated device) that write lands
   in the device copy and the host never sees it; under host fallback the
   region runs on the host's own variable and the write shows.  */

#include <omp.h>
#include <stdio.h>

#define N 1000

int
main (void)
{
  int written = 0;
  long sum = 0;
  int a[N];

  for (int i = 0; i < N; i++)
    a[i] = i;

#pragma omp target map(to: written, a) map(tofrom: sum)
  {
    written = 1;
    for (int i = 0; i < N; i++)
      sum += a[i];
  }

  printf ("sum of 0..%d = %ld (%s)\n", N - 1, sum,
	  sum == (long) N * (N - 1) / 2 ? "right" : "WRONG");
  if (written)
    printf ("the region ran on the host (fallback): %d offload device%s\n",
	    omp_get_num_devices (), omp_get_num_devices () == 1 ? "" : "s");
  else
    printf ("the region ran on device %d of %d, in its own memory\n",
	    omp_get_default_device (), omp_get_num_devices ());
  return sum == (long) N * (N - 1) / 2 ? 0 : 1;
}
