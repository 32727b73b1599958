/* Device memory: allocations, through the pool (mem-pool.h) for a
   backend that offers raw driver allocations, and copies, timed for the
   trace; libgomp 14 to 16's memset, rectangular copies, managed memory
   and accessibility, through a backend's optional hooks.

   libgomp allocates and frees device memory for every map clause of
   every region, and driver allocations are slow (tens of microseconds,
   and they may synchronise the device): most of what is mapped is small
   (scalars, descriptors, short arrays), so requests up to 64 KiB by
   default come from 4 MiB chunks kept by the pool.  */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core-internal.h"
#include "env.h"
#include "mem-pool.h"
#include "trace.h"

#define CORE_POOL_MAX_DEFAULT ((size_t) 64 * 1024)
#define CORE_POOL_CHUNK ((size_t) 4 * 1024 * 1024)
/* The host buffer of GOMP_OFFLOAD_memset without a backend hook.  */
#define CORE_MEMSET_CHUNK ((size_t) 64 * 1024)

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

/* An OpenACC profiling tool hears of every allocation and free, as
   GCC's plugins tell it (core-openacc.c).  */
void *
core_dev_alloc (struct ok_device *dev, size_t size)
{
  void *ptr = (dev->pool != NULL ? ok_mem_pool_alloc (dev->pool, size)
	       : dev->backend->alloc (dev, size));
  if (ptr != NULL)
    core_acc_alloc_event (ptr, size);
  return ptr;
}

bool
core_dev_free (struct ok_device *dev, void *ptr)
{
  bool ok = (dev->pool != NULL ? ok_mem_pool_free (dev->pool, ptr)
	     : dev->backend->free (dev, ptr));
  if (ok)
    core_acc_free_event (ptr);
  return ok;
}

void *
GOMP_OFFLOAD_alloc (int ord, size_t size)
{
  struct ok_device *dev = core_device (ord, "allocate device memory");
  return dev != NULL ? core_dev_alloc (dev, size) : NULL;
}

