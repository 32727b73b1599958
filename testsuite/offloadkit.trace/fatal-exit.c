/* For trace.exp: after one region, a target region on a device that does
   not exist with OMP_TARGET_OFFLOAD=mandatory makes libgomp end the
   program with exit (EXIT_FAILURE).  The profile must still be complete
   and hold the first region's events.  */

#include <stdio.h>

#define N 1000

static int x[N];

int
main (void)
{
#pragma omp target map(tofrom: x)
  for (int i = 0; i < N; i++)
    x[i] = i;
  fputs ("fatal-exit: first region done\n", stderr);

#pragma omp target device(7) map(tofrom: x)
  for (int i = 0; i < N; i++)
    x[i] = -1;

  fputs ("fatal-exit: libgomp did not end the program\n", stderr);
  return 0;
}
