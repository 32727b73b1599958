// Asynchronous copies to the device take the host's bytes of the moment
// of the call (async-host-copies.c says why): a member function queues a
// region on each of 64 queues with its object's scalars and returns
// before the wait; the object is gone, its stack reused, when a lazy
// queue runs.

#include <openacc.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

const int N = 256, Q = 64;

struct scaler
{
  double factor;
  int n;
  void run (double *p, int q) const
  {
    double f = factor;
    int len = n;
#pragma acc parallel loop present (p[0:len]) async (q)
    for (int i = 0; i < len; i++)
      p[i] *= f;
  }
};

static void __attribute__ ((noinline))
queue_one (double *p, int q)
{
  scaler s = { q + 0.5, N };
  s.run (p, q);
}

static void __attribute__ ((noinline))
scribble ()
{
  volatile char junk[16384];
  std::memset (const_cast<char *> (junk), 0x5a, sizeof junk);
}

static double a[Q][N];

int
main ()
{
  for (int q = 0; q < Q; q++)
    for (int i = 0; i < N; i++)
      a[q][i] = 2;
#pragma acc data copy (a)
  {
    for (int q = 0; q < Q; q++)
      {
	queue_one (a[q], q);
	scribble ();
      }
#pragma acc wait
  }
  for (int q = 0; q < Q; q++)
    for (int i = 0; i < N; i++)
      if (a[q][i] != 2 * (q + 0.5))
	{
	  std::fprintf (stderr, "slice %d element %d: %g, want %g\n", q, i,
			a[q][i], 2 * (q + 0.5));
	  std::abort ();
	}
  return 0;
}
