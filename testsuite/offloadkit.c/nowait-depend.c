/* Target tasks: nowait target regions ordered by depend clauses, finished
   by taskwait; independent ones may run concurrently.  */
/* { dg-do run } */

#include "okt-check.h"

#define N 4096

static int a[N], b[N], c[N];

int
main (void)
{
  okt_require_devices ();

  for (int i = 0; i < N; i++)
    a[i] = i;

#pragma omp target enter data map(alloc: b, c) map(to: a)
#pragma omp parallel
#pragma omp single
  {
    /* a -> b -> c chain through depend, plus independent work.  */
#pragma omp target nowait depend(out: b)
    for (int i = 0; i < N; i++)
      b[i] = a[i] * 2;
#pragma omp target nowait depend(in: b) depend(out: c)
    for (int i = 0; i < N; i++)
      c[i] = b[i] + 1;
    int loose = 0;
#pragma omp target nowait map(tofrom: loose)
    for (int i = 0; i < 100; i++)
      loose += i;
#pragma omp target update from(c) depend(in: c) nowait
#pragma omp taskwait
    OKT_CHECK (loose == 4950);
  }
  for (int i = 0; i < N; i++)
    OKT_CHECK (c[i] == 2 * i + 1);
  /* b was never copied back.  */
  OKT_CHECK (b[5] == 0);

  /* Many nowait regions with taskwait, each writing its own slot.  */
  int slots[32] = { 0 };
#pragma omp target enter data map(to: slots)
  for (int k = 0; k < 32; k++)
    {
#pragma omp target nowait firstprivate(k)
      slots[k] = k * k;
    }
#pragma omp taskwait
#pragma omp target exit data map(from: slots)
  for (int k = 0; k < 32; k++)
    OKT_CHECK (slots[k] == k * k);
#pragma omp target exit data map(delete: a, b, c)
  return 0;
}
