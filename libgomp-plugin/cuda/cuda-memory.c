/* Device memory and copies of the CUDA backend.

   Allocations are cuMemAlloc's, which the core's pool serves small
   requests from (cuMemAlloc / cuMemFree are slow and may synchronise the
   device); OFFLOADKIT_CUDA_POOL_MAX sets the largest pooled request
   (bytes; 0 turns the pool off).

   Copies from pageable host memory are slow to start: the driver first
   stages them through pinned memory of its own.  Small copies, up to
   OFFLOADKIT_CUDA_STAGING_MAX bytes, are cheaper through a pinned buffer we
   keep: a memcpy plus an asynchronous copy on our own stream.  Larger ones
   call the synchronous copies, which the driver pipelines itself.  Each
   device has a few staging slots, each with its own lock, buffer and
   stream, so that several host threads copy at once.

   Our kernels run on non-blocking streams, which do not wait for the
   legacy default stream that the synchronous copies use.  A synchronous
   copy from pageable memory to the device may return before its last DMA
   has landed, so the legacy stream is synchronised after it: a kernel
   launched next must see all of the data.  Device-to-device copies, which
   the driver does not wait for at all, run on one of our streams and are
   waited for.

   While a device has OpenACC queues, whose streams are blocking ones as
   in GCC's plugin, synchronous copies all go through the legacy stream
   (no staging, device-to-device copies on the legacy stream too): it
   waits for the work queued so far, as GCC's synchronous copies do.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"

#define CUDA_STAGING_MAX_DEFAULT ((size_t) 256 * 1024)

/* Driver allocations, for the core's pool and for soft stacks.  */

void *
cuda_mem_alloc (struct cuda_device *dev, size_t size, const char *what)
{
  /* The pool gives out unique addresses for empty requests itself; this
     only keeps the driver from refusing a zero size if it is asked.  */
  size_t n = size == 0 ? 1 : size;
  CUdeviceptr p = 0;
  CUresult r = ok_cuda.cuMemAlloc (&p, n);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    {
      /* Soft stacks kept for later launches may be what is missing.  */
      OK_DEBUG ("%s: out of memory for %zu bytes; freeing cached stacks",
		dev->base.label, size);
      if (ok_scratch_release (&dev->base, &dev->stacks))
	r = ok_cuda.cuMemAlloc (&p, n);
    }
  if (r != CUDA_SUCCESS)
    {
      char msg[256];
      snprintf (msg, sizeof msg, "cannot allocate %zu bytes%s%s", size,
		what != NULL ? " of " : "", what != NULL ? what : "");
      ok_dev_call_error (&dev->base, msg, "cuMemAlloc", r);
      return NULL;
    }
  return (void *) (uintptr_t) p;
}

/* Device memory freed inside a host function on a stream, waiting for
   a thread that may call the driver.  */
struct cuda_deferred_free
{
  void *ptr;
  struct cuda_deferred_free *next;
};

static bool
cuda_free_now (struct cuda_device *dev, void *ptr)
{
  CUresult r = ok_cuda.cuMemFree ((CUdeviceptr) (uintptr_t) ptr);
  if (r == CUDA_SUCCESS)
    return true;
  char what[96];
  snprintf (what, sizeof what, "free device memory at %p", ptr);
  ok_dev_teardown_ok (&dev->base, r, what, "cuMemFree");
  return false;
}

/* Keep PTR for cuda_deferred_frees.  A host function on a stream may not
   call the driver (GCC's nvptx_free defers such frees too, seeing
   CUDA_ERROR_NOT_PERMITTED); libgomp's OpenACC callbacks, which run
   there, unmap data and so free device memory.  */
static bool
cuda_free_later (struct cuda_device *dev, void *ptr)
{
  struct cuda_deferred_free *f = malloc (sizeof *f);
  if (f == NULL)
    {
      ok_dev_error (&dev->base, "cannot free device memory at %p inside a"
		    " stream callback: out of memory", ptr);
      return false;
    }
  f->ptr = ptr;
  pthread_mutex_lock (&dev->deferred_lock);
  f->next = dev->deferred;
  __atomic_store_n (&dev->deferred, f, __ATOMIC_RELAXED);
  pthread_mutex_unlock (&dev->deferred_lock);
  OK_DEBUG ("%s: free of %p inside a stream callback deferred",
	    dev->base.label, ptr);
  return true;
}

