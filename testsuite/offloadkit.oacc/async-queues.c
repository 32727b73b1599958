/* Async queues of an emulated device: work on a queue runs in order,
   only once the program waits for it (or tests or orders it), so a
   missing wait shows as stale data every time; acc_wait_async orders one
   queue after another; queues are independent otherwise.  */

#include <openacc.h>
#include <stdlib.h>

#define N 64

int
main (void)
{
  int a[N], b[N];
  for (int i = 0; i < N; i++)
    a[i] = 0, b[i] = 0;

#pragma acc enter data copyin (a, b)
#pragma acc parallel loop present (a) async (1)
  for (int i = 0; i < N; i++)
    a[i] = i + 1;
#pragma acc update self (a) async (1)
  /* Not waited for: the host still has its own values.  */
  if (a[5] != 0)
    abort ();
  /* Tested: not done yet; the test starts it.  */
  if (acc_async_test (1) != 0)
    abort ();
#pragma acc wait (1)
  if (a[5] != 6 || acc_async_test (1) != 1)
    abort ();

  /* Queue 2 after queue 1: b depends on a's new device values.  */
#pragma acc parallel loop present (a) async (1)
  for (int i = 0; i < N; i++)
    a[i] *= 10;
  acc_wait_async (1, 2);
#pragma acc parallel loop present (a, b) async (2)
  for (int i = 0; i < N; i++)
    b[i] = a[i] + 1;
#pragma acc update self (b) async (2)
  /* Waiting for queue 2 runs queue 1's work first.  */
#pragma acc wait (2)
  if (b[5] != 61)
    abort ();

  /* Independent queues: waiting for queue 4 leaves queue 3's work
     pending.  */
#pragma acc parallel loop present (a) async (3)
  for (int i = 0; i < N; i++)
    a[i] = -1;
#pragma acc update self (a) async (3)
#pragma acc parallel loop present (b) async (4)
  for (int i = 0; i < N; i++)
    b[i] = -2;
#pragma acc update self (b) async (4)
#pragma acc wait (4)
  if (b[0] != -2 || a[0] != 1)
    abort ();
#pragma acc wait
  if (a[0] != -1)
    abort ();

  /* Asynchronous copies of the runtime API.  */
  int *d = acc_malloc (N * sizeof (int));
  int c[N];
  for (int i = 0; i < N; i++)
    c[i] = 3 * i;
  acc_memcpy_to_device_async (d, c, sizeof c, 5);
  for (int i = 0; i < N; i++)
    c[i] = 0;
  /* The copy took C's bytes at the call, as CUDA takes those of pageable
     memory: the host's clearing of C after the call does not reach the
     device.  */
  acc_memcpy_from_device_async (c, d, sizeof c, 5);
  acc_wait (5);
  if (c[7] != 21)
    abort ();
  acc_free (d);
#pragma acc exit data delete (a, b)
  return 0;
}