bool
GOMP_OFFLOAD_free (int ord, void *ptr)
{
  struct ok_device *dev = core_device (ord, "free device memory");
  return dev != NULL && core_dev_free (dev, ptr);
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

bool
ok_memset_by_copy (struct ok_device *dev, void *ptr, int val, size_t n)
{
  if (n == 0)
    return true;
  size_t chunk = n < CORE_MEMSET_CHUNK ? n : CORE_MEMSET_CHUNK;
  unsigned char *buf = malloc (chunk);
  if (buf == NULL)
    {
      ok_dev_error (dev, "out of memory setting device memory");
      return false;
    }
  memset (buf, (unsigned char) val, chunk);
  bool ok = true;
  for (size_t done = 0; ok && done < n; done += chunk)
    {
      size_t part = n - done < chunk ? n - done : chunk;
      ok = core_copy (dev->ord, "set device memory", OK_TRACE_H2D,
		      (char *) ptr + done, buf, part);
    }
  free (buf);
  return ok;
}

/* Set N bytes at PTR on device ORD to VAL (libgomp 16's omp_target_memset;
   required by libgomp 16 from a plugin that offers OpenMP devices): the
   backend's memset hook, else host buffers copied over the range.  */
bool
GOMP_OFFLOAD_memset (int ord, void *ptr, int val, size_t n)
{
  struct ok_device *dev = core_device (ord, "set device memory");
  if (dev == NULL)
    return false;
  if (n == 0)
    return true;
  if (dev->backend->memset != NULL)
    return dev->backend->memset (dev, ptr, val, n);
  return ok_memset_by_copy (dev, ptr, val, n);
}

/* The trace's name of direction DIR.  */
static enum ok_trace_dir
core_trace_dir (enum ok_copy_dir dir)
{
  return (dir == OK_COPY_H2D ? OK_TRACE_H2D
	  : dir == OK_COPY_D2H ? OK_TRACE_D2H : OK_TRACE_D2D);
}

/* R row by row with DEV's copy hooks, one copy for each run of rows (or
   planes) that lie back to back on both sides.  */
static bool
core_copy_rect_rows (struct ok_device *dev, const struct ok_rect *r)
{
  const struct ok_backend *backend = dev->backend;
  bool (*copy) (struct ok_device *, void *, const void *, size_t)
    = (r->dir == OK_COPY_H2D ? backend->host2dev
       : r->dir == OK_COPY_D2H ? backend->dev2host : backend->dev2dev);
  char *dst = r->dst;
  const char *src = r->src;
  /* The callers checked that the last byte's offset fits.  */
  size_t dst_plane = r->dst_height * r->dst_pitch;
  size_t src_plane = r->src_height * r->src_pitch;
  bool rows_packed = r->width == r->dst_pitch && r->width == r->src_pitch;
  if (rows_packed
      && (r->planes == 1
	  || (r->rows == r->dst_height && r->rows == r->src_height)))
    return copy (dev, dst, src, r->width * r->rows * r->planes);
  for (size_t p = 0; p < r->planes; p++)
    {
      char *d = dst + p * dst_plane;
      const char *s = src + p * src_plane;
      if (rows_packed)
	{
	  if (!copy (dev, d, s, r->width * r->rows))
	    return false;
	  continue;
	}
      for (size_t row = 0; row < r->rows; row++)
	if (!copy (dev, d + row * r->dst_pitch, s + row * r->src_pitch,
		   r->width))
	  return false;
    }
  return true;
}

/* Copy R, whose sides DST_ORD and SRC_ORD are (-1 for the host), for
   libgomp 14's omp_target_memcpy_rect: with the backend's copy_rect when
   it takes R, else row by row.  1 when copied, 0 after a reported error,
   -1 when libgomp should copy another way (between two devices).  Timed
   for the trace as one transfer.  */
static int
core_copy_rect (int dst_ord, int src_ord, struct ok_rect *r)
{
  int ord;
  const char *what;
  if (dst_ord == -1 && src_ord >= 0)
    ord = src_ord, r->dir = OK_COPY_D2H, what = "copy from the device";
  else if (src_ord == -1 && dst_ord >= 0)
    ord = dst_ord, r->dir = OK_COPY_H2D, what = "copy to the device";
  else if (src_ord >= 0 && src_ord == dst_ord)
    ord = dst_ord, r->dir = OK_COPY_D2D, what = "copy within the device";
  else
    return -1;
  struct ok_device *dev = core_device (ord, what);
  if (dev == NULL)
    return 0;
  if (r->width == 0 || r->rows == 0 || r->planes == 0)
    return 1;
  const struct ok_backend *backend = dev->backend;
  uint64_t start = ok_trace_on () ? ok_trace_now () : 0;
  int done = -1;
  if (backend->copy_rect != NULL)
    done = backend->copy_rect (dev, r);
  if (done == -1)
    done = core_copy_rect_rows (dev, r);
  size_t bytes;
  if (done == 1 && ok_trace_on ()
      && !__builtin_mul_overflow (r->width, r->rows, &bytes)
      && !__builtin_mul_overflow (bytes, r->planes, &bytes))
    ok_trace_transfer (ord, backend->name, core_trace_dir (r->dir), bytes,
		       start, ok_trace_now ());
  return done;
}

/* Whether A * B + C fits, into *R.  */
static bool
core_mul_add (size_t a, size_t b, size_t c, size_t *r)
{
  return (!__builtin_mul_overflow (a, b, r)
	  && !__builtin_add_overflow (*r, c, r));
}

int
GOMP_OFFLOAD_memcpy2d (int dst_ord, int src_ord, size_t dim1_size,
		       size_t dim0_len, void *dst, size_t dst_offset1_size,
		       size_t dst_offset0_len, size_t dst_dim1_size,
		       const void *src, size_t src_offset1_size,
		       size_t src_offset0_len, size_t src_dim1_size)
{
  size_t dst_off, src_off, last;
  if (!core_mul_add (dst_offset0_len, dst_dim1_size, dst_offset1_size,
		     &dst_off)
      || !core_mul_add (src_offset0_len, src_dim1_size, src_offset1_size,
			&src_off)
      || !core_mul_add (dim0_len, dst_dim1_size, dim1_size, &last)
      || !core_mul_add (dim0_len, src_dim1_size, dim1_size, &last))
    {
      ok_error ("cannot copy a 2D rectangle: its offsets overflow");
      return 0;
    }
  struct ok_rect r = {
    .dst = (char *) dst + dst_off, .src = (const char *) src + src_off,
    .width = dim1_size, .rows = dim0_len, .planes = 1,
    .dst_pitch = dst_dim1_size, .src_pitch = src_dim1_size,
    .dst_height = dim0_len, .src_height = dim0_len };
  return core_copy_rect (dst_ord, src_ord, &r);
}

int
GOMP_OFFLOAD_memcpy3d (int dst_ord, int src_ord, size_t dim2_size,
		       size_t dim1_len, size_t dim0_len, void *dst,
		       size_t dst_offset2_size, size_t dst_offset1_len,
		       size_t dst_offset0_len, size_t dst_dim2_size,
		       size_t dst_dim1_len, const void *src,
		       size_t src_offset2_size, size_t src_offset1_len,
		       size_t src_offset0_len, size_t src_dim2_size,
		       size_t src_dim1_len)
{
  /* Plane P, row R of a side starts at
     ((OFFSET0 + P) * DIM1_LEN + OFFSET1 + R) * DIM2_SIZE + OFFSET2.  */
  size_t dst_off, src_off, dst_plane, src_plane, t;
  if (!core_mul_add (dst_offset0_len, dst_dim1_len, dst_offset1_len, &t)
      || !core_mul_add (t, dst_dim2_size, dst_offset2_size, &dst_off)
      || !core_mul_add (src_offset0_len, src_dim1_len, src_offset1_len, &t)
      || !core_mul_add (t, src_dim2_size, src_offset2_size, &src_off)
      || !core_mul_add (dst_dim1_len, dst_dim2_size, 0, &dst_plane)
      || !core_mul_add (src_dim1_len, src_dim2_size, 0, &src_plane)
      || !core_mul_add (dim0_len, dst_plane, dst_off, &t)
      || !core_mul_add (dim0_len, src_plane, src_off, &t))
    {
      ok_error ("cannot copy a 3D rectangle: its offsets overflow");
      return 0;
    }
  struct ok_rect r = {
    .dst = (char *) dst + dst_off, .src = (const char *) src + src_off,
    .width = dim2_size, .rows = dim1_len, .planes = dim0_len,
    .dst_pitch = dst_dim2_size, .src_pitch = src_dim2_size,
    .dst_height = dst_dim1_len, .src_height = src_dim1_len };
  return core_copy_rect (dst_ord, src_ord, &r);
}

/* libgomp 16's managed memory (ompx_gnu_managed_mem_space): what the
   backend gives, or NULL, as from a libgomp whose plugin has none, when
   the backend has none.  */
void *
GOMP_OFFLOAD_managed_alloc (int ord, size_t size)
{
  struct ok_device *dev = core_device (ord, "allocate managed memory");
  if (dev == NULL)
    return NULL;
  if (dev->backend->managed == NULL)
    {
      OK_DEBUG ("%s: no managed memory", dev->label);
      return NULL;
    }
  return dev->backend->managed->alloc (dev, size);
}

bool
GOMP_OFFLOAD_managed_free (int ord, void *ptr)
{
  struct ok_device *dev = core_device (ord, "free managed memory");
  if (dev == NULL)
    return false;
  if (ptr == NULL)
    return true;
  if (dev->backend->managed == NULL)
    {
      ok_dev_error (dev, "cannot free managed memory at %p: the device has"
		    " none", ptr);
      return false;
    }
  return dev->backend->managed->free (dev, ptr);
}

/* libgomp 16's omp_target_is_accessible: 1 when code on device ORD can
   access all of [PTR, PTR + SIZE), else 0; 0 also for a backend that
   cannot tell, as libgomp answers for a plugin without the entry point
   and without shared memory.  With unified shared memory every host
   address is the device's (as GCC 16's nvptx plugin answers).  */
int
GOMP_OFFLOAD_is_accessible_ptr (int ord, const void *ptr, size_t size)
{
  struct ok_device *dev = core_device (ord, "tell accessible memory");
  uintptr_t end;
  if (dev == NULL || ptr == NULL || size == 0
      || __builtin_add_overflow ((uintptr_t) ptr, size, &end))
    return 0;
  if (ok_usm ())
    return 1;
  if (dev->backend->is_accessible == NULL)
    return 0;
  return dev->backend->is_accessible (dev, ptr, size) > 0;
}
