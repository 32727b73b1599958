/* hsa-harness: the entry points of libgomp 14 to 16 on HSA devices:
   rectangular copies through hsa_amd_memory_async_copy_rect where GCC's
   plugin uses it, else row by row;
   memset through hsa_amd_memory_fill, with unaligned heads and tails
   copied; the device UID from HSA_AMD_AGENT_INFO_UUID, none for agents
   without one; no page-locked host memory, as GCC's gcn plugin; managed
   memory and accessibility (in children with a fresh plugin).  See
   hsa-harness.h.  */

#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hsa-harness.h"

/* Set N bytes at OFF of a device buffer of SIZE bytes, all 0x11 before,
   to VAL with MS; whether every byte is then as it should be.  */
static bool
entries_memset_range (bool (*ms) (int, void *, int, size_t),
		      unsigned char *p, size_t size, size_t off, size_t n,
		      int val)
{
  unsigned char *back = malloc (size);
  memset (back, 0x11, size);
  bool ok = p_host2dev (0, p, back, size) && ms (0, p + off, val, n)
	    && p_dev2host (0, back, p, size);
  for (size_t i = 0; ok && i < size; i++)
    ok = back[i] == (i >= off && i < off + n ? (unsigned char) val : 0x11);
  free (back);
  return ok;
}

/* Whether the fake saw FILLS calls of hsa_amd_memory_fill and COPIES of
   hsa_memory_copy since the counts *FILLS_BEFORE and *COPIES_BEFORE,
   which then get the counts now.  */
static bool
entries_calls_since (long *fills_before, long *copies_before, long fills,
		     long copies)
{
  long f = f_calls ("hsa_amd_memory_fill"), c = f_calls ("hsa_memory_copy");
  bool ok = f == *fills_before + fills && c == *copies_before + copies;
  *fills_before = f;
  *copies_before = c;
  return ok;
}

static void
entries_memset (bool (*ms) (int, void *, int, size_t))
{
  size_t size = 20000;
  unsigned char *p = p_alloc (0, size);
  check ("memset: allocation 4-byte aligned", ((uintptr_t) p & 3) == 0);
  long fills = f_calls ("hsa_amd_memory_fill");
  long copies = f_calls ("hsa_memory_copy");
  check ("memset aligned: every byte",
	 entries_memset_range (ms, p, size, 0, 16000, 0x1c7));
  /* One copy in and one out around it, none for the memset.  */
  check ("memset aligned: one hsa_amd_memory_fill, no copy",
	 entries_calls_since (&fills, &copies, 1, 2));
  check ("memset with an unaligned head and tail: every byte",
	 entries_memset_range (ms, p, size, 3, 9998, 0x5e));
  check ("memset unaligned: one fill, head and tail copied",
	 entries_calls_since (&fills, &copies, 1, 4));
  check ("memset of less than a word: every byte",
	 entries_memset_range (ms, p, size, 5, 3, 0xab)
	 && entries_memset_range (ms, p, size, 1, 6, 0xcd));
  check ("memset of less than a word: no fill",
	 f_calls ("hsa_amd_memory_fill") == fills);
  f_fail ("hsa_amd_memory_fill");
  int e = errors_now ();
  check ("memset fails when hsa_amd_memory_fill does",
	 !ms (0, p, 0, 4000));
  check ("memset failure: one message naming the call",
	 error_says (e, "hsa_amd_memory_fill", "4000", NULL));
  f_fail (NULL);
  p_free (0, p);
}

static void
entries_uid (const char *(*uid) (int))
{
  unsetenv ("FAKEHSA_UUID");
  const char *u0 = uid (0), *u1 = uid (1);
  check ("get_uid: the agents' HSA_AMD_AGENT_INFO_UUID",
	 u0 != NULL && u1 != NULL
	 && strcmp (u0, "GPU-00000000feed0000") == 0
	 && strcmp (u1, "GPU-00000000feed0001") == 0);
  free ((void *) u0);
  free ((void *) u1);
  /* Every agent without a UUID answers "GPU-XX": not unique.  */
  setenv ("FAKEHSA_UUID", "none", 1);
  int e = errors_now ();
  check ("get_uid: none for an agent without a UUID, silently",
	 uid (0) == NULL && errors_now () == e);
  unsetenv ("FAKEHSA_UUID");
  f_fail ("hsa_agent_get_info");
  check ("get_uid: NULL when the runtime fails", uid (1) == NULL);
  check ("get_uid failure: one message naming the call",
	 error_says (e, "hsa_agent_get_info", NULL));
  f_fail (NULL);
}

