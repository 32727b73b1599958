/* A copy to an address that is no device memory is refused, with the
   emulated device's message (which begins as GCC's nvptx plugin's), and
   the program stops.  */
/* { dg-shouldfail "copy outside device memory" } */

#include <openacc.h>
#include <stdio.h>

int
main (void)
{
  static int h[16], not_device[16];
  acc_free (acc_malloc (sizeof h));
  fprintf (stderr, "CheCKpOInT\n");
  acc_memcpy_to_device (not_device, h, sizeof h);
  return 0;
}

/* { dg-output "CheCKpOInT.*invalid device address: copy to device memory \\\[0x\[0-9a-f\]+, 0x\[0-9a-f\]+\\) is not inside one live allocation" } */
