/* The fake libcuda: kernel launches, checked (geometry, parameters,
   GCC's soft stacks) and recorded, never run; and the reverse-offload
   requests a test makes a launch ask for.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

struct fake_records fk_launches = { .size = sizeof (struct fk_launch) };
struct fk_rev *fk_rev_armed;
long fk_rev_served;

/* ------------------------------------------------------------------ */
/* Reverse offload.  */

/* GCC's struct rev_offload: fn, mapnum, addrs, sizes, kinds (8 bytes
   each), dev_num (4), padded to 48 bytes.  */
#define FK_REV_BLOCK 48

/* Whether [ADDR, ADDR + N) lies inside one live page-locked host
   block.  */
static bool
fk_host_range (uintptr_t addr, size_t n)
{
  const struct fake_block *b = fake_block_find (&fk_blocks, addr);
  return (b != NULL && b->kind == FK_HOST && n <= b->size
	  && addr - b->base <= b->size - n);
}

/* If the armed request is for F, give it to its launch on STREAM.  */
static void
fk_rev_attach (struct fk_func *f, CUstream stream)
{
  struct fk_rev *q = fk_rev_armed;
  if (q == NULL || strcmp (q->kernel, f->name) != 0)
    return;
  fk_rev_armed = NULL;
  for (int i = 0; i < f->module->img.nglobals; i++)
    if (strcmp (f->module->img.globals[i].name, "__gomp_rev_offload_var")
	== 0 && f->module->img.globals[i].size == 8)
      q->var = f->module->img.globals[i].addr;
  if (q->var == 0 || !fk_is_real_stream (stream))
    {
      /* Without the variable its device code has no GOMP_target_ext.  */
      fk_log ("launch %s: no reverse-offload request (%s)", f->name,
	      q->var == 0 ? "no __gomp_rev_offload_var" : "legacy stream");
      free (q);
      return;
    }
  if (stream->rev != NULL)
    fk_rev_drop (stream, "a new launch");
  stream->rev = q;
}

void
fk_rev_drop (struct fk_stream *s, const char *why)
{
  if (s->rev == NULL)
    return;
  fk_log ("rev %s: request dropped: %s", s->rev->kernel, why);
  free (s->rev);
  s->rev = NULL;
}

/* The kernel on S faults with ERR: the request goes.  */
static bool
fk_rev_fault (struct fk_stream *s, CUresult err, const char *what)
{
  fk_bad (FK_cuStreamQuery, "kernel %s: %s", s->rev->kernel, what);
  s->fault = err;
  fk_rev_drop (s, what);
  return false;
}

bool
fk_rev_step (struct fk_stream *s)
{
  struct fk_rev *q = s->rev;
  if (q == NULL)
    return false;
  if (q->block == 0)
    {
      uint64_t p;
      memcpy (&p, (const void *) q->var, sizeof p);
      if (p == 0)
	{
	  /* GOMP_target_ext skips the region.  */
	  fk_rev_drop (s, "__gomp_rev_offload_var is NULL");
	  return false;
	}
      if (!fk_host_range ((uintptr_t) p, FK_REV_BLOCK))
	return fk_rev_fault (s, CUDA_ERROR_ILLEGAL_ADDRESS,
			     "__gomp_rev_offload_var does not point to 48"
			     " bytes of page-locked memory");
      uint64_t *w = (uint64_t *) (uintptr_t) p;
      w[1] = q->mapnum;
      w[2] = q->addrs;
      w[3] = q->sizes;
      w[4] = q->kinds;
      memcpy (&w[5], &q->dev_num, sizeof q->dev_num);
      __atomic_store_n (&w[0], q->fn, __ATOMIC_RELEASE);
      q->block = (uintptr_t) p;
      fk_log ("rev %s: request fn %#llx mapnum %llu at %#lx", q->kernel,
	      (unsigned long long) q->fn, (unsigned long long) q->mapnum,
	      (unsigned long) q->block);
      return true;
    }
  if (!fk_host_range (q->block, FK_REV_BLOCK))
    return fk_rev_fault (s, CUDA_ERROR_ILLEGAL_ADDRESS, "the block of its"
			 " reverse-offload request was freed while it waits");
  if (__atomic_load_n ((uint64_t *) q->block, __ATOMIC_ACQUIRE) != 0)
    return true;
  fk_rev_served++;
  fk_rev_drop (s, "served");
  return false;
}

