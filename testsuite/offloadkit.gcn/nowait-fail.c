/* Four target nowait regions, run over a fake runtime that makes the
   second one fail on the device.  libgomp cannot be told of a failure
   that comes after async_run returned: the program must end with the
   plugin's error and a non-zero status, whether it waits for the regions
   (taskwait, with an argument) or returns from main while they run, and
   never hang.  */

#include <stdio.h>

int
main (int argc, char **argv)
{
  (void) argv;
  int a[4] = { 0 };
  for (int i = 0; i < 4; i++)
    {
#pragma omp target nowait map(tofrom: a[i:1]) firstprivate(i)
      a[i] = i + 1;
    }
  if (argc > 1)
    {
#pragma omp taskwait
    }
  printf ("returned from main: %d %d %d %d\n", a[0], a[1], a[2], a[3]);
  return 0;
}
