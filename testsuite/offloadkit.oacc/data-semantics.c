/* Data clauses on a device with memory of its own: what a region writes
   to a copyin array stays on the device, copyout brings results back,
   update moves values both ways, and a present array keeps the device's
   values between regions.  */

#include <openacc.h>
#include <stdlib.h>

#define N 256

static int g[N];
#pragma acc declare create (g)

int
main (void)
{
  int a[N], b[N], c[N];
  for (int i = 0; i < N; i++)
    a[i] = i, b[i] = -1, c[i] = 7;

  if (acc_get_device_type () == acc_device_host)
    abort ();

#pragma acc parallel loop copyin (a) copyout (b)
  for (int i = 0; i < N; i++)
    {
      b[i] = 2 * a[i];
      a[i] = -5;		/* On the device only.  */
    }
  for (int i = 0; i < N; i++)
    if (a[i] != i || b[i] != 2 * i)
      abort ();

  /* present: the device keeps its values; the host's differ until
     update self.  */
#pragma acc enter data copyin (c)
  if (!acc_is_present (c, sizeof c) || acc_deviceptr (c) == c)
    abort ();
#pragma acc parallel loop present (c)
  for (int i = 0; i < N; i++)
    c[i] += i;
  if (c[10] != 7)
    abort ();
#pragma acc update self (c[0:N / 2])
  if (c[10] != 17 || c[N - 1] != 7)
    abort ();
  for (int i = 0; i < N; i++)
    c[i] = 1000;
#pragma acc update device (c[N / 2:N / 2])
#pragma acc parallel loop present (c)
  for (int i = 0; i < N; i++)
    c[i] += 1;
#pragma acc exit data copyout (c)
  for (int i = 0; i < N; i++)
    if (c[i] != (i < N / 2 ? 7 + i + 1 : 1001))
      abort ();

  /* declare create: the device's copy of a global is its own.  (Through
     the runtime API: GCC's host compiler drops the clauses of an update
     directive that name such a global.)  */
  for (int i = 0; i < N; i++)
    g[i] = 3;
  acc_memcpy_to_device (acc_deviceptr (g), g, sizeof g);
#pragma acc parallel loop present (g)
  for (int i = 0; i < N; i++)
    g[i] *= 5;
  if (g[3] != 3)
    abort ();
  int back[N];
  acc_memcpy_from_device (back, acc_deviceptr (g), sizeof g);
  if (back[3] != 15)
    abort ();
  return 0;
}
