/* OpenACC on GCN devices: launch dimensions, async queues, properties,
   as GCC's gcn plugin (libgomp/plugin/plugin-gcn.c of GCC 12 to 16:
   gcn_exec, struct goacc_asyncqueue, GOMP_OFFLOAD_openacc_*) does them.

   A launch goes through the same path as an OpenMP target region
   (hsa-launch.c): GCC's OpenACC kernels read the same kernel arguments
   as its OpenMP ones (GCC's run_kernel serves both), the argument block
   address first, so the image's layout (ABI 2 or 3) decides them here
   too.  An OpenACC gang is a work-group (an OpenMP team), a worker a
   64-lane wavefront (an OpenMP thread), a vector lane a lane: the
   dispatch is (gangs, 64, workers) work-items in work-groups of (1, 64,
   workers), never more than 16 workers, fewer when the kernel's vector
   registers do not allow them.

   A queue is GCC's: a list of entries that a thread of the queue's own
   runs in order as soon as they come, launching on an HSA queue of the
   queue's own and copying with the backend's copies.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn-acc-dims.h"
#include "hsa-internal.h"

/* Dimensions.  */

void
gcn_acc_dims (const struct gcn_device *dev, const struct gcn_kernel *k,
	      const unsigned asked[OK_ACC_DIMS], unsigned dims[OK_ACC_DIMS])
{
  const unsigned fixed[OK_ACC_DIMS] = { k->oacc_dims[0], k->oacc_dims[1],
					k->oacc_dims[2] };
  ok_gcn_acc_dims (dev->cu_count, fixed, asked, dims);
}

/* Queues.  */

enum gcn_acc_kind
{
  GCN_ACC_EXEC,
  GCN_ACC_COPY,
  GCN_ACC_CALLBACK,
  GCN_ACC_PLACEHOLDER,		/* Set MARKER.  */
  GCN_ACC_WAIT			/* Wait until MARKER is set.  */
};

/* A placeholder of GCC's plugin: the first queue's entry sets it, the
   later queue's waits for it.  The last of the two entries run frees
   it.  */
struct gcn_acc_marker
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool set;
  int refs;
};

struct gcn_acc_entry
{
  struct gcn_acc_entry *next;
  enum gcn_acc_kind kind;
  union
  {
    struct
    {
      void *fn;
      void *args;
      struct ok_launch launch;
    } exec;
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
    struct gcn_acc_marker *marker;
  } u;
};

static struct gcn_acc_queue *
gcn_acc_queue (struct ok_acc_queue *q)
{
  return (struct gcn_acc_queue *) q;
}

static void
gcn_marker_put (struct gcn_acc_marker *m)
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

static bool
gcn_acc_copy_now (struct ok_device *dev, enum ok_copy_dir dir, void *dst,
		  const void *src, size_t n)
{
  switch (dir)
    {
    case OK_COPY_H2D:
      return gcn_host2dev (dev, dst, src, n);
    case OK_COPY_D2H:
      return gcn_dev2host (dev, dst, src, n);
    case OK_COPY_D2D:
      return gcn_dev2dev (dev, dst, src, n);
    }
  return false;
}

/* Run entry E of Q on Q's thread; false after a reported error.  */
static bool
gcn_acc_run_entry (struct gcn_acc_queue *q, struct gcn_acc_entry *e)
{
  struct ok_device *dev = q->base.dev;
  switch (e->kind)
    {
    case GCN_ACC_EXEC:
      return ok_device_run (dev, e->u.exec.fn, e->u.exec.args,
			    &e->u.exec.launch);
    case GCN_ACC_COPY:
      return gcn_acc_copy_now (dev, e->u.copy.dir, e->u.copy.dst,
			       e->u.copy.src, e->u.copy.n);
    case GCN_ACC_CALLBACK:
      e->u.callback.fn (e->u.callback.data);
      return true;
    case GCN_ACC_PLACEHOLDER:
      pthread_mutex_lock (&e->u.marker->lock);
      e->u.marker->set = true;
      pthread_cond_broadcast (&e->u.marker->cond);
      pthread_mutex_unlock (&e->u.marker->lock);
      gcn_marker_put (e->u.marker);
      return true;
    case GCN_ACC_WAIT:
      pthread_mutex_lock (&e->u.marker->lock);
      while (!e->u.marker->set)
	pthread_cond_wait (&e->u.marker->cond, &e->u.marker->lock);
      pthread_mutex_unlock (&e->u.marker->lock);
      gcn_marker_put (e->u.marker);
      return true;
    }
  return false;
}

