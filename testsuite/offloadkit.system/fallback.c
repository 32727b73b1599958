/* A target program whose answers are right both on a device and on the
   host fallback; used to check how our plugin behaves next to GCC's own
   pipeline and with no emulated device.  */

#include <stdio.h>
#include <stdlib.h>

#define N 1000

int
main (void)
{
  static double a[N];
  double sum = 0;
  for (int i = 0; i < N; i++)
    a[i] = i;
#pragma omp target teams distribute parallel for map(to: a) \
	map(tofrom: sum) reduction(+: sum)
  for (int i = 0; i < N; i++)
    sum += 2 * a[i];
  if (sum != (double) N * (N - 1))
    abort ();
  puts ("fallback ok");
  return 0;
}
