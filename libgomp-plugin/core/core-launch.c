/* Launches: libgomp's run and async_run, for every backend.

   The backend starts a kernel (launch) and waits for it (finish); the
   core does the rest.  A synchronous launch is finished on the calling
   thread.  An asynchronous one (target nowait) goes to the device's
   completion thread (completion.h), which finishes launches in the order
   they were started and tells libgomp.  Launches are timed for the trace
   here, from the request to the end of finish.

   A launch that fails asynchronously cannot be reported to libgomp, which
   has no way to hear it; the program ends, as GCC's plugins end it.  But
   not through exit: the completion thread may be what another thread,
   inside exit already, waits for while it holds a lock that exit's
   handlers need (libgomp's exit handler holds each device's lock while it
   finalises the device, which waits for the completion thread; the
   program's destructors unregister its images under the same locks).
   ok_end_program ends the process at once instead.  */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core-internal.h"
#include "host-queue.h"
#include "trace.h"

/* The device whose region this thread runs as host code, or NULL.
   Read at every launch: initial-exec, a few bytes of the static TLS
   glibc keeps for libraries loaded later.  */
static __thread struct ok_device *core_region
  __attribute__ ((tls_model ("initial-exec")));

void
ok_region_enter (struct ok_device *dev)
{
  core_region = dev;
}

void
ok_region_leave (void)
{
  core_region = NULL;
}

struct ok_device *
ok_region_device (void)
{
  return core_region;
}

_Noreturn void
ok_end_program (int status)
{
  fflush (NULL);
  ok_trace_finish ();
  _exit (status);
}

_Noreturn void
ok_device_exit (int status)
{
  /* On an OpenACC queue's thread too: libgomp's exit handler destroys
     the queues, which waits for this thread.  */
  if (ok_completion_thread_p () || ok_hostq_self () != NULL)
    ok_end_program (status);
  exit (status);
}

/* Decode libgomp's target-argument vector ARGS (may be NULL) into
   LAUNCH.  As in GCC 12's nvptx and gcn plugins, only entries for all
   devices count: the ids of a device-specific entry are that device's
   own (for GCN, id 1 is GOMP_TARGET_ARG_HSA_KERNEL_ATTRIBUTES, whose
   value is a pointer, not NUM_TEAMS).  */
static void
core_decode_launch_args (void **args, struct ok_launch *launch)
{
  launch->num_teams = 0;
  launch->thread_limit = 0;
  launch->openacc = false;
  if (args == NULL)
    return;
  while (*args != NULL)
    {
      intptr_t word = (intptr_t) *args++;
      intptr_t value;
      /* The value word may be anything, 0 included: only an id word of 0
	 ends the vector.  */
      if (word & OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM)
	value = (intptr_t) *args++;
      else
	value = word >> OK_GOMP_TARGET_ARG_VALUE_SHIFT;

      if ((word & OK_GOMP_TARGET_ARG_DEVICE_MASK)
	  != OK_GOMP_TARGET_ARG_DEVICE_ALL)
	continue;
      int clamped = (value > INT32_MAX ? INT32_MAX
		     : value < 0 ? 0 : (int) value);
      switch (word & OK_GOMP_TARGET_ARG_ID_MASK)
	{
	case OK_GOMP_TARGET_ARG_NUM_TEAMS:
	  launch->num_teams = clamped;
	  break;
	case OK_GOMP_TARGET_ARG_THREAD_LIMIT:
	  launch->thread_limit = clamped;
	  break;
	default:
	  /* No other id is defined for all devices.  */
	  break;
	}
    }
}

/* Whether FN may be launched on DEV from the calling thread.  A region
   running as host code cannot launch one on a device of its own kind:
   the worker that would run it, or the lock that serialises such
   regions, waits for this one.  */
static bool
core_check_launch (struct ok_device *dev, void *fn)
{
  if (fn == NULL)
    {
      ok_dev_error (dev, "no kernel to run");
      return false;
    }
  if (core_region == NULL || core_region->backend != dev->backend)
    return true;
  ok_dev_error (dev, "cannot launch a target region from inside a target"
		" region (running on %s)", core_region->label);
  return false;
}

/* Report JOB's launch on DEV, which ended now, to the trace.  */
static void
core_trace_launch (struct ok_device *dev, const struct ok_job *job,
		   bool async)
{
  ok_trace_launch (dev->ord, dev->backend->name,
		   job->kernel != NULL ? job->kernel : "(unnamed)",
		   job->grid, job->block, async, job->start, ok_trace_now ());
}

