/* A program for the fake HSA runtime and for the quiet check (gcn.exp),
   and for the fake libcuda.so.1 (offloadkit.cuda/cuda.exp): one target
   region with a map clause and a declare target variable.  Under a fake,
   kernels do not run, so only the device count is checked; without any
   GPU the region falls back to the host and the answer must be right.
   Prints "devices N x X".  */

#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int counter = 41;
#pragma omp end declare target

int
main (void)
{
  int n = omp_get_num_devices ();
  int x = 1;
#pragma omp target map(tofrom: x)
  x = counter + 1;
  printf ("devices %d x %d\n", n, x);
  return 0;
}
