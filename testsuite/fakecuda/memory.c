/* The fake libcuda: device memory (host memory in a registry of live
   blocks, see fake-common.h), page-locked host memory, and copies, which
   must stay inside live blocks.  See fake-cuda.h.  */

#define _GNU_SOURCE
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

/* The block counts in CTX's memory unless it is page-locked host
   memory.  */
void *
fk_block_new (size_t size, enum fk_block_kind kind, struct fk_ctx *ctx)
{
  void *p = fake_block_new (&fk_blocks, size, 256, kind, ctx);
  if (p != NULL && ctx != NULL && kind != FK_HOST)
    ctx->mem_used += size;
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
    ctx->mem_used -= b.size;
  return true;
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
  if (size > fk_mem_total || c->mem_used > fk_mem_total - size)
    {
      fk_log ("alloc mem %zu bytes: out of memory (%zu of %zu used)", size,
	      c->mem_used, fk_mem_total);
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
  *free_bytes = fk_mem_total - fk_current ()->mem_used;
  RETURN (CUDA_SUCCESS);
}

/* One copy.  DIR: "HtoD", "DtoH" or "DtoD".  Checks the device side(s)
   and moves the bytes.  */
static CUresult
fk_copy (int sym, const char *dir, void *dst, const void *src, size_t n,
	 bool async, CUstream stream)
{
  if (async && !fk_stream_ok (sym, stream))
    return CUDA_ERROR_INVALID_HANDLE;
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

/* cuMemsetD8Async (CUDA driver API): sets N bytes of device memory at DST
   to UC, in stream order; DST .. DST + N must be device memory.  */
CUresult
cuMemsetD8Async (CUdeviceptr dst, unsigned char uc, size_t n,
		 CUstream stream)
{
  ENTER (cuMemsetD8Async);
  NEED_CTX (cuMemsetD8Async);
  if (!fk_stream_ok (FK_cuMemsetD8Async, stream))
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (n > 0 && !fk_device_range ((uintptr_t) dst, n))
    {
      fk_bad (FK_cuMemsetD8Async, "memset of %zu bytes at %#lx: not inside"
	      " one live device allocation", n, (unsigned long) dst);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  memset ((void *) (uintptr_t) dst, uc, n);
  fk_log ("memset %zu", n);
  RETURN (CUDA_SUCCESS);
}
