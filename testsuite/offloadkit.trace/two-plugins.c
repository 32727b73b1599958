/* Copies to and from every device, for trace.exp's run with both of our
   plugins offering an emulated device: each plugin then has events of
   its own for the same OFFLOADKIT_PROFILE.  Only omp_target_memcpy, so
   that a device whose plugin has no image of the program still has
   transfers to show.  */

#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 4096

static unsigned char in[N], out[N];

int
main (void)
{
  int host = omp_get_initial_device ();
  int n = omp_get_num_devices ();
  for (int i = 0; i < N; i++)
    in[i] = (unsigned char) i;
  for (int d = 0; d < n; d++)
    {
      void *p = omp_target_alloc (N, d);
      memset (out, 0, N);
      if (p == NULL
	  || omp_target_memcpy (p, in, N, 0, 0, d, host) != 0
	  || omp_target_memcpy (out, p, N, 0, 0, host, d) != 0
	  || memcmp (in, out, N) != 0)
	{
	  fprintf (stderr, "two-plugins: device %d failed\n", d);
	  return 1;
	}
      omp_target_free (p, d);
    }
  printf ("two-plugins: ok, %d devices\n", n);
  return 0;
}
