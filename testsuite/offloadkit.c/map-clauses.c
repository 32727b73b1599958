/* map(to/from/tofrom/alloc) copy data between distinct host and device
   objects: device writes to a map(to:) object never reach the host, and
   host writes made while a region's data is mapped are not seen by it.  */
/* { dg-do run } */

#include "okt-check.h"

#define N 1000

int
main (void)
{
  okt_require_devices ();

  int in[N], out[N], both[N], scratch[N];
  for (int i = 0; i < N; i++)
    {
      in[i] = i;
      out[i] = -1;
      both[i] = 2 * i;
      scratch[i] = 7;
    }

#pragma omp target map(to: in) map(from: out) map(tofrom: both) \
		   map(alloc: scratch)
  {
    for (int i = 0; i < N; i++)
      {
	scratch[i] = in[i] + 1;	/* Device-only temporary.  */
	out[i] = scratch[i] * 3;
	both[i] += in[i];
	in[i] = -5;		/* Must not reach the host.  */
      }
  }

  for (int i = 0; i < N; i++)
    {
      OKT_CHECK (in[i] == i);
      OKT_CHECK (out[i] == (i + 1) * 3);
      OKT_CHECK (both[i] == 3 * i);
      OKT_CHECK (scratch[i] == 7);	/* alloc: never copied back.  */
    }

  /* A scalar map(to:) written on the device, and map(from:) of a scalar.  */
  int s = 10, r = 0;
#pragma omp target map(to: s) map(from: r)
  {
    s += 5;
    r = s * 2;
  }
  OKT_CHECK (s == 10);
  OKT_CHECK (r == 30);

  /* Implicit tofrom of an array referenced in the region.  */
  long big[N];
  for (int i = 0; i < N; i++)
    big[i] = i;
#pragma omp target
  for (int i = 0; i < N; i++)
    big[i] = big[i] * big[i];
  for (int i = 0; i < N; i++)
    OKT_CHECK (big[i] == (long) i * i);
  return 0;
}
