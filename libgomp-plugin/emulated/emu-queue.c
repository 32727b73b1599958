/* OpenACC on an emulated device: async queues, launches, properties.

   A queue is the core's lazy host queue (host-queue.h): a list of
   operations (copies, launches, libgomp's callbacks, and the markers
   that order two queues) and a thread that runs them in order as late as
   a device may: only once the program waits for the queue, tests it,
   orders another queue after it, or destroys it, or a synchronous
   operation of the device (a copy, a free, a launch) comes, which waits
   for every queue's work (emu_acc_sync) as CUDA's legacy stream waits
   for the blocking streams GCC's nvptx plugin makes for queues.  On a
   GPU the work of a queue runs meanwhile, at an unknown time; here a
   program that reads what a queue writes without waiting for it sees the
   old values every time, instead of on some runs only, and one that
   waits sees the new ones.  What is the emulated device's own: copies
   are checked when they are queued, frees asked for on a queue's thread
   wait for the next synchronous operation, and the CUDA handles.

   Launches, on a queue or not, go through the core like any launch
   (ok_device_run): the device's worker runs them in order (emu-run.c).  A launch has the dimensions the
   modelled GPU would give it (emu-gpu-*.c), which GOMP_DEBUG and the
   profiling events report; the host-fallback code runs its gangs,
   workers and vector lanes one after another.  */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu-internal.h"

static struct emu_queue *
emu_queue (struct ok_acc_queue *q)
{
  return (struct emu_queue *) q;
}

bool
emu_on_queue_thread (void)
{
  struct ok_hostq *q = ok_hostq_self ();
  return q != NULL && q->base.dev->backend == &ok_backend_emulated;
}

bool
emu_acc_queue_init (struct ok_acc_queue *q)
{
  return ok_hostq_start (q, OK_HOSTQ_LAZY, NULL);
}

bool
emu_defer_free (struct emu_device *dev, void *ptr)
{
  pthread_mutex_lock (&dev->defer_lock);
  if (dev->num_deferred == dev->max_deferred)
    {
      size_t max = dev->max_deferred ? 2 * dev->max_deferred : 16;
      void **p = realloc (dev->deferred, max * sizeof *p);
      if (p == NULL)
	{
	  pthread_mutex_unlock (&dev->defer_lock);
	  ok_dev_error (&dev->base, "out of memory deferring a free");
	  return false;
	}
      dev->deferred = p;
      dev->max_deferred = max;
    }
  dev->deferred[dev->num_deferred++] = ptr;
  pthread_mutex_unlock (&dev->defer_lock);
  return true;
}

/* A queue's thread, or a region's, must not wait for queues (it may be
   what they wait for): the next caller that may does it.  */
void
emu_acc_sync (struct emu_device *dev)
{
  if (emu_on_queue_thread () || emu_current () != NULL)
    return;
  /* What the queues' work reported is reported already; a failure shows
     again at the program's next wait.  */
  ok_hostq_run_device (&dev->base);
  if (__atomic_load_n (&dev->num_deferred, __ATOMIC_ACQUIRE) == 0)
    return;
  /* The queues' threads freed nothing meanwhile (they defer it).  */
  pthread_mutex_lock (&dev->defer_lock);
  void **ptrs = dev->deferred;
  size_t n = dev->num_deferred;
  dev->deferred = NULL;
  dev->num_deferred = dev->max_deferred = 0;
  pthread_mutex_unlock (&dev->defer_lock);
  for (size_t i = 0; i < n; i++)
    emu_free (&dev->base, ptrs[i]);
  free (ptrs);
}

bool
emu_acc_queue_copy (struct ok_acc_queue *base, enum ok_copy_dir dir,
		    void *dst, const void *src, size_t n)
{
  struct emu_device *dev = emu_dev (base->dev);
  /* A device address outside device memory is an error of the call, as
     a driver refuses it at once; the bytes move later.  */
  if ((dir != OK_COPY_H2D
       && !emu_check_range (dev, src, n, "copy from device memory"))
      || (dir != OK_COPY_D2H
	  && !emu_check_range (dev, dst, n, "copy to device memory")))
    return false;
  /* Page-locked host memory is read when the copy runs, as a GPU's DMA
     reads it; other host memory when the copy is queued.  */
  if (dir == OK_COPY_H2D && emu_locked_holds (src, n))
    return ok_hostq_copy_kept (base, dir, dst, src, n);
  return ok_hostq_copy (base, dir, dst, src, n);
}

