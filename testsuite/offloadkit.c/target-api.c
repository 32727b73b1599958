/* The device memory routines: omp_target_alloc/free, omp_target_memcpy,
   omp_target_memcpy_rect, omp_target_is_present, omp_target_associate_ptr
   and omp_target_disassociate_ptr, with is_device_ptr.  */
/* { dg-do run } */

#include <string.h>
#include "okt-check.h"

#define N 64

int
main (void)
{
  okt_require_devices ();
  int dev = omp_get_default_device ();
  int host = omp_get_initial_device ();

  int h[N];
  for (int i = 0; i < N; i++)
    h[i] = i;

  int *d = omp_target_alloc (N * sizeof (int), dev);
  OKT_CHECK (d != NULL);
  OKT_CHECK (d != h);
  OKT_CHECK (omp_target_memcpy (d, h, N * sizeof (int), 0, 0, dev, host) == 0);
#pragma omp target is_device_ptr(d)
  for (int i = 0; i < N; i++)
    d[i] *= 2;
  /* The device allocation is not host memory: nothing changed here.  */
  OKT_CHECK (h[3] == 3);
  int back[N];
  memset (back, 0, sizeof back);
  OKT_CHECK (omp_target_memcpy (back, d, N / 2 * sizeof (int), 0,
				N / 2 * sizeof (int), host, dev) == 0);
  for (int i = 0; i < N / 2; i++)
    OKT_CHECK (back[i] == 2 * (i + N / 2));

  /* Device-to-device copy.  */
  int *d2 = omp_target_alloc (N * sizeof (int), dev);
  OKT_CHECK (omp_target_memcpy (d2, d, N * sizeof (int), 0, 0, dev, dev) == 0);
  OKT_CHECK (omp_target_memcpy (back, d2, N * sizeof (int), 0, 0, host, dev)
	     == 0);
  for (int i = 0; i < N; i++)
    OKT_CHECK (back[i] == 2 * i);

  /* memcpy_rect: copy a 3x4 block at (1,2) of a 6x8 host matrix into
     (2,1) of a 5x5 device matrix.  */
  int m[6][8], r[5][5];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 8; j++)
      m[i][j] = 10 * i + j;
  int *dm = omp_target_alloc (sizeof r, dev);
  memset (r, 0, sizeof r);
  OKT_CHECK (omp_target_memcpy (dm, r, sizeof r, 0, 0, dev, host) == 0);
  size_t vol[2] = { 3, 4 };
  size_t dst_off[2] = { 2, 1 }, src_off[2] = { 1, 2 };
  size_t dst_dim[2] = { 5, 5 }, src_dim[2] = { 6, 8 };
  OKT_CHECK (omp_target_memcpy_rect (dm, m, sizeof (int), 2, vol, dst_off,
				     src_off, dst_dim, src_dim, dev, host)
	     == 0);
  OKT_CHECK (omp_target_memcpy (r, dm, sizeof r, 0, 0, host, dev) == 0);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      {
	int in = i >= 2 && i < 5 && j >= 1 && j < 5;
	OKT_CHECK (r[i][j] == (in ? m[i - 2 + 1][j - 1 + 2] : 0));
      }
  /* Querying the supported dimensions.  */
  OKT_CHECK (omp_target_memcpy_rect (NULL, NULL, 0, 0, NULL, NULL, NULL,
				     NULL, NULL, dev, host) >= 3);

  /* associate_ptr: h is then "present" and maps to d.  */
  OKT_CHECK (!omp_target_is_present (h, dev));
  OKT_CHECK (omp_target_associate_ptr (h, d, N * sizeof (int), 0, dev) == 0);
  OKT_CHECK (omp_target_is_present (h, dev));
  OKT_CHECK (omp_target_is_present (h + 10, dev));
#pragma omp target map(tofrom: h)
  for (int i = 0; i < N; i++)
    h[i] += 1;		/* Works on d; the present mapping copies nothing.  */
  OKT_CHECK (h[5] == 5);
#pragma omp target update from(h)
  OKT_CHECK (h[5] == 11);
  OKT_CHECK (omp_target_disassociate_ptr (h, dev) == 0);
  OKT_CHECK (!omp_target_is_present (h, dev));

  /* The host device: everything is present, allocation is malloc.  */
  OKT_CHECK (omp_target_is_present (h, host));

  omp_target_free (dm, dev);
  omp_target_free (d2, dev);
  omp_target_free (d, dev);
  omp_target_free (NULL, dev);
  return 0;
}
