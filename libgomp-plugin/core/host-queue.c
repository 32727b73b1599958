/* OpenACC async queues run by a host thread each (see host-queue.h).  */

#include <stdlib.h>
#include <string.h>

#include "host-queue.h"
#include "plugin-core.h"

/* Two queues are ordered through a marker (GCC's gcn plugin's
   placeholder): the first queue's entry sets it, the later queue's waits
   for it.  The last of the two to be done with it frees it.  */
struct ok_hostq_marker
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool set;
  int refs;
};

enum ok_hostq_kind
{
  HOSTQ_LAUNCH,
  HOSTQ_COPY,
  HOSTQ_CALLBACK,
  HOSTQ_MARK,			/* Set MARKER.  */
  HOSTQ_WAIT			/* Wait until MARKER is set.  */
};

struct ok_hostq_entry
{
  struct ok_hostq_entry *next;
  enum ok_hostq_kind kind;
  uint64_t seq;			/* Its place: the queue's QUEUED with it.  */
  union
  {
    struct
    {
      void *fn;
      void *args;
      struct ok_launch launch;
    } launch;
    struct
    {
      enum ok_copy_dir dir;
      void *dst;
      const void *src;
      size_t n;
      void *bytes;		/* The copy's own source, freed with it.  */
    } copy;
    struct
    {
      void (*fn) (void *);
      void *data;
    } callback;
    struct ok_hostq_marker *marker;
  } u;
};

/* The queue whose thread the calling thread is, or NULL.  */
static __thread struct ok_hostq *hostq_current;

struct ok_hostq *
ok_hostq_self (void)
{
  return hostq_current;
}

/* Markers.  */

static void
hostq_marker_put (struct ok_hostq_marker *m)
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
hostq_marker_set (struct ok_hostq_marker *m)
{
  pthread_mutex_lock (&m->lock);
  m->set = true;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
  hostq_marker_put (m);
}

static void
hostq_marker_wait (struct ok_hostq_marker *m)
{
  pthread_mutex_lock (&m->lock);
  while (!m->set)
    pthread_cond_wait (&m->cond, &m->lock);
  pthread_mutex_unlock (&m->lock);
  hostq_marker_put (m);
}

/* The thread.  */

static bool
hostq_copy_now (struct ok_device *dev, enum ok_copy_dir dir, void *dst,
		const void *src, size_t n)
{
  const struct ok_backend *b = dev->backend;
  bool (*copy) (struct ok_device *, void *, const void *, size_t)
    = (dir == OK_COPY_H2D ? b->host2dev
       : dir == OK_COPY_D2H ? b->dev2host : b->dev2dev);
  return copy (dev, dst, src, n);
}

/* Run entry E of Q, not a HOSTQ_MARK one, on Q's thread; false after a
   reported error.  */
static bool
hostq_run (struct ok_hostq *q, struct ok_hostq_entry *e)
{
  struct ok_device *dev = q->base.dev;
  switch (e->kind)
    {
    case HOSTQ_LAUNCH:
      return ok_device_run (dev, e->u.launch.fn, e->u.launch.args,
			    &e->u.launch.launch);
    case HOSTQ_COPY:
      return hostq_copy_now (dev, e->u.copy.dir, e->u.copy.dst,
			     e->u.copy.src, e->u.copy.n);
    case HOSTQ_CALLBACK:
      e->u.callback.fn (e->u.callback.data);
      return true;
    case HOSTQ_WAIT:
      hostq_marker_wait (e->u.marker);
      return true;
    case HOSTQ_MARK:
      break;
    }
  return false;
}

/* Whether E copies from the device into host memory.  */
static bool
hostq_is_download (const struct ok_hostq_entry *e)
{
  return e->kind == HOSTQ_COPY && e->u.copy.dir == OK_COPY_D2H;
}

static void
hostq_entry_free (struct ok_hostq_entry *e)
{
  if (e->kind == HOSTQ_COPY)
    free (e->u.copy.bytes);
  free (e);
}

/* Q's thread: run the released entries in order until the queue stops
   with nothing left released.  */
