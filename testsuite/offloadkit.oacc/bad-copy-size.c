/* A copy that runs past the end of device memory is refused, with the
   emulated device's message (which begins as GCC's nvptx plugin's), and
   the program stops.  */
/* { dg-shouldfail "copy past the end of device memory" } */

#include <openacc.h>
#include <stdio.h>

int
main (void)
{
  static int h[64];
  void *d = acc_malloc (16 * sizeof (int));
  fprintf (stderr, "CheCKpOInT\n");
  acc_memcpy_to_device (d, h, sizeof h);
  return 0;
}

/* { dg-output "CheCKpOInT.*invalid size: copy to device memory \\\[0x\[0-9a-f\]+, 0x\[0-9a-f\]+\\) runs past the end of the allocation" } */
