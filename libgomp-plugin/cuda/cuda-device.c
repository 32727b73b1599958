/* CUDA devices: probing, properties, the primary context, the stream pool,
   and the backend's hook table.

   Each device is used through its primary context, the one the CUDA
   runtime also uses, so that a program mixing CUDA code and target
   regions shares memory and modules with us.  libgomp calls the plugin
   from any of the program's threads; every entry point first makes the
   device's context current on the calling thread (cuda_enter).  */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"

/* The context cuda_enter last found or made current on the calling
   thread, or NULL.  Only launches trust it (cuda_enter_launch): the
   program's own CUDA code may have switched contexts on the thread since,
   and a launch then fails, its kernel and stream being another context's,
   which cuda_launch_kernel mends.  Initial-exec: read on every launch,
   a few bytes of the static TLS that glibc keeps for libraries loaded
   later (libgomp's own thread data is initial-exec too).  */
static __thread CUcontext cuda_thread_ctx
  __attribute__ ((tls_model ("initial-exec")));

/* The driver keeps the current context per thread, so asking it is a
   thread-local read; comparing first spares a switch, and asking rather
   than trusting cuda_thread_ctx stays right when the program's own CUDA
   code switches contexts on the thread.  */
bool
cuda_enter (struct cuda_device *dev)
{
  CUcontext cur = NULL;
  CUresult r = ok_cuda.cuCtxGetCurrent (&cur);
  if (r == CUDA_SUCCESS && cur == dev->ctx)
    {
      cuda_thread_ctx = cur;
      return true;
    }
  if (r == CUDA_SUCCESS)
    r = ok_cuda.cuCtxSetCurrent (dev->ctx);
  if (r != CUDA_SUCCESS)
    {
      cuda_thread_ctx = NULL;
      ok_dev_call_error (&dev->base, "cannot make its context current",
			 r == CUDA_SUCCESS ? "cuCtxGetCurrent"
			 : "cuCtxSetCurrent", r);
      return false;
    }
  cuda_thread_ctx = dev->ctx;
  return true;
}

bool
cuda_enter_launch (struct cuda_device *dev, bool *known)
{
  *known = dev->ctx != NULL && cuda_thread_ctx == dev->ctx;
  return *known || cuda_enter (dev);
}

CUresult
cuda_launch_kernel (struct cuda_device *dev, bool known, CUfunction fn,
		    const unsigned grid[3], const unsigned block[3],
		    CUstream stream, void **params, bool *reported)
{
  *reported = false;
  CUresult r = ok_cuda.cuLaunchKernel (fn, grid[0], grid[1], grid[2],
				       block[0], block[1], block[2], 0,
				       stream, params, NULL);
  if (known && (r == CUDA_ERROR_INVALID_CONTEXT
		|| r == CUDA_ERROR_INVALID_HANDLE
		|| r == CUDA_ERROR_CONTEXT_IS_DESTROYED))
    {
      /* Not the thread's context any more: make it so, and again.  */
      cuda_thread_ctx = NULL;
      if (!cuda_enter (dev))
	{
	  *reported = true;
	  return r;
	}
      r = ok_cuda.cuLaunchKernel (fn, grid[0], grid[1], grid[2], block[0],
				  block[1], block[2], 0, stream, params, NULL);
    }
  return r;
}

/* Streams.  Non-blocking streams, so that nothing the program or another
   library puts on the legacy default stream serialises our work.  A
   stream is taken for one launch or one copy and given back when that has
   finished, so a free stream is always idle.  */

bool
cuda_stream_take (struct cuda_device *dev, CUstream *stream)
{
  *stream = __atomic_exchange_n (&dev->spare_stream, NULL, __ATOMIC_ACQUIRE);
  if (*stream != NULL)
    {
      __atomic_add_fetch (&dev->streams_out, 1, __ATOMIC_RELAXED);
      return true;
    }
  pthread_mutex_lock (&dev->stream_lock);
  if (dev->num_free_streams > 0)
    {
      *stream = dev->free_streams[--dev->num_free_streams];
      __atomic_add_fetch (&dev->streams_out, 1, __ATOMIC_RELAXED);
      pthread_mutex_unlock (&dev->stream_lock);
      return true;
    }
  pthread_mutex_unlock (&dev->stream_lock);

  CUresult r = ok_cuda.cuStreamCreate (stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot create a stream",
			 "cuStreamCreate", r);
      return false;
    }
  __atomic_add_fetch (&dev->streams_out, 1, __ATOMIC_RELAXED);
  return true;
}

