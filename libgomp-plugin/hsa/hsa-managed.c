/* libgomp 16's managed memory (ompx_gnu_managed_mem_space) and
   omp_target_is_accessible on HSA devices, as GCC 16's plugin-gcn.c does
   them (managed_heap_create, GOMP_OFFLOAD_managed_alloc,
   GOMP_OFFLOAD_is_accessible_ptr).

   ROCr has no call that allocates managed memory.  Host pages are made
   shared virtual memory instead: a heap of at least 1 GiB is mapped and
   registered with hsa_amd_svm_attributes_set as coarse-grained, and,
   unless the system says agents reach SVM by default
   (HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT: XNACK on), made
   accessible to the device's agent.  Allocations are carved from the
   heaps by the core's pool (mem-pool.c), which keeps its bookkeeping on
   the host side apart from the heaps, as GCC's simple allocator does so
   that allocating does not touch (and migrate) the registered pages; a
   request larger than a heap gets a heap of its own.  Unlike GCC's
   plugin, whose heaps are shared by all devices and never unmapped, each
   device has its own, registered for its agent, and unmaps them when it
   is finalised (and a large request's heap when it is freed).

   Accessibility: host memory page by page through
   hsa_amd_svm_attributes_get's HSA_AMD_SVM_ATTRIB_ACCESS_QUERY (managed
   memory among it); where the runtime knows no SVM range, device memory
   through hsa_amd_pointer_info: the device's agent must own the
   allocation or be one it is shared with, and the whole range must lie
   in it.  */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hsa-internal.h"
#include "mem-pool.h"

/* The smallest heap, as GCC's plugin maps them.  */
#define GCN_MANAGED_HEAP ((size_t) 1 << 30)

bool
gcn_svm_by_default (void)
{
  bool yes = false;
  if (ok_hsa.hsa_system_get_info == NULL
      || ok_hsa.hsa_system_get_info
	   (HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT, &yes)
	 != HSA_STATUS_SUCCESS)
    return false;
  return yes;
}

/* Register the heap [P, P + SIZE) for DEV: coarse-grained SVM, which
   DEV's agent may access.  */
static bool
gcn_heap_register (struct gcn_device *dev, void *p, size_t size)
{
  hsa_amd_svm_attribute_pair_t attr[2] = {
    { HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED },
    { HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, dev->agent.handle }
  };
  size_t n = gcn_svm_by_default () ? 1 : 2;
  hsa_status_t s = ok_hsa.hsa_amd_svm_attributes_set (p, size, attr, n);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[128];
      snprintf (what, sizeof what, "cannot make %zu bytes at %p managed"
		" memory", size, p);
      ok_dev_call_error (&dev->base, what, "hsa_amd_svm_attributes_set", s);
      return false;
    }
  return true;
}

/* The pool's chunk allocator: a new heap of at least SIZE bytes, whole
   pages, mapped and registered, remembered for its unmapping.  */