/* Q's thread (GCC's drain_queue): run the entries in order as they come,
   until the queue stops with nothing left.  */
static void *
gcn_acc_drain (void *arg)
{
  struct gcn_acc_queue *q = arg;
  gcn_launch_on (q->hsa_queue);
  pthread_mutex_lock (&q->lock);
  for (;;)
    {
      while (q->head == NULL && !q->stopping)
	pthread_cond_wait (&q->cond, &q->lock);
      if (q->head == NULL)
	break;
      struct gcn_acc_entry *e = q->head;
      q->head = e->next;
      if (q->head == NULL)
	q->tail = NULL;
      pthread_mutex_unlock (&q->lock);

      bool ok = gcn_acc_run_entry (q, e);
      free (e);

      pthread_mutex_lock (&q->lock);
      if (!ok)
	q->failed = true;
      q->done++;
      pthread_cond_broadcast (&q->cond);
    }
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

/* A new entry of KIND for Q, or NULL after a message.  */
static struct gcn_acc_entry *
gcn_acc_entry_new (struct gcn_acc_queue *q, enum gcn_acc_kind kind)
{
  struct gcn_acc_entry *e = calloc (1, sizeof *e);
  if (e == NULL)
    ok_dev_error (q->base.dev, "out of memory queueing OpenACC work");
  else
    e->kind = kind;
  return e;
}

static void
gcn_acc_push (struct gcn_acc_queue *q, struct gcn_acc_entry *e)
{
  pthread_mutex_lock (&q->lock);
  if (q->tail != NULL)
    q->tail->next = e;
  else
    q->head = e;
  q->tail = e;
  q->queued++;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
}

bool
gcn_acc_queue_init (struct ok_acc_queue *base)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  struct gcn_device *dev = gcn_dev (base->dev);
  /* GCC's ASYNC_QUEUE_SIZE: the thread has one kernel in flight at a
     time, and the runtime takes no fewer.  */
  hsa_status_t s = ok_hsa.hsa_queue_create (dev->agent, 64,
					    HSA_QUEUE_TYPE_MULTI,
					    gcn_queue_callback, dev,
					    UINT32_MAX, UINT32_MAX,
					    &q->hsa_queue);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (base->dev, "cannot create an OpenACC queue's HSA"
			 " queue", "hsa_queue_create", s);
      return false;
    }
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->cond, NULL);
  int err = pthread_create (&q->thread, NULL, gcn_acc_drain, q);
  if (err != 0)
    {
      ok_dev_error (base->dev, "cannot start an OpenACC queue's thread: %s",
		    strerror (err));
      pthread_cond_destroy (&q->cond);
      pthread_mutex_destroy (&q->lock);
      ok_dev_teardown_ok (base->dev, ok_hsa.hsa_queue_destroy (q->hsa_queue),
			  "destroy an OpenACC queue's HSA queue",
			  "hsa_queue_destroy");
      return false;
    }
  return true;
}

/* Wait until everything queued on Q so far has run; whether all of it
   succeeded since the last wait.  */
static bool
gcn_acc_drain_wait (struct gcn_acc_queue *q)
{
  pthread_mutex_lock (&q->lock);
  uint64_t target = q->queued;
  while (q->done < target)
    pthread_cond_wait (&q->cond, &q->lock);
  bool ok = !q->failed;
  q->failed = false;
  pthread_mutex_unlock (&q->lock);
  return ok;
}

