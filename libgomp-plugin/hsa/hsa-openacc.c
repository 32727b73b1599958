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
   runs in order as soon as they come (the core's eager host queue,
   host-queue.h), launching on an HSA queue of the queue's own and
   copying with the backend's copies.  */

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

static struct gcn_acc_queue *
gcn_acc_queue (struct ok_acc_queue *q)
{
  return (struct gcn_acc_queue *) q;
}

/* The first thing Q's thread does: its launches go to Q's HSA queue.  */
static void
gcn_acc_queue_thread (struct ok_hostq *q)
{
  gcn_launch_on (gcn_acc_queue (&q->base)->hsa_queue);
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
  if (!ok_hostq_start (base, OK_HOSTQ_EAGER, gcn_acc_queue_thread))
    {
      ok_dev_teardown_ok (base->dev, ok_hsa.hsa_queue_destroy (q->hsa_queue),
			  "destroy an OpenACC queue's HSA queue",
			  "hsa_queue_destroy");
      return false;
    }
  return true;
}

bool
gcn_acc_queue_fini (struct ok_acc_queue *base)
{
  struct gcn_acc_queue *q = gcn_acc_queue (base);
  bool ok = ok_hostq_stop (base);
  ok &= ok_dev_teardown_ok (base->dev,
			    ok_hsa.hsa_queue_destroy (q->hsa_queue),
			    "destroy an OpenACC queue's HSA queue",
			    "hsa_queue_destroy");
  q->hsa_queue = NULL;
  return ok;
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
			      .thread_limit = (int) dims[OK_ACC_WORKER],
			      .openacc = true };
  OK_DEBUG ("%s: OpenACC kernel %s: %u gangs of %u workers%s", d->label,
	    k->name, dims[OK_ACC_GANG], dims[OK_ACC_WORKER],
	    base != NULL ? ", queued" : "");

  /* GCC's plugin says the dimensions it chose, before any limit.  */
  ok_acc_launch_event (false, k->name, dims);
  bool ok;
  if (base == NULL)
    ok = ok_device_run (d, fn, args, &launch);
  else
    ok = ok_hostq_launch (base, fn, args, &launch);
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
static struct gcn_acc_names gcn_acc_name_records[HSA_MAX_AGENTS];

/* Read DEV's names when they are not yet; false when the runtime cannot
   say them (a property without a value, as GCC's plugin answers it).  */
static const struct gcn_acc_names *
gcn_acc_names_of (struct gcn_device *dev)
{
  struct gcn_acc_names *n = &gcn_acc_name_records[dev->base.local];
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
gcn_acc_memory (struct ok_device *d, bool free, size_t *num)
{
  /* The runtime does not say what is free; nor does GCC's plugin.  All
     of it: the size of the region device memory comes from.  */
  size_t size = 0;
  if (free
      || ok_hsa.hsa_region_get_info (gcn_dev (d)->data_region,
				     HSA_REGION_INFO_SIZE, &size)
      != HSA_STATUS_SUCCESS)
    return false;
  *num = size;
  return true;
}

void
gcn_acc_names (struct ok_device *d, struct ok_acc_names *names)
{
  const struct gcn_acc_names *n = gcn_acc_names_of (gcn_dev (d));
  if (n != NULL)
    *names = (struct ok_acc_names) { n->name, n->vendor, n->driver };
}
