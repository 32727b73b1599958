/* cuda-harness: device memory through the plugin: the pool, pinned
   staging and copies in three directions, copies and allocations the
   driver refuses or fails; and, in children over a fresh plugin, the pool
   and staging turned off, no pinned memory, no staging stream.  See
   cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"

void
test_memory (void)
{
  long bad = bad_calls ();
  long allocs = f_calls ("cuMemAlloc_v2");
  void *small[20];
  bool ok = true;
  for (int i = 0; i < 20; i++)
    {
      small[i] = p_alloc (0, 100 + (size_t) i * 1000);
      ok &= small[i] != NULL;
      for (int j = 0; j < i; j++)
	ok &= small[i] != small[j];
    }
  check ("20 small allocations", ok);
  check ("small allocations pooled (at most one driver allocation)",
	 f_calls ("cuMemAlloc_v2") - allocs <= 1);
  void *z1 = p_alloc (0, 0), *z2 = p_alloc (0, 0);
  check ("alloc (0): unique pointers", z1 != NULL && z2 != NULL && z1 != z2);
  check ("free (alloc (0))", p_free (0, z1) && p_free (0, z2));
  for (int i = 0; i < 20; i++)
    ok &= p_free (0, small[i]);
  check ("free small allocations", ok);

  allocs = f_calls ("cuMemAlloc_v2");
  long live = f_outstanding ("mem");
  size_t big_size = 3 << 20;
  unsigned char *big = p_alloc (0, big_size);
  check ("big allocation", big != NULL);
  check ("big allocation: one driver allocation",
	 f_calls ("cuMemAlloc_v2") == allocs + 1
	 && f_outstanding ("mem") == live + 1);

  /* Copies, staged (small) and direct (big), in three directions.  */
  unsigned char *buf = malloc (big_size), *back = malloc (big_size);
  for (size_t i = 0; i < big_size; i++)
    buf[i] = (unsigned char) (i * 7 + 3);
  unsigned char *dev = p_alloc (0, 4096);
  long hd_async = f_calls ("cuMemcpyHtoDAsync_v2");
  check ("host2dev small", p_host2dev (0, dev, buf, 4096));
  check ("small host2dev went through the pinned staging buffer",
	 f_calls ("cuMemcpyHtoDAsync_v2") > hd_async);
  memset (back, 0, 4096);
  check ("dev2host small", p_dev2host (0, back, dev, 4096));
  check ("small round trip", memcmp (buf, back, 4096) == 0);
  check ("pinned staging memory exists", f_outstanding ("host") > 0);
  long hd = f_calls ("cuMemcpyHtoD_v2"), dh = f_calls ("cuMemcpyDtoH_v2");
  check ("host2dev big", p_host2dev (0, big, buf, big_size));
  memset (back, 0, big_size);
  check ("dev2host big", p_dev2host (0, back, big, big_size));
  check ("big round trip", memcmp (buf, back, big_size) == 0);
  check ("big copies go straight to the driver",
	 f_calls ("cuMemcpyHtoD_v2") == hd + 1
	 && f_calls ("cuMemcpyDtoH_v2") == dh + 1);
  check ("dev2dev", p_dev2dev (0, dev, big + 1000, 4000));
  memset (back, 0, 4000);
  p_dev2host (0, back, dev, 4000);
  check ("dev2dev contents", memcmp (back, buf + 1000, 4000) == 0);
  check ("zero-byte copy", p_host2dev (0, dev, buf, 0));
  check_no_bad_calls ("memory: no invalid driver calls", bad);

  /* Copies the driver refuses.  */
  /* (A copy past the end of a pooled block stays inside the pool's chunk,
     which the driver cannot tell.)  */
  int e = errors_now ();
  int local[64];
  check ("copy to host memory fails", !p_host2dev (0, local, buf, 200));
  check ("copy to host memory: message",
	 error_says (e, "200", "CUDA_ERROR_INVALID_VALUE", NULL));
  e = errors_now ();
  check ("big copy past the end fails",
	 !p_dev2host (0, back, big + 4096, big_size));
  check ("big copy past the end: message names the direction and bytes",
	 error_says (e, "3145728", NULL));

  /* Failures injected.  */
  f_fail ("cuMemcpyHtoD_v2=700");
  e = errors_now ();
  check ("failed copy returns false", !p_host2dev (0, big, buf, big_size));
  check ("failed copy: message",
	 error_says (e, "CUDA_ERROR_ILLEGAL_ADDRESS", "3145728", NULL));
  f_fail ("cuMemcpyDtoHAsync_v2=700,cuMemcpyDtoH_v2=700");
  e = errors_now ();
  check ("failed staged copy returns false", !p_dev2host (0, back, dev, 64));
  check ("failed staged copy: message",
	 error_says (e, "CUDA_ERROR_ILLEGAL_ADDRESS", "64", NULL));
  f_fail ("cuMemcpyDtoD_v2=1,cuMemcpyDtoDAsync_v2=1");
  e = errors_now ();
  check ("failed dev2dev returns false", !p_dev2dev (0, dev, big, 64));
  check ("failed dev2dev: message",
	 error_says (e, "CUDA_ERROR_INVALID_VALUE", NULL));
  f_fail ("cuMemAlloc_v2");
  e = errors_now ();
  check ("out of memory: NULL", p_alloc (0, 5 << 20) == NULL);
  check ("out of memory: message",
	 error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", "5242880", NULL));
  f_fail (NULL);
  check ("copies work again", p_host2dev (0, dev, buf, 64)
	 && p_host2dev (0, big, buf, big_size));

  e = errors_now ();
  check ("free of an unknown pointer fails", !p_free (0, local));
  check ("free of an unknown pointer: message", error_says (e, "free", NULL));
  /* (The failed allocation may have made the plugin give cached stacks
     back: count from here.)  */
  live = f_outstanding ("mem");
  check ("free big", p_free (0, big));
  check ("big block returned to the driver",
	 f_outstanding ("mem") == live - 1);
  check ("free small", p_free (0, dev));
  free (buf);
  free (back);
}