/* libgomp 14's memcpy2d and memcpy3d.  */

/* A 2D copy of ROWS rows of WIDTH bytes from the host to device 0 and
   back: the host's array has rows of SPITCH bytes, the rectangle at row 2,
   byte SX; the device's rows of DPITCH bytes, the rectangle at row 1, byte
   3.  Whether every byte of the device's array is then what it should be
   (the rectangle from the host, 0x11 elsewhere), and the copy back to a
   clean host array gives the rectangle at the same place.  */
static bool
rect_2d_round_trip (memcpy2d_fn m2, size_t width, size_t rows, size_t spitch,
		    size_t sx, size_t dpitch)
{
  size_t hbytes = spitch * (rows + 3), dbytes = dpitch * (rows + 2);
  unsigned char *h = malloc (hbytes), *back = malloc (hbytes);
  unsigned char *dv = malloc (dbytes);
  unsigned char *d = p_alloc (0, dbytes);
  for (size_t i = 0; i < hbytes; i++)
    h[i] = (unsigned char) (i * 7 + 3);
  memset (dv, 0x11, dbytes);
  memset (back, 0, hbytes);
  bool ok = (d != NULL && p_host2dev (0, d, dv, dbytes)
	     && m2 (0, -1, width, rows, d, 3, 1, dpitch, h, sx, 2, spitch) == 1
	     && p_dev2host (0, dv, d, dbytes)
	     && m2 (-1, 0, width, rows, back, sx, 2, spitch, d, 3, 1,
		    dpitch) == 1);
  for (size_t r = 0; ok && r < rows + 2; r++)
    for (size_t x = 0; ok && x < dpitch; x++)
      {
	bool in = r >= 1 && r < rows + 1 && x >= 3 && x < 3 + width;
	unsigned char want = in ? h[(r + 1) * spitch + sx + x - 3] : 0x11;
	ok = dv[r * dpitch + x] == want;
      }
  for (size_t r = 0; ok && r < rows + 3; r++)
    for (size_t x = 0; ok && x < spitch; x++)
      {
	bool in = r >= 2 && r < rows + 2 && x >= sx && x < sx + width;
	ok = back[r * spitch + x] == (in ? h[r * spitch + x] : 0);
      }
  p_free (0, d);
  free (h);
  free (back);
  free (dv);
  return ok;
}

/* A 3D copy from device 0 to the host: 3 planes of 5 rows of 12 bytes,
   from planes of 8 rows of 16 bytes (at plane 1, row 2, byte 4) to planes
   of 6 rows of 20 bytes (at plane 0, row 1, byte 2).  Whether every byte
   of the host's array is as it should be.  */
static bool
rect_3d_from_device (memcpy3d_fn m3)
{
  size_t dbytes = 16 * 8 * 4, hbytes = 20 * 6 * 3;
  unsigned char *dv = malloc (dbytes), *h = malloc (hbytes);
  unsigned char *d = p_alloc (0, dbytes);
  for (size_t i = 0; i < dbytes; i++)
    dv[i] = (unsigned char) (i * 13 + 5);
  memset (h, 0x22, hbytes);
  bool ok = (d != NULL && p_host2dev (0, d, dv, dbytes)
	     && m3 (-1, 0, 12, 5, 3, h, 2, 1, 0, 20, 6, d, 4, 2, 1, 16,
		    8) == 1);
  for (size_t z = 0; ok && z < 3; z++)
    for (size_t y = 0; ok && y < 6; y++)
      for (size_t x = 0; ok && x < 20; x++)
	{
	  bool in = y >= 1 && y < 6 && x >= 2 && x < 14;
	  unsigned char want = (in ? dv[((z + 1) * 8 + y - 1 + 2) * 16 + x - 2
					+ 4] : 0x22);
	  ok = h[(z * 6 + y) * 20 + x] == want;
	}
  p_free (0, d);
  free (dv);
  free (h);
  return ok;
}

/* Rectangular copies: through hsa_amd_memory_async_copy_rect where GCC's
   plugin uses it (host to device and back, 4-byte aligned pitches, the
   host memory locked for the copy and unlocked after), else row by row
   (the core's loop), which the runtime's refusals fall back to as
   well.  */
