/* The fake libcuda: devices, their primary contexts and the contexts
   cuCtxCreate_v2 makes.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdio.h>

#include "fake-cuda.h"

struct fk_ctx fk_ctxs[FK_MAX_DEVICES];
/* The contexts of cuCtxCreate_v2: a slot is alive while its REFS is 1; a
   destroyed one stays (CREATED, REFS 0) until a new context takes it, so
   that a thread on which it is still current gets
   CUDA_ERROR_CONTEXT_IS_DESTROYED, not a dangling pointer.  */
static struct fk_ctx fk_created[FK_MAX_CREATED];

/* The calling thread's context stack; the current context is the top.  */
#define FK_CTX_STACK 16
static __thread struct fk_ctx *fk_ctx_stack[FK_CTX_STACK];
static __thread int fk_ctx_depth;

struct fk_ctx *
fk_current (void)
{
  return fk_ctx_depth > 0 ? fk_ctx_stack[fk_ctx_depth - 1] : NULL;
}

static bool
fk_is_primary (struct fk_ctx *c)
{
  return c >= fk_ctxs && c < fk_ctxs + FK_MAX_DEVICES;
}

static bool
fk_is_created (struct fk_ctx *c)
{
  return c >= fk_created && c < fk_created + FK_MAX_CREATED;
}

/* A primary context, or a created one not destroyed.  */
static bool
fk_valid_ctx (struct fk_ctx *c)
{
  return (fk_is_primary (c) || (fk_is_created (c) && c->refs > 0))
	 && c->magic == FK_MAGIC_CTX
	 && c->device < fk_num_devices;
}

long
fk_created_alive (void)
{
  long n = 0;
  for (int i = 0; i < FK_MAX_CREATED; i++)
    n += fk_created[i].refs > 0;
  return n;
}

/* ------------------------------------------------------------------ */
/* Initialisation and devices.  */

