/* OpenACC on the CUDA backend: the hooks behind libgomp's
   GOMP_OFFLOAD_openacc_* entry points (core-openacc.c), done as GCC's
   nvptx plugin does them (GCC 12 to 16's libgomp/plugin/plugin-nvptx.c).

   A queue is a CUDA stream of its own, a blocking one (CU_STREAM_DEFAULT,
   as GCC creates them): the legacy default stream waits for it, so that a
   synchronous launch, which goes to the legacy stream, and the
   synchronous copies, which go there too while queues exist
   (cuda-memory.c), start only after the work queued so far, as with GCC's
   plugin.  Joining two queues records an event on the first and makes
   the later one wait for it.  Callbacks are host functions queued on the
   stream; the driver runs them on a thread of its own, where no driver
   call is allowed, so device memory freed there is freed later
   (cuda_raw_free).

   An OpenACC compute region is a kernel of one parameter, the device
   address of its argument block.  Its geometry is GCC's: a grid of gangs
   blocks, each of vector_length x num_workers threads; the dimensions are
   those the compiler fixed (cuda_kernel's oacc_dims), else those of the
   launch, else chosen as GCC chooses them (core/nvptx-acc-dims.c, which
   the emulated device shares).  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"
#include "nvptx-acc-dims.h"
#include "oacc-abi.h"

static struct cuda_acc_queue *
cuda_queue (struct ok_acc_queue *q)
{
  return (struct cuda_acc_queue *) q;
}

static struct cuda_device *
cuda_queue_dev (struct ok_acc_queue *q)
{
  return cuda_dev (q->dev);
}

bool
cuda_acc_queues_live (struct cuda_device *dev)
{
  return __atomic_load_n (&dev->acc_queues, __ATOMIC_ACQUIRE) != 0;
}

/* Queues.  */

bool
cuda_acc_queue_init (struct ok_acc_queue *q)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  if (!cuda_enter (dev))
    return false;
  CUresult r = ok_cuda.cuStreamCreate (&cuda_queue (q)->stream,
				       CU_STREAM_DEFAULT);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot make an OpenACC queue",
			 "cuStreamCreate", r);
      return false;
    }
  __atomic_add_fetch (&dev->acc_queues, 1, __ATOMIC_ACQ_REL);
  return true;
}

bool
cuda_acc_queue_fini (struct ok_acc_queue *q)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  CUstream stream = cuda_queue (q)->stream;
  __atomic_sub_fetch (&dev->acc_queues, 1, __ATOMIC_ACQ_REL);
  if (!cuda_enter (dev))
    return false;
  /* The stream may be the legacy one, after acc_set_cuda_stream (0).  */
  if (stream == NULL)
    return true;
  CUresult r = ok_cuda.cuStreamSynchronize (stream);
  bool ok = ok_dev_teardown_ok (&dev->base, r, "finish an OpenACC queue",
				"cuStreamSynchronize");
  r = ok_cuda.cuStreamDestroy (stream);
  return ok_dev_teardown_ok (&dev->base, r, "destroy an OpenACC queue",
			     "cuStreamDestroy") && ok;
}

int
cuda_acc_queue_test (struct ok_acc_queue *q)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  if (!cuda_enter (dev))
    return -1;
  CUresult r = ok_cuda.cuStreamQuery (cuda_queue (q)->stream);
  if (r == CUDA_SUCCESS)
    return 1;
  if (r == CUDA_ERROR_NOT_READY)
    return 0;
  ok_dev_call_error (&dev->base, "cannot test an OpenACC queue",
		     "cuStreamQuery", r);
  return -1;
}

bool
cuda_acc_queue_wait (struct ok_acc_queue *q)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  if (!cuda_enter (dev))
    return false;
  CUresult r = ok_cuda.cuStreamSynchronize (cuda_queue (q)->stream);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot wait for an OpenACC queue",
			 "cuStreamSynchronize", r);
      return false;
    }
  return true;
}

bool
cuda_acc_queue_join (struct ok_acc_queue *first, struct ok_acc_queue *later)
{
  struct cuda_device *dev = cuda_queue_dev (first);
  if (!cuda_enter (dev))
    return false;
  CUevent e;
  const char *call = "cuEventCreate";
  CUresult r = ok_cuda.cuEventCreate (&e, CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS)
    {
      call = "cuEventRecord";
      r = ok_cuda.cuEventRecord (e, cuda_queue (first)->stream);
      if (r == CUDA_SUCCESS)
	{
	  call = "cuStreamWaitEvent";
	  r = ok_cuda.cuStreamWaitEvent (cuda_queue (later)->stream, e, 0);
	}
      /* The wait takes the event as recorded now: it may go at once
	 (GCC's plugin keeps every such event for ever).  */
      CUresult d = ok_cuda.cuEventDestroy (e);
      if (r == CUDA_SUCCESS && d != CUDA_SUCCESS)
	{
	  call = "cuEventDestroy";
	  r = d;
	}
    }
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot order two OpenACC queues", call,
			 r);
      return false;
    }
  return true;
}

