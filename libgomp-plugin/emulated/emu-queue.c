/* OpenACC on an emulated device: async queues, launches, properties.

   A queue is a list of operations (copies, launches, libgomp's
   callbacks, and the markers that order two queues) and a thread that
   runs them in order.  It runs them as late as a device may: only once
   the program waits for the queue, tests it, orders another queue after
   it, or destroys it, or a synchronous operation of the device (a copy,
   a free, a launch) comes, which waits for every queue's work as CUDA's
   legacy stream waits for the blocking streams GCC's nvptx plugin makes
   for queues.  On a GPU the work of a queue runs meanwhile, at an
   unknown time; here a program that reads what a queue writes without
   waiting for it sees the old values every time, instead of on some runs
   only, and one that waits sees the new ones.

   Launches, on a queue or not, go through the core like any launch
   (ok_device_run): the device's worker runs them in order, each region
   on a thread of its own (emu-run.c).  A launch has the dimensions the
   modelled GPU would give it (emu-gpu-*.c), which GOMP_DEBUG and the
   profiling events report; the host-fallback code runs its gangs,
   workers and vector lanes one after another.  */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu-internal.h"

/* Two queues are ordered through a marker: the first queue's operation
   sets it, the later queue's waits for it.  The last of the two to be
   done with it frees it.  */
struct emu_marker
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool set;
  int refs;
};

enum emu_op_kind
{
  EMU_OP_COPY,
  EMU_OP_EXEC,
  EMU_OP_CALLBACK,
  EMU_OP_MARK,			/* Set MARKER.  */
  EMU_OP_WAIT			/* Wait for MARKER.  */
};

struct emu_op
{
  struct emu_op *next;
  enum emu_op_kind kind;
  union
  {
    struct
    {
      enum ok_copy_dir dir;
      void *dst;
      const void *src;
      size_t n;
    } copy;
    struct
    {
      void *fn;
      void *args;
    } exec;
    struct
    {
      void (*fn) (void *);
      void *data;
    } callback;
    struct emu_marker *marker;
  } u;
};


static struct emu_queue *
emu_queue (struct ok_acc_queue *q)
{
  return (struct emu_queue *) q;
}

static void
emu_marker_put (struct emu_marker *m)
{
  pthread_mutex_lock (&m->lock);
  bool last = --m->refs == 0;
  pthread_mutex_unlock (&m->lock);
  if (!last)
    return;
  pthread_cond_destroy (&m->cond);
  pthread_mutex_destroy (&m->lock);
  free (m);
}

/* Set marker M: the later queue may go on.  */
static void
emu_marker_set (struct emu_marker *m)
{
  pthread_mutex_lock (&m->lock);
  m->set = true;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
  emu_marker_put (m);
}

/* Run OP on Q's thread; false after a reported error.  */
static bool
emu_op_run (struct emu_queue *q, struct emu_op *op)
{
  struct ok_device *dev = q->base.dev;
  switch (op->kind)
    {
    case EMU_OP_COPY:
      {
	bool (*copy) (struct ok_device *, void *, const void *, size_t)
	  = (op->u.copy.dir == OK_COPY_H2D ? emu_host2dev
	     : op->u.copy.dir == OK_COPY_D2H ? emu_dev2host : emu_dev2dev);
	return copy (dev, op->u.copy.dst, op->u.copy.src, op->u.copy.n);
      }
    case EMU_OP_EXEC:
      {
	struct ok_launch launch = { 0, 0 };
	return ok_device_run (dev, op->u.exec.fn, op->u.exec.args, &launch);
      }
    case EMU_OP_CALLBACK:
      op->u.callback.fn (op->u.callback.data);
      return true;
    case EMU_OP_MARK:
      /* Run by the queue's thread itself (emu_queue_thread).  */
      return false;
    case EMU_OP_WAIT:
      pthread_mutex_lock (&op->u.marker->lock);
      while (!op->u.marker->set)
	pthread_cond_wait (&op->u.marker->cond, &op->u.marker->lock);
      pthread_mutex_unlock (&op->u.marker->lock);
      emu_marker_put (op->u.marker);
      return true;
    }
  return false;
}