/* ------------------------------------------------------------------ */
/* Launches.  */

CUresult
cuLaunchKernel (CUfunction fn, unsigned int gx, unsigned int gy,
		unsigned int gz, unsigned int bx, unsigned int by,
		unsigned int bz, unsigned int shmem, CUstream stream,
		void **params, void **extra)
{
  ENTER (cuLaunchKernel);
  NEED_CTX (cuLaunchKernel);
  struct fk_func *f = fk_func_arg (FK_cuLaunchKernel, fn);
  if (f == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (f->module->ctx != fk_current ())
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s belongs to device %d's context,"
	      " current is device %d's", f->name, f->module->ctx->device,
	      fk_current ()->device);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  if (!fk_stream_ok (FK_cuLaunchKernel, stream))
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0
      || bx > 1024 || by > 1024 || bz > 64 || gy > 65535 || gz > 65535
      || gx > 2147483647u || shmem > 49152)
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: bad grid %ux%ux%u / block"
	      " %ux%ux%u / shared %u", f->name, gx, gy, gz, bx, by, bz, shmem);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  if ((unsigned long) bx * by * bz > (unsigned long) fk_func_max_threads (f))
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: block %ux%ux%u exceeds its %d"
	      " threads (%d registers each)", f->name, bx, by, bz,
	      fk_func_max_threads (f), f->regs);
      RETURN (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    }

  /* The parameter values.  */
  unsigned long long vals[4] = { 0, 0, 0, 0 };
  if (params != NULL)
    {
      for (int i = 0; i < f->nparams && i < 4; i++)
	if (f->param_size[i] > 0 && f->param_size[i] <= 8)
	  {
	    if (params[i] == NULL)
	      {
		fk_bad (FK_cuLaunchKernel, "kernel %s: parameter %d missing",
			f->name, i);
		RETURN (CUDA_ERROR_INVALID_VALUE);
	      }
	    memcpy (&vals[i], params[i], f->param_size[i]);
	  }
    }
  else if (extra != NULL)
    {
      const unsigned char *buf = NULL;
      size_t bufsize = 0;
      for (int i = 0; extra[i] != NULL; i += 2)
	if (extra[i] == FK_LAUNCH_PARAM_BUFFER_POINTER)
	  buf = extra[i + 1];
	else if (extra[i] == FK_LAUNCH_PARAM_BUFFER_SIZE)
	  bufsize = *(size_t *) extra[i + 1];
      size_t off = 0;
      for (int i = 0; buf != NULL && i < f->nparams && i < 4; i++)
	{
	  size_t sz = f->param_size[i];
	  if (sz == 0 || sz > 8)
	    break;
	  off = (off + sz - 1) & ~(sz - 1);
	  if (off + sz > bufsize)
	    {
	      fk_bad (FK_cuLaunchKernel, "kernel %s: parameter buffer of %zu"
		      " bytes too small", f->name, bufsize);
	      RETURN (CUDA_ERROR_INVALID_VALUE);
	    }
	  memcpy (&vals[i], buf + off, sz);
	  off += sz;
	}
    }
  else if (f->nparams > 0)
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: no parameters given, it takes"
	      " %d", f->name, f->nparams);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }

  /* GCC's OpenMP entry kernels take (tgt_vars, soft-stack base, per-warp
     stack size), with one stack per warp of the launch: the stacks must be
     live device memory, large enough.  */
  if (f->nparams == 3 && f->param_size[0] == 8 && f->param_size[1] == 8
      && f->param_size[2] == 8)
    {
      if (vals[0] != 0 && !fk_device_range ((uintptr_t) vals[0], 1))
	{
	  fk_bad (FK_cuLaunchKernel, "kernel %s: tgt_vars %#llx is not device"
		  " memory", f->name, vals[0]);
	  RETURN (CUDA_ERROR_INVALID_VALUE);
	}
      unsigned long long need = (unsigned long long) gx * by * vals[2];
      if (vals[1] == 0 || vals[2] == 0
	  || !fk_device_range ((uintptr_t) vals[1], need))
	{
	  fk_bad (FK_cuLaunchKernel, "kernel %s: soft stacks at %#llx do not"
		  " hold %u x %u warps of %llu bytes", f->name, vals[1], gx,
		  by, vals[2]);
	  RETURN (CUDA_ERROR_INVALID_VALUE);
	}
    }

  struct fk_launch *l = fake_record_new (&fk_launches);
  if (l == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  snprintf (l->name, sizeof l->name, "%s", f->name);
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
  l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
  l->shmem = shmem;
  l->stream = (uintptr_t) stream;
  l->stream_flags = fk_is_real_stream (stream) ? stream->flags : 0;
  l->nparams = f->nparams;
  memcpy (l->params, vals, sizeof vals);
  l->device = fk_current ()->device;
  if (fk_is_real_stream (stream) && fk_gate_closed)
    {
      stream->busy = true;
      stream->busy_gen = fk_gate_gen;
    }
  fk_log ("launch %s grid %u,%u,%u block %u,%u,%u shmem %u stream %p"
	  " params %#llx,%#llx,%#llx", f->name, gx, gy, gz, bx, by, bz, shmem,
	  (void *) stream, vals[0], vals[1], vals[2]);
  fk_rev_attach (f, stream);
  const struct fake_fail *fault = fake_count_call (&fk_fs, FK_kernel_fault,
						   NULL);
  if (fault != NULL && fk_is_real_stream (stream))
    {
      stream->fault = (fault->err >= 0 ? fault->err
		       : fk_default_error (FK_kernel_fault));
      fk_log ("fail kernel_fault %s -> %d", f->name, stream->fault);
    }
  RETURN (CUDA_SUCCESS);
}