/* Callbacks.  */

/* Set while this thread runs a host function of ours.  */
static __thread bool cuda_host_fn_running;

bool
cuda_in_host_fn (void)
{
  return cuda_host_fn_running;
}

struct cuda_callback
{
  void (*fn) (void *);
  void *data;
};

static void
cuda_host_fn (void *arg)
{
  struct cuda_callback cb = *(struct cuda_callback *) arg;
  free (arg);
  cuda_host_fn_running = true;
  cb.fn (cb.data);
  cuda_host_fn_running = false;
}

/* cuStreamAddCallback's form: it also says whether the stream's work
   failed, and then the queue's data are lost, as GCC's plugin says.  */
static void
cuda_stream_callback (CUstream stream, CUresult status, void *arg)
{
  (void) stream;
  if (status != CUDA_SUCCESS)
    {
      char err[OK_CUDA_ERRLEN];
      GOMP_PLUGIN_fatal ("offloadkit-%s: the work of an OpenACC queue"
			 " failed: %s", ok_plugin.name,
			 ok_cuda_result (status, err, sizeof err));
    }
  cuda_host_fn (arg);
}

bool
cuda_acc_queue_callback (struct ok_acc_queue *q, void (*fn) (void *),
			 void *data)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  if (!cuda_enter (dev))
    return false;
  struct cuda_callback *cb = malloc (sizeof *cb);
  if (cb == NULL)
    {
      ok_dev_error (&dev->base, "cannot queue a callback: out of memory");
      return false;
    }
  cb->fn = fn;
  cb->data = data;
  CUstream stream = cuda_queue (q)->stream;
  const char *call;
  CUresult r;
  if (ok_cuda.cuLaunchHostFunc != NULL)
    {
      call = "cuLaunchHostFunc";
      r = ok_cuda.cuLaunchHostFunc (stream, cuda_host_fn, cb);
    }
  else
    {
      call = "cuStreamAddCallback";
      r = ok_cuda.cuStreamAddCallback (stream, cuda_stream_callback, cb, 0);
    }
  if (r != CUDA_SUCCESS)
    {
      free (cb);
      ok_dev_call_error (&dev->base, "cannot queue a callback", call, r);
      return false;
    }
  return true;
}

/* Copies.  */

bool
cuda_acc_queue_copy (struct ok_acc_queue *q, enum ok_copy_dir dir,
		     void *dst, const void *src, size_t n)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  if (!cuda_enter (dev))
    return false;
  CUstream stream = cuda_queue (q)->stream;
  CUdeviceptr d = (CUdeviceptr) (uintptr_t) dst;
  CUdeviceptr s = (CUdeviceptr) (uintptr_t) src;
  const char *call;
  CUresult r;
  switch (dir)
    {
    case OK_COPY_H2D:
      call = "cuMemcpyHtoDAsync";
      r = ok_cuda.cuMemcpyHtoDAsync (d, src, n, stream);
      break;
    case OK_COPY_D2H:
      call = "cuMemcpyDtoHAsync";
      r = ok_cuda.cuMemcpyDtoHAsync (dst, s, n, stream);
      break;
    default:
      call = "cuMemcpyDtoDAsync";
      r = ok_cuda.cuMemcpyDtoDAsync (d, s, n, stream);
      break;
    }
  if (r != CUDA_SUCCESS)
    {
      static const char *const what[] = {
	"host to device", "device to host", "device to device" };
      char msg[160];
      snprintf (msg, sizeof msg, "cannot queue a copy of %zu bytes %s from"
		" %p to %p", n, what[dir], src, dst);
      ok_dev_call_error (&dev->base, msg, call, r);
      return false;
    }
  return true;
}

/* Launches.  */

/* What the occupancy advice is asked for.  */
struct cuda_acc_occupancy_arg
{
  struct cuda_device *dev;
  const struct cuda_kernel *k;
};

/* The driver's occupancy advice for ARG's kernel.  */
static bool
cuda_acc_occupancy (void *arg, int limit, int *grids, int *blocks)
{
  const struct cuda_acc_occupancy_arg *a = arg;
  CUresult r = ok_cuda.cuOccupancyMaxPotentialBlockSize (grids, blocks,
							   a->k->fn, NULL, 0,
							   limit);
  if (r != CUDA_SUCCESS)
    {
      char what[192];
      snprintf (what, sizeof what, "cannot choose the launch dimensions of"
		" '%.120s'", a->k->name);
      ok_dev_call_error (&a->dev->base, what,
			 "cuOccupancyMaxPotentialBlockSize", r);
      return false;
    }
  return true;
}

