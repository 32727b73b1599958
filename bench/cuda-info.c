/* Describe the CUDA devices for the benchmark and GPU-run reports, in
   lines a shell script can read:

     okb-cuda-devices N
     okb-cuda-driver VERSION           (e.g. 13000 for CUDA 13.0)
     okb-cuda-device I NAME ... sm_XY, S SMs
     okb-cuda-why REASON               (when N is 0)

   Always exits 0 after printing okb-cuda-devices (0 when there is no
   driver or no device), so that callers can count on that line.  */

#include <stdio.h>

#include "cuda-raw.h"

int
main (void)
{
  struct okb_cuda c;
  if (okb_cuda_open (&c) != 0)
    {
      printf ("okb-cuda-devices 0\nokb-cuda-why %s\n", c.why);
      return 0;
    }
  printf ("okb-cuda-devices %d\n", c.ndevices);
  int version;
  if (c.api.cuDriverGetVersion && c.api.cuDriverGetVersion (&version) == 0)
    printf ("okb-cuda-driver %d\n", version);
  for (int i = 0; i < c.ndevices; i++)
    {
      CUdevice dev;
      char name[256] = "?";
      int major = 0, minor = 0, sms = 0;
      if (c.api.cuDeviceGet (&dev, i) != CUDA_SUCCESS)
	continue;
      c.api.cuDeviceGetName (name, sizeof name, dev);
      c.api.cuDeviceGetAttribute
	(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      c.api.cuDeviceGetAttribute
	(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      c.api.cuDeviceGetAttribute
	(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      printf ("okb-cuda-device %d %s, sm_%d%d, %d SMs\n", i, name, major,
	      minor, sms);
    }
  okb_cuda_close (&c);
  return 0;
}