/* The driver's advice on a launch of FN: the largest block it can have
   (at most BLOCK_LIMIT threads when that is not 0), in whole warps, and
   the fewest blocks that fill the device with such blocks (2048 threads
   and 32 blocks per multiprocessor).  */
CUresult
cuOccupancyMaxPotentialBlockSize (int *min_grid, int *block_size,
				  CUfunction fn, CUoccupancyB2DSize b2d,
				  size_t shmem, int block_limit)
{
  ENTER (cuOccupancyMaxPotentialBlockSize);
  NEED_CTX (cuOccupancyMaxPotentialBlockSize);
  struct fk_func *f = fk_func_arg (FK_cuOccupancyMaxPotentialBlockSize, fn);
  if (f == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (min_grid == NULL || block_size == NULL || block_limit < 0
      || shmem > 49152)
    {
      fk_bad (FK_cuOccupancyMaxPotentialBlockSize, "bad arguments");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  int block = fk_func_max_threads (f);
  if (block_limit > 0 && block > block_limit)
    block = block_limit;
  if (block >= 32)
    block &= ~31;
  if (b2d != NULL && b2d (block) > 49152)
    {
      fk_bad (FK_cuOccupancyMaxPotentialBlockSize, "too much shared memory");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  int per_sm = 2048 / block;
  if (per_sm > 32)
    per_sm = 32;
  *block_size = block;
  *min_grid = per_sm * fk_sms;
  fk_log ("occupancy %s limit %d: grid %d block %d", f->name, block_limit,
	  *min_grid, *block_size);
  RETURN (CUDA_SUCCESS);
}