bool
cuda_acc_exec (struct ok_device *d, void *fn, void *args,
	       const unsigned given[OK_ACC_DIMS], struct ok_acc_queue *q)
{
  struct cuda_device *dev = cuda_dev (d);
  const struct cuda_kernel *k = fn;
  bool known;
  if (!cuda_enter_launch (dev, &known))
    return false;
  /* A launch is a place where frees asked for in callbacks can be done
     (a failed one is reported, and no reason not to launch); with the
     context asked for, not known.  */
  if (cuda_deferred_pending (dev))
    {
      if (known && !cuda_enter (dev))
	return false;
      known = false;
      cuda_deferred_frees (dev);
    }
  struct cuda_acc_occupancy_arg occ = { dev, k };
  struct ok_nvptx_kernel nk = {
    .name = k->name,
    .fixed = { k->oacc_dims[0], k->oacc_dims[1], k->oacc_dims[2] },
    .max_threads_per_block = k->max_threads_per_block,
    .occupancy = (ok_cuda.cuOccupancyMaxPotentialBlockSize != NULL
		  ? cuda_acc_occupancy : NULL),
    .occupancy_arg = &occ
  };
  const struct ok_nvptx_gpu gpu = {
    .max_threads_per_block = dev->max_threads_per_block,
    .max_threads_per_sm = dev->max_threads_per_sm,
    .num_sms = dev->num_sms
  };
  unsigned dims[OK_ACC_DIMS];
  if (!ok_nvptx_acc_launch_dims (&gpu, &nk, given, dims))
    return false;

  /* A synchronous launch goes to the legacy stream, as GCC's: after the
     work queued on the device's queues so far.  */
  CUstream stream = q != NULL ? cuda_queue (q)->stream : NULL;
  CUdeviceptr block = (CUdeviceptr) (uintptr_t) args;
  void *params[] = { &block };
  ok_acc_launch_event (false, k->name, dims);
  const unsigned grid[3] = { dims[OK_ACC_GANG], 1, 1 };
  const unsigned threads[3] = { dims[OK_ACC_VECTOR], dims[OK_ACC_WORKER],
				1 };
  bool reported;
  CUresult r = cuda_launch_kernel (dev, known, k->fn, grid, threads, stream,
				   params, &reported);
  if (r != CUDA_SUCCESS)
    {
      if (!reported)
	cuda_kernel_error (dev, k, "cuLaunchKernel", r);
      return false;
    }
  ok_nvptx_acc_launched (&nk);
  ok_acc_launch_event (true, k->name, dims);
  if (q != NULL)
    return true;
  r = ok_cuda.cuStreamSynchronize (NULL);
  if (r != CUDA_SUCCESS)
    {
      /* A kernel that faults takes the context down with it.  */
      ok_dev_mark_broken (d);
      cuda_kernel_error (dev, k, "cuStreamSynchronize", r);
      return false;
    }
  return true;
}

/* Properties and handles.  */

bool
cuda_acc_memory (struct ok_device *d, bool free, size_t *num)
{
  struct cuda_device *dev = cuda_dev (d);
  if (!free)
    {
      *num = dev->total_mem;
      return true;
    }
  size_t free_bytes, total;
  if (!cuda_enter (dev))
    return false;
  CUresult r = ok_cuda.cuMemGetInfo (&free_bytes, &total);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read its free memory", "cuMemGetInfo",
			 r);
      return false;
    }
  *num = free_bytes;
  return true;
}

void
cuda_acc_names (struct ok_device *d, struct ok_acc_names *names)
{
  names->name = cuda_dev (d)->name;
  names->vendor = "Nvidia";
  if (ok_cuda_driver_version[0] != '\0')
    names->driver = ok_cuda_driver_version;
}

void *
cuda_acc_device (struct ok_device *d)
{
  return &cuda_dev (d)->handle;
}

void *
cuda_acc_context (struct ok_device *d)
{
  return cuda_dev (d)->ctx;
}

void *
cuda_acc_stream (struct ok_acc_queue *q)
{
  return cuda_queue (q)->stream;
}

/* As GCC's: the queue's own stream is finished and destroyed, and STREAM
   (the program's) is the queue's from now on, destroyed with it.  */
bool
cuda_acc_set_stream (struct ok_acc_queue *q, void *stream)
{
  struct cuda_device *dev = cuda_queue_dev (q);
  CUstream old = cuda_queue (q)->stream;
  if (old != NULL)
    {
      if (!cuda_enter (dev))
	return false;
      const char *call = "cuStreamSynchronize";
      CUresult r = ok_cuda.cuStreamSynchronize (old);
      if (r == CUDA_SUCCESS)
	{
	  call = "cuStreamDestroy";
	  r = ok_cuda.cuStreamDestroy (old);
	}
      if (r != CUDA_SUCCESS)
	{
	  ok_dev_call_error (&dev->base, "cannot replace the stream of an"
			     " OpenACC queue", call, r);
	  return false;
	}
    }
  cuda_queue (q)->stream = stream;
  return true;
}
