/* Kernel launches of the CUDA backend.

   GCC's nvptx code for an OpenMP target region is an entry kernel taking
   three 64-bit parameters: the device address of the region's argument
   block, the base of the soft stacks, and the bytes of stack per warp.
   Each team is one CUDA block of 32 lanes times a number of warps (the
   region's threads); the device runtime finds its stack from its block
   and warp index.  The geometry below follows what GCC 12's device
   runtime expects.  Each OpenMP thread of a team is one warp (its lanes
   run the thread's simd lanes): the runtime takes the team's number of
   threads, and omp_get_thread_limit, from the block's y extent.  So a
   team has 8 warps unless the region's thread_limit gives the number of
   threads, never more than the kernel or 32 warps allow, and there are
   as many teams as fit on the device at once unless num_teams asks for
   fewer.

   Soft stacks (CUDA_STACK_PER_WARP per warp, one block for the launch)
   are kept per device for reuse, since a cuMemAlloc per launch would be
   slow; a launch takes a free block that is large enough, or allocates
   one, and gives it back when the kernel has finished.

   Each launch goes to a stream of the device's pool; cuda_finish waits
   for it (for a target nowait region, on the core's completion thread)
   and gives back its stream and stacks.  A kernel whose device code may
   ask for reverse-offload regions is waited for by polling, serving its
   requests meanwhile (cuda-revoff.c).

   GCC 15+'s device code may have constructors and destructors of its
   own (C++ globals): kernels that the loader runs once, on one thread,
   after loading the module and before unloading it (cuda_run_cdtors).  */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"

/* Geometry.  */

static void
cuda_bounds (const struct cuda_device *dev, const struct cuda_kernel *k,
	     const struct ok_launch *launch, unsigned grid[3],
	     unsigned block[3])
{
  int max_warps = k->max_threads_per_block / 32;
  /* GCC's nvptx runtime handles at most 32 warps per team.  */
  if (max_warps > 32)
    max_warps = 32;
  if (max_warps < 1)
    max_warps = 1;
  /* thread_limit counts OpenMP threads, and a thread is a warp.  */
  int warps = launch->thread_limit > 0 ? launch->thread_limit : 8;
  if (warps > max_warps)
    warps = max_warps;

  /* How many such teams the device holds at once, by registers.  */
  long regs = k->regs_per_thread > 0 ? k->regs_per_thread : 1;
  long per_team = regs * 32 * warps;
  long max_teams = (long) dev->regs_per_sm / per_team * dev->num_sms;
  if (max_teams < 1)
    max_teams = 1;
  /* The grid's x extent is at most 2^31 - 1.  */
  if (max_teams > INT32_MAX)
    max_teams = INT32_MAX;
  long teams = launch->num_teams;
  if (teams <= 0 || teams > max_teams)
    teams = max_teams;

  grid[0] = (unsigned) teams;
  grid[1] = grid[2] = 1;
  block[0] = 32;
  block[1] = (unsigned) warps;
  block[2] = 1;
}

void
cuda_kernel_default_bounds (const struct cuda_device *dev,
			    struct cuda_kernel *k)
{
  struct ok_launch none = { 0 };
  unsigned grid[3], block[3];
  cuda_bounds (dev, k, &none, grid, block);
  k->default_teams = grid[0];
  k->default_warps = block[1];
}

/* Soft stacks, kept for reuse (scratch.h).  */

static void *
cuda_stack_alloc (struct ok_device *d, size_t size, const char *kernel)
{
  char what[160];
  snprintf (what, sizeof what, "soft stacks for kernel '%.120s'", kernel);
  return cuda_mem_alloc (cuda_dev (d), size, what);
}

static bool
cuda_stack_free (struct ok_device *d, void *ptr)
{
  return ok_dev_teardown_ok (d, ok_cuda.cuMemFree ((CUdeviceptr) (uintptr_t)
						   ptr),
			     "free soft stacks", "cuMemFree");
}

void
cuda_stacks_init (struct cuda_device *dev)
{
  ok_scratch_init (&dev->stacks, cuda_stack_alloc, cuda_stack_free);
}

/* Launches.  */