bool
cuda_deferred_frees (struct cuda_device *dev)
{
  pthread_mutex_lock (&dev->deferred_lock);
  struct cuda_deferred_free *f = dev->deferred;
  __atomic_store_n (&dev->deferred, NULL, __ATOMIC_RELAXED);
  pthread_mutex_unlock (&dev->deferred_lock);
  bool ok = true;
  while (f != NULL)
    {
      struct cuda_deferred_free *next = f->next;
      ok &= cuda_free_now (dev, f->ptr);
      free (f);
      f = next;
    }
  return ok;
}

void *
cuda_raw_alloc (struct ok_device *d, size_t size)
{
  struct cuda_device *dev = cuda_dev (d);
  if (!cuda_enter (dev))
    return NULL;
  /* Memory freed in callbacks may be what this needs.  A free that
     failed there was reported and is no reason to fail this.  */
  cuda_deferred_frees (dev);
  return cuda_mem_alloc (dev, size, NULL);
}

bool
cuda_raw_free (struct ok_device *d, void *ptr)
{
  struct cuda_device *dev = cuda_dev (d);
  if (cuda_in_host_fn ())
    return cuda_free_later (dev, ptr);
  if (!cuda_enter (dev))
    return false;
  /* As in cuda_raw_alloc.  */
  cuda_deferred_frees (dev);
  return cuda_free_now (dev, ptr);
}

bool
cuda_memory_init (struct cuda_device *dev)
{
  dev->staging_max = ok_env_size ("OFFLOADKIT_CUDA_STAGING_MAX",
				  CUDA_STAGING_MAX_DEFAULT);
  OK_DEBUG ("%s: staging copies up to %zu bytes", dev->base.label,
	    dev->staging_max);
  return true;
}

bool
cuda_memory_fini (struct cuda_device *dev)
{
  bool ok = true;
  for (int i = 0; i < CUDA_STAGING_SLOTS; i++)
    {
      struct cuda_staging *s = &dev->staging[i];
      if (s->buf != NULL)
	ok &= ok_dev_teardown_ok (&dev->base, ok_cuda.cuMemFreeHost (s->buf),
				  "free a staging buffer", "cuMemFreeHost");
      if (s->stream != NULL)
	ok &= ok_dev_teardown_ok (&dev->base,
				  ok_cuda.cuStreamDestroy (s->stream),
				  "destroy a staging stream",
				  "cuStreamDestroy");
      s->buf = NULL;
      s->stream = NULL;
    }
  return ok;
}

/* Staging.  */

/* A locked staging slot with its buffer and stream ready, or NULL when
   copies should go directly (no staging, or no pinned memory to be had).
   Prefer a free slot; else wait for this thread's usual one.  */
