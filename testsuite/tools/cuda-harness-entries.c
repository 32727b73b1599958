/* cuda-harness: the entry points of libgomp 14 to 16 on CUDA devices:
   rectangular copies through cuMemcpy2D and cuMemcpy3D (and row by row
   when the driver refuses a pitch), the device UID from
   cuDeviceGetUuid_v2, managed memory from cuMemAllocManaged,
   is_accessible_ptr from cuPointerGetAttribute, page-locked host memory
   from cuMemHostAlloc; the bytes moved and the errors.  See
   cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"


/* 2D: a 3 x 5 block of a 4 x 8 host array at (1, 2) to (1, 1) of a
   device array of 3 x 12, back to a host array, and within the device;
   through cuMemcpy2D each, with every byte where it belongs.  */
static void
entries_rect2d (memcpy2d_fn m2)
{
  enum { HR = 4, HC = 8, DR = 3, DC = 12 };
  unsigned char h[HR][HC], d[DR][DC], back[DR][DC];
  for (int i = 0; i < HR * HC; i++)
    ((unsigned char *) h)[i] = (unsigned char) (i + 1);
  unsigned char *p = p_alloc (0, sizeof d), *q = p_alloc (0, sizeof d);
  memset (d, 0x55, sizeof d);
  p_host2dev (0, p, d, sizeof d);
  p_host2dev (0, q, d, sizeof d);
  long calls = f_calls ("cuMemcpy2D_v2");
  long rows = f_calls ("cuMemcpyHtoD_v2") + f_calls ("cuMemcpyHtoDAsync_v2");
  check ("memcpy2d host to device",
	 m2 (0, -1, 5, 3, p, 1, 0, DC, h, 2, 1, HC) == 1);
  check ("memcpy2d host to device: one cuMemcpy2D, no row copies",
	 f_calls ("cuMemcpy2D_v2") == calls + 1
	 && f_calls ("cuMemcpyHtoD_v2") + f_calls ("cuMemcpyHtoDAsync_v2")
	    == rows);
  check ("memcpy2d within the device",
	 m2 (0, 0, DC, DR, q, 0, 0, DC, p, 0, 0, DC) == 1);
  memset (back, 0, sizeof back);
  check ("memcpy2d device to host",
	 m2 (-1, 0, DC, DR, back, 0, 0, DC, q, 0, 0, DC) == 1);
  check ("memcpy2d: three cuMemcpy2D calls",
	 f_calls ("cuMemcpy2D_v2") == calls + 3);
  bool ok = true;
  for (int i = 0; i < DR; i++)
    for (int j = 0; j < DC; j++)
      ok &= back[i][j] == (j >= 1 && j < 6 ? h[i + 1][j + 1] : 0x55);
  check ("memcpy2d: every byte", ok);

  /* A pitch above the device's CU_DEVICE_ATTRIBUTE_MAX_PITCH: the
     driver refuses, the core copies the row itself.  */
  static unsigned char row[16] = "0123456789abcde";
  long direct = f_calls ("cuMemcpyHtoD_v2") + f_calls ("cuMemcpyHtoDAsync_v2");
  int e = errors_now ();
  check ("memcpy2d with a pitch the driver refuses: copied",
	 m2 (0, -1, 16, 1, p, 0, 0, 16, row, 0, 0, (size_t) 3 << 30) == 1
	 && errors_now () == e);
  check ("memcpy2d with a pitch the driver refuses: row by row",
	 f_calls ("cuMemcpyHtoD_v2") + f_calls ("cuMemcpyHtoDAsync_v2")
	 == direct + 1);
  unsigned char got[16];
  p_dev2host (0, got, p, 16);
  check ("memcpy2d with a pitch the driver refuses: the bytes",
	 memcmp (got, row, 16) == 0);

  f_fail ("cuMemcpy2D_v2=700");
  e = errors_now ();
  check ("memcpy2d fails when cuMemcpy2D does",
	 m2 (0, -1, 5, 3, p, 1, 0, DC, h, 2, 1, HC) == 0);
  check ("memcpy2d failure: one message naming the call and the shape",
	 error_says (e, "cuMemcpy2D", "CUDA_ERROR_ILLEGAL_ADDRESS",
		     "3 rows of 5 bytes", NULL));
  f_fail (NULL);
  p_free (0, p);
  p_free (0, q);
}

/* 3D: a 2 x 2 x 3 block of a host array of 3 x 4 x 5 at (1, 1, 2) to the
   origin of a device array of 2 x 3 x 4, and back to (1, 2, 1) of
   another host array: one cuMemcpy3D each.  */
static void
entries_rect3d (memcpy3d_fn m3)
{
  int a[3][4][5], b[3][4][5];
  int *dd = standin_rect3d_start (1, a, b);
  long calls = f_calls ("cuMemcpy3D_v2");
  standin_rect3d_copy (m3, 1, a, b, dd, "memcpy3d host to device",
		       "memcpy3d device to host");
  check ("memcpy3d: one cuMemcpy3D each",
	 f_calls ("cuMemcpy3D_v2") == calls + 2);
  standin_rect3d_check (1, a, b, dd);
  p_free (1, dd);
  /* Not pooled (128 KiB), so that the driver sees its end; the second
     plane lies 256 KiB on.  */
  char *big = p_alloc (1, 128 << 10);
  int e = errors_now ();
  check ("memcpy3d: a plane outside the allocation fails",
	 m3 (1, -1, 4, 1, 2, big, 0, 0, 0, 4, 64 << 10, a, 0, 0, 0, 4, 1)
	 == 0);
  check ("memcpy3d outside the allocation: one message",
	 errors_now () == e + 1);
  p_free (1, big);
}

