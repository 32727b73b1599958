/* Built by each GCC of the release through the installed packages:
   OpenMP offloading to an emulated device, with separate memory.  */
#include <omp.h>
#include <stdio.h>

int
main (void)
{
  int x = 1, y = 0;
  if (omp_get_num_devices () < 1)
    {
      puts ("no offload device");
      return 1;
    }
#pragma omp target map(to: x) map(from: y)
  {
    y = x + 41;
    x = 99;		/* A device copy: the host's stays 1.  */
  }
  if (y != 42 || x != 1)
    {
      printf ("wrong: x %d, y %d\n", x, y);
      return 1;
    }
  puts ("omp ok");
  return 0;
}
