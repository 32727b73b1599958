/* The device-memory pool (mem-pool.h) as the GPU backends use it: one per
   device, its largest pooled request set from the environment.  */

#ifndef OFFLOADKIT_DEVICE_POOL_H
#define OFFLOADKIT_DEVICE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "mem-pool.h"

/* A pool over OPS and CTX pooling requests up to the bytes environment
   variable ENV gives (64 KiB when unset; 0 turns pooling off), in chunks
   of 4 MiB or of the largest request when that is larger.  The largest
   request goes to *POOL_MAX.  NULL when out of memory.  */
struct ok_mem_pool *ok_device_pool_new (const struct ok_mem_pool_ops *ops,
					void *ctx, const char *env,
					size_t *pool_max);

/* Destroy POOL, saying with GOMP_DEBUG=1 what was still allocated in it
   (LABEL names the device); false if freeing a chunk failed.  */
bool ok_device_pool_destroy (struct ok_mem_pool *pool, const char *label);

#endif
