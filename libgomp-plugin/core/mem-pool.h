/* A pool for small device allocations, shared by the backends that have
   real device memory (CUDA, HSA).

   Every map clause of a target region costs libgomp one GOMP_OFFLOAD_alloc
   and one GOMP_OFFLOAD_free; a driver allocation (cuMemAlloc) is tens of
   microseconds and may synchronise the device.  The pool serves requests
   up to MAX_SMALL bytes from large chunks it obtains through OPS, in
   power-of-two size classes, and keeps freed blocks for reuse; larger
   requests go straight to OPS.  Chunks are returned only when the pool is
   destroyed.

   Addresses are opaque to the pool (device pointers: never dereferenced).
   Every block is aligned to 256 bytes at least (what cuMemAlloc
   guarantees), so a pooled block may hold any type.  All functions are
   thread-safe.  */

#ifndef OFFLOADKIT_MEM_POOL_H
#define OFFLOADKIT_MEM_POOL_H

#include <stdbool.h>
#include <stddef.h>

struct ok_mem_pool_ops
{
  /* Allocate SIZE bytes of device memory, aligned to 256 bytes at least
     (as cuMemAlloc's are; the pool refuses a chunk that is not), or
     report an error through GOMP_PLUGIN_error and return NULL.  */
  void *(*alloc) (void *ctx, size_t size);
  /* Free what ALLOC returned; report an error and return false on
     failure.  */
  bool (*free) (void *ctx, void *ptr);
};

struct ok_mem_pool;

/* A pool over OPS (called with CTX).  Requests of at most MAX_SMALL bytes
   (0: none; the pool then only forwards) are carved from chunks of
   CHUNK_SIZE bytes (at least MAX_SMALL).  NULL when out of host memory
   (reported).  */
struct ok_mem_pool *ok_mem_pool_new (const struct ok_mem_pool_ops *ops,
				     void *ctx, size_t max_small,
				     size_t chunk_size);

/* SIZE bytes of device memory; SIZE 0 gives a unique address, as
   GOMP_OFFLOAD_alloc must.  NULL after an error (reported by OPS).  */
void *ok_mem_pool_alloc (struct ok_mem_pool *pool, size_t size);

/* Free PTR, which ok_mem_pool_alloc returned.  A pointer the pool did not
   give out is reported with GOMP_PLUGIN_error and false returned, nothing
   freed.  */
bool ok_mem_pool_free (struct ok_mem_pool *pool, void *ptr);

/* What the pool holds, for tests and OFFLOADKIT_INFO: chunks obtained,
   their bytes, and the bytes of small blocks currently handed out.  */
struct ok_mem_pool_stats
{
  size_t chunks;
  size_t chunk_bytes;
  size_t small_in_use;
  size_t large_in_use;		/* Bytes of forwarded allocations not yet
				   freed.  */
};
void ok_mem_pool_stats (struct ok_mem_pool *pool,
			struct ok_mem_pool_stats *stats);

/* Free every chunk and every forwarded allocation still held, and the pool.
   False if OPS failed to free something (reported); the pool is gone
   anyway.  */
bool ok_mem_pool_destroy (struct ok_mem_pool *pool);

#endif /* OFFLOADKIT_MEM_POOL_H */
