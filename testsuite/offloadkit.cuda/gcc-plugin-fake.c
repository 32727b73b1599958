/* A program for GCC's own nvptx pipeline and GCC's own libgomp plugin,
   run over the fake libcuda (gcc-plugin-fake.exp): an empty target
   region on the default device, then a 64-byte map(tofrom:) region on
   the last device.  The fake runs no kernel, so the region changes
   nothing: the bytes must come back as they went, through the fake's
   device memory.  Prints the number of devices and "bytes ok".  */

#include <omp.h>
#include <stdio.h>

int
main (void)
{
  int ndev = omp_get_num_devices ();
  printf ("devices %d\n", ndev);

#pragma omp target
  {
  }

  unsigned char buf[64];
  for (int i = 0; i < 64; i++)
    buf[i] = (unsigned char) (3 * i + 1);
#pragma omp target device (ndev > 0 ? ndev - 1 : 0) map(tofrom: buf)
  {
    buf[0]++;
  }
  int ok = 1;
  for (int i = 1; i < 64; i++)
    ok &= buf[i] == (unsigned char) (3 * i + 1);
  printf ("bytes %s\n", ok ? "ok" : "changed");
  return 0;
}
