/* Pointers into mapped array sections (p[10:20]) and struct members:
   a pointer that points into a mapped section is translated to the device
   copy, and only the section is transferred.  */
/* { dg-do run } */

#include <string.h>
#include "okt-check.h"

#define N 100

struct vec
{
  int n;
  double *data;
  int tag[4];
};

int
main (void)
{
  okt_require_devices ();

  int *p = malloc (N * sizeof (int));
  for (int i = 0; i < N; i++)
    p[i] = i;

  /* Only p[10..29] goes to the device and back.  */
#pragma omp target map(tofrom: p[10:20])
  for (int i = 10; i < 30; i++)
    p[i] = -p[i];
  for (int i = 0; i < N; i++)
    OKT_CHECK (p[i] == ((i >= 10 && i < 30) ? -i : i));

  /* A pointer into the middle of a mapped section.  */
  int *q = p + 15;
#pragma omp target data map(tofrom: p[10:20])
  {
#pragma omp target map(tofrom: q[0:5])
    for (int i = 0; i < 5; i++)
      q[i] = 1000 + i;
    /* Present in the enclosing mapping: nothing copied back yet.  */
    OKT_CHECK (q[0] == -15);
  }
  for (int i = 0; i < 5; i++)
    OKT_CHECK (p[15 + i] == 1000 + i);
  OKT_CHECK (p[14] == -14 && p[20] == -20);

  /* Pointer arithmetic on the device.  */
  long acc = 0;
#pragma omp target map(to: p[0:N]) map(from: acc)
  {
    int *e = p + N;
    acc = 0;
    for (int *r = p; r < e; r++)
      acc += *r;
  }
  long expect = 0;
  for (int i = 0; i < N; i++)
    expect += p[i];
  OKT_CHECK (acc == expect);

  /* Struct with a pointer member: map the struct and the pointee.  */
  struct vec v;
  v.n = N;
  v.data = malloc (N * sizeof (double));
  for (int i = 0; i < N; i++)
    v.data[i] = i * 0.5;
  memset (v.tag, 0, sizeof v.tag);
#pragma omp target map(to: v) map(tofrom: v.data[0:N])
  {
    for (int i = 0; i < v.n; i++)
      v.data[i] *= 2;
    v.tag[0] = 9;	/* v is map(to:): stays on the device.  */
  }
  for (int i = 0; i < N; i++)
    OKT_CHECK (v.data[i] == i);
  OKT_CHECK (v.tag[0] == 0);

  /* Individual struct members.  */
  v.tag[1] = 4;
#pragma omp target map(tofrom: v.tag[1:2]) map(to: v.n)
  v.tag[2] = v.tag[1] + v.n;
  OKT_CHECK (v.tag[2] == 4 + N);

  free (v.data);
  free (p);
  return 0;
}
