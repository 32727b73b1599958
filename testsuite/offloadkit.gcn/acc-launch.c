/* An OpenACC program for the fake HSA runtime (gcn.exp): a synchronous
   compute region with 3 gangs and a queued one with 5, which libgomp runs
   on the gcn plugin's GPU.  Under the fake, kernels do not run, so only
   the device count and the dispatches are checked.  Prints
   "devices N".  */

#include <openacc.h>
#include <stdio.h>

int
main (void)
{
  int n = acc_get_num_devices (acc_device_radeon);
  int x[64] = { 0 };
#pragma acc parallel num_gangs (3) copy (x)
  x[0] = 1;
#pragma acc parallel num_gangs (5) copy (x) async (1)
  x[1] = 2;
#pragma acc wait
  printf ("devices %d\n", n);
  return 0;
}