/* OFFLOADKIT_CUDA_POOL_MAX=0, OFFLOADKIT_CUDA_STAGING_MAX=0 and a device
   of 8 MiB.  */
void
child_no_pool (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  long allocs = f_calls ("cuMemAlloc_v2");
  void *p[4];
  for (int i = 0; i < 4; i++)
    p[i] = p_alloc (0, 64);
  check ("pool off: one driver allocation per request",
	 f_calls ("cuMemAlloc_v2") == allocs + 4
	 && f_outstanding ("mem") == 4);
  int v = 42, back = 0;
  long hd = f_calls ("cuMemcpyHtoD_v2"), dh = f_calls ("cuMemcpyDtoH_v2");
  check ("staging off: small copies straight to the driver",
	 p_host2dev (0, p[0], &v, sizeof v) && p_dev2host (0, &back, p[0],
							     sizeof back)
	 && back == 42 && f_calls ("cuMemcpyHtoD_v2") == hd + 1
	 && f_calls ("cuMemcpyDtoH_v2") == dh + 1
	 && f_calls ("cuMemcpyHtoDAsync_v2") == 0);
  check ("staging off: no pinned memory", f_outstanding ("host") == 0);
  for (int i = 0; i < 4; i++)
    p_free (0, p[i]);
  check ("pool off: frees go to the driver", f_outstanding ("mem") == 0);
  int e = errors_now ();
  check ("16 MiB on an 8 MiB device: NULL", p_alloc (0, 16 << 20) == NULL);
  check ("16 MiB on an 8 MiB device: message",
	 error_says (e, "16777216", "CUDA_ERROR_OUT_OF_MEMORY", NULL));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* FAKECUDA_FAIL=cuMemHostAlloc: no pinned staging; copies still work.  */
void
child_no_pinned (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  int e = errors_now ();
  char buf[1000], back[1000];
  for (int i = 0; i < 1000; i++)
    buf[i] = (char) i;
  void *p = p_alloc (0, sizeof buf);
  check ("small copies without pinned memory",
	 p != NULL && p_host2dev (0, p, buf, sizeof buf)
	 && p_dev2host (0, back, p, sizeof back)
	 && memcmp (buf, back, sizeof buf) == 0);
  check ("no error for the missing staging buffer", errors_now () == e);
  p_free (0, p);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* cuStreamCreate fails when a staging slot first needs its stream: the
   slot is given up (its pinned buffer freed) and copies go directly,
   without trying again at every copy.  */
void
child_no_staging_stream (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  char buf[1000], back[1000];
  for (int i = 0; i < 1000; i++)
    buf[i] = (char) (i * 3);
  void *p = p_alloc (0, sizeof buf);
  int e = errors_now ();
  long creates = f_calls ("cuStreamCreate");
  f_fail ("cuStreamCreate");
  bool ok = p != NULL;
  for (int i = 0; ok && i < 8; i++)
    ok = (p_host2dev (0, p, buf, sizeof buf)
	  && p_dev2host (0, back, p, sizeof back)
	  && memcmp (buf, back, sizeof buf) == 0);
  f_fail (NULL);
  check ("no staging stream: small copies still work", ok);
  check ("no staging stream: no error", errors_now () == e);
  /* One thread takes the same slot every time.  */
  check ("no staging stream: cuStreamCreate tried once",
	 f_calls ("cuStreamCreate") == creates + 1);
  check ("no staging stream: its pinned buffer freed",
	 f_outstanding ("host") == 0);
  p_free (0, p);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* libgomp 16's memset (cuMemsetD8Async on a stream of the pool, waited
   for) and libgomp 14's rectangular copies (rows through the copies).  */
void
test_memset_rect (void)
{
  bool (*ms) (int, void *, int, size_t);
  int (*m2) (int, int, size_t, size_t, void *, size_t, size_t, size_t,
	     const void *, size_t, size_t, size_t);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_memset", &ms)
      || !standin_plugin_sym ("GOMP_OFFLOAD_memcpy2d", &m2))
    {
      check ("memset and memcpy2d exported", false);
      return;
    }
  long bad = bad_calls ();
  size_t n = 100000;
  unsigned char *p = p_alloc (0, n), *back = malloc (n);
  long calls = f_calls ("cuMemsetD8Async");
  check ("memset", ms (0, p, 0x3c, n) && ms (0, p + 10, 0x1101, 3));
  check ("memset: one cuMemsetD8Async each",
	 f_calls ("cuMemsetD8Async") == calls + 2);
  check ("memset of nothing: no driver call",
	 ms (0, p, 0, 0) && f_calls ("cuMemsetD8Async") == calls + 2);
  p_dev2host (0, back, p, n);
  bool ok = true;
  for (size_t i = 0; i < n; i++)
    ok &= back[i] == (i >= 10 && i < 13 ? 0x01 : 0x3c);
  check ("memset: every byte", ok);
  f_fail ("cuMemsetD8Async");
  int e = errors_now ();
  check ("memset fails when the driver does", !ms (0, p, 0, 4));
  check ("memset failure: one message naming the call",
	 error_says (e, "cuMemsetD8Async", NULL));
  f_fail (NULL);

  /* Rows 1-2, bytes 2-5 of a 4 x 8 host array to rows 0-1, bytes 1-4 of
     the device array of pitch 16.  */
  unsigned char h[4][8], d[2][16];
  for (int i = 0; i < 32; i++)
    ((unsigned char *) h)[i] = (unsigned char) i;
  memset (d, 0x77, sizeof d);
  p_host2dev (0, p, d, sizeof d);
  check ("memcpy2d host to device",
	 m2 (0, -1, 4, 2, p, 1, 0, 16, h, 2, 1, 8) == 1);
  p_dev2host (0, d, p, sizeof d);
  ok = true;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 16; j++)
      ok &= d[i][j] == (j >= 1 && j < 5 ? h[i + 1][j + 1] : 0x77);
  check ("memcpy2d: every byte", ok);
  check ("free", p_free (0, p));
  free (back);
  check_no_bad_calls ("memset, memcpy2d: no invalid driver calls", bad);
}