static struct cuda_staging *
cuda_staging_take (struct cuda_device *dev)
{
  static __thread unsigned hint;
  struct cuda_staging *s = NULL;
  for (unsigned i = 0; i < CUDA_STAGING_SLOTS && s == NULL; i++)
    {
      struct cuda_staging *t = &dev->staging[(hint + i) % CUDA_STAGING_SLOTS];
      if (pthread_mutex_trylock (&t->lock) == 0)
	{
	  s = t;
	  hint = (hint + i) % CUDA_STAGING_SLOTS;
	}
    }
  if (s == NULL)
    {
      s = &dev->staging[hint % CUDA_STAGING_SLOTS];
      pthread_mutex_lock (&s->lock);
    }

  if (s->unusable)
    goto direct;
  if (s->buf == NULL)
    {
      CUresult r = ok_cuda.cuMemHostAlloc (&s->buf, dev->staging_max, 0);
      if (r != CUDA_SUCCESS)
	{
	  char err[OK_CUDA_ERRLEN];
	  OK_DEBUG ("%s: no pinned staging buffer of %zu bytes (cuMemHostAlloc:"
		    " %s): copying directly", dev->base.label, dev->staging_max,
		    ok_cuda_result (r, err, sizeof err));
	  s->buf = NULL;
	  s->unusable = true;
	  goto direct;
	}
    }
  if (s->stream == NULL)
    {
      /* Not from the stream pool: a failure here only means copying
	 directly, which needs no message.  As after a failed
	 cuMemHostAlloc, the slot is given up, so that later small copies
	 do not try again, and its pinned buffer, useless without a
	 stream, goes back.  */
      CUresult r = ok_cuda.cuStreamCreate (&s->stream,
					   CU_STREAM_NON_BLOCKING);
      if (r != CUDA_SUCCESS)
	{
	  char err[OK_CUDA_ERRLEN];
	  OK_DEBUG ("%s: no stream for staging (cuStreamCreate: %s):"
		    " copying directly", dev->base.label,
		    ok_cuda_result (r, err, sizeof err));
	  s->stream = NULL;
	  s->unusable = true;
	  /* If it cannot be freed now, fini tries again and says so.  */
	  if (ok_cuda.cuMemFreeHost (s->buf) == CUDA_SUCCESS)
	    s->buf = NULL;
	  goto direct;
	}
    }
  return s;

 direct:
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* Copies.  */

enum cuda_dir { CUDA_H2D, CUDA_D2H, CUDA_D2D };

static void
cuda_copy_error (struct cuda_device *dev, enum cuda_dir dir, void *dst,
		 const void *src, size_t n, const char *call, CUresult r)
{
  static const char *const from[] = { "host", "device", "device" };
  static const char *const to[] = { "device", "host", "device" };
  char what[160];
  snprintf (what, sizeof what, "cannot copy %zu bytes from %s %p to %s %p",
	    n, from[dir], src, to[dir], dst);
  ok_dev_call_error (&dev->base, what, call, r);
}

/* Copy N bytes in direction DIR through a staging slot; *DONE is false
   when no slot could be used and nothing was copied.  */
static bool
cuda_copy_staged (struct cuda_device *dev, enum cuda_dir dir, void *dst,
		  const void *src, size_t n, bool *done)
{
  *done = false;
  struct cuda_staging *s = cuda_staging_take (dev);
  if (s == NULL)
    return true;
  *done = true;

  const char *call;
  CUresult r;
  if (dir == CUDA_H2D)
    {
      memcpy (s->buf, src, n);
      call = "cuMemcpyHtoDAsync";
      r = ok_cuda.cuMemcpyHtoDAsync ((CUdeviceptr) (uintptr_t) dst, s->buf,
				     n, s->stream);
    }
  else
    {
      call = "cuMemcpyDtoHAsync";
      r = ok_cuda.cuMemcpyDtoHAsync (s->buf, (CUdeviceptr) (uintptr_t) src,
				     n, s->stream);
    }
  if (r == CUDA_SUCCESS)
    {
      call = "cuStreamSynchronize";
      r = ok_cuda.cuStreamSynchronize (s->stream);
    }
  if (r == CUDA_SUCCESS && dir == CUDA_D2H)
    memcpy (dst, s->buf, n);
  pthread_mutex_unlock (&s->lock);
  if (r != CUDA_SUCCESS)
    {
      cuda_copy_error (dev, dir, dst, src, n, call, r);
      return false;
    }
  return true;
}

static bool
cuda_copy (struct cuda_device *dev, enum cuda_dir dir, void *dst,
	   const void *src, size_t n)
{
  if (!cuda_enter (dev))
    return false;

  /* See the top of the file.  */
  bool legacy = cuda_acc_queues_live (dev);
  if (dir != CUDA_D2D && n <= dev->staging_max && !legacy)
    {
      bool done;
      bool ok = cuda_copy_staged (dev, dir, dst, src, n, &done);
      if (done)
	return ok;
    }

  const char *call;
  CUresult r;
  CUstream stream = NULL;
  switch (dir)
    {
    case CUDA_H2D:
      call = "cuMemcpyHtoD";
      r = ok_cuda.cuMemcpyHtoD ((CUdeviceptr) (uintptr_t) dst, src, n);
      if (r == CUDA_SUCCESS)
	{
	  /* See the top of the file: wait for the last DMA.  */
	  call = "cuStreamSynchronize";
	  r = ok_cuda.cuStreamSynchronize (NULL);
	}
      break;
    case CUDA_D2H:
      call = "cuMemcpyDtoH";
      r = ok_cuda.cuMemcpyDtoH (dst, (CUdeviceptr) (uintptr_t) src, n);
      break;
    default:
      if (!legacy && !cuda_stream_take (dev, &stream))
	return false;
      call = "cuMemcpyDtoDAsync";
      r = ok_cuda.cuMemcpyDtoDAsync ((CUdeviceptr) (uintptr_t) dst,
				     (CUdeviceptr) (uintptr_t) src, n,
				     stream);
      if (r == CUDA_SUCCESS)
	{
	  call = "cuStreamSynchronize";
	  r = ok_cuda.cuStreamSynchronize (stream);
	}
      if (!legacy)
	cuda_stream_give (dev, stream);
      break;
    }
  if (r != CUDA_SUCCESS)
    {
      cuda_copy_error (dev, dir, dst, src, n, call, r);
      return false;
    }
  return true;
}

bool
cuda_host2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return cuda_copy (cuda_dev (dev), CUDA_H2D, dst, src, n);
}