bool
ok_device_run (struct ok_device *dev, void *fn, void *tgt_vars,
	       const struct ok_launch *launch)
{
  if (!core_check_launch (dev, fn))
    return false;
  /* On the stack: a synchronous launch is over when this returns.  */
  union
  {
    struct ok_job job;
    max_align_t align;
    unsigned char bytes[OK_JOB_MAX];
  } u;
  memset (&u, 0, dev->backend->job_size);
  struct ok_job *job = &u.job;
  job->start = ok_trace_on () ? ok_trace_now () : 0;
  unsigned long before = (dev->backend->in_order
			  ? ok_completion_queued (&dev->async) : 0);
  if (!dev->backend->launch (dev, fn, tgt_vars, launch, job))
    return false;
  bool ok = dev->backend->finish (dev, job);
  if (ok && ok_trace_on ())
    core_trace_launch (dev, job, false);
  /* The asynchronous launches before this one have finished before it;
     on such a device libgomp hears of them first too.  */
  if (before > 0)
    ok_completion_wait (&dev->async, before);
  return ok;
}

void
core_complete (void *d, struct ok_completion_job *link)
{
  struct ok_device *dev = d;
  struct ok_job *job = (struct ok_job *) link;
  if (!dev->backend->finish (dev, job))
    {
      /* Only libgomp could be told, and it can only stop; see the top of
	 the file for why not through exit.  */
      ok_error ("asynchronous target region on %s cannot complete",
		dev->label);
      ok_end_program (EXIT_FAILURE);
    }
  if (ok_trace_on ())
    core_trace_launch (dev, job, true);
  free (job);
}

/* Start FN on DEV and hand it to the completion thread, which calls
   GOMP_PLUGIN_target_task_completion (ASYNC_DATA) when it has finished.
   False after an error: nothing was started.  */
static bool
core_async_run (struct ok_device *dev, void *fn, void *tgt_vars,
		const struct ok_launch *launch, void *async_data)
{
  if (!core_check_launch (dev, fn))
    return false;
  if (async_data == NULL)
    {
      ok_dev_error (dev, "asynchronous launch without completion data");
      return false;
    }
  /* The thread first: once the kernel is started there is no going
     back.  */
  int err = ok_completion_start (&dev->async);
  if (err != 0)
    {
      ok_dev_error (dev, "cannot start the completion thread: %s",
		    strerror (err));
      return false;
    }
  struct ok_job *job = calloc (1, dev->backend->job_size);
  if (job == NULL)
    {
      ok_dev_error (dev, "out of memory");
      return false;
    }
  job->link.async_data = async_data;
  job->start = ok_trace_on () ? ok_trace_now () : 0;
  if (!dev->backend->launch (dev, fn, tgt_vars, launch, job))
    {
      free (job);
      return false;
    }
  ok_completion_push (&dev->async, &job->link);
  return true;
}

/* libgomp's run entry points return nothing, so a failure that the
   backend reported ends the program, as with GCC's own plugins.  */

/* The device ORD of a run entry point, with libgomp's ARGS decoded into
   *LAUNCH and said with GOMP_DEBUG (WHAT: "run", "async run"); a device
   that cannot be had ends the program.  */
static struct ok_device *
core_run_device (int ord, void *fn, void **args, const char *what,
		 struct ok_launch *launch)
{
  struct ok_device *dev = core_device (ord, "run a target region");
  if (dev == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region not run",
		       ok_plugin.name);
  core_decode_launch_args (args, launch);
  OK_DEBUG ("device %d: %s %p (num_teams %d, thread_limit %d)", ord, what,
	    fn, launch->num_teams, launch->thread_limit);
  return dev;
}

void
GOMP_OFFLOAD_run (int ord, void *fn, void *tgt_vars, void **args)
{
  struct ok_launch launch;
  struct ok_device *dev = core_run_device (ord, fn, args, "run", &launch);
  if (!ok_device_run (dev, fn, tgt_vars, &launch))
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region on device %d failed",
		       ok_plugin.name, ord);
}

void
GOMP_OFFLOAD_async_run (int ord, void *fn, void *tgt_vars, void **args,
			void *async_data)
{
  struct ok_launch launch;
  struct ok_device *dev = core_run_device (ord, fn, args, "async run",
					   &launch);
  if (!core_async_run (dev, fn, tgt_vars, &launch, async_data))
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region on device %d could not"
		       " be started", ok_plugin.name, ord);
}
