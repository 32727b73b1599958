/* omp_get_num_devices () equals OFFLOADKIT_EMULATE, the default device is
   0 and the initial device number is the device count; a device(N) clause
   naming the host device runs there.  */
/* { dg-do run } */

#include "okt-check.h"

int
main (void)
{
  okt_require_devices ();
  OKT_CHECK (omp_get_num_devices () == okt_expected_devices ());
  OKT_CHECK (omp_get_default_device () == 0);
  OKT_CHECK (omp_get_initial_device () == omp_get_num_devices ());
  OKT_CHECK (omp_is_initial_device ());

  /* device(initial device) is the host: no separate memory.  */
  int x = 1;
  int hostdev = omp_get_initial_device ();
#pragma omp target map(to: x) device(hostdev)
  x = 2;
  OKT_CHECK (x == 2);
  return 0;
}