bool
cuda_dev2host (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return cuda_copy (cuda_dev (dev), CUDA_D2H, dst, src, n);
}

bool
cuda_dev2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return cuda_copy (cuda_dev (dev), CUDA_D2D, dst, src, n);
}

/* GOMP_OFFLOAD_memset: on a stream of the pool, waited for, like a copy
   within the device.  */
bool
cuda_memset (struct ok_device *d, void *ptr, int val, size_t n)
{
  struct cuda_device *dev = cuda_dev (d);
  CUstream stream = NULL;
  if (!cuda_enter (dev) || !cuda_stream_take (dev, &stream))
    return false;
  const char *call = "cuMemsetD8Async";
  CUresult r = ok_cuda.cuMemsetD8Async ((CUdeviceptr) (uintptr_t) ptr,
					(unsigned char) val, n, stream);
  if (r == CUDA_SUCCESS)
    {
      call = "cuStreamSynchronize";
      r = ok_cuda.cuStreamSynchronize (stream);
    }
  cuda_stream_give (dev, stream);
  if (r != CUDA_SUCCESS)
    {
      char what[96];
      snprintf (what, sizeof what, "cannot set %zu bytes at %p", n, ptr);
      ok_dev_call_error (d, what, call, r);
      return false;
    }
  return true;
}

/* libgomp 14's rectangular copies: cuMemcpy2D, or cuMemcpy3D for more
   than one plane, both synchronous.  As after cuMemcpyHtoD, the legacy
   stream is synchronised afterwards: a copy from pageable memory may
   return before its last DMA, and one within the device before it ran,
   while our kernels' streams do not wait for the legacy one.  A
   rectangle the driver refuses (a pitch above its limit, say) is left to
   the core's row-by-row copy, as GCC's plugin falls back to
   cuMemcpy2DUnaligned.  */

/* The address P on side TYPE into *HOST or *DEVICE.  */
static void
cuda_rect_side (CUmemorytype type, const void *p, const void **host,
		CUdeviceptr *device)
{
  if (type == CU_MEMORYTYPE_HOST)
    *host = p;
  else
    *device = (CUdeviceptr) (uintptr_t) p;
}