void
cuda_kernel_error (struct cuda_device *dev, const struct cuda_kernel *k,
		   const char *call, CUresult r)
{
  char err[OK_CUDA_ERRLEN];
  /* A trap in the kernel (abort, a failed assert, Fortran STOP) ends it
     with this result and no other sign of why; GCC's plugin says so too.  */
  const char *hint = (r == CUDA_ERROR_LAUNCH_FAILED
		      ? " (perhaps abort was called)" : "");
  char detail[OK_CUDA_ERRLEN + 256];
  snprintf (detail, sizeof detail, "kernel '%.120s' on device %d failed:"
	    " %s: %s", k->name, dev->base.ord, call,
	    ok_cuda_result (r, err, sizeof err));
  /* GCC's CUDA_CALL words first ("cuStreamSynchronize error: unspecified
     launch failure"), with the driver's text as GCC's cuda_error gives
     it.  */
  const char *name = NULL, *text = NULL;
  cuda_describe_result (r, &name, &text);
  ok_gcc_words_error (detail, "%s error: %s%s", call,
		      text != NULL ? text : "unknown cuda error", hint);
}

/* Give back what JOB's launch held.  */
static void
cuda_job_release (struct cuda_device *dev, struct cuda_job *job)
{
  cuda_stream_give (dev, job->stream);
  ok_scratch_give (&dev->base, &dev->stacks, job->stack);
}

bool
cuda_launch (struct ok_device *d, void *fn, void *tgt_vars,
	     const struct ok_launch *launch, struct ok_job *j)
{
  struct cuda_device *dev = cuda_dev (d);
  struct cuda_job *job = (struct cuda_job *) j;
  const struct cuda_kernel *k = fn;
  bool known;
  if (!cuda_enter_launch (dev, &known))
    return false;

  job->kernel = k;
  j->kernel = k->name;
  if (launch->num_teams <= 0 && launch->thread_limit <= 0
      && k->default_teams > 0)
    {
      j->grid[0] = k->default_teams;
      j->grid[1] = j->grid[2] = 1;
      j->block[0] = 32;
      j->block[1] = k->default_warps;
      j->block[2] = 1;
    }
  else
    cuda_bounds (dev, k, launch, j->grid, j->block);
  size_t stack_bytes = (size_t) j->grid[0] * j->block[1]
		       * CUDA_STACK_PER_WARP;
  job->stack = ok_scratch_take (d, &dev->stacks, stack_bytes, k->name);
  if (job->stack == NULL)
    return false;
  if (!cuda_stream_take (dev, &job->stream))
    {
      ok_scratch_give (d, &dev->stacks, job->stack);
      return false;
    }

  uint64_t arg_vars = (uint64_t) (uintptr_t) tgt_vars;
  uint64_t arg_stacks = (uint64_t) (uintptr_t) job->stack->ptr;
  uint64_t arg_stack_size = CUDA_STACK_PER_WARP;
  void *params[] = { &arg_vars, &arg_stacks, &arg_stack_size };

  OK_DEBUG ("%s: start kernel '%s': grid (%u, 1, 1), block (32, %u, 1),"
	    " %d registers per thread, %zu bytes of stacks at %#llx",
	    d->label, k->name, j->grid[0], j->block[1], k->regs_per_thread,
	    stack_bytes, (unsigned long long) (uintptr_t) job->stack->ptr);
  bool reported;
  CUresult r = cuda_launch_kernel (dev, known, k->fn, j->grid, j->block,
				   job->stream, params, &reported);
  if (r != CUDA_SUCCESS)
    {
      if (!reported)
	cuda_kernel_error (dev, k, "cuLaunchKernel", r);
      cuda_job_release (dev, job);
      return false;
    }
  return true;
}

bool
cuda_finish (struct ok_device *d, struct ok_job *j)
{
  struct cuda_device *dev = cuda_dev (d);
  struct cuda_job *job = (struct cuda_job *) j;
  /* A synchronous launch finishes on the thread that entered the context
     to launch it; the completion thread enters it at its first job.  */
  if (ok_completion_thread_p () && !cuda_enter (dev))
    {
      /* The driver cannot be used any more: neither can the device.  */
      ok_dev_mark_broken (d);
      cuda_job_release (dev, job);
      return false;
    }
  struct cuda_image *img = job->kernel->image;
  CUresult r;
  const char *call = "cuStreamSynchronize";
  if (img->rev == NULL)
    r = ok_cuda.cuStreamSynchronize (job->stream);
  else if (cuda_rev_wait (dev, img, job->stream, &r))
    call = "cuStreamQuery";
  else
    {
      /* Reported; the kernel waits for ever for its request.  */
      ok_dev_mark_broken (d);
      cuda_job_release (dev, job);
      return false;
    }
  if (r != CUDA_SUCCESS)
    {
      /* A kernel that faults takes the context down with it.  */
      ok_dev_mark_broken (d);
      cuda_kernel_error (dev, job->kernel, call, r);
    }
  cuda_job_release (dev, job);
  return r == CUDA_SUCCESS;
}