static void *
hostq_thread (void *arg)
{
  struct ok_hostq *q = arg;
  hostq_current = q;
  if (q->on_thread != NULL)
    q->on_thread (q);
  pthread_mutex_lock (&q->lock);
  for (;;)
    {
      while (q->done == q->released && !q->stopping)
	pthread_cond_wait (&q->cond, &q->lock);
      if (q->done == q->released)
	break;
      struct ok_hostq_entry *e = q->head;
      q->head = e->next;
      if (q->head == NULL)
	q->tail = NULL;
      q->running = e;
      pthread_mutex_unlock (&q->lock);

      struct ok_hostq_marker *to_set
	= e->kind == HOSTQ_MARK ? e->u.marker : NULL;
      bool ok = to_set != NULL || hostq_run (q, e);

      pthread_mutex_lock (&q->lock);
      if (hostq_is_download (e))
	__atomic_sub_fetch (&q->downloads, 1, __ATOMIC_RELAXED);
      q->running = NULL;
      hostq_entry_free (e);
      if (!ok)
	q->failed = true;
      q->done++;
      if (q->done >= q->wake_at)
	{
	  q->wake_at = UINT64_MAX;
	  pthread_cond_broadcast (&q->done_cond);
	}
      if (to_set != NULL)
	{
	  /* Counted done before the later queue hears of it: what comes
	     after the wait there (acc_async_test of this queue, say) finds
	     this queue's work done.  */
	  pthread_mutex_unlock (&q->lock);
	  hostq_marker_set (to_set);
	  pthread_mutex_lock (&q->lock);
	}
    }
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

/* Let Q's thread run everything queued so far.  Q->LOCK is held.  */
static void
hostq_release (struct ok_hostq *q)
{
  if (q->released != q->queued)
    {
      q->released = q->queued;
      pthread_cond_broadcast (&q->cond);
    }
}

/* Wait until Q's first TARGET entries are done (they are released).
   Q->LOCK is held.  */
static void
hostq_wait_done (struct ok_hostq *q, uint64_t target)
{
  while (q->done < target)
    {
      /* Those woken and not yet done with say so again.  */
      if (target < q->wake_at)
	q->wake_at = target;
      pthread_cond_wait (&q->done_cond, &q->lock);
    }
}

/* Wait until everything queued on Q so far is done, starting it first.
   Q->LOCK is held.  */
static void
hostq_finish_queued (struct ok_hostq *q)
{
  uint64_t target = q->queued;
  hostq_release (q);
  hostq_wait_done (q, target);
}

/* Entries.  */

/* A new entry of KIND for Q, or NULL after a message.  */
static struct ok_hostq_entry *
hostq_entry_new (struct ok_hostq *q, enum ok_hostq_kind kind)
{
  struct ok_hostq_entry *e = calloc (1, sizeof *e);
  if (e == NULL)
    ok_dev_error (q->base.dev, "out of memory queueing OpenACC work");
  else
    e->kind = kind;
  return e;
}

/* Queue E on Q; the thread may run it (and what comes before it) now
   when Q is eager or RUN_NOW.  */
static void
hostq_push (struct ok_hostq *q, struct ok_hostq_entry *e, bool run_now)
{
  pthread_mutex_lock (&q->lock);
  if (q->tail != NULL)
    q->tail->next = e;
  else
    q->head = e;
  q->tail = e;
  e->seq = ++q->queued;
  if (hostq_is_download (e))
    __atomic_add_fetch (&q->downloads, 1, __ATOMIC_RELAXED);
  if (run_now || q->policy == OK_HOSTQ_EAGER)
    hostq_release (q);
  pthread_mutex_unlock (&q->lock);
}

bool
ok_hostq_launch (struct ok_acc_queue *base, void *fn, void *args,
		 const struct ok_launch *launch)
{
  struct ok_hostq *q = ok_hostq (base);
  struct ok_hostq_entry *e = hostq_entry_new (q, HOSTQ_LAUNCH);
  if (e == NULL)
    return false;
  e->u.launch.fn = fn;
  e->u.launch.args = args;
  e->u.launch.launch = *launch;
  hostq_push (q, e, false);
  return true;
}

static bool
hostq_copy_queue (struct ok_hostq *q, enum ok_copy_dir dir, void *dst,
		  const void *src, size_t n, void *bytes)
{
  struct ok_hostq_entry *e = hostq_entry_new (q, HOSTQ_COPY);
  if (e == NULL)
    {
      free (bytes);
      return false;
    }
  e->u.copy.dir = dir;
  e->u.copy.dst = dst;
  e->u.copy.src = bytes != NULL ? bytes : src;
  e->u.copy.n = n;
  e->u.copy.bytes = bytes;
  hostq_push (q, e, false);
  return true;
}

/* Whether [A, A + AN) and [B, B + BN) overlap.  */
static bool
hostq_overlap (const void *a, size_t an, const void *b, size_t bn)
{
  uintptr_t x = (uintptr_t) a, y = (uintptr_t) b;
  return x < y + bn && y < x + an;
}

/* The place of the last download on Q, queued and not done, that writes
   into [SRC, SRC + N); 0 when none.  Q->LOCK is held.  */
static uint64_t
hostq_last_download_into (struct ok_hostq *q, const void *src, size_t n)
{
  uint64_t last = 0;
  if (q->downloads == 0)
    return 0;
  if (q->running != NULL && hostq_is_download (q->running)
      && hostq_overlap (q->running->u.copy.dst, q->running->u.copy.n, src, n))
    last = q->running->seq;
  for (struct ok_hostq_entry *e = q->head; e != NULL; e = e->next)
    if (hostq_is_download (e)
	&& hostq_overlap (e->u.copy.dst, e->u.copy.n, src, n))
      last = e->seq;
  return last;
}

/* Before host memory [SRC, SRC + N) is read for an upload: the
   downloads into it that any queue of DEV holds land first, with what
   comes before them on their queues.  On a GPU they would have landed:
   CUDA returns from a download to pageable memory once it is done, and
   an eager queue (GCC's gcn plugin) has run it long before; a lazy queue
   keeps it pending until someone asks, and reading the memory now would
   take bytes no device would.  Not from a queue's thread, which must not
   wait for queues.  */
static void
hostq_settle_downloads (struct ok_device *dev, const void *src, size_t n)
{
  if (hostq_current != NULL)
    return;
  pthread_mutex_lock (&dev->hostqs_lock);
  for (struct ok_hostq *q = dev->hostqs; q != NULL; q = q->next)
    {
      /* Most queues hold no download: not even their lock then (a
	 download queued by this thread is counted already; one queued by
	 another thread meanwhile is unordered with this upload anyway).  */
      if (__atomic_load_n (&q->downloads, __ATOMIC_RELAXED) == 0)
	continue;
      pthread_mutex_lock (&q->lock);
      uint64_t last = hostq_last_download_into (q, src, n);
      if (last != 0)
	{
	  if (q->released < last)
	    {
	      q->released = last;
	      pthread_cond_broadcast (&q->cond);
	    }
	  hostq_wait_done (q, last);
	}
      pthread_mutex_unlock (&q->lock);
    }
  pthread_mutex_unlock (&dev->hostqs_lock);
}

/* A copy from host memory larger than this is not taken into a buffer:
   the queue's earlier work is finished and the bytes go to the device
   at once, as CUDA's staging of pageable memory in chunks does.  */
#define HOSTQ_TAKE_MAX ((size_t) 64 << 20)

/* A copy from host memory takes the bytes the source holds when it is
   queued, once the downloads already queued into it have landed
   (hostq_settle_downloads), as CUDA's cuMemcpyHtoDAsync takes those of
   pageable memory before it returns: libgomp queues uploads from
   temporaries on its own stack (firstprivate scalars, gone when the
   queue runs), and the program may change its memory once the call
   returns.  Up to HOSTQ_TAKE_MAX they go into a buffer of the entry's;
   a larger copy finishes the queue's earlier work and is made at once.
   The bytes reach the device when the queue runs the entry.  Copies from
   device memory read it when the queue runs, as a GPU's do; so do those
   of ok_hostq_copy_kept.  */
bool
ok_hostq_copy (struct ok_acc_queue *base, enum ok_copy_dir dir, void *dst,
	       const void *src, size_t n)
{
  struct ok_hostq *q = ok_hostq (base);
  if (dir != OK_COPY_H2D || n == 0)
    return hostq_copy_queue (q, dir, dst, src, n, NULL);
  hostq_settle_downloads (base->dev, src, n);
  if (n > HOSTQ_TAKE_MAX && hostq_current == NULL)
    {
      pthread_mutex_lock (&q->lock);
      hostq_finish_queued (q);
      pthread_mutex_unlock (&q->lock);
      return hostq_copy_now (base->dev, dir, dst, src, n);
    }
  void *bytes = malloc (n);
  if (bytes == NULL)
    {
      ok_dev_error (base->dev, "out of memory queueing a copy of %zu bytes"
		    " to the device", n);
      return false;
    }
  memcpy (bytes, src, n);
  return hostq_copy_queue (q, dir, dst, src, n, bytes);
}

bool
ok_hostq_copy_kept (struct ok_acc_queue *base, enum ok_copy_dir dir,
		    void *dst, const void *src, size_t n)
{
  return hostq_copy_queue (ok_hostq (base), dir, dst, src, n, NULL);
}

bool
ok_hostq_callback (struct ok_acc_queue *base, void (*fn) (void *),
		   void *data)
{
  struct ok_hostq *q = ok_hostq (base);
  struct ok_hostq_entry *e = hostq_entry_new (q, HOSTQ_CALLBACK);
  if (e == NULL)
    return false;
  e->u.callback.fn = fn;
  e->u.callback.data = data;
  hostq_push (q, e, false);
  return true;
}

bool
ok_hostq_join (struct ok_acc_queue *first_base,
	       struct ok_acc_queue *later_base)
{
  struct ok_hostq *first = ok_hostq (first_base);
  struct ok_hostq *later = ok_hostq (later_base);
  struct ok_hostq_marker *m = calloc (1, sizeof *m);
  struct ok_hostq_entry *mark = calloc (1, sizeof *mark);
  struct ok_hostq_entry *wait = calloc (1, sizeof *wait);
  if (m == NULL || mark == NULL || wait == NULL)
    {
      ok_dev_error (first_base->dev, "out of memory queueing OpenACC work");
      free (m);
      free (mark);
      free (wait);
      return false;
    }
  pthread_mutex_init (&m->lock, NULL);
  pthread_cond_init (&m->cond, NULL);
  m->refs = 2;
  mark->kind = HOSTQ_MARK;
  wait->kind = HOSTQ_WAIT;
  mark->u.marker = wait->u.marker = m;
  /* The later queue will wait for the first's work: that work starts
     now, or a wait for a lazy later queue alone would wait for ever.  */
  hostq_push (first, mark, true);
  hostq_push (later, wait, false);
  return true;
}

/* Waiting and testing.  */

bool
ok_hostq_wait (struct ok_acc_queue *base)
{
  struct ok_hostq *q = ok_hostq (base);
  pthread_mutex_lock (&q->lock);
  hostq_finish_queued (q);
  bool ok = !q->failed;
  q->failed = false;
  pthread_mutex_unlock (&q->lock);
  return ok;
}

int
ok_hostq_test (struct ok_acc_queue *base)
{
  struct ok_hostq *q = ok_hostq (base);
  pthread_mutex_lock (&q->lock);
  /* Asked about, a lazy queue's work starts; it is done when asked again
     later.  */
  hostq_release (q);
  int r = q->failed ? -1 : q->done == q->queued;
  pthread_mutex_unlock (&q->lock);
  return r;
}

void
ok_hostq_run_device (struct ok_device *dev)
{
  if (__atomic_load_n (&dev->hostqs, __ATOMIC_ACQUIRE) == NULL
      || hostq_current != NULL)
    return;
  /* No queue's thread takes HOSTQS_LOCK: it may be held while they
     run.  */
  pthread_mutex_lock (&dev->hostqs_lock);
  for (struct ok_hostq *q = dev->hostqs; q != NULL; q = q->next)
    if (q->policy == OK_HOSTQ_LAZY)
      {
	pthread_mutex_lock (&q->lock);
	hostq_finish_queued (q);
	pthread_mutex_unlock (&q->lock);
      }
  pthread_mutex_unlock (&dev->hostqs_lock);
}

/* Starting and stopping.  */

static void
hostq_list (struct ok_hostq *q)
{
  struct ok_device *dev = q->base.dev;
  pthread_mutex_lock (&dev->hostqs_lock);
  q->next = dev->hostqs;
  __atomic_store_n (&dev->hostqs, q, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&dev->hostqs_lock);
}

static void
hostq_unlist (struct ok_hostq *q)
{
  struct ok_device *dev = q->base.dev;
  pthread_mutex_lock (&dev->hostqs_lock);
  for (struct ok_hostq **p = &dev->hostqs; *p != NULL; p = &(*p)->next)
    if (*p == q)
      {
	__atomic_store_n (p, q->next, __ATOMIC_RELEASE);
	break;
      }
  pthread_mutex_unlock (&dev->hostqs_lock);
}

bool
ok_hostq_start (struct ok_acc_queue *base, enum ok_hostq_policy policy,
		void (*on_thread) (struct ok_hostq *q))
{
  struct ok_hostq *q = ok_hostq (base);
  q->policy = policy;
  q->on_thread = on_thread;
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->cond, NULL);
  pthread_cond_init (&q->done_cond, NULL);
  q->wake_at = UINT64_MAX;
  int err = pthread_create (&q->thread, NULL, hostq_thread, q);
  if (err != 0)
    {
      ok_dev_error (base->dev, "cannot start an OpenACC queue's thread: %s",
		    strerror (err));
      pthread_cond_destroy (&q->done_cond);
      pthread_cond_destroy (&q->cond);
      pthread_mutex_destroy (&q->lock);
      return false;
    }
  /* Every queue, for hostq_settle_downloads; only lazy ones wait for
     the device's synchronous operations (ok_hostq_run_device).  */
  hostq_list (q);
  return true;
}

bool
ok_hostq_stop (struct ok_acc_queue *base)
{
  struct ok_hostq *q = ok_hostq (base);
  bool ok = ok_hostq_wait (base);
  hostq_unlist (q);
  pthread_mutex_lock (&q->lock);
  q->stopping = true;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  pthread_join (q->thread, NULL);
  pthread_cond_destroy (&q->done_cond);
  pthread_cond_destroy (&q->cond);
  pthread_mutex_destroy (&q->lock);
  return ok;
}