bool
emu_acc_exec (struct ok_device *d, void *fn, void *args,
	      const unsigned given[OK_ACC_DIMS], struct ok_acc_queue *base)
{
  struct emu_device *dev = emu_dev (d);
  char buf[2 + 2 * sizeof (void *) + 1];
  unsigned fixed[OK_ACC_DIMS], dims[OK_ACC_DIMS];
  bool known;
  /* The launch the modelled GPU would make (emu-gpu-*.c), refused where
     it would be; the tool hears of it.  */
  ok_images_hold (d);
  const char *name = emu_acc_kernel (dev, fn, buf, sizeof buf, fixed,
				     &known);
  bool ok = emu_gpu_acc_dims (name, fixed, known, given, dims);
  if (ok)
    ok_acc_launch_event (false, name, dims);
  ok_images_release (d);
  if (!ok)
    return false;

  if (base == NULL)
    {
      /* On the device's legacy stream, after the queues' work.  */
      emu_acc_sync (dev);
      struct ok_launch launch = { .openacc = true };
      ok = ok_device_run (d, fn, args, &launch);
    }
  else
    {
      struct ok_launch launch = { .openacc = true };
      ok = ok_hostq_launch (base, fn, args, &launch);
    }

  if (ok)
    {
      ok_images_hold (d);
      name = emu_fn_name (dev, fn, buf, sizeof buf);
      emu_gpu_acc_launched (name);
      ok_acc_launch_event (true, name, dims);
      ok_images_release (d);
    }
  return ok;
}

bool
emu_acc_memory (struct ok_device *d, bool free, size_t *num)
{
  /* As a GPU's driver answers (cuMemGetInfo): its memory, and what its
     live allocations leave of it.  */
  struct emu_device *dev = emu_dev (d);
  pthread_mutex_lock (&dev->mem_lock);
  *num = free ? dev->mem_total - dev->mem_used : dev->mem_total;
  pthread_mutex_unlock (&dev->mem_lock);
  return true;
}

void
emu_acc_names (struct ok_device *d, struct ok_acc_names *names)
{
  (void) d;
  *names = (struct ok_acc_names) { "offloadkit emulated device",
				   "offloadkit",
				   "offloadkit " PACKAGE_VERSION };
}

/* The CUDA handles of the nvptx plugin's OpenACC interface.  An emulated
   device has no CUDA objects, but programs written for an nvidia device
   check that it has them, and that each queue has a stream of its own:
   the handles are addresses of the device's and queues' own records,
   non-NULL and distinct, which name nothing to CUDA (a program that gives
   them to CUDA gets CUDA's error, as with any handle CUDA does not
   know).  */

void *
emu_acc_cuda_device (struct ok_device *d)
{
  /* A CUdevice is an int: the device's index among the backend's.  */
  return &d->local;
}

void *
emu_acc_cuda_context (struct ok_device *d)
{
  return d;
}

void *
emu_acc_cuda_stream (struct ok_acc_queue *base)
{
  struct emu_queue *q = emu_queue (base);
  void *s = __atomic_load_n (&q->cuda_stream, __ATOMIC_ACQUIRE);
  return s != NULL ? s : q;
}

/* As GCC's nvptx plugin: the queue's work so far completes, and the
   queue answers with STREAM from now on.  Its work keeps its order: the
   queue's thread runs it, whatever the handle.  */
bool
emu_acc_cuda_set_stream (struct ok_acc_queue *base, void *stream)
{
  if (!ok_hostq_wait (base))
    return false;
  __atomic_store_n (&emu_queue (base)->cuda_stream, stream, __ATOMIC_RELEASE);
  return true;
}