void
cuda_stream_give (struct cuda_device *dev, CUstream stream)
{
  __atomic_sub_fetch (&dev->streams_out, 1, __ATOMIC_RELAXED);
  CUstream empty = NULL;
  if (__atomic_compare_exchange_n (&dev->spare_stream, &empty, stream, false,
				   __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    return;
  pthread_mutex_lock (&dev->stream_lock);
  if (dev->num_free_streams == dev->max_free_streams)
    {
      size_t n = dev->max_free_streams ? 2 * dev->max_free_streams : 8;
      CUstream *s = realloc (dev->free_streams, n * sizeof *s);
      if (s == NULL)
	{
	  /* Keep going without it rather than fail the caller.  */
	  pthread_mutex_unlock (&dev->stream_lock);
	  ok_cuda.cuStreamDestroy (stream);
	  return;
	}
      dev->free_streams = s;
      dev->max_free_streams = n;
    }
  dev->free_streams[dev->num_free_streams++] = stream;
  pthread_mutex_unlock (&dev->stream_lock);
}

/* Destroy the free streams (fini_device).  */
static bool
cuda_streams_fini (struct cuda_device *dev)
{
  bool ok = true;
  CUstream spare = __atomic_exchange_n (&dev->spare_stream, NULL,
					__ATOMIC_ACQUIRE);
  if (spare != NULL)
    ok &= ok_dev_teardown_ok (&dev->base, ok_cuda.cuStreamDestroy (spare),
			      "destroy a stream", "cuStreamDestroy");
  for (size_t i = 0; i < dev->num_free_streams; i++)
    ok &= ok_dev_teardown_ok (&dev->base,
			      ok_cuda.cuStreamDestroy (dev->free_streams[i]),
			      "destroy a stream", "cuStreamDestroy");
  if (dev->streams_out != 0)
    OK_DEBUG ("%s: %zu streams still in use at finalisation",
	      dev->base.label, dev->streams_out);
  free (dev->free_streams);
  dev->free_streams = NULL;
  dev->num_free_streams = dev->max_free_streams = 0;
  return ok;
}

/* Devices.  */

static int
cuda_probe (void)
{
  return ok_cuda_load ();
}

/* Unified shared memory and self maps need every device to reach the
   host's pageable memory (HMM with NVIDIA's open kernel modules, or ATS
   on Grace Hopper), as GCC 16's plugin-nvptx.c asks in
   GOMP_OFFLOAD_get_num_devices: else no device is counted, and the
   program runs on the host (or stops, with OMP_TARGET_OFFLOAD=mandatory,
   with libgomp's message).  */
static unsigned
cuda_requires_unmet (unsigned features, int n)
{
  unsigned usm = features & (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			     | OK_GOMP_REQUIRES_SELF_MAPS);
  for (int d = 0; usm != 0 && d < n; d++)
    {
      CUdevice handle;
      int yes = 0;
      CUresult r = ok_cuda.cuDeviceGet (&handle, d);
      if (r == CUDA_SUCCESS)
	r = ok_cuda.cuDeviceGetAttribute
	  (&yes, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, handle);
      if (r != CUDA_SUCCESS || yes == 0)
	{
	  OK_DEBUG ("CUDA device %d cannot reach the host's pageable memory"
		    " (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS%s): no"
		    " unified shared memory", d,
		    r != CUDA_SUCCESS ? " unknown" : " is 0");
	  return usm;
	}
    }
  return 0;
}

/* Read attribute ATTR of DEV into *VALUE; false after an error.  */
static bool
cuda_attribute (struct cuda_device *dev, int attr, const char *what,
		int *value)
{
  CUresult r = ok_cuda.cuDeviceGetAttribute (value, attr, dev->handle);
  if (r != CUDA_SUCCESS)
    {
      char msg[128];
      snprintf (msg, sizeof msg, "cannot read its %s", what);
      ok_dev_call_error (&dev->base, msg, "cuDeviceGetAttribute", r);
      return false;
    }
  return true;
}

static void
cuda_destroy_locks (struct cuda_device *dev)
{
  for (int i = 0; i < CUDA_STAGING_SLOTS; i++)
    pthread_mutex_destroy (&dev->staging[i].lock);
  pthread_mutex_destroy (&dev->stream_lock);
  pthread_mutex_destroy (&dev->deferred_lock);
}

static bool
cuda_init_device (struct ok_device *d)
{
  struct cuda_device *dev = cuda_dev (d);
  pthread_mutex_init (&dev->stream_lock, NULL);
  pthread_mutex_init (&dev->deferred_lock, NULL);
  for (int i = 0; i < CUDA_STAGING_SLOTS; i++)
    pthread_mutex_init (&dev->staging[i].lock, NULL);
  cuda_stacks_init (dev);

  CUresult r = ok_cuda.cuDeviceGet (&dev->handle, d->local);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot open the device", "cuDeviceGet", r);
      goto fail;
    }
  r = ok_cuda.cuDeviceGetName (dev->name, (int) sizeof dev->name - 1,
			       dev->handle);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read its name", "cuDeviceGetName", r);
      goto fail;
    }
  dev->name[sizeof dev->name - 1] = '\0';
  if (!cuda_attribute (dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		       "compute capability", &dev->cc_major)
      || !cuda_attribute (dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			  "compute capability", &dev->cc_minor))
    goto fail;
  dev->sm = dev->cc_major * 10 + dev->cc_minor;
  ok_device_set_label (d, "device %d (%s, sm_%d)", d->ord, dev->name,
		       dev->sm);
  if (!cuda_attribute (dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		       "multiprocessor count", &dev->num_sms)
      || !cuda_attribute (dev,
			  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
			  "registers per multiprocessor", &dev->regs_per_sm)
      || !cuda_attribute (dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
			  "maximum threads per block",
			  &dev->max_threads_per_block)
      || !cuda_attribute (dev,
			  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
			  "maximum threads per multiprocessor",
			  &dev->max_threads_per_sm)
      || !cuda_attribute (dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate",
			  &dev->clock_khz))
    goto fail;
  r = ok_cuda.cuDeviceTotalMem (&dev->total_mem, dev->handle);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read its memory size",
			 "cuDeviceTotalMem", r);
      goto fail;
    }

  r = ok_cuda.cuDevicePrimaryCtxRetain (&dev->ctx, dev->handle);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot retain its primary context",
			 "cuDevicePrimaryCtxRetain", r);
      goto fail;
    }
  if (!cuda_enter (dev))
    goto fail_release;
  if (!cuda_memory_init (dev))
    goto fail_release;

  OK_DEBUG ("%s: CUDA device %d, compute capability %d.%d, %d SMs,"
	    " %d registers per SM, %d threads per block at most, %d kHz,"
	    " %zu MiB", d->label, d->local, dev->cc_major, dev->cc_minor,
	    dev->num_sms, dev->regs_per_sm, dev->max_threads_per_block,
	    dev->clock_khz, dev->total_mem >> 20);
  return true;

 fail_release:
  ok_cuda.cuDevicePrimaryCtxRelease (dev->handle);
 fail:
  ok_scratch_fini (d, &dev->stacks);
  cuda_destroy_locks (dev);
  return false;
}

