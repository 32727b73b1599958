/* The fake HSA runtime: memory (host memory in a registry of live
   blocks, see fake-common.h), allocated from regions and pools, and
   copies, which must not leave a block they touch.  See fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "fake-hsa.h"

struct fake_block *
fh_block_find (uintptr_t addr)
{
  return fake_block_find (&fh_blocks, addr);
}

void *
fh_block_new (size_t size, enum fh_block_kind kind, struct fh_region *r)
{
  void *p = fake_block_new (&fh_blocks, size, 4096, kind, r);
  /* Fresh device memory is not zero on a GPU; make reads of it that the
     plugin did not write visible.  */
  if (p != NULL)
    memset (p, 0xa5, size ? size : 1);
  return p;
}

bool
fh_block_free (uintptr_t addr, enum fh_block_kind kind)
{
  return fake_block_free (&fh_blocks, addr, kind, NULL);
}

/* ------------------------------------------------------------------ */
/* Memory.  */

static hsa_status_t
fh_allocate (int sym, uint64_t h, size_t size, void **ptr)
{
  struct fh_region *r = fh_region_find (h);
  if (r == NULL)
    {
      fh_bad (sym, "unknown region %#llx", (unsigned long long) h);
      return HSA_STATUS_ERROR_INVALID_REGION;
    }
  if (ptr == NULL || size == 0)
    {
      fh_bad (sym, "NULL result or size 0");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  if (r->kind == FH_GROUP)
    {
      fh_bad (sym, "the group region does not allow allocation");
      return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
  if (size > ((size_t) 16 << 30))
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  void *p = fh_block_new (size, FH_BLOCK_MEM, r);
  if (p == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  *ptr = p;
  fh_log ("alloc %zu region %d agent %d -> %p", size, (int) r->kind,
	  fh_agent_index (r->agent), p);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_memory_allocate (hsa_region_t region, size_t size, void **ptr)
{
  ENTER (hsa_memory_allocate);
  NEED_INIT (hsa_memory_allocate);
  RETURN (fh_allocate (FH_hsa_memory_allocate, region.handle, size, ptr));
}

hsa_status_t
hsa_amd_memory_pool_allocate (hsa_amd_memory_pool_t pool, size_t size,
			      uint32_t flags, void **ptr)
{
  ENTER (hsa_amd_memory_pool_allocate);
  NEED_INIT (hsa_amd_memory_pool_allocate);
  if (flags != 0)
    BAD (hsa_amd_memory_pool_allocate, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "flags %#x", flags);
  RETURN (fh_allocate (FH_hsa_amd_memory_pool_allocate, pool.handle, size,
		       ptr));
}

static hsa_status_t
fh_free (int sym, void *ptr)
{
  if (ptr == NULL)
    return HSA_STATUS_SUCCESS;
  if (!fh_block_free ((uintptr_t) ptr, FH_BLOCK_MEM))
    {
      fh_bad (sym, "%p is not a live allocation", ptr);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  fh_log ("free %p", ptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_memory_free (void *ptr)
{
  ENTER (hsa_memory_free);
  NEED_INIT (hsa_memory_free);
  RETURN (fh_free (FH_hsa_memory_free, ptr));
}

hsa_status_t
hsa_amd_memory_pool_free (void *ptr)
{
  ENTER (hsa_amd_memory_pool_free);
  NEED_INIT (hsa_amd_memory_pool_free);
  RETURN (fh_free (FH_hsa_amd_memory_pool_free, ptr));
}

hsa_status_t
hsa_amd_agents_allow_access (uint32_t num_agents, const hsa_agent_t *agents,
			     const uint32_t *flags, const void *ptr)
{
  ENTER (hsa_amd_agents_allow_access);
  NEED_INIT (hsa_amd_agents_allow_access);
  (void) flags;
  if (num_agents == 0 || agents == NULL || fh_block_find ((uintptr_t) ptr)
      == NULL)
    BAD (hsa_amd_agents_allow_access, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad agents or pointer %p", ptr);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_memory_assign_agent (void *ptr, hsa_agent_t agent, int access)
{
  ENTER (hsa_memory_assign_agent);
  NEED_INIT (hsa_memory_assign_agent);
  (void) access;
  if (fh_agent_find (agent) == NULL || fh_block_find ((uintptr_t) ptr) == NULL)
    BAD (hsa_memory_assign_agent, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad agent or pointer %p", ptr);
  RETURN (HSA_STATUS_SUCCESS);
}

/* A range that begins in a live block must end in it.  Host memory
   outside any block is fine: the runtime copies to and from it.  */
static bool
fh_range_ok (int sym, const char *what, uintptr_t p, size_t n)
{
  struct fake_block *b = fh_block_find (p);
  if (b == NULL)
    {
      /* Ending inside a block we do not begin in is as wrong.  */
      if (n > 0 && fh_block_find (p + n - 1) != NULL)
	{
	  fh_bad (sym, "%s %#lx+%zu runs into a device block", what,
		  (unsigned long) p, n);
	  return false;
	}
      return true;
    }
  if (p + n > b->base + b->size)
    {
      fh_bad (sym, "%s %#lx+%zu leaves its block %#lx+%zu", what,
	      (unsigned long) p, n, (unsigned long) b->base, b->size);
      return false;
    }
  return true;
}

static long fh_copies;

hsa_status_t
hsa_memory_copy (void *dst, const void *src, size_t size)
{
  ENTER (hsa_memory_copy);
  NEED_INIT (hsa_memory_copy);
  if ((dst == NULL || src == NULL) && size > 0)
    BAD (hsa_memory_copy, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL pointer");
  if (!fh_range_ok (FH_hsa_memory_copy, "dst", (uintptr_t) dst, size)
      || !fh_range_ok (FH_hsa_memory_copy, "src", (uintptr_t) src, size))
    RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
  if (size > 0)
    memmove (dst, src, size);
  fh_copies++;
  fh_log ("copy %p <- %p %zu", dst, src, size);
  RETURN (HSA_STATUS_SUCCESS);
}

/* hsa_amd_memory_fill (hsa_ext_amd.h): COUNT uint32_t values at PTR,
   which must be 4-byte aligned and inside memory the runtime
   allocated.  */
hsa_status_t
hsa_amd_memory_fill (void *ptr, uint32_t value, size_t count)
{
  ENTER (hsa_amd_memory_fill);
  NEED_INIT (hsa_amd_memory_fill);
  if (ptr == NULL || (uintptr_t) ptr % 4 != 0)
    BAD (hsa_amd_memory_fill, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "pointer %p NULL or not 4-byte aligned", ptr);
  if (fh_block_find ((uintptr_t) ptr) == NULL)
    BAD (hsa_amd_memory_fill, HSA_STATUS_ERROR_INVALID_ALLOCATION,
	 "%p was not allocated by the runtime", ptr);
  if (count > SIZE_MAX / 4
      || !fh_range_ok (FH_hsa_amd_memory_fill, "ptr", (uintptr_t) ptr,
		       count * 4))
    RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t *w = ptr;
  for (size_t i = 0; i < count; i++)
    w[i] = value;
  fh_log ("fill %p %zu words %#x", ptr, count, value);
  RETURN (HSA_STATUS_SUCCESS);
}