static void
entries_rect (memcpy2d_fn m2, memcpy3d_fn m3)
{
  long rects = f_calls ("hsa_amd_memory_async_copy_rect");
  long locks = f_calls ("hsa_amd_memory_lock");
  long unlocks = f_calls ("hsa_amd_memory_unlock");
  long signals = f_outstanding ("signal");
  int e = errors_now ();
  check ("memcpy2d to the device and back: every byte",
	 rect_2d_round_trip (m2, 21, 5, 64, 6, 32));
  check ("memcpy2d: two hsa_amd_memory_async_copy_rect",
	 f_calls ("hsa_amd_memory_async_copy_rect") == rects + 2);
  check ("memcpy2d: the host memory locked and unlocked each time",
	 f_calls ("hsa_amd_memory_lock") == locks + 2
	 && f_calls ("hsa_amd_memory_unlock") == unlocks + 2
	 && f_outstanding ("lock") == 0);
  check ("memcpy2d: the signals destroyed",
	 f_outstanding ("signal") == signals);
  rects = f_calls ("hsa_amd_memory_async_copy_rect");
  check ("memcpy3d from the device: every byte", rect_3d_from_device (m3));
  check ("memcpy3d: one hsa_amd_memory_async_copy_rect",
	 f_calls ("hsa_amd_memory_async_copy_rect") == rects + 1
	 && f_outstanding ("lock") == 0);
  check ("rectangular copies: silent", errors_now () == e);

  /* Where GCC's plugin leaves the rectangle to its caller's loop.  */
  rects = f_calls ("hsa_amd_memory_async_copy_rect");
  check ("memcpy2d, a pitch not a multiple of 4: every byte",
	 rect_2d_round_trip (m2, 21, 5, 62, 6, 32));
  check ("memcpy2d, a pitch not a multiple of 4: row by row",
	 f_calls ("hsa_amd_memory_async_copy_rect") == rects);
  unsigned char *a = p_alloc (0, 4096), *b = p_alloc (0, 4096);
  check ("memcpy2d within the device: done",
	 m2 (0, 0, 16, 4, b, 0, 0, 32, a, 0, 0, 64) == 1);
  check ("memcpy2d within the device: row by row",
	 f_calls ("hsa_amd_memory_async_copy_rect") == rects);
  p_free (0, a);
  p_free (0, b);

  /* The runtime refusing: the rows do it, silently.  */
  static const char *const refusals[] = {
    "hsa_amd_memory_lock", "hsa_amd_memory_async_copy_rect",
    "hsa_signal_create"
  };
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
    {
      f_fail (refusals[i]);
      e = errors_now ();
      checkf (rect_2d_round_trip (m2, 21, 5, 64, 6, 32),
	      "memcpy2d, %s failing: every byte, row by row", refusals[i]);
      f_fail (NULL);
      checkf (errors_now () == e && f_outstanding ("lock") == 0,
	      "memcpy2d, %s failing: silent, nothing left locked",
	      refusals[i]);
    }
}

void
test_entries (void)
{
  bool (*ms) (int, void *, int, size_t);
  const char *(*uid) (int);
  void *(*ma) (int, size_t);
  int (*acc) (int, const void *, size_t);
  bool (*pa) (void **, size_t);
  memcpy2d_fn m2;
  memcpy3d_fn m3;
  if (!standin_plugin_sym ("GOMP_OFFLOAD_memset", &ms)
      || !standin_plugin_sym ("GOMP_OFFLOAD_get_uid", &uid)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_alloc", &ma)
      || !standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc)
      || !standin_plugin_sym ("GOMP_OFFLOAD_memcpy2d", &m2)
      || !standin_plugin_sym ("GOMP_OFFLOAD_memcpy3d", &m3))
    {
      check ("libgomp 15 and 16's entry points exported", false);
      return;
    }
  long bad = bad_calls ();
  entries_memset (ms);
  entries_uid (uid);
  entries_rect (m2, m3);
  check_no_bad_calls ("entry points: no invalid runtime calls", bad);
  /* As GCC 16's gcn plugin: libgomp pins memory itself, and a second
     plugin offering page-locked memory would end the program.  */
  check ("no page-locked host memory in the gcn plugin",
	 !standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_alloc", &pa));
  /* Here, in the process valgrind checks for leaks at its exit: the
     array of agents hsa_amd_pointer_info allocates must be freed.  */
  void *d = p_alloc (0, 64);
  check ("is_accessible_ptr: device memory on its device, in the main"
	 " process", acc (0, d, 64) == 1 && acc (1, d, 64) == 0);
  p_free (0, d);
}

/* Whether the host page of P is mapped.  */
static bool
page_mapped (const void *p)
{
  unsigned char v;
  void *page = (void *) ((uintptr_t) p & ~(uintptr_t) 4095);
  return mincore (page, 4096, &v) == 0 || errno != ENOMEM;
}

