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
      pthread_mutex_unlock (&q->lock);

      struct ok_hostq_marker *to_set
	= e->kind == HOSTQ_MARK ? e->u.marker : NULL;
      bool ok = to_set != NULL || hostq_run (q, e);
      free (e);

      pthread_mutex_lock (&q->lock);
      if (!ok)
	q->failed = true;
      q->done++;
      pthread_cond_broadcast (&q->cond);
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

/* Wait until everything queued on Q so far is done, starting it first.
   Q->LOCK is held.  */
static void
hostq_finish_queued (struct ok_hostq *q)
{
  uint64_t target = q->queued;
  hostq_release (q);
  while (q->done < target)
    pthread_cond_wait (&q->cond, &q->lock);
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
  q->queued++;
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

bool
ok_hostq_copy (struct ok_acc_queue *base, enum ok_copy_dir dir, void *dst,
	       const void *src, size_t n)
{
  struct ok_hostq *q = ok_hostq (base);
  struct ok_hostq_entry *e = hostq_entry_new (q, HOSTQ_COPY);
  if (e == NULL)
    return false;
  e->u.copy.dir = dir;
  e->u.copy.dst = dst;
  e->u.copy.src = src;
  e->u.copy.n = n;
  hostq_push (q, e, false);
  return true;
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
  int err = pthread_create (&q->thread, NULL, hostq_thread, q);
  if (err != 0)
    {
      ok_dev_error (base->dev, "cannot start an OpenACC queue's thread: %s",
		    strerror (err));
      pthread_cond_destroy (&q->cond);
      pthread_mutex_destroy (&q->lock);
      return false;
    }
  /* Only lazy queues wait for the device's synchronous operations.  */
  if (policy == OK_HOSTQ_LAZY)
    hostq_list (q);
  return true;
}

bool
ok_hostq_stop (struct ok_acc_queue *base)
{
  struct ok_hostq *q = ok_hostq (base);
  bool ok = ok_hostq_wait (base);
  if (q->policy == OK_HOSTQ_LAZY)
    hostq_unlist (q);
  pthread_mutex_lock (&q->lock);
  q->stopping = true;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  pthread_join (q->thread, NULL);
  pthread_cond_destroy (&q->cond);
  pthread_mutex_destroy (&q->lock);
  return ok;
}