int
cuda_copy_rect (struct ok_device *d, const struct ok_rect *r)
{
  struct cuda_device *dev = cuda_dev (d);
  bool flat = r->planes == 1;
  if (flat ? ok_cuda.cuMemcpy2D == NULL : ok_cuda.cuMemcpy3D == NULL)
    return -1;
  if (!cuda_enter (dev))
    return 0;
  CUmemorytype dst_type = (r->dir == OK_COPY_D2H ? CU_MEMORYTYPE_HOST
			   : CU_MEMORYTYPE_DEVICE);
  CUmemorytype src_type = (r->dir == OK_COPY_H2D ? CU_MEMORYTYPE_HOST
			   : CU_MEMORYTYPE_DEVICE);
  const void *dst_host = NULL;
  const char *call;
  CUresult res;
  if (flat)
    {
      CUDA_MEMCPY2D c = {
	.srcMemoryType = src_type, .srcPitch = r->src_pitch,
	.dstMemoryType = dst_type, .dstPitch = r->dst_pitch,
	.WidthInBytes = r->width, .Height = r->rows };
      cuda_rect_side (src_type, r->src, &c.srcHost, &c.srcDevice);
      cuda_rect_side (dst_type, r->dst, &dst_host, &c.dstDevice);
      c.dstHost = (void *) dst_host;
      call = "cuMemcpy2D";
      res = ok_cuda.cuMemcpy2D (&c);
    }
  else
    {
      CUDA_MEMCPY3D c = {
	.srcMemoryType = src_type, .srcPitch = r->src_pitch,
	.srcHeight = r->src_height,
	.dstMemoryType = dst_type, .dstPitch = r->dst_pitch,
	.dstHeight = r->dst_height,
	.WidthInBytes = r->width, .Height = r->rows, .Depth = r->planes };
      cuda_rect_side (src_type, r->src, &c.srcHost, &c.srcDevice);
      cuda_rect_side (dst_type, r->dst, &dst_host, &c.dstDevice);
      c.dstHost = (void *) dst_host;
      call = "cuMemcpy3D";
      res = ok_cuda.cuMemcpy3D (&c);
    }
  if (res == CUDA_ERROR_INVALID_VALUE)
    {
      OK_DEBUG ("%s: %s refused a rectangle of %zu x %zu x %zu bytes:"
		" copying row by row", d->label, call, r->planes, r->rows,
		r->width);
      return -1;
    }
  if (res == CUDA_SUCCESS && r->dir != OK_COPY_D2H)
    {
      call = "cuStreamSynchronize";
      res = ok_cuda.cuStreamSynchronize (NULL);
    }
  if (res != CUDA_SUCCESS)
    {
      static const char *const side[] = { "host", "device", "device" };
      char what[192];
      snprintf (what, sizeof what, "cannot copy %zu planes of %zu rows of"
		" %zu bytes from %s %p to %s %p", r->planes, r->rows, r->width,
		side[r->dir == OK_COPY_H2D ? 0 : 1], r->src,
		side[r->dir == OK_COPY_D2H ? 0 : 1], r->dst);
      ok_dev_call_error (d, what, call, res);
      return 0;
    }
  return 1;
}

/* libgomp 15's device UID: "GPU-" and the device's UUID in hexadecimal,
   grouped as GCC's nvptx plugin groups it (GCC 15's
   libgomp/plugin/plugin-nvptx.c, GOMP_OFFLOAD_get_uid: 4, 2, 2 and 8
   bytes), so that a program sees the same UID under either plugin.  */
char *
cuda_get_uid (struct ok_device *d)
{
  struct cuda_device *dev = cuda_dev (d);
  if (ok_cuda.cuDeviceGetUuid == NULL)
    {
      OK_DEBUG ("%s: no cuDeviceGetUuid_v2 in the driver: no UID",
		d->label);
      return NULL;
    }
  CUuuid u;
  CUresult r = ok_cuda.cuDeviceGetUuid (&u, dev->handle);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read the device's UUID",
			 "cuDeviceGetUuid", r);
      return NULL;
    }
  char *uid = GOMP_PLUGIN_malloc (sizeof "GPU-" + 32 + 3);
  char *p = uid + sprintf (uid, "GPU-");
  for (int i = 0; i < 16; i++)
    p += sprintf (p, "%s%02x", i == 4 || i == 6 || i == 8 ? "-" : "",
		  (unsigned char) u.bytes[i]);
  return uid;
}

