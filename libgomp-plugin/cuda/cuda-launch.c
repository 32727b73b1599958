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

   Each launch goes to a stream of the device's pool.  run waits for it;
   async_run hands it to the device's completion thread, which waits for
   launches in order and tells libgomp through
   GOMP_PLUGIN_target_task_completion.  */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"
#include "trace.h"

/* Free stack blocks kept per device; more are freed, smallest first.  */
#define CUDA_STACK_CACHE 4

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

/* Soft stacks.  */

static struct cuda_stack *
cuda_stack_take (struct cuda_device *dev, const struct cuda_kernel *k,
		 size_t size)
{
  pthread_mutex_lock (&dev->stack_lock);
  struct cuda_stack **best = NULL;
  for (struct cuda_stack **p = &dev->free_stacks; *p != NULL;
       p = &(*p)->next)
    if ((*p)->size >= size && (best == NULL || (*p)->size < (*best)->size))
      best = p;
  struct cuda_stack *s = NULL;
  if (best != NULL)
    {
      s = *best;
      *best = s->next;
    }
  pthread_mutex_unlock (&dev->stack_lock);
  if (s != NULL)
    return s;

  s = malloc (sizeof *s);
  if (s == NULL)
    {
      cuda_dev_error (dev, "out of memory");
      return NULL;
    }
  s->size = size;
  s->next = NULL;
  CUresult r = ok_cuda.cuMemAlloc (&s->ptr, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    {
      /* The cached blocks are all too small; make room and try again.  */
      OK_DEBUG ("%s: out of memory for %zu bytes of stacks; freeing cached"
		" stacks", dev->label, size);
      if (cuda_stacks_free (dev))
	r = ok_cuda.cuMemAlloc (&s->ptr, size);
    }
  if (r != CUDA_SUCCESS)
    {
      char what[256];
      snprintf (what, sizeof what, "cannot allocate %zu bytes of soft stacks"
		" for kernel '%s'", size, k->name);
      cuda_call_error (dev, what, "cuMemAlloc", r);
      free (s);
      return NULL;
    }
  return s;
}

static void
cuda_stack_give (struct cuda_device *dev, struct cuda_stack *s)
{
  pthread_mutex_lock (&dev->stack_lock);
  s->next = dev->free_stacks;
  dev->free_stacks = s;
  /* Keep a few, dropping the smallest: the largest serve any launch.  */
  size_t n = 0;
  struct cuda_stack **smallest = NULL;
  for (struct cuda_stack **p = &dev->free_stacks; *p != NULL;
       p = &(*p)->next, n++)
    if (smallest == NULL || (*p)->size < (*smallest)->size)
      smallest = p;
  struct cuda_stack *drop = NULL;
  if (n > CUDA_STACK_CACHE)
    {
      drop = *smallest;
      *smallest = drop->next;
    }
  pthread_mutex_unlock (&dev->stack_lock);
  if (drop != NULL)
    {
      cuda_teardown_ok (dev, ok_cuda.cuMemFree (drop->ptr),
			"free soft stacks", "cuMemFree");
      free (drop);
    }
}

bool
cuda_stacks_free (struct cuda_device *dev)
{
  pthread_mutex_lock (&dev->stack_lock);
  struct cuda_stack *list = dev->free_stacks;
  dev->free_stacks = NULL;
  pthread_mutex_unlock (&dev->stack_lock);
  bool ok = true;
  while (list != NULL)
    {
      struct cuda_stack *next = list->next;
      ok &= cuda_teardown_ok (dev, ok_cuda.cuMemFree (list->ptr),
			      "free soft stacks", "cuMemFree");
      free (list);
      list = next;
    }
  return ok;
}

/* Launches.  */

/* Report that kernel K on DEV failed with R in CALL.  */
static void
cuda_kernel_error (struct cuda_device *dev, const struct cuda_kernel *k,
		   const char *call, CUresult r)
{
  char err[OK_CUDA_ERRLEN];
  /* A trap in the kernel (abort, a failed assert, Fortran STOP) ends it
     with this result and no other sign of why; GCC's plugin says so too.  */
  const char *hint = (r == CUDA_ERROR_LAUNCH_FAILED
		      ? " (perhaps abort was called)" : "");
  GOMP_PLUGIN_error ("offloadkit-%s: kernel '%s' on device %d failed: %s:"
		     " %s%s", ok_plugin.name, k->name, dev->ord, call,
		     ok_cuda_result (r, err, sizeof err), hint);
}

/* Give back what JOB's launch held.  */
static void
cuda_job_release (struct cuda_device *dev, struct cuda_job *job)
{
  cuda_stream_give (dev, job->stream);
  cuda_stack_give (dev, job->stack);
}

/* Launch kernel FN with TGT_VARS as LAUNCH says, filling JOB.  */
static bool
cuda_start (struct cuda_device *dev, void *fn, void *tgt_vars,
	    const struct ok_launch *launch, bool async, struct cuda_job *job)
{
  const struct cuda_kernel *k = fn;
  if (k == NULL)
    {
      cuda_dev_error (dev, "no kernel to run");
      return false;
    }
  if (!cuda_enter (dev))
    return false;

  job->kernel = k;
  cuda_bounds (dev, k, launch, job->grid, job->block);
  size_t stack_bytes = (size_t) job->grid[0] * job->block[1]
		       * CUDA_STACK_PER_WARP;
  job->stack = cuda_stack_take (dev, k, stack_bytes);
  if (job->stack == NULL)
    return false;
  if (!cuda_stream_take (dev, &job->stream))
    {
      cuda_stack_give (dev, job->stack);
      return false;
    }

  uint64_t arg_vars = (uint64_t) (uintptr_t) tgt_vars;
  uint64_t arg_stacks = (uint64_t) job->stack->ptr;
  uint64_t arg_stack_size = CUDA_STACK_PER_WARP;
  void *params[] = { &arg_vars, &arg_stacks, &arg_stack_size };

  OK_DEBUG ("%s: %s kernel '%s': grid (%u, 1, 1), block (32, %u, 1),"
	    " %d registers per thread, %zu bytes of stacks at %#llx",
	    dev->label, async ? "start" : "run", k->name, job->grid[0],
	    job->block[1], k->regs_per_thread, stack_bytes,
	    (unsigned long long) job->stack->ptr);
  job->start = ok_trace_on () ? ok_trace_now () : 0;
  CUresult r = ok_cuda.cuLaunchKernel (k->fn, job->grid[0], job->grid[1],
				       job->grid[2], job->block[0],
				       job->block[1], job->block[2], 0,
				       job->stream, params, NULL);
  if (r != CUDA_SUCCESS)
    {
      cuda_kernel_error (dev, k, "cuLaunchKernel", r);
      cuda_job_release (dev, job);
      return false;
    }
  return true;
}

bool
cuda_run (void *d, void *fn, void *tgt_vars, const struct ok_launch *launch)
{
  struct cuda_device *dev = d;
  struct cuda_job job;
  if (!cuda_start (dev, fn, tgt_vars, launch, false, &job))
    return false;
  CUresult r = ok_cuda.cuStreamSynchronize (job.stream);
  if (r != CUDA_SUCCESS)
    {
      /* A kernel that faults takes the context down with it.  */
      cuda_kernel_error (dev, job.kernel, "cuStreamSynchronize", r);
      cuda_mark_broken (dev);
    }
  if (ok_trace_on ())
    ok_trace_launch (dev->ord, "cuda", job.kernel->name, job.grid, job.block,
		     false, job.start, ok_trace_now ());
  cuda_job_release (dev, &job);
  return r == CUDA_SUCCESS;
}

/* The completion thread's first step: the context current.  */
static void
cuda_completion_enter (void *d)
{
  struct cuda_device *dev = d;
  CUresult r = ok_cuda.cuCtxSetCurrent (dev->ctx);
  if (r != CUDA_SUCCESS)
    {
      cuda_call_error (dev, "cannot make its context current in the"
		       " completion thread", "cuCtxSetCurrent", r);
      GOMP_PLUGIN_fatal ("offloadkit-%s: asynchronous target regions on %s"
			 " cannot complete", ok_plugin.name, dev->label);
    }
}

/* The completion thread waits for asynchronous launches in the order they
   were started.  */
static void
cuda_completion_finish (void *d, struct ok_completion_job *link)
{
  struct cuda_device *dev = d;
  struct cuda_job *job = (struct cuda_job *) link;
  CUresult r = ok_cuda.cuStreamSynchronize (job->stream);
  if (r != CUDA_SUCCESS)
    {
      /* Nobody can be told but libgomp, which can only stop.  */
      cuda_mark_broken (dev);
      cuda_kernel_error (dev, job->kernel, "cuStreamSynchronize", r);
      GOMP_PLUGIN_fatal ("offloadkit-%s: asynchronous target region on %s"
			 " cannot complete", ok_plugin.name, dev->label);
    }
  if (ok_trace_on ())
    ok_trace_launch (dev->ord, "cuda", job->kernel->name, job->grid,
		     job->block, true, job->start, ok_trace_now ());
  cuda_job_release (dev, job);
  free (job);
}

void
cuda_async_init (struct cuda_device *dev)
{
  ok_completion_init (&dev->async, dev, cuda_completion_enter,
		      cuda_completion_finish);
}

bool
cuda_async_run (void *d, void *fn, void *tgt_vars,
		const struct ok_launch *launch, void *async_data)
{
  struct cuda_device *dev = d;

  /* Start the completion thread first: once the kernel is launched there
     is no going back.  */
  int err = ok_completion_start (&dev->async);
  if (err != 0)
    {
      cuda_dev_error (dev, "cannot start the completion thread: %s",
		      strerror (err));
      return false;
    }

  struct cuda_job *job = calloc (1, sizeof *job);
  if (job == NULL)
    {
      cuda_dev_error (dev, "out of memory");
      return false;
    }
  if (!cuda_start (dev, fn, tgt_vars, launch, true, job))
    {
      free (job);
      return false;
    }
  job->link.async_data = async_data;
  ok_completion_push (&dev->async, &job->link);
  return true;
}
