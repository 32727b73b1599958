/* omp_get_device_num () and omp_is_initial_device () inside target regions.

   An emulated device runs the host-fallback version of each region, so
   these calls reach the host libgomp: omp_is_initial_device () returns 1
   and omp_get_device_num () returns the initial device number inside the
   region, as on the host.  What differs from the host is the data: the
   region works on the emulated device's memory.  This test accepts either
   answer (a real device gives 0 and the device's number) but checks the
   separate memory, and prints what it saw.  */
/* { dg-do run } */

#include "okt-check.h"

int
main (void)
{
  okt_require_devices ();
  int n = omp_get_num_devices ();
  OKT_CHECK (omp_get_device_num () == omp_get_initial_device ());

  for (int d = 0; d < n; d++)
    {
      int init = -1, num = -1;
      int probe = 0;
#pragma omp target device(d) map(from: init, num) map(to: probe)
      {
	init = omp_is_initial_device ();
	num = omp_get_device_num ();
	probe = 1;
      }
      /* Separate memory although the code is host code.  */
      OKT_CHECK (probe == 0);
      OKT_CHECK (init == 0 || init == 1);
      OKT_CHECK (num == d || num == omp_get_initial_device ());
      printf ("device %d: omp_is_initial_device=%d omp_get_device_num=%d\n",
	      d, init, num);
    }
  return 0;
}