/* Finalisation runs with DEV's context pushed, and restores the thread's
   own after (cuda_fini_device): the primary context is released.  */
static bool
cuda_fini_enter (struct ok_device *d)
{
  struct cuda_device *dev = cuda_dev (d);
  CUresult r = ok_cuda.cuCtxPushCurrent (dev->ctx);
  dev->pushed = r == CUDA_SUCCESS;
  if (r == CUDA_ERROR_DEINITIALIZED)
    return false;
  ok_dev_teardown_ok (d, r, "make its context current", "cuCtxPushCurrent");
  return true;
}

static bool
cuda_fini_device (struct ok_device *d)
{
  struct cuda_device *dev = cuda_dev (d);
  bool ok = cuda_deferred_frees (dev);
  ok &= cuda_memory_fini (dev);
  ok &= ok_scratch_fini (d, &dev->stacks);
  ok &= cuda_streams_fini (dev);
  if (dev->pushed)
    {
      CUcontext popped;
      ok_cuda.cuCtxPopCurrent (&popped);
    }
  ok &= ok_dev_teardown_ok (d, ok_cuda.cuDevicePrimaryCtxRelease (dev->handle),
			    "release its primary context",
			    "cuDevicePrimaryCtxRelease");
  cuda_destroy_locks (dev);
  return ok;
}