/* GCC's grouping of the UUID's bytes: 4, 2, 2, 8.  */
static void
entries_uid (const char *(*uid) (int))
{
  const char *u0 = uid (0), *u1 = uid (1);
  check ("get_uid: device 0, from cuDeviceGetUuid_v2 as GCC formats it",
	 u0 != NULL
	 && strcmp (u0, "GPU-face0003-0405-0607-08090a0b0c0d0e0f") == 0);
  check ("get_uid: device 1 differs",
	 u1 != NULL
	 && strcmp (u1, "GPU-face0103-0405-0607-08090a0b0c0d0e0f") == 0);
  free ((void *) u0);
  free ((void *) u1);
  f_fail ("cuDeviceGetUuid_v2");
  int e = errors_now ();
  check ("get_uid: NULL when the driver fails", uid (0) == NULL);
  check ("get_uid failure: one message naming the call",
	 error_says (e, "cuDeviceGetUuid", NULL));
  f_fail (NULL);
}

/* Managed memory is a driver allocation that the host reads and writes
   directly and copies reach; is_accessible_ptr asks the driver.  */
static void
entries_managed (void *(*ma) (int, size_t), bool (*mf) (int, void *),
		 int (*acc) (int, const void *, size_t))
{
  long live = f_outstanding ("mem");
  long calls = f_calls ("cuMemAllocManaged");
  int *m = ma (0, 64 * sizeof (int));
  check ("managed_alloc: one cuMemAllocManaged",
	 m != NULL && f_calls ("cuMemAllocManaged") == calls + 1
	 && f_outstanding ("mem") == live + 1);
  if (m != NULL)
    {
      for (int i = 0; i < 64; i++)
	m[i] = i * i;
      int back[64];
      check ("managed memory: what the host wrote, the device copies",
	     p_dev2host (0, back, m, sizeof back)
	     && memcmp (back, m, sizeof back) == 0);
      check ("is_accessible_ptr: managed memory", acc (0, m, 256) == 1);
    }
  void *d = p_alloc (0, 1 << 20);
  int local[16];
  check ("is_accessible_ptr: device memory", acc (0, d, 1 << 20) == 1);
  check ("is_accessible_ptr: pageable host memory",
	 acc (0, local, sizeof local) == 0);
  check ("is_accessible_ptr: a range running past device memory",
	 acc (0, (char *) d + (1 << 20) - 8, 1 << 20) == 0);
  check ("is_accessible_ptr: nothing", acc (0, d, 0) == 0);
  p_free (0, d);
  check ("managed_free", m == NULL || mf (0, m));
  check ("managed_free: back to the driver", f_outstanding ("mem") == live);

  f_fail ("cuMemAllocManaged");
  int e = errors_now ();
  check ("managed_alloc: NULL when the driver fails", ma (0, 100) == NULL);
  check ("managed_alloc failure: one message naming the call and size",
	 error_says (e, "cuMemAllocManaged", "100", NULL));
  f_fail (NULL);
}

/* Page-locked host memory through the plugin's first device.  */
static void
entries_page_locked (bool (*pa) (void **, size_t), bool (*pf) (void *),
		     int (*acc) (int, const void *, size_t))
{
  long host = f_outstanding ("host");
  void *p = (void *) 1;
  check ("page_locked_host_alloc", pa (&p, 10000) && p != NULL);
  check ("page_locked_host_alloc: one cuMemHostAlloc block",
	 f_outstanding ("host") == host + 1);
  if (p != NULL)
    {
      memset (p, 0x5a, 10000);
      check ("is_accessible_ptr: page-locked host memory",
	     acc (0, p, 10000) == 1);
      check ("page_locked_host_free", pf (p));
    }
  check ("page_locked_host_free: back to the driver",
	 f_outstanding ("host") == host);
  void *z = (void *) 1;
  check ("page_locked_host_alloc of nothing: NULL, no driver call",
	 pa (&z, 0) && z == NULL && f_outstanding ("host") == host);

  int e = errors_now ();
  f_fail ("cuMemHostAlloc=2");
  check ("page_locked_host_alloc out of memory: NULL without an error",
	 pa (&p, 4096) && p == NULL && errors_now () == e);
  f_fail ("cuMemHostAlloc=1");
  check ("page_locked_host_alloc failing otherwise: false",
	 !pa (&p, 4096) && p == NULL);
  check ("page_locked_host_alloc failure: one message",
	 error_says (e, "cuMemHostAlloc", "4096", NULL));
  f_fail (NULL);
  int local;
  e = errors_now ();
  check ("page_locked_host_free of other memory fails", !pf (&local));
  check ("page_locked_host_free of other memory: one message",
	 error_says (e, "cuMemFreeHost", NULL));
}

void
test_entries (void)
{
  memcpy2d_fn m2;
  memcpy3d_fn m3;
  const char *(*uid) (int);
  void *(*ma) (int, size_t);
  bool (*mf) (int, void *);
  int (*acc) (int, const void *, size_t);
  bool (*pa) (void **, size_t);
  bool (*pf) (void *);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_memcpy2d", &m2)
      || !standin_plugin_sym ("GOMP_OFFLOAD_memcpy3d", &m3)
      || !standin_plugin_sym ("GOMP_OFFLOAD_get_uid", &uid)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_alloc", &ma)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_free", &mf)
      || !standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc)
      || !standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_alloc", &pa)
      || !standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_free", &pf))
    {
      check ("libgomp 14 to 16's entry points exported", false);
      return;
    }
  long bad = bad_calls ();
  entries_rect2d (m2);
  entries_uid (uid);
  entries_managed (ma, mf, acc);
  check_no_bad_calls ("entry points: no invalid driver calls", bad);
  entries_rect3d (m3);
  entries_page_locked (pa, pf, acc);
}
