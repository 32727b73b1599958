/* Two emulated devices hold different data for the same variable, both for
   a declare target variable and for a mapped array.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 2 } */

#include "okt-check.h"

#define N 50

OKT_BEGIN_DECLARE_TARGET
int which = -1;
#pragma omp end declare target

int arr[N];

int
main (void)
{
  okt_require_devices ();
  OKT_CHECK (omp_get_num_devices () == 2);

  for (int d = 0; d < 2; d++)
    {
#pragma omp target device(d) firstprivate(d)
      which = d * 10 + 1;
    }

  int got[2];
  for (int d = 0; d < 2; d++)
    {
      int w;
#pragma omp target device(d) map(from: w)
      w = which;
      got[d] = w;
    }
  OKT_CHECK (got[0] == 1 && got[1] == 11);
  OKT_CHECK (which == -1);

  /* The same host array mapped on both devices at once.  */
  for (int i = 0; i < N; i++)
    arr[i] = i;
#pragma omp target enter data map(to: arr) device(0)
#pragma omp target enter data map(to: arr) device(1)
  OKT_CHECK (omp_target_is_present (arr, 0));
  OKT_CHECK (omp_target_is_present (arr, 1));
#pragma omp target device(0)
  for (int i = 0; i < N; i++)
    arr[i] += 100;
#pragma omp target device(1)
  for (int i = 0; i < N; i++)
    arr[i] -= 100;
  OKT_CHECK (arr[3] == 3);
#pragma omp target exit data map(from: arr) device(1)
  OKT_CHECK (arr[3] == -97);
#pragma omp target exit data map(from: arr) device(0)
  OKT_CHECK (arr[3] == 103);

  /* Copy from device 0 to device 1 through the host (libgomp 12's
     omp_target_memcpy refuses to copy between two different devices).  */
  int host = omp_get_initial_device ();
  int *d0 = omp_target_alloc (sizeof arr, 0);
  int *d1 = omp_target_alloc (sizeof arr, 1);
  OKT_CHECK (d0 && d1);
  OKT_CHECK (omp_target_memcpy (d0, arr, sizeof arr, 0, 0, 0, host) == 0);
  int mid[N];
  OKT_CHECK (omp_target_memcpy (mid, d0, sizeof arr, 0, 0, host, 0) == 0);
  OKT_CHECK (omp_target_memcpy (d1, mid, sizeof arr, 0, 0, 1, host) == 0);
  int back[N];
  OKT_CHECK (omp_target_memcpy (back, d1, sizeof arr, 0, 0, host, 1) == 0);
  for (int i = 0; i < N; i++)
    OKT_CHECK (back[i] == i + 100);
  omp_target_free (d0, 0);
  omp_target_free (d1, 1);
  return 0;
}