/* Constructors and destructors.  */

/* Look up kernel NAME of MODULE, else NAME "__mgomp" (device code built
   with -mgomp, which takes its soft stack as its parameter): *FN, or
   NULL when neither is there, and in *MGOMP which.  False after an
   error (reported as teardown when TEARDOWN).  */
static bool
cuda_cdtor_find (struct cuda_device *dev, CUmodule module, const char *name,
		 bool teardown, CUfunction *fn, bool *mgomp)
{
  char mname[64];
  snprintf (mname, sizeof mname, "%s__mgomp", name);
  *mgomp = false;
  CUresult r = ok_cuda.cuModuleGetFunction (fn, module, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    {
      *mgomp = true;
      r = ok_cuda.cuModuleGetFunction (fn, module, mname);
    }
  if (r == CUDA_ERROR_NOT_FOUND)
    *fn = NULL;
  else if (r != CUDA_SUCCESS)
    {
      char what[128];
      snprintf (what, sizeof what, "cannot %s: kernel '%s'",
		teardown ? "run the image's destructors"
		: "run the image's constructors", *mgomp ? mname : name);
      if (teardown)
	return ok_dev_teardown_ok (&dev->base, r, what, "cuModuleGetFunction");
      ok_dev_call_error (&dev->base, what, "cuModuleGetFunction", r);
      return false;
    }
  return true;
}

bool
cuda_run_cdtors (struct cuda_device *dev, CUmodule module, bool ctors)
{
  const char *name = (ctors ? "__do_global_ctors__entry"
		      : "__do_global_dtors__entry");
  CUfunction fn;
  bool mgomp;
  if (!cuda_cdtor_find (dev, module, name, !ctors, &fn, &mgomp))
    return false;
  if (fn == NULL)
    return true;
  struct cuda_kernel k = { .name = (char *) name, .fn = fn };
  /* As GCC 15's plugin: one thread, the -mgomp variant with one soft
     stack, whose top is its parameter.  */
  struct ok_scratch_block *stack = NULL;
  uint64_t top = 0;
  void *params[] = { &top };
  if (mgomp)
    {
      stack = ok_scratch_take (&dev->base, &dev->stacks, CUDA_STACK_PER_WARP,
			       name);
      if (stack == NULL)
	return false;
      top = (uint64_t) (uintptr_t) stack->ptr + CUDA_STACK_PER_WARP;
    }
  CUstream stream;
  if (!cuda_stream_take (dev, &stream))
    {
      if (stack != NULL)
	ok_scratch_give (&dev->base, &dev->stacks, stack);
      return false;
    }
  OK_DEBUG ("%s: run %s%s", dev->base.label, name, mgomp ? "__mgomp" : "");
  const char *call = "cuLaunchKernel";
  CUresult r = ok_cuda.cuLaunchKernel (fn, 1, 1, 1, 1, 1, 1, 0, stream,
				       mgomp ? params : NULL, NULL);
  if (r == CUDA_SUCCESS)
    {
      call = "cuStreamSynchronize";
      r = ok_cuda.cuStreamSynchronize (stream);
      /* A kernel that faults takes the context down with it.  */
      if (r != CUDA_SUCCESS)
	ok_dev_mark_broken (&dev->base);
    }
  /* At unload, the driver may have shut down first (at exit).  */
  bool quiet = r != CUDA_SUCCESS && !ctors && cuda_teardown_quiet (r);
  if (r != CUDA_SUCCESS && !quiet)
    cuda_kernel_error (dev, &k, call, r);
  cuda_stream_give (dev, stream);
  if (stack != NULL)
    ok_scratch_give (&dev->base, &dev->stacks, stack);
  return r == CUDA_SUCCESS || quiet;
}
