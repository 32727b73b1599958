/* A CUDA device (device 0, over the fake driver) beside an emulated one
   (device 1): a region running on the emulated device may launch on the
   CUDA device (only regions of its own kind would wait for it), and one
   that calls exit leaves the emulated devices as they are but not the
   CUDA device, which is finalised as at any exit.  With an argument:
   "nested" or "exit".  (The fake runs no kernel: only the launches
   count.)  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
  int x = 0;
  const char *what = argc > 1 ? argv[1] : "";
#pragma omp target device(0) map(tofrom: x)
  x = 1;
  if (strcmp (what, "nested") == 0)
    {
#pragma omp target device(1) map(tofrom: x)
      {
#pragma omp target device(0) map(tofrom: x)
	x = 2;
      }
    }
  else if (strcmp (what, "exit") == 0)
    {
#pragma omp target device(1)
      exit (0);
    }
  printf ("%s done\n", what);
  return 0;
}
