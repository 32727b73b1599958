/* The fake libcuda: device memory (host memory in a registry of live
   blocks, see fake-common.h), page-locked host memory, and copies, which
   must stay inside live blocks.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

/* ------------------------------------------------------------------ */
/* Device blocks.  */

bool
fk_device_range (uintptr_t addr, size_t n)
{
  const struct fake_block *b = fake_block_find (&fk_blocks, addr);
  if (b == NULL || b->kind == FK_HOST)
    return false;
  return n <= b->size && addr - b->base <= b->size - n;
}

/* The block counts in the memory of CTX's device unless it is
   page-locked host memory.  */
void *
fk_block_new (size_t size, enum fk_block_kind kind, struct fk_ctx *ctx)
{
  void *p = fake_block_new (&fk_blocks, size, 256, kind, ctx);
  if (p != NULL && ctx != NULL && kind != FK_HOST)
    fk_dev_mem (ctx) += size;
  return p;
}

bool
fk_block_free (uintptr_t addr, enum fk_block_kind kind)
{
  struct fake_block b;
  if (!fake_block_free (&fk_blocks, addr, kind, &b))
    return false;
  struct fk_ctx *ctx = b.owner;
  if (ctx != NULL && kind != FK_HOST)
    fk_dev_mem (ctx) -= b.size;
  return true;
}

/* cuCtxDestroy_v2: free the memory and page-locked blocks of CTX.  */
int
fk_blocks_drop (struct fk_ctx *ctx)
{
  int n = 0;
  for (size_t i = 0; i < fk_blocks.n; )
    {
      const struct fake_block *b = &fk_blocks.live[i];
      if (b->owner == ctx && (b->kind == FK_MEM || b->kind == FK_HOST))
	{
	  fk_block_free (b->base, (enum fk_block_kind) b->kind);
	  n++;
	  i = 0;		/* The table changed.  */
	}
      else
	i++;
    }
  return n;
}

/* ------------------------------------------------------------------ */
/* Memory.  */

