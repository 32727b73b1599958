/* Asynchronous copies to the device from (pageable) host memory take
   the host's bytes of the moment of the call, as CUDA's
   cuMemcpyHtoDAsync does, once the downloads already queued into them
   have landed.  So the region queued by a helper that returns before the
   wait sees the scalars it was given (libgomp uploads each firstprivate
   scalar with an asynchronous copy from a temporary of its own, on a
   stack frame that is gone by the time a lazy queue runs), whichever of
   64 queues it is on; a second region with copy (b) on the queue of a
   first, or on another queue, sees what the first wrote back;
   acc_memcpy_to_device_async takes the value of the moment of the call;
   a download nobody reads stays pending until the wait; and a large copy
   keeps its place in the queue's order.  */

#include <openacc.h>
#include <stdlib.h>
#include <string.h>

#include "okt-check.h"

#define N 256
#define Q 64

static void
scale_async (float *p, int n, float f, int q)
{
#pragma acc parallel loop present (p[0:n]) async (q)
  for (int i = 0; i < n; i++)
    p[i] *= f;
}

/* Scribble over the stack where the helper's and libgomp's frames were.  */
static void __attribute__ ((noinline))
scribble (void)
{
  volatile char junk[16384];
  memset ((char *) junk, 0x5a, sizeof junk);
}

static float a[Q][N];

int
main (void)
{
  for (int q = 0; q < Q; q++)
    for (int i = 0; i < N; i++)
      a[q][i] = 1;

#pragma acc data copy (a)
  {
    for (int q = 0; q < Q; q++)
      {
	scale_async (a[q], N, (float) (q + 2), q);
	scribble ();
      }
#pragma acc wait
  }
  for (int q = 0; q < Q; q++)
    for (int i = 0; i < N; i++)
      if (a[q][i] != (float) (q + 2))
	{
	  fprintf (stderr, "slice %d scaled by %g, want %d\n", q,
		   (double) a[q][i], q + 2);
	  abort ();
	}

  /* Two regions with copy (b) on one queue: the second's upload comes
     after the first's download, as a stream orders them.  */
  int b[N];
  for (int i = 0; i < N; i++)
    b[i] = 3;
#pragma acc parallel loop copy (b) async (7)
  for (int i = 0; i < N; i++)
    b[i] += 1;
#pragma acc parallel loop copy (b) async (7)
  for (int i = 0; i < N; i++)
    b[i] *= 10;
#pragma acc wait (7)
  OKT_CHECK (b[0] == 40 && b[N - 1] == 40);

  /* The same on alternating queues (libgomp's deep-copy-10.c): each
     upload reads what the other queue's last download wrote.  */
  for (int i = 0; i < N; i++)
    b[i] = 0;
  for (int k = 0; k < 9; k++)
    {
#pragma acc parallel loop copy (b) async (k % 2)
      for (int i = 0; i < N; i++)
	b[i] += k + 1;
    }
#pragma acc wait
  OKT_CHECK (b[0] == 45 && b[N - 1] == 45);

  /* An upload waits only for the downloads into its source: the one
     into B stays pending, so a missing wait still shows.  (Read through
     a volatile pointer: GCC may take a value read before the wait
     directive for one after it.)  */
  volatile int *vb = b;
  int c[N];
  for (int i = 0; i < N; i++)
    c[i] = i;
  int *dc = (int *) acc_malloc (sizeof c);
  OKT_CHECK (dc != NULL);
#pragma acc parallel loop copy (b) async (3)
  for (int i = 0; i < N; i++)
    b[i] = -5;
  acc_memcpy_to_device_async (dc, c, sizeof c, 4);
  acc_wait (4);
  OKT_CHECK (vb[0] == 45);
#pragma acc wait (3)
  OKT_CHECK (vb[0] == -5 && vb[N - 1] == -5);
  acc_free (dc);

  /* The value of the moment of the call, whatever comes after.  */
  int x = 7, y = 0;
  int *d = (int *) acc_malloc (sizeof x);
  OKT_CHECK (d != NULL);
  acc_memcpy_to_device_async (d, &x, sizeof x, 1);
  x = 99;
  acc_memcpy_from_device_async (&y, d, sizeof y, 1);
  acc_wait (1);
  OKT_CHECK (y == 7);
  acc_free (d);

  /* A large copy: the queue's earlier work first, then these bytes, then
     what comes after them.  */
  size_t big = (64u << 20) + 4096;
  size_t nints = big / sizeof (int);
  int *h = (int *) malloc (big), *back = (int *) malloc (big);
  int *dbig = (int *) acc_malloc (big);
  OKT_CHECK (h != NULL && back != NULL && dbig != NULL);
  for (size_t i = 0; i < nints; i++)
    h[i] = (int) i;
  acc_memcpy_to_device_async (dbig, h, big, 2);
#pragma acc parallel loop deviceptr (dbig) async (2)
  for (int i = 1; i < 2; i++)
    dbig[i] += 1000;
  for (size_t i = 0; i < nints; i++)
    h[i] = -1;
  acc_memcpy_from_device_async (back, dbig, big, 2);
  acc_wait (2);
  OKT_CHECK (back[0] == 0 && back[1] == 1001 && back[nints - 1]
	     == (int) (nints - 1));
  acc_free (dbig);
  free (h);
  free (back);
  return 0;
}