static const struct ok_managed_ops cuda_managed_ops = {
  .alloc = cuda_managed_alloc,
  .free = cuda_managed_free,
};

static const struct ok_interop_ops cuda_interop_ops = {
  .frs = cuda_interop_frs,
  .init = cuda_interop_init,
  .sync = cuda_interop_sync,
  .vendor = 11,			/* OpenMP's additional definitions.  */
  .vendor_name = "nvidia",
  .property = cuda_interop_property,
};

static const struct ok_acc_ops cuda_acc_ops = {
  .queue_size = sizeof (struct cuda_acc_queue),
  .queue_init = cuda_acc_queue_init,
  .queue_fini = cuda_acc_queue_fini,
  .queue_test = cuda_acc_queue_test,
  .queue_wait = cuda_acc_queue_wait,
  .queue_join = cuda_acc_queue_join,
  .queue_callback = cuda_acc_queue_callback,
  .queue_copy = cuda_acc_queue_copy,
  .exec = cuda_acc_exec,
  .memory = cuda_acc_memory,
  .names = cuda_acc_names,
};

static const struct ok_acc_cuda_ops cuda_acc_cuda_ops = {
  .device = cuda_acc_device,
  .context = cuda_acc_context,
  .stream = cuda_acc_stream,
  .set_stream = cuda_acc_set_stream,
};

const struct ok_backend ok_backend_cuda = {
  .name = "cuda",
  .device_size = sizeof (struct cuda_device),
  .job_size = sizeof (struct cuda_job),
  /* Device addresses are unified (64-bit CUDA), as GCC's plugin says;
     unified shared memory and self maps where the devices reach pageable
     memory (cuda_requires_unmet); reverse offload: cuda-revoff.c, over
     the table GCC's mkoffload and ours write.  */
  .requires_supported = (OK_GOMP_REQUIRES_UNIFIED_ADDRESS
			 | OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			 | OK_GOMP_REQUIRES_SELF_MAPS
			 | OK_GOMP_REQUIRES_REVERSE_OFFLOAD),
  .requires_unmet = cuda_requires_unmet,
  .probe = cuda_probe,
  .init_device = cuda_init_device,
  .fini_enter = cuda_fini_enter,
  .fini_device = cuda_fini_device,
  .image = &cuda_image_ops,
  .raw_alloc = cuda_raw_alloc,
  .raw_free = cuda_raw_free,
  .pool_env = "OFFLOADKIT_CUDA_POOL_MAX",
  .host2dev = cuda_host2dev,
  .dev2host = cuda_dev2host,
  .dev2dev = cuda_dev2dev,
  .memset = cuda_memset,
  .copy_rect = cuda_copy_rect,
  .get_uid = cuda_get_uid,
  .is_accessible = cuda_is_accessible,
  .page_locked_alloc = cuda_page_locked_alloc,
  .page_locked_free = cuda_page_locked_free,
  /* cuda-openacc.c.  */
  .launch = cuda_launch,
  .finish = cuda_finish,
  .describe_result = cuda_describe_result,
  .result_unknown = "CUDA error %d",
  .teardown_quiet = cuda_teardown_quiet,
  .managed = &cuda_managed_ops,
  .interop = &cuda_interop_ops,
  .acc = &cuda_acc_ops,
  .acc_cuda = &cuda_acc_cuda_ops
};