bool
gcn_acc_queue_fini (struct ok_acc_queue *base)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  bool ok = gcn_acc_drain_wait (q);
  pthread_mutex_lock (&q->lock);
  q->stopping = true;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  pthread_join (q->thread, NULL);
  pthread_cond_destroy (&q->cond);
  pthread_mutex_destroy (&q->lock);
  ok &= ok_dev_teardown_ok (base->dev,
			    ok_hsa.hsa_queue_destroy (q->hsa_queue),
			    "destroy an OpenACC queue's HSA queue",
			    "hsa_queue_destroy");
  q->hsa_queue = NULL;
  return ok;
}

int
gcn_acc_queue_test (struct ok_acc_queue *base)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  pthread_mutex_lock (&q->lock);
  int r = q->failed ? -1 : q->done == q->queued;
  pthread_mutex_unlock (&q->lock);
  return r;
}

bool
gcn_acc_queue_wait (struct ok_acc_queue *base)
{
  return gcn_acc_drain_wait (gcn_acc_queue (base));
}

bool
gcn_acc_queue_join (struct ok_acc_queue *first_base,
		    struct ok_acc_queue *later_base)
{
  struct gcn_acc_queue *first = gcn_acc_queue (first_base);
  struct gcn_acc_queue *later = gcn_acc_queue (later_base);
  struct gcn_acc_entry *mark = gcn_acc_entry_new (first,
						  GCN_ACC_PLACEHOLDER);
  if (mark == NULL)
    return false;
  struct gcn_acc_entry *wait = gcn_acc_entry_new (later, GCN_ACC_WAIT);
  struct gcn_acc_marker *m = wait != NULL ? calloc (1, sizeof *m) : NULL;
  if (m == NULL)
    {
      if (wait != NULL)
	ok_dev_error (first_base->dev, "out of memory queueing OpenACC"
		      " work");
      free (mark);
      free (wait);
      return false;
    }
  pthread_mutex_init (&m->lock, NULL);
  pthread_cond_init (&m->cond, NULL);
  m->refs = 2;
  mark->u.marker = wait->u.marker = m;
  gcn_acc_push (first, mark);
  gcn_acc_push (later, wait);
  return true;
}

bool
gcn_acc_queue_callback (struct ok_acc_queue *base, void (*fn) (void *),
			void *data)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  struct gcn_acc_entry *e = gcn_acc_entry_new (q, GCN_ACC_CALLBACK);
  if (e == NULL)
    return false;
  e->u.callback.fn = fn;
  e->u.callback.data = data;
  gcn_acc_push (q, e);
  return true;
}

bool
gcn_acc_queue_copy (struct ok_acc_queue *base, enum ok_copy_dir dir,
		    void *dst, const void *src, size_t n)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  struct gcn_acc_entry *e = gcn_acc_entry_new (q, GCN_ACC_COPY);
  if (e == NULL)
    return false;
  e->u.copy.dir = dir;
  e->u.copy.dst = dst;
  e->u.copy.src = src;
  e->u.copy.n = n;
  gcn_acc_push (q, e);
  return true;
}

/* Launches.  */

bool
gcn_acc_exec (struct ok_device *d, void *fn, void *args,
	      const unsigned asked[OK_ACC_DIMS], struct ok_acc_queue *base)
{
  struct gcn_device *dev = gcn_dev (d);
  const struct gcn_kernel *k = fn;
  if (k == NULL)
    {
      ok_dev_error (d, "no OpenACC kernel to run");
      return false;
    }
  unsigned dims[OK_ACC_DIMS];
  gcn_acc_dims (dev, k, asked, dims);
  /* hsa-launch.c's geometry then limits the workers to 16 and to what
     the kernel's registers allow, as GCC's run_kernel does.  */
  struct ok_launch launch = { .num_teams = (int) dims[OK_ACC_GANG],
			      .thread_limit = (int) dims[OK_ACC_WORKER] };
  OK_DEBUG ("%s: OpenACC kernel %s: %u gangs of %u workers%s", d->label,
	    k->name, dims[OK_ACC_GANG], dims[OK_ACC_WORKER],
	    base != NULL ? ", queued" : "");

  /* GCC's plugin says the dimensions it chose, before any limit.  */
  ok_acc_launch_event (false, k->name, dims);
  bool ok;
  if (base == NULL)
    ok = ok_device_run (d, fn, args, &launch);
  else
    {
      struct gcn_acc_queue *q = gcn_acc_queue (base);
      struct gcn_acc_entry *e = gcn_acc_entry_new (q, GCN_ACC_EXEC);
      ok = e != NULL;
      if (ok)
	{
	  e->u.exec.fn = fn;
	  e->u.exec.args = args;
	  e->u.exec.launch = launch;
	  gcn_acc_push (q, e);
	}
    }
  if (ok)
    ok_acc_launch_event (true, k->name, dims);
  return ok;
}