/* Managed memory and accessibility on both devices, in a fresh plugin
   loaded by libgomp 16, whose devices are then finalised: heaps of
   shared virtual memory as GCC 16's plugin makes them (1 GiB at least,
   coarse-grained, made accessible to the device's agent unless the
   system says agents reach SVM by default: FAKEHSA_SVM_DEFAULT=1),
   allocations carved from them, a large one in a heap of its own
   unmapped when freed, every heap unmapped at the end; accessibility of
   managed, device and host memory.  */
void
child_managed (void)
{
  void *(*ma) (int, size_t);
  bool (*mf) (int, void *);
  int (*acc) (int, const void *, size_t);
  offloadkit_standin_libgomp_gcc = 16;
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  if (!standin_plugin_sym ("GOMP_OFFLOAD_managed_alloc", &ma)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_free", &mf)
      || !standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc)
      || num (0) != 2 || !p_init_device (0) || !p_init_device (1))
    {
      check ("two devices start, entry points exported", false);
      return;
    }
  bool by_default = getenv ("FAKEHSA_SVM_DEFAULT") != NULL;
  long bad = bad_calls ();
  int e = errors_now ();
  char *p = ma (0, 64);
  check ("managed_alloc: memory the host uses", p != NULL);
  if (p == NULL)
    return;
  memset (p, 0x5a, 64);
  uintptr_t base = 0, base2 = 0;
  size_t size = 0, size2 = 0;
  uint64_t flag = 0;
  unsigned agents = 0;
  check ("managed_alloc: in a heap of 1 GiB of shared virtual memory",
	 f_svm ((uintptr_t) p, &base, &size, &flag, &agents)
	 && size == (size_t) 1 << 30 && base % 4096 == 0);
  check ("managed_alloc: the heap coarse-grained", flag == 1);
  checkf (agents == (by_default ? 0u : 1u), "managed_alloc: %s",
	  by_default ? "agents reach SVM by default: none named"
	  : "the heap made accessible to device 0's agent, only");
  char *q = ma (0, 1000);
  check ("managed_alloc: a second allocation from the same heap",
	 q != NULL && q != p && f_svm ((uintptr_t) q, &base2, NULL, NULL, NULL)
	 && base2 == base);
  check ("is_accessible_ptr: managed memory on its device",
	 acc (0, p, 64) == 1 && acc (0, q, 1000) == 1);
  checkf (acc (1, p, 64) == by_default, "is_accessible_ptr: managed memory"
	  " of device 0 %s device 1", by_default ? "on" : "not on");
  size_t big_size = ((size_t) 1 << 30) + 3 * 4096 + 5;
  char *big = ma (0, big_size);
  check ("managed_alloc: a request above 1 GiB in a heap of its own",
	 big != NULL && f_svm ((uintptr_t) big, &base2, &size2, NULL, NULL)
	 && base2 == (uintptr_t) big && size2 == ((size_t) 1 << 30) + 4 * 4096);
  check ("managed_free: the large request's heap unmapped",
	 big != NULL && mf (0, big) && !page_mapped (big));
  check ("managed memory: silent", errors_now () == e);

  void *d = p_alloc (0, 4096);
  check ("is_accessible_ptr: device memory on its device",
	 acc (0, d, 4096) == 1);
  check ("is_accessible_ptr: device memory not on another device",
	 acc (1, d, 64) == 0);
  check ("is_accessible_ptr: a range beyond the allocation",
	 acc (0, d, (size_t) 8 << 20) == 0);
  p_free (0, d);
  char *host = malloc (64);
  check ("is_accessible_ptr: host memory unknown to the runtime",
	 acc (0, host, 64) == 0);
  free (host);
  check_no_bad_calls ("managed memory, accessibility: no invalid runtime"
		      " calls", bad);

  e = errors_now ();
  check ("managed_free: a pointer it did not give refused",
	 !mf (0, p + 8));
  check ("managed_free of a pointer it did not give: one message",
	 error_says (e, "free", NULL));
  check ("managed_free", mf (0, p) && mf (0, q));
  f_fail ("hsa_amd_svm_attributes_set");
  e = errors_now ();
  check ("managed_alloc: NULL when the runtime refuses the heap",
	 ma (1, 64) == NULL);
  check ("managed_alloc refused: one message naming the call",
	 error_says (e, "hsa_amd_svm_attributes_set", NULL));
  f_fail (NULL);
  check ("fini", p_fini_device (0) && p_fini_device (1));
  check ("fini: the heap unmapped", !page_mapped ((void *) base));
  check_no_leaks ("after fini");
}
