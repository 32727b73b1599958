/* target data keeps data mapped across several target regions: device
   results persist on the device between regions and reach the host only
   at the end of the data region (or on target update).  */
/* { dg-do run } */

#include "okt-check.h"

#define N 256

int
main (void)
{
  okt_require_devices ();

  double a[N], b[N];
  for (int i = 0; i < N; i++)
    {
      a[i] = i;
      b[i] = 0;
    }

#pragma omp target data map(tofrom: a) map(alloc: b)
  {
#pragma omp target
    for (int i = 0; i < N; i++)
      b[i] = a[i] * 2;		/* b lives only on the device.  */

    /* Host copies are untouched while mapped.  */
    for (int i = 0; i < N; i++)
      {
	OKT_CHECK (b[i] == 0);
	a[i] = -1;		/* Not seen by the device.  */
      }

    /* Already present: the nested map(tofrom:) copies nothing.  */
#pragma omp target map(tofrom: a)
    for (int i = 0; i < N; i++)
      a[i] += b[i];

    for (int i = 0; i < N; i++)
      OKT_CHECK (a[i] == -1);

#pragma omp target update from(b)
    for (int i = 0; i < N; i++)
      OKT_CHECK (b[i] == 2.0 * i);

    /* Nested target data on already mapped data, plus a new mapping.  */
    int count = 0;
#pragma omp target data map(tofrom: count)
    {
      /* A scalar is firstprivate unless mapped: map it (present, so
	 nothing is copied until the data region ends).  */
#pragma omp target map(tofrom: count)
      for (int i = 0; i < N; i++)
	if (a[i] == 3.0 * i)
	  count++;
    }
    OKT_CHECK (count == N);
  }

  /* The outer data region copied a back.  */
  for (int i = 0; i < N; i++)
    OKT_CHECK (a[i] == 3.0 * i);
  return 0;
}