static void *
gcn_heap_new (void *ctx, size_t size)
{
  struct gcn_device *dev = ctx;
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t bytes = size < GCN_MANAGED_HEAP ? GCN_MANAGED_HEAP : size;
  if (bytes > SIZE_MAX - page)
    {
      ok_dev_error (&dev->base, "cannot allocate %zu bytes of managed"
		    " memory: too large", size);
      return NULL;
    }
  bytes = (bytes + page - 1) / page * page;
  void *p = mmap (NULL, bytes, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    {
      ok_dev_error (&dev->base, "cannot map %zu bytes for managed memory:"
		    " %s", bytes, strerror (errno));
      return NULL;
    }
  if (!gcn_heap_register (dev, p, bytes))
    {
      munmap (p, bytes);
      return NULL;
    }
  /* The pool calls this without its lock for a large request.  */
  pthread_mutex_lock (&dev->managed_lock);
  bool room = dev->nheaps < dev->heaps_cap;
  if (!room)
    {
      size_t cap = dev->heaps_cap ? 2 * dev->heaps_cap : 4;
      struct gcn_heap *h = realloc (dev->heaps, cap * sizeof *h);
      if (h != NULL)
	{
	  dev->heaps = h;
	  dev->heaps_cap = cap;
	  room = true;
	}
    }
  if (room)
    dev->heaps[dev->nheaps++] = (struct gcn_heap) { p, bytes };
  pthread_mutex_unlock (&dev->managed_lock);
  if (!room)
    {
      munmap (p, bytes);
      ok_dev_error (&dev->base, "out of memory for managed memory");
      return NULL;
    }
  OK_DEBUG ("%s: managed memory heap of %zu bytes at %p", dev->base.label,
	    bytes, p);
  return p;
}

/* The pool's chunk release: unmap the heap at P.  */
static bool
gcn_heap_free (void *ctx, void *p)
{
  struct gcn_device *dev = ctx;
  size_t size = 0;
  pthread_mutex_lock (&dev->managed_lock);
  for (size_t i = 0; i < dev->nheaps && size == 0; i++)
    if (dev->heaps[i].base == p)
      {
	size = dev->heaps[i].size;
	dev->heaps[i] = dev->heaps[--dev->nheaps];
      }
  pthread_mutex_unlock (&dev->managed_lock);
  if (size == 0)
    {
      ok_dev_error (&dev->base, "%p is no managed memory heap", p);
      return false;
    }
  if (munmap (p, size) != 0)
    {
      ok_dev_error (&dev->base, "cannot unmap the managed memory heap at"
		    " %p: %s", p, strerror (errno));
      return false;
    }
  return true;
}

static const struct ok_mem_pool_ops gcn_heap_ops = {
  gcn_heap_new, gcn_heap_free
};

void
gcn_managed_init (struct gcn_device *dev)
{
  pthread_mutex_init (&dev->managed_lock, NULL);
  dev->managed = NULL;
  dev->heaps = NULL;
  dev->nheaps = dev->heaps_cap = 0;
}

bool
gcn_managed_fini (struct gcn_device *dev)
{
  bool ok = dev->managed == NULL || ok_mem_pool_destroy (dev->managed);
  dev->managed = NULL;
  free (dev->heaps);
  dev->heaps = NULL;
  pthread_mutex_destroy (&dev->managed_lock);
  return ok;
}

/* DEV's pool of managed memory, made at its first use; NULL when the
   runtime cannot give any (said under GOMP_DEBUG) or after a report.  */
static struct ok_mem_pool *
gcn_managed_pool (struct gcn_device *dev)
{
  if (ok_hsa.hsa_amd_svm_attributes_set == NULL)
    {
      OK_DEBUG ("%s: no managed memory: the HSA runtime has no"
		" hsa_amd_svm_attributes_set", dev->base.label);
      return NULL;
    }
  pthread_mutex_lock (&dev->managed_lock);
  if (dev->managed == NULL)
    dev->managed = ok_mem_pool_new (&gcn_heap_ops, dev, GCN_MANAGED_HEAP,
				    GCN_MANAGED_HEAP);
  struct ok_mem_pool *pool = dev->managed;
  pthread_mutex_unlock (&dev->managed_lock);
  return pool;
}

void *
gcn_managed_alloc (struct ok_device *d, size_t size)
{
  struct ok_mem_pool *pool = gcn_managed_pool (gcn_dev (d));
  return pool != NULL ? ok_mem_pool_alloc (pool, size) : NULL;
}

bool
gcn_managed_free (struct ok_device *d, void *ptr)
{
  struct gcn_device *dev = gcn_dev (d);
  pthread_mutex_lock (&dev->managed_lock);
  struct ok_mem_pool *pool = dev->managed;
  pthread_mutex_unlock (&dev->managed_lock);
  if (pool == NULL)
    {
      ok_dev_error (d, "cannot free managed memory at %p: the device gave"
		    " none", ptr);
      return false;
    }
  return ok_mem_pool_free (pool, ptr);
}

/* ------------------------------------------------------------------ */
/* omp_target_is_accessible.  */

enum gcn_access { GCN_ACCESS_UNKNOWN, GCN_ACCESS_NO, GCN_ACCESS_YES };

/* Whether DEV's agent reaches host memory [PTR, PTR + SIZE), asked for
   each page it touches (the runtime answers for a range as a whole
   only where all of it is alike); unknown where the runtime has no SVM
   range for a page.  */
static enum gcn_access
gcn_host_access (struct gcn_device *dev, const void *ptr, size_t size)
{
  if (ok_hsa.hsa_amd_svm_attributes_get == NULL)
    return GCN_ACCESS_UNKNOWN;
  uintptr_t p = (uintptr_t) ptr, end = p + size;
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  while (p < end)
    {
      uintptr_t next = (p / page + 1) * page;
      size_t n = (next < end ? next : end) - p;
      hsa_amd_svm_attribute_pair_t attr = {
	HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, dev->agent.handle
      };
      if (ok_hsa.hsa_amd_svm_attributes_get ((void *) p, n, &attr, 1)
	  != HSA_STATUS_SUCCESS)
	return GCN_ACCESS_UNKNOWN;
      if (attr.attribute != HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE
	  && attr.attribute != HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE)
	return GCN_ACCESS_NO;
      p = next;
    }
  return GCN_ACCESS_YES;
}

/* Whether DEV's agent reaches device memory [PTR, PTR + SIZE): it owns
   the allocation or shares it, and the range lies in it; unknown where
   the runtime knows no allocation at PTR.  */
static enum gcn_access
gcn_device_access (struct gcn_device *dev, const void *ptr, size_t size)
{
  if (ok_hsa.hsa_amd_pointer_info == NULL)
    return GCN_ACCESS_UNKNOWN;
  hsa_amd_pointer_info_t info = { .size = sizeof info };
  uint32_t nagents = 0;
  hsa_agent_t *agents = NULL;
  if (ok_hsa.hsa_amd_pointer_info (ptr, &info, malloc, &nagents, &agents)
      != HSA_STATUS_SUCCESS)
    return GCN_ACCESS_UNKNOWN;
  bool reached = info.agentOwner.handle == dev->agent.handle;
  for (uint32_t i = 0; agents != NULL && i < nagents && !reached; i++)
    reached = agents[i].handle == dev->agent.handle;
  /* The runtime allocated the array with the allocator given.  */
  free (agents);
  if (info.type == HSA_EXT_POINTER_TYPE_UNKNOWN)
    return GCN_ACCESS_UNKNOWN;
  uintptr_t base = (uintptr_t) info.agentBaseAddress, p = (uintptr_t) ptr;
  bool inside = (p >= base && p - base <= info.sizeInBytes
		 && size <= info.sizeInBytes - (p - base));
  return reached && inside ? GCN_ACCESS_YES : GCN_ACCESS_NO;
}

int
gcn_is_accessible (struct ok_device *d, const void *ptr, size_t size)
{
  struct gcn_device *dev = gcn_dev (d);
  enum gcn_access a = gcn_host_access (dev, ptr, size);
  if (a == GCN_ACCESS_UNKNOWN)
    a = gcn_device_access (dev, ptr, size);
  return a == GCN_ACCESS_YES;
}