CUresult
cuInit (unsigned int flags)
{
  ENTER (cuInit);
  if (flags != 0)
    {
      fk_bad (FK_cuInit, "flags %u, must be 0", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  if (fk_num_devices == 0)
    RETURN (CUDA_ERROR_NO_DEVICE);
  fk_initialised = true;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDriverGetVersion (int *version)
{
  ENTER (cuDriverGetVersion);
  RETURN_VALUE (version, fk_driver_version);
}

CUresult
cuDeviceGetCount (int *count)
{
  ENTER (cuDeviceGetCount);
  NEED_INIT (cuDeviceGetCount);
  RETURN_VALUE (count, fk_num_devices);
}

CUresult
cuDeviceGet (CUdevice *dev, int ordinal)
{
  ENTER (cuDeviceGet);
  NEED_INIT (cuDeviceGet);
  if (dev == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  if (ordinal < 0 || ordinal >= fk_num_devices)
    {
      fk_bad (FK_cuDeviceGet, "no device %d", ordinal);
      RETURN (CUDA_ERROR_INVALID_DEVICE);
    }
  *dev = ordinal;
  RETURN (CUDA_SUCCESS);
}

#define NEED_DEVICE(sym, d) \
  do { if ((d) < 0 || (d) >= fk_num_devices) \
	 { fk_bad (FK_##sym, "no device %d", (d)); \
	   RETURN (CUDA_ERROR_INVALID_DEVICE); } } while (0)

CUresult
cuDeviceGetName (char *name, int len, CUdevice dev)
{
  ENTER (cuDeviceGetName);
  NEED_INIT (cuDeviceGetName);
  NEED_DEVICE (cuDeviceGetName, dev);
  if (name == NULL || len <= 0)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  snprintf (name, (size_t) len, "FakeCUDA Device %d", dev);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceGetAttribute (int *value, int attr, CUdevice dev)
{
  ENTER (cuDeviceGetAttribute);
  NEED_INIT (cuDeviceGetAttribute);
  NEED_DEVICE (cuDeviceGetAttribute, dev);
  if (value == NULL || attr <= 0 || attr >= FK_ATTR_MAX)
    {
      fk_bad (FK_cuDeviceGetAttribute, "attribute %d", attr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  int v = 0;
  switch (attr)
    {
    case FK_ATTR_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_X: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_Y: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_Z: v = 64; break;
    case FK_ATTR_MAX_GRID_DIM_X: v = 2147483647; break;
    case FK_ATTR_MAX_GRID_DIM_Y: v = 65535; break;
    case FK_ATTR_MAX_GRID_DIM_Z: v = 65535; break;
    case FK_ATTR_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case FK_ATTR_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case FK_ATTR_WARP_SIZE: v = 32; break;
    case FK_ATTR_MAX_PITCH: v = 2147483647; break;
    case FK_ATTR_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case FK_ATTR_CLOCK_RATE: v = 1500000; break;
    case FK_ATTR_MULTIPROCESSOR_COUNT: v = fk_sms; break;
    case FK_ATTR_CAN_MAP_HOST_MEMORY: v = 1; break;
    case FK_ATTR_CONCURRENT_KERNELS: v = 1; break;
    case FK_ATTR_PCI_BUS_ID: v = dev + 1; break;
    case FK_ATTR_MEMORY_CLOCK_RATE: v = 2600000; break;
    case FK_ATTR_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case FK_ATTR_L2_CACHE_SIZE: v = 50 << 20; break;
    case FK_ATTR_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case FK_ATTR_ASYNC_ENGINE_COUNT: v = 2; break;
    case FK_ATTR_UNIFIED_ADDRESSING: v = 1; break;
    case FK_ATTR_COMPUTE_CAPABILITY_MAJOR: v = fk_sm / 10; break;
    case FK_ATTR_COMPUTE_CAPABILITY_MINOR: v = fk_sm % 10; break;
    case FK_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 233472; break;
    case FK_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR: v = 65536; break;
    case FK_ATTR_MANAGED_MEMORY: v = 1; break;
    case FK_ATTR_PAGEABLE_MEMORY_ACCESS: v = (fk_pageable >> dev) & 1; break;
    case FK_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
    default: v = 0; break;
    }
  *value = v;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceTotalMem_v2 (size_t *bytes, CUdevice dev)
{
  ENTER (cuDeviceTotalMem_v2);
  NEED_INIT (cuDeviceTotalMem_v2);
  NEED_DEVICE (cuDeviceTotalMem_v2, dev);
  RETURN_VALUE (bytes, fk_mem_total);
}

/* ------------------------------------------------------------------ */
/* Contexts.  */

CUresult
cuDevicePrimaryCtxRetain (CUcontext *pctx, CUdevice dev)
{
  ENTER (cuDevicePrimaryCtxRetain);
  NEED_INIT (cuDevicePrimaryCtxRetain);
  NEED_DEVICE (cuDevicePrimaryCtxRetain, dev);
  if (pctx == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  fk_ctxs[dev].refs++;
  *pctx = &fk_ctxs[dev];
  fk_log ("context retain device %d -> %ld", dev, fk_ctxs[dev].refs);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDevicePrimaryCtxRelease_v2 (CUdevice dev)
{
  ENTER (cuDevicePrimaryCtxRelease_v2);
  NEED_INIT (cuDevicePrimaryCtxRelease_v2);
  NEED_DEVICE (cuDevicePrimaryCtxRelease_v2, dev);
  if (fk_ctxs[dev].refs <= 0)
    {
      fk_bad (FK_cuDevicePrimaryCtxRelease_v2,
	      "device %d's primary context is not retained", dev);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  fk_ctxs[dev].refs--;
  fk_log ("context release device %d -> %ld", dev, fk_ctxs[dev].refs);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxSetCurrent (CUcontext ctx)
{
  ENTER (cuCtxSetCurrent);
  NEED_INIT (cuCtxSetCurrent);
  if (ctx != NULL && !fk_valid_ctx (ctx))
    {
      fk_bad (FK_cuCtxSetCurrent, "%p is not a context", (void *) ctx);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  if (fk_ctx_depth == 0)
    {
      if (ctx != NULL)
	fk_ctx_stack[fk_ctx_depth++] = ctx;
    }
  else if (ctx == NULL)
    fk_ctx_depth--;
  else
    fk_ctx_stack[fk_ctx_depth - 1] = ctx;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxGetCurrent (CUcontext *pctx)
{
  ENTER (cuCtxGetCurrent);
  NEED_INIT (cuCtxGetCurrent);
  RETURN_VALUE (pctx, fk_current ());
}

CUresult
cuCtxPushCurrent_v2 (CUcontext ctx)
{
  ENTER (cuCtxPushCurrent_v2);
  NEED_INIT (cuCtxPushCurrent_v2);
  if (!fk_valid_ctx (ctx))
    {
      fk_bad (FK_cuCtxPushCurrent_v2, "%p is not a context", (void *) ctx);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  if (fk_ctx_depth == FK_CTX_STACK)
    {
      fk_bad (FK_cuCtxPushCurrent_v2, "context stack deeper than %d",
	      FK_CTX_STACK);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_ctx_stack[fk_ctx_depth++] = ctx;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxPopCurrent_v2 (CUcontext *pctx)
{
  ENTER (cuCtxPopCurrent_v2);
  NEED_INIT (cuCtxPopCurrent_v2);
  if (fk_ctx_depth == 0)
    {
      fk_bad (FK_cuCtxPopCurrent_v2, "no current context to pop");
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  CUcontext c = fk_ctx_stack[--fk_ctx_depth];
  if (pctx != NULL)
    *pctx = c;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxSynchronize (void)
{
  ENTER (cuCtxSynchronize);
  NEED_CTX (cuCtxSynchronize);
  struct fk_ctx *c = fk_current ();
  for (;;)
    {
      bool pending = false;
      struct fk_stream *s;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
	if (s->ctx == c && (fk_stream_pending (s) || s->callbacks > 0))
	  pending = true;
      if (!pending)
	break;
      pthread_cond_wait (&fk_cond, &fk_lock);
    }
  RETURN (CUDA_SUCCESS);
}

/* cuCtxCreate (CUDA driver API, the cuCtxCreate_v2 ABI: no creation
   parameters): a new context on DEV, with a usage count of 1, made
   current to the calling thread by pushing it on its stack (the context
   current before is restored by cuCtxPopCurrent).  FLAGS: a scheduling
   mode (CU_CTX_SCHED_*) and flags within CU_CTX_FLAGS_MASK, which change
   nothing here.  */
CUresult
cuCtxCreate_v2 (CUcontext *pctx, unsigned int flags, CUdevice dev)
{
  ENTER (cuCtxCreate_v2);
  NEED_INIT (cuCtxCreate_v2);
  NEED_DEVICE (cuCtxCreate_v2, dev);
  unsigned sched = flags & FK_CTX_SCHED_MASK;
  if (pctx == NULL || (flags & ~FK_CTX_FLAGS_MASK) != 0
      || (sched != 0 && sched != 1 && sched != 2 && sched != 4))
    {
      fk_bad (FK_cuCtxCreate_v2, "%s", pctx == NULL ? "NULL result pointer"
	      : "bad flags");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  if (fk_ctx_depth == FK_CTX_STACK)
    {
      fk_bad (FK_cuCtxCreate_v2, "context stack deeper than %d",
	      FK_CTX_STACK);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  /* A slot never used first, then a destroyed one.  */
  struct fk_ctx *c = NULL;
  for (int pass = 0; pass < 2 && c == NULL; pass++)
    for (int i = 0; i < FK_MAX_CREATED && c == NULL; i++)
      if (fk_created[i].refs == 0
	  && (pass == 1 || fk_created[i].magic != FK_MAGIC_CTX))
	c = &fk_created[i];
  if (c == NULL)
    {
      fk_log ("context create device %d: more than %d contexts", dev,
	      FK_MAX_CREATED);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  *c = (struct fk_ctx) { .magic = FK_MAGIC_CTX, .device = dev, .refs = 1,
			 .created = true };
  fk_ctx_stack[fk_ctx_depth++] = c;
  *pctx = c;
  fk_log ("context create device %d %p flags %#x", dev, (void *) c, flags);
  RETURN (CUDA_SUCCESS);
}

/* cuCtxDestroy (CUDA driver API, cuCtxDestroy_v2): destroy CTX, a context
   of cuCtxCreate's, whatever threads it is current to, with everything
   made in it (memory, modules, streams, events, link states; once the
   work queued on its streams is done).  Popped from the calling thread's
   stack if current there; other threads where it is current get
   CUDA_ERROR_CONTEXT_IS_DESTROYED.  A primary context is not destroyed
   this way (cuDevicePrimaryCtxRelease): CUDA_ERROR_INVALID_CONTEXT.  */
CUresult
cuCtxDestroy_v2 (CUcontext ctx)
{
  ENTER (cuCtxDestroy_v2);
  NEED_INIT (cuCtxDestroy_v2);
  if (ctx == NULL || !fk_valid_ctx (ctx) || !ctx->created)
    {
      fk_bad (FK_cuCtxDestroy_v2, "%p is not a live context of"
	      " cuCtxCreate's%s", (void *) ctx,
	      ctx != NULL && fk_is_primary (ctx) ? " (a primary context)"
	      : "");
      RETURN (ctx == NULL ? CUDA_ERROR_INVALID_VALUE
	      : CUDA_ERROR_INVALID_CONTEXT);
    }
  /* The work queued in the context is finished first.  */
  for (;;)
    {
      bool pending = false;
      struct fk_stream *s;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
	if (s->ctx == ctx && (fk_stream_pending (s) || s->callbacks > 0))
	  pending = true;
      if (!pending)
	break;
      pthread_cond_wait (&fk_cond, &fk_lock);
    }
  int links = fk_links_drop (ctx);
  int modules = fk_modules_drop (ctx);
  int streams = fk_streams_drop (ctx);
  int events = fk_events_drop (ctx);
  int blocks = fk_blocks_drop (ctx);
  ctx->refs = 0;
  if (fk_ctx_depth > 0 && fk_ctx_stack[fk_ctx_depth - 1] == ctx)
    fk_ctx_depth--;
  fk_log ("context destroy device %d %p: freed %d blocks, %d modules,"
	  " %d streams, %d events, %d link states", ctx->device,
	  (void *) ctx, blocks, modules, streams, events, links);
  RETURN (CUDA_SUCCESS);
}

/* cuCtxGetDevice (CUDA driver API): the device of the calling thread's
   current context.  Without one, CUDA_ERROR_INVALID_CONTEXT, which is an
   answer, not a misuse: callers ask this to learn whether a context is
   current.  */
CUresult
cuCtxGetDevice (CUdevice *device)
{
  ENTER (cuCtxGetDevice);
  NEED_INIT (cuCtxGetDevice);
  if (device == NULL)
    {
      fk_bad (FK_cuCtxGetDevice, "NULL result pointer");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_ctx *c = fk_current ();
  if (c == NULL)
    RETURN (CUDA_ERROR_INVALID_CONTEXT);
  if (c->refs <= 0)
    RETURN (c->created ? CUDA_ERROR_CONTEXT_IS_DESTROYED
	    : CUDA_ERROR_INVALID_CONTEXT);
  *device = c->device;
  RETURN (CUDA_SUCCESS);
}

/* cuCtxSetLimit (CUDA driver API): set LIMIT of the current context to
   VALUE.  The limits of CUDA 13 are known; those that can only be queried
   (CU_LIMIT_SHMEM_SIZE, CU_LIMIT_CIG_ENABLED) are CUDA_ERROR_INVALID_VALUE,
   unknown ones CUDA_ERROR_UNSUPPORTED_LIMIT.  Nothing here depends on a
   limit; the log has each one set.  */
CUresult
cuCtxSetLimit (int limit, size_t value)
{
  ENTER (cuCtxSetLimit);
  NEED_CTX (cuCtxSetLimit);
  if (limit < 0 || limit >= FK_LIMIT_COUNT)
    {
      fk_log ("limit %d: unsupported", limit);
      RETURN (CUDA_ERROR_UNSUPPORTED_LIMIT);
    }
  if (limit == FK_LIMIT_SHMEM_SIZE || limit == FK_LIMIT_CIG_ENABLED)
    {
      fk_bad (FK_cuCtxSetLimit, "limit %d can only be queried", limit);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_log ("limit %d = %zu device %d", limit, value, fk_current ()->device);
  RETURN (CUDA_SUCCESS);
}
