/* acc_on_device inside a region on the emulated device answers as the
   device's own: the host-compiled region calls the library function at
   -O0 (GCC folds it to the host's answer when optimising), and the
   wrapper's interposer answers for the device running the region.  */
/* { dg-options "-O0" } */

#include <openacc.h>
#include <stdlib.h>

int
main (void)
{
  acc_device_t type = acc_get_device_type ();
  int on[5] = { -1, -1, -1, -1, -1 };
#pragma acc parallel copyout (on) copyin (type)
  {
    on[0] = acc_on_device (acc_device_not_host);
    on[1] = acc_on_device (acc_device_host);
    on[2] = acc_on_device (acc_device_none);
    on[3] = acc_on_device (type);
    on[4] = acc_on_device (type == acc_device_nvidia
			   ? acc_device_radeon : acc_device_nvidia);
  }
  if (on[0] != 1 || on[1] != 0 || on[2] != 0 || on[3] != 1 || on[4] != 0)
    abort ();
  /* On the host, the host's answers.  */
  if (!acc_on_device (acc_device_host) || acc_on_device (acc_device_not_host))
    abort ();
  return 0;
}