/* The queue whose thread the calling thread is, or NULL.  */
static __thread struct emu_queue *emu_queue_self;

bool
emu_on_queue_thread (void)
{
  return emu_queue_self != NULL;
}

/* Q's thread: run the released operations in order until the queue
   stops.  */
static void *
emu_queue_thread (void *arg)
{
  struct emu_queue *q = arg;
  emu_queue_self = q;
  pthread_mutex_lock (&q->lock);
  for (;;)
    {
      while (q->done == q->released && !q->stopping)
	pthread_cond_wait (&q->cond, &q->lock);
      if (q->done == q->released)
	break;			/* Stopping, and nothing left released.  */
      struct emu_op *op = q->head;
      q->head = op->next;
      if (q->head == NULL)
	q->tail = NULL;
      pthread_mutex_unlock (&q->lock);

      if (op->kind == EMU_OP_MARK)
	{
	  /* Counted done before the later queue hears of it: what comes
	     after the wait there (acc_async_test of this queue, say) finds
	     this queue's work done.  */
	  struct emu_marker *m = op->u.marker;
	  free (op);
	  pthread_mutex_lock (&q->lock);
	  q->done++;
	  pthread_cond_broadcast (&q->cond);
	  pthread_mutex_unlock (&q->lock);
	  emu_marker_set (m);
	  pthread_mutex_lock (&q->lock);
	  continue;
	}
      bool ok = emu_op_run (q, op);
      free (op);

      pthread_mutex_lock (&q->lock);
      if (!ok)
	q->failed = true;
      q->done++;
      pthread_cond_broadcast (&q->cond);
    }
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

/* Let Q's thread run everything queued so far.  Q->LOCK is held.  */
static void
emu_queue_release (struct emu_queue *q)
{
  if (q->released != q->queued)
    {
      q->released = q->queued;
      pthread_cond_broadcast (&q->cond);
    }
}

/* A new operation of KIND for Q, or NULL after a message.  */
static struct emu_op *
emu_op_new (struct emu_queue *q, enum emu_op_kind kind)
{
  struct emu_op *op = calloc (1, sizeof *op);
  if (op == NULL)
    ok_dev_error (q->base.dev, "out of memory queueing OpenACC work");
  else
    op->kind = kind;
  return op;
}

static void
emu_op_push (struct emu_queue *q, struct emu_op *op)
{
  pthread_mutex_lock (&q->lock);
  if (q->tail != NULL)
    q->tail->next = op;
  else
    q->head = op;
  q->tail = op;
  q->queued++;
  pthread_mutex_unlock (&q->lock);
}

bool
emu_acc_queue_init (struct ok_acc_queue *base)
{
  struct emu_queue *q = emu_queue (base);
  struct emu_device *dev = emu_dev (base->dev);
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->cond, NULL);
  int err = pthread_create (&q->thread, NULL, emu_queue_thread, q);
  if (err != 0)
    {
      ok_dev_error (base->dev, "cannot start an OpenACC queue's thread: %s",
		    strerror (err));
      pthread_cond_destroy (&q->cond);
      pthread_mutex_destroy (&q->lock);
      return false;
    }
  pthread_mutex_lock (&dev->acc_lock);
  q->next = dev->queues;
  dev->queues = q;
  pthread_mutex_unlock (&dev->acc_lock);
  return true;
}

/* Wait until everything queued on Q so far is done; whether all of it
   succeeded since the last wait.  */
static bool
emu_queue_drain (struct emu_queue *q)
{
  pthread_mutex_lock (&q->lock);
  uint64_t target = q->queued;
  emu_queue_release (q);
  while (q->done < target)
    pthread_cond_wait (&q->cond, &q->lock);
  bool ok = !q->failed;
  q->failed = false;
  pthread_mutex_unlock (&q->lock);
  return ok;
}

