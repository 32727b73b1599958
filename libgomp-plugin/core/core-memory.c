/* Device memory: allocations, through the pool (mem-pool.h) for a
   backend that offers raw driver allocations, and copies, timed for the
   trace.

   libgomp allocates and frees device memory for every map clause of
   every region, and driver allocations are slow (tens of microseconds,
   and they may synchronise the device): most of what is mapped is small
   (scalars, descriptors, short arrays), so requests up to 64 KiB by
   default come from 4 MiB chunks kept by the pool.  */

#include <stdint.h>

#include "core-internal.h"
#include "env.h"
#include "mem-pool.h"
#include "trace.h"

#define CORE_POOL_MAX_DEFAULT ((size_t) 64 * 1024)
#define CORE_POOL_CHUNK ((size_t) 4 * 1024 * 1024)

/* The pool's operations: the backend's raw allocations.  */

static void *
core_pool_alloc (void *dev, size_t size)
{
  struct ok_device *d = dev;
  return d->backend->raw_alloc (d, size);
}

static bool
core_pool_free (void *dev, void *ptr)
{
  struct ok_device *d = dev;
  return d->backend->raw_free (d, ptr);
}

static const struct ok_mem_pool_ops core_pool_ops = {
  .alloc = core_pool_alloc,
  .free = core_pool_free,
};

bool
core_pool_init (struct ok_device *dev)
{
  const struct ok_backend *backend = dev->backend;
  if (backend->raw_alloc == NULL)
    return true;
  size_t max = (backend->pool_env != NULL
		? ok_env_size (backend->pool_env, CORE_POOL_MAX_DEFAULT)
		: CORE_POOL_MAX_DEFAULT);
  /* ok_mem_pool_new makes a chunk hold at least one block of the largest
     class when that is larger.  */
  dev->pool = ok_mem_pool_new (&core_pool_ops, dev, max, CORE_POOL_CHUNK);
  if (dev->pool == NULL)
    return false;
  OK_DEBUG ("%s: pooling allocations up to %zu bytes", dev->label, max);
  return true;
}

bool
core_pool_fini (struct ok_device *dev)
{
  if (dev->pool == NULL)
    return true;
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (dev->pool, &st);
  OK_DEBUG ("%s: pool of %zu chunks (%zu bytes), %zu small and %zu large"
	    " bytes still allocated", dev->label, st.chunks, st.chunk_bytes,
	    st.small_in_use, st.large_in_use);
  /* After a fault the driver may refuse to free; that is not news.  */
  bool ok = ok_mem_pool_destroy (dev->pool) || ok_dev_broken (dev);
  dev->pool = NULL;
  return ok;
}

void *
GOMP_OFFLOAD_alloc (int ord, size_t size)
{
  struct ok_device *dev = core_device (ord, "allocate device memory");
  if (dev == NULL)
    return NULL;
  if (dev->pool != NULL)
    return ok_mem_pool_alloc (dev->pool, size);
  return dev->backend->alloc (dev, size);
}

bool
GOMP_OFFLOAD_free (int ord, void *ptr)
{
  struct ok_device *dev = core_device (ord, "free device memory");
  if (dev == NULL)
    return false;
  if (dev->pool != NULL)
    return ok_mem_pool_free (dev->pool, ptr);
  return dev->backend->free (dev, ptr);
}

/* Copy N bytes with the backend's copy hook for DIR; WHAT names the
   operation in messages.  With tracing on, the copy is timed and
   reported when it succeeded.  */
static bool
core_copy (int ord, const char *what, enum ok_trace_dir dir, void *dst,
	   const void *src, size_t n)
{
  struct ok_device *dev = core_device (ord, what);
  if (dev == NULL)
    return false;
  if (n == 0)
    return true;
  const struct ok_backend *backend = dev->backend;
  bool (*copy) (struct ok_device *, void *, const void *, size_t)
    = (dir == OK_TRACE_H2D ? backend->host2dev
       : dir == OK_TRACE_D2H ? backend->dev2host : backend->dev2dev);
  if (!ok_trace_on ())
    return copy (dev, dst, src, n);
  uint64_t start = ok_trace_now ();
  bool ok = copy (dev, dst, src, n);
  if (ok)
    ok_trace_transfer (ord, backend->name, dir, n, start, ok_trace_now ());
  return ok;
}

bool
GOMP_OFFLOAD_host2dev (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy to the device", OK_TRACE_H2D, dst, src, n);
}

bool
GOMP_OFFLOAD_dev2host (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy from the device", OK_TRACE_D2H, dst, src, n);
}

bool
GOMP_OFFLOAD_dev2dev (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy within the device", OK_TRACE_D2D, dst, src,
		    n);
}
