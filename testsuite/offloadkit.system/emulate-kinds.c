/* What a program sees of OFFLOADKIT_EMULATE with both of offloadkit's
   plugins installed: how many devices, and whether they are of its own
   kind (they hold its image): a write to a map(to:) variable inside a
   region stays on the device, and a nowait region completes.  */

#include <omp.h>
#include <stdio.h>

int
main (void)
{
  int n = omp_get_num_devices ();
  int x = 1, y = 0;
  if (n > 0)
    {
#pragma omp target map(to: x)
      x = 2;
#pragma omp target nowait map(tofrom: y)
      y = 3;
#pragma omp taskwait
    }
  printf ("devices %d, map(to:) write %s, nowait %s\n", n,
	  x == 1 ? "stayed on the device" : "reached the host",
	  y == 3 ? "done" : "not done");
  return 0;
}