/* libgomp 16's managed memory: cuMemAllocManaged, attached globally,
   where the device can have it (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
   cuMemFree frees it like any device allocation.  */
void *
cuda_managed_alloc (struct ok_device *d, size_t size)
{
  struct cuda_device *dev = cuda_dev (d);
  if (ok_cuda.cuMemAllocManaged == NULL)
    {
      OK_DEBUG ("%s: no cuMemAllocManaged in the driver", d->label);
      return NULL;
    }
  if (!cuda_enter (dev))
    return NULL;
  int managed = 0;
  CUresult r = ok_cuda.cuDeviceGetAttribute
    (&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev->handle);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot tell whether the device has managed"
			 " memory", "cuDeviceGetAttribute", r);
      return NULL;
    }
  if (!managed)
    {
      OK_DEBUG ("%s: the device cannot allocate managed memory", d->label);
      return NULL;
    }
  CUdeviceptr p = 0;
  /* The driver refuses 0 bytes; the pointer must still be unique.  */
  r = ok_cuda.cuMemAllocManaged (&p, size == 0 ? 1 : size,
				 CU_MEM_ATTACH_GLOBAL);
  if (r != CUDA_SUCCESS)
    {
      char what[96];
      snprintf (what, sizeof what, "cannot allocate %zu bytes of managed"
		" memory", size);
      ok_dev_call_error (d, what, "cuMemAllocManaged", r);
      return NULL;
    }
  return (void *) (uintptr_t) p;
}

bool
cuda_managed_free (struct ok_device *d, void *ptr)
{
  return cuda_raw_free (d, ptr);
}

/* libgomp 16's omp_target_is_accessible: memory the driver knows as
   host (page-locked), device or unified memory, page by page (the driver
   answers for one address), as GCC's plugin asks; memory it does not
   know, pageable host memory, is not accessible.  */
int
cuda_is_accessible (struct ok_device *d, const void *ptr, size_t size)
{
  if (ok_cuda.cuPointerGetAttribute == NULL || !cuda_enter (cuda_dev (d)))
    return 0;
  uintptr_t p = (uintptr_t) ptr, end = p + size;
  do
    {
      CUmemorytype type = 0;
      if (ok_cuda.cuPointerGetAttribute (&type,
					 CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 (CUdeviceptr) p) != CUDA_SUCCESS
	  || (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE
	      && type != CU_MEMORYTYPE_UNIFIED))
	return 0;
      p = (p + 4096) & ~(uintptr_t) 4095;
    }
  while (p < end);
  return 1;
}

/* libgomp 16's page-locked host memory: cuMemHostAlloc, as GCC's plugin
   (no flags: with unified addressing, every device reaches it).  Out of
   memory is no error: *PTR stays NULL and the allocator's fallback
   decides.  */
bool
cuda_page_locked_alloc (struct ok_device *d, void **ptr, size_t size)
{
  *ptr = NULL;
  if (!cuda_enter (cuda_dev (d)))
    return false;
  CUresult r = ok_cuda.cuMemHostAlloc (ptr, size, 0);
  if (r == CUDA_SUCCESS)
    return true;
  *ptr = NULL;
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    {
      OK_DEBUG ("%s: no page-locked host memory of %zu bytes", d->label,
		size);
      return true;
    }
  char what[96];
  snprintf (what, sizeof what, "cannot allocate %zu bytes of page-locked"
	    " host memory", size);
  ok_dev_call_error (d, what, "cuMemHostAlloc", r);
  return false;
}

bool
cuda_page_locked_free (struct ok_device *d, void *ptr)
{
  if (!cuda_enter (cuda_dev (d)))
    return false;
  CUresult r = ok_cuda.cuMemFreeHost (ptr);
  if (r == CUDA_SUCCESS)
    return true;
  char what[96];
  snprintf (what, sizeof what, "free page-locked host memory at %p", ptr);
  ok_dev_teardown_ok (d, r, what, "cuMemFreeHost");
  return false;
}
