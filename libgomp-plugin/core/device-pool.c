/* The device-memory pool of the GPU backends (see device-pool.h).  */

#include "device-pool.h"
#include "env.h"
#include "plugin-core.h"

/* Most of what libgomp maps is small: scalars, descriptors, short
   arrays.  */
#define OK_POOL_MAX_DEFAULT ((size_t) 64 * 1024)
#define OK_POOL_CHUNK ((size_t) 4 * 1024 * 1024)

struct ok_mem_pool *
ok_device_pool_new (const struct ok_mem_pool_ops *ops, void *ctx,
		    const char *env, size_t *pool_max)
{
  size_t max = ok_env_size (env, OK_POOL_MAX_DEFAULT);
  *pool_max = max;
  /* ok_mem_pool_new makes a chunk hold at least one block of the largest
     class when that is larger.  */
  return ok_mem_pool_new (ops, ctx, max, OK_POOL_CHUNK);
}

bool
ok_device_pool_destroy (struct ok_mem_pool *pool, const char *label)
{
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  OK_DEBUG ("%s: pool of %zu chunks (%zu bytes), %zu small and %zu large"
	    " bytes still allocated", label, st.chunks, st.chunk_bytes,
	    st.small_in_use, st.large_in_use);
  return ok_mem_pool_destroy (pool);
}
