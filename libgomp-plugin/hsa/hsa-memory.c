/* Device memory and copies of the HSA backend.

   libgomp allocates and frees device memory for every map clause;
   hsa_memory_allocate on the coarse-grained region is a kernel-driver
   call, so small requests go through the shared pool (mem-pool.h).
   OFFLOADKIT_GCN_POOL_MAX sets the largest pooled request (bytes; 0 turns
   the pool off).  Copies use hsa_memory_copy, which accepts any mix of
   host and device pointers and returns when the copy is complete.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hsa-internal.h"


void *
hsa_raw_alloc (struct hsa_device *dev, size_t size, const char *what)
{
  void *p = NULL;
  hsa_status_t s = ok_hsa.hsa_memory_allocate (dev->data_region,
					       size == 0 ? 1 : size, &p);
  if (s != HSA_STATUS_SUCCESS || p == NULL)
    {
      char buf[160];
      snprintf (buf, sizeof buf, "cannot allocate %zu bytes for %s", size,
		what);
      hsa_call_error (dev, buf, "hsa_memory_allocate",
		      s != HSA_STATUS_SUCCESS ? s : HSA_STATUS_ERROR);
      return NULL;
    }
  return p;
}

bool
hsa_raw_free (struct hsa_device *dev, void *ptr, const char *what)
{
  hsa_status_t s = ok_hsa.hsa_memory_free (ptr);
  if (s == HSA_STATUS_SUCCESS)
    return true;
  /* The message only when there is one to give.  */
  char buf[160];
  snprintf (buf, sizeof buf, "free %s at %p", what, ptr);
  return hsa_teardown_ok (dev, s, buf, "hsa_memory_free");
}

static void *
hsa_pool_alloc (void *ctx, size_t size)
{
  return hsa_raw_alloc (ctx, size, "device memory");
}

static bool
hsa_pool_free (void *ctx, void *ptr)
{
  return hsa_raw_free (ctx, ptr, "device memory");
}

static const struct ok_mem_pool_ops hsa_pool_ops = {
  .alloc = hsa_pool_alloc,
  .free = hsa_pool_free,
};

bool
hsa_memory_init (struct hsa_device *dev)
{
  size_t pool_max;
  dev->pool = ok_device_pool_new (&hsa_pool_ops, dev,
				  "OFFLOADKIT_GCN_POOL_MAX", &pool_max);
  return dev->pool != NULL;
}

bool
hsa_memory_fini (struct hsa_device *dev)
{
  bool ok = true;
  if (dev->pool != NULL)
    {
      ok = (ok_device_pool_destroy (dev->pool, dev->label)
	    || hsa_is_broken (dev));
      dev->pool = NULL;
    }
  return ok;
}

void *
hsa_alloc (void *d, size_t size)
{
  struct hsa_device *dev = d;
  return ok_mem_pool_alloc (dev->pool, size);
}

bool
hsa_free (void *d, void *ptr)
{
  struct hsa_device *dev = d;
  return ok_mem_pool_free (dev->pool, ptr);
}

static bool
hsa_copy (struct hsa_device *dev, void *dst, const void *src, size_t n,
	  const char *dir)
{
  if (n == 0)
    return true;
  hsa_status_t s = ok_hsa.hsa_memory_copy (dst, src, n);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[160];
      snprintf (what, sizeof what, "cannot copy %zu bytes %s (%p to %p)", n,
		dir, src, dst);
      hsa_call_error (dev, what, "hsa_memory_copy", s);
      return false;
    }
  return true;
}

bool
hsa_host2dev (void *dev, void *dst, const void *src, size_t n)
{
  return hsa_copy (dev, dst, src, n, "to the device");
}

bool
hsa_dev2host (void *dev, void *dst, const void *src, size_t n)
{
  return hsa_copy (dev, dst, src, n, "from the device");
}

bool
hsa_dev2dev (void *dev, void *dst, const void *src, size_t n)
{
  return hsa_copy (dev, dst, src, n, "within the device");
}
