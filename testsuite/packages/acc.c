/* OpenACC through the installed packages: copyin data stays the
   host's.  */
#include <openacc.h>
#include <stdio.h>

int
main (void)
{
  int x = 5, y = 0;
  if (acc_get_num_devices (acc_get_device_type ()) < 1
      || acc_get_device_type () == acc_device_host)
    {
      puts ("no OpenACC device");
      return 1;
    }
#pragma acc parallel copyin(x) copyout(y) num_gangs(1)
  {
    y = x * 2;
    x = 99;
  }
  if (y != 10 || x != 5)
    {
      printf ("wrong: x %d, y %d\n", x, y);
      return 1;
    }
  puts ("acc ok");
  return 0;
}
