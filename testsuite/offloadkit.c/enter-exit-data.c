/* Unstructured mapping: target enter/exit data with target update to/from,
   reference counting, delete and release.  */
/* { dg-do run } */

#include "okt-check.h"

#define N 100

static int v[N];

int
main (void)
{
  okt_require_devices ();
  int dev = omp_get_default_device ();

  for (int i = 0; i < N; i++)
    v[i] = i;

#pragma omp target enter data map(to: v)
  OKT_CHECK (omp_target_is_present (v, dev));

  /* The host changes v: the device still has the old values.  */
  for (int i = 0; i < N; i++)
    v[i] = 1000;
  int sum = 0;
#pragma omp target map(from: sum)
  {
    sum = 0;
    for (int i = 0; i < N; i++)
      sum += v[i];
  }
  OKT_CHECK (sum == N * (N - 1) / 2);

  /* update to: now the device sees them.  */
#pragma omp target update to(v)
#pragma omp target map(from: sum)
  {
    sum = 0;
    for (int i = 0; i < N; i++)
      sum += v[i];
    for (int i = 0; i < N; i++)
      v[i] = -i;
  }
  OKT_CHECK (sum == 1000 * N);
  OKT_CHECK (v[5] == 1000);

  /* update from a section only.  */
#pragma omp target update from(v[10:5])
  for (int i = 0; i < N; i++)
    OKT_CHECK (v[i] == ((i >= 10 && i < 15) ? -i : 1000));

  /* A second enter data raises the reference count: one exit data
     (release) keeps it mapped.  */
#pragma omp target enter data map(to: v)
#pragma omp target exit data map(release: v)
  OKT_CHECK (omp_target_is_present (v, dev));

  /* exit data map(from:) copies back and unmaps.  */
#pragma omp target exit data map(from: v)
  OKT_CHECK (!omp_target_is_present (v, dev));
  for (int i = 0; i < N; i++)
    OKT_CHECK (v[i] == -i);

  /* delete discards device data.  */
#pragma omp target enter data map(to: v)
#pragma omp target
  for (int i = 0; i < N; i++)
    v[i] = 77;
#pragma omp target exit data map(delete: v)
  OKT_CHECK (!omp_target_is_present (v, dev));
  OKT_CHECK (v[0] == 0 && v[N - 1] == -(N - 1));

  /* Heap data.  */
  int *h = malloc (N * sizeof (int));
  for (int i = 0; i < N; i++)
    h[i] = i;
#pragma omp target enter data map(to: h[0:N])
#pragma omp target
  for (int i = 0; i < N; i++)
    h[i] *= 3;
  OKT_CHECK (h[7] == 7);
#pragma omp target exit data map(from: h[0:N])
  for (int i = 0; i < N; i++)
    OKT_CHECK (h[i] == 3 * i);
  free (h);
  return 0;
}
