/* exit () in an ancestor region, which runs on the host while its
   target region waits on the emulated device: the program ends with the
   status, and does not wait for the device's threads, which wait for
   it.  */
/* { dg-do run } */
/* { dg-shouldfail "exit (3) in the ancestor region" } */

/* Before okt-check.h, whose functions have target regions.  */
#pragma omp requires reverse_offload

#include "okt-check.h"

__attribute__ ((noipa)) static void
leave (int status)
{
  exit (status);
}

int
main (void)
{
  okt_require_devices ();
  int x = 0;
#pragma omp target map(tofrom: x)
  {
    x = 1;
#pragma omp target device(ancestor: 1) firstprivate(x)
    leave (x + 2);
    x = 2;
  }
  /* Not reached.  */
  return 0;
}
