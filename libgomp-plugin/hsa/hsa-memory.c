/* Device memory and copies of the HSA backend.

   Allocations come from the agent's coarse-grained data region;
   hsa_memory_allocate is a kernel-driver call, so the core's pool serves
   small requests from large chunks (OFFLOADKIT_GCN_POOL_MAX sets the
   largest pooled request, in bytes; 0 turns the pool off).  Copies use
   hsa_memory_copy, which accepts any mix of host and device pointers and
   returns when the copy is complete.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-internal.h"

void *
gcn_region_alloc (struct gcn_device *dev, size_t size, const char *what)
{
  void *p = NULL;
  hsa_status_t s = ok_hsa.hsa_memory_allocate (dev->data_region,
					       size == 0 ? 1 : size, &p);
  if (s != HSA_STATUS_SUCCESS || p == NULL)
    {
      char buf[256];
      snprintf (buf, sizeof buf, "cannot allocate %zu bytes for %s", size,
		what);
      ok_dev_call_error (&dev->base, buf, "hsa_memory_allocate",
			 s != HSA_STATUS_SUCCESS ? s : HSA_STATUS_ERROR);
      return NULL;
    }
  return p;
}

bool
gcn_region_free (struct gcn_device *dev, void *ptr, const char *what)
{
  hsa_status_t s = ok_hsa.hsa_memory_free (ptr);
  if (s == HSA_STATUS_SUCCESS)
    return true;
  /* After a fault the runtime may refuse: not worth a message, nor a
     failure of the device's finalisation.  */
  char buf[160];
  snprintf (buf, sizeof buf, "free %s at %p", what, ptr);
  return ok_dev_teardown_ok (&dev->base, s, buf, "hsa_memory_free");
}

void *
gcn_raw_alloc (struct ok_device *dev, size_t size)
{
  return gcn_region_alloc (gcn_dev (dev), size, "device memory");
}

bool
gcn_raw_free (struct ok_device *dev, void *ptr)
{
  return gcn_region_free (gcn_dev (dev), ptr, "device memory");
}

static bool
gcn_copy (struct ok_device *dev, void *dst, const void *src, size_t n,
	  const char *dir)
{
  hsa_status_t s = ok_hsa.hsa_memory_copy (dst, src, n);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[160];
      snprintf (what, sizeof what, "cannot copy %zu bytes %s (%p to %p)", n,
		dir, src, dst);
      ok_dev_call_error (dev, what, "hsa_memory_copy", s);
      return false;
    }
  return true;
}

bool
gcn_host2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "to the device");
}

bool
gcn_dev2host (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "from the device");
}

bool
gcn_dev2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "within the device");
}

/* libgomp 16's memset: hsa_amd_memory_fill sets whole, aligned 32-bit
   words; the 1 to 3 bytes before the first aligned word and after the
   last are copied from the host (the core's generic path), as is all of
   a range without a whole word or a runtime without the extension.  */
bool
gcn_memset (struct ok_device *dev, void *ptr, int val, size_t n)
{
  size_t head = (4 - (uintptr_t) ptr % 4) % 4;
  if (ok_hsa.hsa_amd_memory_fill == NULL || n < head + 4)
    return ok_memset_by_copy (dev, ptr, val, n);
  char *words = (char *) ptr + head;
  size_t count = (n - head) / 4, tail = (n - head) % 4;
  uint32_t v8 = (unsigned char) val;
  hsa_status_t s = ok_hsa.hsa_amd_memory_fill (words, v8 * 0x01010101u,
						count);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[96];
      snprintf (what, sizeof what, "cannot set %zu bytes at %p", count * 4,
		(void *) words);
      ok_dev_call_error (dev, what, "hsa_amd_memory_fill", s);
      return false;
    }
  return (ok_memset_by_copy (dev, ptr, val, head)
	  && ok_memset_by_copy (dev, words + count * 4, val, tail));
}

/* libgomp 15's device UID: the agent's HSA_AMD_AGENT_INFO_UUID, as GCC's
   gcn plugin answers ("GPU-" and 16 hexadecimal digits).  An agent without
   one answers "GPU-XX", the same for every device: then none, and libgomp
   makes one of the device number, which is unique.  */
char *
gcn_get_uid (struct ok_device *d)
{
  char buf[64] = { 0 };
  hsa_status_t s = ok_hsa.hsa_agent_get_info (gcn_dev (d)->agent,
					      HSA_AMD_AGENT_INFO_UUID, buf);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read the agent's UUID",
			 "hsa_agent_get_info", s);
      return NULL;
    }
  buf[sizeof buf - 1] = 0;
  if (buf[0] == 0 || strcmp (buf, "GPU-XX") == 0)
    {
      OK_DEBUG ("%s: the agent has no UUID (\"%s\")", d->label, buf);
      return NULL;
    }
  char *uid = GOMP_PLUGIN_malloc (strlen (buf) + 1);
  strcpy (uid, buf);
  return uid;
}
