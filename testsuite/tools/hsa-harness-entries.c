/* hsa-harness: the entry points of libgomp 15 and 16 on HSA devices:
   memset through hsa_amd_memory_fill, with unaligned heads and tails
   copied; the device UID from HSA_AMD_AGENT_INFO_UUID, none for agents
   without one; and what the gcn plugin does not offer (page-locked host
   memory, managed memory, accessibility), as GCC's gcn plugin.  See
   hsa-harness.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

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
	 f_calls ("hsa_amd_memory_fill") == fills + 1
	 && f_calls ("hsa_memory_copy") == copies + 2);
  fills = f_calls ("hsa_amd_memory_fill");
  copies = f_calls ("hsa_memory_copy");
  check ("memset with an unaligned head and tail: every byte",
	 entries_memset_range (ms, p, size, 3, 9998, 0x5e));
  check ("memset unaligned: one fill, head and tail copied",
	 f_calls ("hsa_amd_memory_fill") == fills + 1
	 && f_calls ("hsa_memory_copy") == copies + 4);
  fills = f_calls ("hsa_amd_memory_fill");
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

void
test_entries (void)
{
  bool (*ms) (int, void *, int, size_t);
  const char *(*uid) (int);
  void *(*ma) (int, size_t);
  int (*acc) (int, const void *, size_t);
  bool (*pa) (void **, size_t);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_memset", &ms)
      || !standin_plugin_sym ("GOMP_OFFLOAD_get_uid", &uid)
      || !standin_plugin_sym ("GOMP_OFFLOAD_managed_alloc", &ma)
      || !standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc))
    {
      check ("libgomp 15 and 16's entry points exported", false);
      return;
    }
  long bad = bad_calls ();
  entries_memset (ms);
  entries_uid (uid);
  check_no_bad_calls ("entry points: no invalid runtime calls", bad);
  /* As GCC 16's gcn plugin: libgomp pins memory itself, and a second
     plugin offering page-locked memory would end the program.  */
  check ("no page-locked host memory in the gcn plugin",
	 !standin_plugin_sym ("GOMP_OFFLOAD_page_locked_host_alloc", &pa));
  int e = errors_now ();
  void *d = p_alloc (0, 64);
  check ("managed_alloc: none on an HSA device, silently",
	 ma (0, 64) == NULL && errors_now () == e);
  check ("is_accessible_ptr: 0 on an HSA device", acc (0, d, 64) == 0);
  p_free (0, d);
}