/* Properties.  */

/* The device's name, vendor and driver for acc_get_property, read once:
   the core hands out pointers to them.  */
static pthread_mutex_t gcn_acc_names_lock = PTHREAD_MUTEX_INITIALIZER;

struct gcn_acc_names
{
  bool read;
  char name[64], vendor[64], driver[32];
};

/* One record per agent: the device structures are the core's.  */
static struct gcn_acc_names gcn_acc_names[HSA_MAX_AGENTS];

/* Read DEV's names when they are not yet; false when the runtime cannot
   say them (a property without a value, as GCC's plugin answers it).  */
static const struct gcn_acc_names *
gcn_acc_names_of (struct gcn_device *dev)
{
  struct gcn_acc_names *n = &gcn_acc_names[dev->base.local];
  pthread_mutex_lock (&gcn_acc_names_lock);
  if (!n->read)
    {
      uint16_t major = 0, minor = 0;
      char name[64] = "", vendor[64] = "";
      if (ok_hsa.hsa_agent_get_info (dev->agent, HSA_AGENT_INFO_NAME, name)
	  == HSA_STATUS_SUCCESS
	  && ok_hsa.hsa_agent_get_info (dev->agent,
					HSA_AGENT_INFO_VENDOR_NAME, vendor)
	  == HSA_STATUS_SUCCESS
	  && ok_hsa.hsa_system_get_info != NULL
	  && ok_hsa.hsa_system_get_info (HSA_SYSTEM_INFO_VERSION_MAJOR,
					 &major) == HSA_STATUS_SUCCESS
	  && ok_hsa.hsa_system_get_info (HSA_SYSTEM_INFO_VERSION_MINOR,
					 &minor) == HSA_STATUS_SUCCESS)
	{
	  name[sizeof name - 1] = vendor[sizeof vendor - 1] = '\0';
	  memcpy (n->name, name, sizeof name);
	  memcpy (n->vendor, vendor, sizeof vendor);
	  /* GCC's init_hsa_context's words.  */
	  snprintf (n->driver, sizeof n->driver, "HSA Runtime %hu.%hu",
		    (unsigned short) major, (unsigned short) minor);
	  n->read = true;
	}
      else
	OK_DEBUG ("%s: the runtime cannot name the device", dev->base.label);
    }
  pthread_mutex_unlock (&gcn_acc_names_lock);
  return n->read ? n : NULL;
}

bool
gcn_acc_property (struct ok_device *d, enum ok_acc_prop prop, size_t *num,
		  const char **str)
{
  struct gcn_device *dev = gcn_dev (d);
  const struct gcn_acc_names *n;
  switch (prop)
    {
    case OK_ACC_PROP_MEMORY:
      {
	/* The size of the region device memory comes from.  */
	size_t size = 0;
	if (ok_hsa.hsa_region_get_info (dev->data_region,
					HSA_REGION_INFO_SIZE, &size)
	    != HSA_STATUS_SUCCESS)
	  return false;
	*num = size;
	return true;
      }
    case OK_ACC_PROP_FREE_MEMORY:
      /* The runtime does not say; nor does GCC's plugin.  */
      return false;
    case OK_ACC_PROP_NAME:
    case OK_ACC_PROP_VENDOR:
    case OK_ACC_PROP_DRIVER:
      n = gcn_acc_names_of (dev);
      if (n == NULL)
	return false;
      *str = (prop == OK_ACC_PROP_NAME ? n->name
	      : prop == OK_ACC_PROP_VENDOR ? n->vendor : n->driver);
      return true;
    }
  return false;
}