bool
emu_acc_queue_fini (struct ok_acc_queue *base)
{
  struct emu_queue *q = emu_queue (base);
  struct emu_device *dev = emu_dev (base->dev);
  bool ok = emu_queue_drain (q);
  pthread_mutex_lock (&dev->acc_lock);
  for (struct emu_queue **p = &dev->queues; *p != NULL; p = &(*p)->next)
    if (*p == q)
      {
	*p = q->next;
	break;
      }
  pthread_mutex_unlock (&dev->acc_lock);
  pthread_mutex_lock (&q->lock);
  q->stopping = true;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  pthread_join (q->thread, NULL);
  pthread_cond_destroy (&q->cond);
  pthread_mutex_destroy (&q->lock);
  return ok;
}

int
emu_acc_queue_test (struct ok_acc_queue *base)
{
  struct emu_queue *q = emu_queue (base);
  pthread_mutex_lock (&q->lock);
  /* Asked about, the work starts; it is done when asked again later.  */
  emu_queue_release (q);
  int r = q->failed ? -1 : q->done == q->queued;
  pthread_mutex_unlock (&q->lock);
  return r;
}

bool
emu_acc_queue_wait (struct ok_acc_queue *base)
{
  return emu_queue_drain (emu_queue (base));
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
  if ((__atomic_load_n (&dev->queues, __ATOMIC_ACQUIRE) == NULL
       && __atomic_load_n (&dev->num_deferred, __ATOMIC_ACQUIRE) == 0)
      || emu_on_queue_thread () || emu_current () != NULL)
    return;
  pthread_mutex_lock (&dev->acc_lock);
  /* The queues' threads free nothing meanwhile (they defer it), and
     none of them takes ACC_LOCK.  */
  for (struct emu_queue *q = dev->queues; q != NULL; q = q->next)
    {
      /* What the queues' work reported is reported already; a failure
	 shows again at the program's next wait.  */
      pthread_mutex_lock (&q->lock);
      uint64_t target = q->queued;
      emu_queue_release (q);
      while (q->done < target)
	pthread_cond_wait (&q->cond, &q->lock);
      pthread_mutex_unlock (&q->lock);
    }
  pthread_mutex_unlock (&dev->acc_lock);
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
emu_acc_queue_join (struct ok_acc_queue *first_base,
		    struct ok_acc_queue *later_base)
{
  struct emu_queue *first = emu_queue (first_base);
  struct emu_queue *later = emu_queue (later_base);
  struct emu_marker *m = calloc (1, sizeof *m);
  struct emu_op *mark = emu_op_new (first, EMU_OP_MARK);
  struct emu_op *wait = emu_op_new (later, EMU_OP_WAIT);
  if (m == NULL || mark == NULL || wait == NULL)
    {
      if (m == NULL && mark != NULL && wait != NULL)
	ok_dev_error (first->base.dev, "out of memory queueing OpenACC work");
      free (m);
      free (mark);
      free (wait);
      return false;
    }
  pthread_mutex_init (&m->lock, NULL);
  pthread_cond_init (&m->cond, NULL);
  m->refs = 2;
  mark->u.marker = wait->u.marker = m;
  emu_op_push (first, mark);
  /* The later queue will wait for the first's work: that work starts
     now, or a wait for the later queue alone would wait for ever.  */
  pthread_mutex_lock (&first->lock);
  emu_queue_release (first);
  pthread_mutex_unlock (&first->lock);
  emu_op_push (later, wait);
  return true;
}

bool
emu_acc_queue_callback (struct ok_acc_queue *base, void (*fn) (void *),
			void *data)
{
  struct emu_queue *q = emu_queue (base);
  struct emu_op *op = emu_op_new (q, EMU_OP_CALLBACK);
  if (op == NULL)
    return false;
  op->u.callback.fn = fn;
  op->u.callback.data = data;
  emu_op_push (q, op);
  return true;
}

bool
emu_acc_queue_copy (struct ok_acc_queue *base, enum ok_copy_dir dir,
		    void *dst, const void *src, size_t n)
{
  struct emu_queue *q = emu_queue (base);
  struct emu_device *dev = emu_dev (base->dev);
  /* A device address outside device memory is an error of the call, as
     a driver refuses it at once; the bytes move later.  */
  if ((dir != OK_COPY_H2D
       && !emu_check_range (dev, src, n, "copy from device memory"))
      || (dir != OK_COPY_D2H
	  && !emu_check_range (dev, dst, n, "copy to device memory")))
    return false;
  struct emu_op *op = emu_op_new (q, EMU_OP_COPY);
  if (op == NULL)
    return false;
  op->u.copy.dir = dir;
  op->u.copy.dst = dst;
  op->u.copy.src = src;
  op->u.copy.n = n;
  emu_op_push (q, op);
  return true;
}

bool
emu_acc_exec (struct ok_device *d, void *fn, void *args,
	      const unsigned given[OK_ACC_DIMS], struct ok_acc_queue *base)
{
  struct emu_device *dev = emu_dev (d);
  char buf[2 + 2 * sizeof (void *) + 1];
  unsigned fixed[OK_ACC_DIMS], dims[OK_ACC_DIMS];
  /* The launch the modelled GPU would make (emu-gpu-*.c), refused where
     it would be; the tool hears of it.  */
  ok_images_hold (d);
  const char *name = emu_acc_kernel (dev, fn, buf, sizeof buf, fixed);
  bool ok = emu_gpu_acc_dims (name, fixed, given, dims);
  if (ok)
    ok_acc_launch_event (false, name, dims);
  ok_images_release (d);
  if (!ok)
    return false;

  if (base == NULL)
    {
      /* On the device's legacy stream, after the queues' work.  */
      emu_acc_sync (dev);
      struct ok_launch launch = { 0, 0 };
      ok = ok_device_run (d, fn, args, &launch);
    }
  else
    {
      struct emu_queue *q = emu_queue (base);
      struct emu_op *op = emu_op_new (q, EMU_OP_EXEC);
      ok = op != NULL;
      if (ok)
	{
	  op->u.exec.fn = fn;
	  op->u.exec.args = args;
	  emu_op_push (q, op);
	}
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
emu_acc_property (struct ok_device *d, enum ok_acc_prop prop, size_t *num,
		  const char **str)
{
  (void) d;
  long page = sysconf (_SC_PAGESIZE);
  switch (prop)
    {
    case OK_ACC_PROP_MEMORY:
      {
	/* Device memory is the host's.  */
	long pages = sysconf (_SC_PHYS_PAGES);
	if (pages <= 0 || page <= 0)
	  return false;
	*num = (size_t) pages * (size_t) page;
	return true;
      }
    case OK_ACC_PROP_FREE_MEMORY:
      {
	long pages = sysconf (_SC_AVPHYS_PAGES);
	if (pages <= 0 || page <= 0)
	  return false;
	*num = (size_t) pages * (size_t) page;
	return true;
      }
    case OK_ACC_PROP_NAME:
      *str = "offloadkit emulated device";
      return true;
    case OK_ACC_PROP_VENDOR:
      *str = "offloadkit";
      return true;
    case OK_ACC_PROP_DRIVER:
      *str = "offloadkit " PACKAGE_VERSION;
      return true;
    }
  return false;
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
  pthread_mutex_lock (&q->lock);
  void *s = q->cuda_stream != NULL ? q->cuda_stream : q;
  pthread_mutex_unlock (&q->lock);
  return s;
}

/* As GCC's nvptx plugin: the queue's work so far completes, and the
   queue answers with STREAM from now on.  Its work keeps its order: the
   queue's thread runs it, whatever the handle.  */
bool
emu_acc_cuda_set_stream (struct ok_acc_queue *base, void *stream)
{
  struct emu_queue *q = emu_queue (base);
  if (!emu_queue_drain (q))
    return false;
  pthread_mutex_lock (&q->lock);
  q->cuda_stream = stream;
  pthread_mutex_unlock (&q->lock);
  return true;
}