CUresult
cuMemAlloc_v2 (CUdeviceptr *dptr, size_t size)
{
  ENTER (cuMemAlloc_v2);
  NEED_CTX (cuMemAlloc_v2);
  if (dptr == NULL || size == 0)
    {
      fk_bad (FK_cuMemAlloc_v2, "%s", dptr == NULL ? "NULL result pointer"
	      : "size 0");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_ctx *c = fk_current ();
  if (size > fk_mem_total || fk_dev_mem (c) > fk_mem_total - size)
    {
      fk_log ("alloc mem %zu bytes: out of memory (%zu of %zu used)", size,
	      fk_dev_mem (c), fk_mem_total);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  void *p = fk_block_new (size, FK_MEM, c);
  if (p == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  *dptr = (CUdeviceptr) (uintptr_t) p;
  fk_log ("alloc mem %p %zu", p, size);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuMemFree_v2 (CUdeviceptr dptr)
{
  ENTER (cuMemFree_v2);
  NEED_INIT (cuMemFree_v2);
  if (!fk_block_free ((uintptr_t) dptr, FK_MEM))
    {
      fk_bad (FK_cuMemFree_v2, "%#llx is not a live cuMemAlloc block", dptr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_log ("free mem %#llx", dptr);
  RETURN (CUDA_SUCCESS);
}

static CUresult
fk_host_alloc (int sym, void **pp, size_t size)
{
  if (pp == NULL || size == 0)
    {
      fk_bad (sym, "%s", pp == NULL ? "NULL result pointer" : "size 0");
      return CUDA_ERROR_INVALID_VALUE;
    }
  void *p = fk_block_new (size, FK_HOST, fk_current ());
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pp = p;
  fk_log ("alloc host %p %zu", p, size);
  return CUDA_SUCCESS;
}

CUresult
cuMemHostAlloc (void **pp, size_t size, unsigned int flags)
{
  ENTER (cuMemHostAlloc);
  NEED_CTX (cuMemHostAlloc);
  if (flags & ~7u)
    {
      fk_bad (FK_cuMemHostAlloc, "flags %#x", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  RETURN (fk_host_alloc (FK_cuMemHostAlloc, pp, size));
}

CUresult
cuMemAllocHost_v2 (void **pp, size_t size)
{
  ENTER (cuMemAllocHost_v2);
  NEED_CTX (cuMemAllocHost_v2);
  RETURN (fk_host_alloc (FK_cuMemAllocHost_v2, pp, size));
}

CUresult
cuMemFreeHost (void *p)
{
  ENTER (cuMemFreeHost);
  NEED_INIT (cuMemFreeHost);
  if (!fk_block_free ((uintptr_t) p, FK_HOST))
    {
      fk_bad (FK_cuMemFreeHost, "%p is not live page-locked memory", p);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_log ("free host %p", p);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuMemGetInfo_v2 (size_t *free_bytes, size_t *total)
{
  ENTER (cuMemGetInfo_v2);
  NEED_CTX (cuMemGetInfo_v2);
  if (free_bytes == NULL || total == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *total = fk_mem_total;
  *free_bytes = fk_mem_total - fk_dev_mem (fk_current ());
  RETURN (CUDA_SUCCESS);
}

/* An asynchronous copy behind work still pending on its stream: it
   moves the bytes once that work is done, in the stream's order (queued
   as a host function of the fake's own).  The driver stages pageable
   host memory at the call, so a copy to the device takes its bytes
   now.  */
struct fk_later_copy
{
  void *dst;
  const void *src;
  size_t n;
  void *staged;
};

static void
fk_later_copy_run (void *arg)
{
  struct fk_later_copy *c = arg;
  memmove (c->dst, c->staged != NULL ? c->staged : c->src, c->n);
  free (c->staged);
  free (c);
}

static CUresult
fk_copy_later (int sym, const char *dir, void *dst, const void *src,
	       size_t n, CUstream stream)
{
  struct fk_later_copy *c = calloc (1, sizeof *c);
  if (c == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *c = (struct fk_later_copy) { dst, src, n, NULL };
  if (dir[0] == 'H')
    {
      c->staged = malloc (n);
      if (c->staged == NULL)
	{
	  free (c);
	  return CUDA_ERROR_OUT_OF_MEMORY;
	}
      memcpy (c->staged, src, n);
    }
  CUresult r = fk_queue_callback (sym, stream, fk_later_copy_run, NULL, c);
  if (r != CUDA_SUCCESS)
    {
      free (c->staged);
      free (c);
      return r;
    }
  fk_log ("copy %s %zu async, queued behind pending work", dir, n);
  return CUDA_SUCCESS;
}

/* One copy.  DIR: "HtoD", "DtoH" or "DtoD".  Checks the device side(s)
   and moves the bytes (for an asynchronous one, once the work queued
   before it on its stream is done).  */
static CUresult
fk_copy (int sym, const char *dir, void *dst, const void *src, size_t n,
	 bool async, CUstream stream)
{
  if (async && !fk_stream_ok (sym, stream))
    return CUDA_ERROR_INVALID_HANDLE;
  /* A synchronous copy is the legacy stream's work.  */
  while (!async && fk_blocking_pending ())
    pthread_cond_wait (&fk_cond, &fk_lock);
  if (n == 0)
    return CUDA_SUCCESS;
  bool dst_dev = dir[3] == 'D', src_dev = dir[0] == 'D';
  if ((dst_dev && !fk_device_range ((uintptr_t) dst, n))
      || (src_dev && !fk_device_range ((uintptr_t) src, n)))
    {
      fk_bad (sym, "copy %s of %zu bytes from %p to %p: %s", dir, n, src,
	      dst, "not inside one live device allocation");
      return CUDA_ERROR_INVALID_VALUE;
    }
  if ((!dst_dev && dst == NULL) || (!src_dev && src == NULL))
    {
      fk_bad (sym, "copy %s of %zu bytes: NULL host pointer", dir, n);
      return CUDA_ERROR_INVALID_VALUE;
    }
  if (async && fk_is_real_stream (stream)
      && (fk_stream_pending (stream) || stream->callbacks > 0))
    return fk_copy_later (sym, dir, dst, src, n, stream);
  memmove (dst, src, n);
  fk_log ("copy %s %zu%s", dir, n, async ? " async" : "");
  return CUDA_SUCCESS;
}

CUresult
cuMemcpyHtoD_v2 (CUdeviceptr dst, const void *src, size_t n)
{
  ENTER (cuMemcpyHtoD_v2);
  NEED_CTX (cuMemcpyHtoD_v2);
  RETURN (fk_copy (FK_cuMemcpyHtoD_v2, "HtoD", (void *) (uintptr_t) dst, src,
		   n, false, NULL));
}

CUresult
cuMemcpyDtoH_v2 (void *dst, CUdeviceptr src, size_t n)
{
  ENTER (cuMemcpyDtoH_v2);
  NEED_CTX (cuMemcpyDtoH_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoH_v2, "DtoH", dst,
		   (const void *) (uintptr_t) src, n, false, NULL));
}

CUresult
cuMemcpyDtoD_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  ENTER (cuMemcpyDtoD_v2);
  NEED_CTX (cuMemcpyDtoD_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoD_v2, "DtoD", (void *) (uintptr_t) dst,
		   (const void *) (uintptr_t) src, n, false, NULL));
}

CUresult
cuMemcpyHtoDAsync_v2 (CUdeviceptr dst, const void *src, size_t n,
		      CUstream s)
{
  ENTER (cuMemcpyHtoDAsync_v2);
  NEED_CTX (cuMemcpyHtoDAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyHtoDAsync_v2, "HtoD", (void *) (uintptr_t) dst,
		   src, n, true, s));
}

CUresult
cuMemcpyDtoHAsync_v2 (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  ENTER (cuMemcpyDtoHAsync_v2);
  NEED_CTX (cuMemcpyDtoHAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoHAsync_v2, "DtoH", dst,
		   (const void *) (uintptr_t) src, n, true, s));
}

CUresult
cuMemcpyDtoDAsync_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n,
		      CUstream s)
{
  ENTER (cuMemcpyDtoDAsync_v2);
  NEED_CTX (cuMemcpyDtoDAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoDAsync_v2, "DtoD", (void *) (uintptr_t) dst,
		   (const void *) (uintptr_t) src, n, true, s));
}

/* Set N bytes of device memory at DST to UC for SYM; DST .. DST + N must
   be device memory.  */
static CUresult
fk_memset (int sym, CUdeviceptr dst, unsigned char uc, size_t n)
{
  if (n > 0 && !fk_device_range ((uintptr_t) dst, n))
    {
      fk_bad (sym, "memset of %zu bytes at %#lx: not inside one live device"
	      " allocation", n, (unsigned long) dst);
      return CUDA_ERROR_INVALID_VALUE;
    }
  memset ((void *) (uintptr_t) dst, uc, n);
  fk_log ("memset %zu", n);
  return CUDA_SUCCESS;
}

/* cuMemsetD8Async (CUDA driver API): sets N bytes of device memory at DST
   to UC, in stream order.  */
CUresult
cuMemsetD8Async (CUdeviceptr dst, unsigned char uc, size_t n,
		 CUstream stream)
{
  ENTER (cuMemsetD8Async);
  NEED_CTX (cuMemsetD8Async);
  if (!fk_stream_ok (FK_cuMemsetD8Async, stream))
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  RETURN (fk_memset (FK_cuMemsetD8Async, dst, uc, n));
}

/* cuMemsetD8 (CUDA driver API, cuMemsetD8_v2): the same on the legacy
   stream, after the work of the context's blocking streams.  */
CUresult
cuMemsetD8_v2 (CUdeviceptr dst, unsigned char uc, size_t n)
{
  ENTER (cuMemsetD8_v2);
  NEED_CTX (cuMemsetD8_v2);
  while (fk_blocking_pending ())
    pthread_cond_wait (&fk_cond, &fk_lock);
  RETURN (fk_memset (FK_cuMemsetD8_v2, dst, uc, n));
}

/* cuMemcpy (CUDA driver API): N bytes from SRC to DST, each side's kind
   inferred from its address, as unified addressing (which every device
   here has) allows: inside a device block (memory, a module's global) it
   is device memory, and the copy must stay in that block; anywhere else
   (page-locked or pageable) host memory.  Synchronous, on the legacy
   stream.  */
CUresult
cuMemcpy (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  ENTER (cuMemcpy);
  NEED_CTX (cuMemcpy);
  const struct fake_block *db = fake_block_find (&fk_blocks, (uintptr_t) dst);
  const struct fake_block *sb = fake_block_find (&fk_blocks, (uintptr_t) src);
  bool dst_dev = db != NULL && db->kind != FK_HOST;
  bool src_dev = sb != NULL && sb->kind != FK_HOST;
  static const char *const dirs[2][2] = { { "HtoH", "HtoD" },
					  { "DtoH", "DtoD" } };
  RETURN (fk_copy (FK_cuMemcpy, dirs[src_dev][dst_dev],
		   (void *) (uintptr_t) dst, (const void *) (uintptr_t) src, n,
		   false, NULL));
}

/* cuMemGetAddressRange (CUDA driver API, cuMemGetAddressRange_v2): the
   base address and size of the allocation that contains DPTR, each
   optional.  The allocations are cuMemAlloc's and, as the driver keeps
   a module's data in device memory too, a module's globals (each its
   own block here); page-locked host memory and unknown addresses are
   CUDA_ERROR_NOT_FOUND, an answer rather than a misuse.  */
CUresult
cuMemGetAddressRange_v2 (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
  ENTER (cuMemGetAddressRange_v2);
  NEED_CTX (cuMemGetAddressRange_v2);
  const struct fake_block *b = fake_block_find (&fk_blocks,
						(uintptr_t) dptr);
  if (b == NULL || b->kind == FK_HOST)
    {
      fk_log ("address range of %#llx: not device memory", dptr);
      RETURN (CUDA_ERROR_NOT_FOUND);
    }
  if (pbase != NULL)
    *pbase = (CUdeviceptr) b->base;
  if (psize != NULL)
    *psize = b->size;
  RETURN (CUDA_SUCCESS);
}

/* cuMemHostGetDevicePointer (CUDA driver API,
   cuMemHostGetDevicePointer_v2): the device address of page-locked host
   memory P.  With unified addressing, which every device here has, all
   memory of cuMemHostAlloc and cuMemAllocHost is mapped for every device
   at the host's address, whatever its flags: the answer is P.  Memory
   that is not page-locked, or FLAGS other than 0, is
   CUDA_ERROR_INVALID_VALUE.  */
CUresult
cuMemHostGetDevicePointer_v2 (CUdeviceptr *pdptr, void *p, unsigned int flags)
{
  ENTER (cuMemHostGetDevicePointer_v2);
  NEED_CTX (cuMemHostGetDevicePointer_v2);
  const struct fake_block *b = fake_block_find (&fk_blocks, (uintptr_t) p);
  if (pdptr == NULL || flags != 0 || b == NULL || b->kind != FK_HOST)
    {
      fk_bad (FK_cuMemHostGetDevicePointer_v2, "%s", pdptr == NULL
	      ? "NULL result pointer" : flags != 0 ? "flags not 0"
	      : "not page-locked memory of cuMemHostAlloc or cuMemAllocHost");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  *pdptr = (CUdeviceptr) (uintptr_t) p;
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* What the entry points of libgomp 14 to 16 use.  Layouts and values
   from CUDA 13's cuda.h and the driver API's documentation, written here
   rather than taken from the plugin's headers (see cuda-types.h).  */

enum
{
  FK_MEMORYTYPE_HOST = 1,
  FK_MEMORYTYPE_DEVICE = 2,
  FK_MEMORYTYPE_ARRAY = 3,
  FK_MEMORYTYPE_UNIFIED = 4,
  FK_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  FK_MEM_ATTACH_GLOBAL = 1,
  FK_MEM_ATTACH_HOST = 2,
  /* CU_DEVICE_ATTRIBUTE_MAX_PITCH, as devices.c answers it: cuMemcpy2D
     refuses larger pitches.  */
  FK_MAX_PITCH = 2147483647
};

/* CUDA_MEMCPY3D_v2; CUDA_MEMCPY2D_v2 is the same without the Z, LOD,
   reserved and height members, each copy checked by the side it
   describes.  */
struct fk_memcpy2d
{
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
};

struct fk_memcpy3d
{
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  void *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  void *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};

/* One side of a rectangular copy, reduced to its first byte, pitch and
   rows per plane.  */
struct fk_side
{
  int type;
  char *base;
  size_t pitch, height;
};

/* Check side S of a copy of DEPTH planes of HEIGHT rows of WIDTH bytes
   for SYM: memory type, pitch, and every row inside one live device
   block when it is device memory.  0 or the error to return.  */
static CUresult
fk_rect_side (int sym, const char *which, const struct fk_side *s,
	      size_t width, size_t height, size_t depth)
{
  if (s->type != FK_MEMORYTYPE_HOST && s->type != FK_MEMORYTYPE_DEVICE)
    {
      fk_bad (sym, "%s memory type %d (arrays and unified memory are not"
	      " modelled)", which, s->type);
      return CUDA_ERROR_INVALID_VALUE;
    }
  if (s->pitch < width || (depth > 1 && s->height < height))
    {
      fk_bad (sym, "%s pitch %zu or height %zu smaller than the copy's"
	      " %zu x %zu", which, s->pitch, s->height, width, height);
      return CUDA_ERROR_INVALID_VALUE;
    }
  if (s->base == NULL)
    {
      fk_bad (sym, "%s pointer NULL", which);
      return CUDA_ERROR_INVALID_VALUE;
    }
  if (s->type == FK_MEMORYTYPE_HOST)
    return CUDA_SUCCESS;
  for (size_t p = 0; p < depth; p++)
    for (size_t r = 0; r < height; r++)
      {
	uintptr_t row = (uintptr_t) s->base + (p * s->height + r) * s->pitch;
	if (!fk_device_range (row, width))
	  {
	    fk_bad (sym, "%s row %zu of plane %zu (%#lx, %zu bytes): not"
		    " inside one live device allocation", which, r, p,
		    (unsigned long) row, width);
	    return CUDA_ERROR_INVALID_VALUE;
	  }
      }
  return CUDA_SUCCESS;
}

/* The copy itself, after the checks of both sides.  */
static CUresult
fk_rect_copy (int sym, const char *what, const struct fk_side *dst,
	      const struct fk_side *src, size_t width, size_t height,
	      size_t depth)
{
  if (width == 0 || height == 0 || depth == 0)
    return CUDA_SUCCESS;
  if (dst->pitch > FK_MAX_PITCH || src->pitch > FK_MAX_PITCH)
    {
      fk_log ("%s: pitch above the device's %d", what, FK_MAX_PITCH);
      return CUDA_ERROR_INVALID_VALUE;
    }
  CUresult r = fk_rect_side (sym, "destination", dst, width, height, depth);
  if (r == CUDA_SUCCESS)
    r = fk_rect_side (sym, "source", src, width, height, depth);
  if (r != CUDA_SUCCESS)
    return r;
  for (size_t p = 0; p < depth; p++)
    for (size_t row = 0; row < height; row++)
      memmove (dst->base + (p * dst->height + row) * dst->pitch,
	       src->base + (p * src->height + row) * src->pitch, width);
  fk_log ("%s %s to %s %zu x %zu x %zu", what,
	  src->type == FK_MEMORYTYPE_HOST ? "host" : "device",
	  dst->type == FK_MEMORYTYPE_HOST ? "host" : "device", depth, height,
	  width);
  return CUDA_SUCCESS;
}

/* The start of a side's data: its host or device pointer, moved by its
   offsets.  */
static char *
fk_rect_origin (int type, const void *host, CUdeviceptr device, size_t x,
		size_t y, size_t z, size_t pitch, size_t height)
{
  char *base = (type == FK_MEMORYTYPE_HOST ? (char *) host
		: (char *) (uintptr_t) device);
  if (base == NULL)
    return NULL;
  return base + (z * height + y) * pitch + x;
}

/* cuMemcpy2D and cuMemcpy2DUnaligned, SYM, with parameters C.  */
static CUresult
fk_copy2d (int sym, const struct fk_memcpy2d *c)
{
  if (c == NULL)
    {
      fk_bad (sym, "NULL parameters");
      return CUDA_ERROR_INVALID_VALUE;
    }
  struct fk_side dst = {
    c->dstMemoryType,
    fk_rect_origin (c->dstMemoryType, c->dstHost, c->dstDevice,
		    c->dstXInBytes, c->dstY, 0, c->dstPitch, 0),
    c->dstPitch, c->Height };
  struct fk_side src = {
    c->srcMemoryType,
    fk_rect_origin (c->srcMemoryType, c->srcHost, c->srcDevice,
		    c->srcXInBytes, c->srcY, 0, c->srcPitch, 0),
    c->srcPitch, c->Height };
  return fk_rect_copy (sym, "copy2D", &dst, &src, c->WidthInBytes, c->Height,
		       1);
}

/* cuMemcpy2D (CUDA driver API): HEIGHT rows of WIDTHINBYTES bytes, each
   side's rows PITCH bytes apart, synchronously.  */
CUresult
cuMemcpy2D_v2 (const struct fk_memcpy2d *c)
{
  ENTER (cuMemcpy2D_v2);
  NEED_CTX (cuMemcpy2D_v2);
  RETURN (fk_copy2d (FK_cuMemcpy2D_v2, c));
}

/* cuMemcpy2DUnaligned (CUDA driver API, cuMemcpy2DUnaligned_v2): the
   same without cuMemcpy2D's limits on alignment, which the fake does not
   impose anyway.  */
CUresult
cuMemcpy2DUnaligned_v2 (const struct fk_memcpy2d *c)
{
  ENTER (cuMemcpy2DUnaligned_v2);
  NEED_CTX (cuMemcpy2DUnaligned_v2);
  RETURN (fk_copy2d (FK_cuMemcpy2DUnaligned_v2, c));
}

/* cuMemcpy3D (CUDA driver API): DEPTH planes of HEIGHT rows; a side's
   planes are its HEIGHT rows apart.  LOD and the reserved members must
   be 0.  */
CUresult
cuMemcpy3D_v2 (const struct fk_memcpy3d *c)
{
  ENTER (cuMemcpy3D_v2);
  NEED_CTX (cuMemcpy3D_v2);
  if (c == NULL || c->reserved0 != NULL || c->reserved1 != NULL
      || c->srcLOD != 0 || c->dstLOD != 0)
    {
      fk_bad (FK_cuMemcpy3D_v2, "NULL parameters, reserved members or LOD"
	      " not 0");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_side dst = {
    c->dstMemoryType,
    fk_rect_origin (c->dstMemoryType, c->dstHost, c->dstDevice,
		    c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch,
		    c->dstHeight),
    c->dstPitch, c->dstHeight };
  struct fk_side src = {
    c->srcMemoryType,
    fk_rect_origin (c->srcMemoryType, c->srcHost, c->srcDevice,
		    c->srcXInBytes, c->srcY, c->srcZ, c->srcPitch,
		    c->srcHeight),
    c->srcPitch, c->srcHeight };
  RETURN (fk_rect_copy (FK_cuMemcpy3D_v2, "copy3D", &dst, &src,
			c->WidthInBytes, c->Height, c->Depth));
}

/* cuMemAllocManaged (CUDA driver API): memory host and device reach at
   one address; cuMemFree frees it.  Here it is a device block, which is
   host memory anyway.  */
CUresult
cuMemAllocManaged (CUdeviceptr *dptr, size_t size, unsigned int flags)
{
  ENTER (cuMemAllocManaged);
  NEED_CTX (cuMemAllocManaged);
  if (dptr == NULL || size == 0
      || (flags != FK_MEM_ATTACH_GLOBAL && flags != FK_MEM_ATTACH_HOST))
    {
      fk_bad (FK_cuMemAllocManaged, "%s", dptr == NULL ? "NULL result pointer"
	      : size == 0 ? "size 0" : "flags neither GLOBAL nor HOST");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_ctx *c = fk_current ();
  if (size > fk_mem_total || fk_dev_mem (c) > fk_mem_total - size)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  void *p = fk_block_new (size, FK_MEM, c);
  if (p == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  *dptr = (CUdeviceptr) (uintptr_t) p;
  fk_log ("alloc managed %p %zu", p, size);
  RETURN (CUDA_SUCCESS);
}

/* cuPointerGetAttribute (CUDA driver API), CU_POINTER_ATTRIBUTE_MEMORY_TYPE
   only: host for page-locked memory, device for device blocks and module
   globals; memory the driver does not know is CUDA_ERROR_INVALID_VALUE.  */
CUresult
cuPointerGetAttribute (void *data, int attribute, CUdeviceptr ptr)
{
  ENTER (cuPointerGetAttribute);
  NEED_CTX (cuPointerGetAttribute);
  if (data == NULL || attribute != FK_POINTER_ATTRIBUTE_MEMORY_TYPE)
    {
      fk_bad (FK_cuPointerGetAttribute, "%s", data == NULL ? "NULL data"
	      : "attribute not modelled");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  const struct fake_block *b = fake_block_find (&fk_blocks, (uintptr_t) ptr);
  if (b == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *(int *) data = (b->kind == FK_HOST ? FK_MEMORYTYPE_HOST
		   : FK_MEMORYTYPE_DEVICE);
  RETURN (CUDA_SUCCESS);
}

/* cuDeviceGetUuid_v2 and cuDeviceGetUuid (CUDA driver API; here beside
   the memory calls the same entry points need), SYM: 16 bytes per device,
   fixed, different for each: 0xfa 0xce, the device, then 13 bytes
   counting up from 3.  */
static CUresult
fk_device_uuid (int sym, char uuid[16], CUdevice dev)
{
  if (dev < 0 || dev >= fk_num_devices || uuid == NULL)
    {
      fk_bad (sym, "no device %d or NULL result", dev);
      return CUDA_ERROR_INVALID_DEVICE;
    }
  uuid[0] = (char) 0xfa;
  uuid[1] = (char) 0xce;
  uuid[2] = (char) dev;
  for (int i = 3; i < 16; i++)
    uuid[i] = (char) i;
  return CUDA_SUCCESS;
}

CUresult
cuDeviceGetUuid_v2 (char uuid[16], CUdevice dev)
{
  ENTER (cuDeviceGetUuid_v2);
  NEED_INIT (cuDeviceGetUuid_v2);
  RETURN (fk_device_uuid (FK_cuDeviceGetUuid_v2, uuid, dev));
}

/* cuDeviceGetUuid (CUDA driver API), the older entry point, which GCC 16's
   plugin takes where the driver lacks the _v2 one: the same UUID (the two
   differ only for MIG instances, which the fake has none of).  */
CUresult
cuDeviceGetUuid (char uuid[16], CUdevice dev)
{
  ENTER (cuDeviceGetUuid);
  NEED_INIT (cuDeviceGetUuid);
  RETURN (fk_device_uuid (FK_cuDeviceGetUuid, uuid, dev));
}
