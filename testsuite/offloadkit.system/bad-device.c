/* Offloads to a device number beyond the devices and the initial device
   (which is number omp_get_num_devices ()): with OMP_TARGET_OFFLOAD=mandatory
   libgomp must stop with an error message and a normal non-zero exit, not
   crash.  */

#include <omp.h>
#include <stdio.h>

int
main (void)
{
  int x = 0;
  int dev = omp_get_num_devices () + 1;
#pragma omp target device(dev) map(tofrom: x)
  x = 1;
  printf ("x = %d\n", x);
  return 0;
}
