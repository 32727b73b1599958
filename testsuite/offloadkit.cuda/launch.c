/* A program for the fake libcuda.so.1 (cuda.exp): one target region with
   a map clause and a declare target variable.  Kernels do not run under
   the fake, so nothing computed on the device is checked; the program only
   checks that it saw the one CUDA device.  */

#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int counter = 5;
#pragma omp end declare target

int
main (void)
{
  int n = omp_get_num_devices ();
  int x = 1;
#pragma omp target map(tofrom: x)
  x = counter + 1;
  printf ("devices %d\n", n);
  return n == 1 ? 0 : 1;
}
