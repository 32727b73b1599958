/* OpenACC: libgomp's GOMP_OFFLOAD_openacc_* entry points, once, over the
   backends' acc_* hooks (backend.h).

   A plugin that says GOMP_OFFLOAD_CAP_OPENACC_200 must have every one of
   them, or libgomp drops it whole, OpenMP included; and libgomp then
   registers its devices for OpenACC, so that an OpenACC program with no
   ACC_DEVICE_TYPE runs there instead of on the host.  So the plugin says
   it only when every backend that has devices can run OpenACC
   (core_acc_caps): a GPU backend without it keeps OpenACC programs on the
   host, as before.

   libgomp passes no device to a launch: the thread's device is the
   thread data create_thread_data gave (GOMP_PLUGIN_acc_thread), here the
   device itself.  A queue (libgomp's struct goacc_asyncqueue) is the
   backend's record, which begins with struct ok_acc_queue.

   The arguments of a launch: libgomp 13 and newer pass the device
   address of the block of argument addresses, which they mapped
   themselves; libgomp 12 passes each argument's device address (NULL:
   use the host address, an unmapped pointer) in host memory, and the
   plugin makes the device block, as GCC 12's plugins do.

   Profiling (libgomp's acc_prof.h interface): libgomp dispatches the
   events of what it does, the plugin those of what only it does: the
   allocations and frees of device memory (core-memory.c), the upload of
   the argument block it makes, and the launches (ok_acc_launch_event,
   called by the backends around the start of a kernel).  */

#include <stdlib.h>
#include <string.h>

#include "core-internal.h"
#include "oacc-abi.h"

/* The device of the calling thread's OpenACC context; NULL, after a
   message, when libgomp set none up.  */
static struct ok_device *
core_acc_device (const char *what)
{
  struct ok_device *dev = GOMP_PLUGIN_acc_thread ();
  if (dev == NULL)
    ok_error ("cannot %s: the thread has no OpenACC device", what);
  return dev;
}

static struct ok_acc_queue *
core_acc_queue (struct goacc_asyncqueue *aq)
{
  return (struct ok_acc_queue *) aq;
}

/* Whether backend B runs OpenACC.  */
static bool
core_acc_backend (const struct ok_backend *b)
{
  return b->acc != NULL;
}

unsigned
core_acc_caps (void)
{
  bool any = false;
  for (int b = 0; ok_plugin.backends[b] != NULL; b++)
    if (core_backend_devices (b) > 0)
      {
	if (!core_acc_backend (ok_plugin.backends[b]))
	  {
	    OK_DEBUG ("no OpenACC: %s devices cannot run it",
		      ok_plugin.backends[b]->name);
	    return 0;
	  }
	any = true;
      }
  return any ? OK_GOMP_CAP_OPENACC_200 : 0;
}

/* Profiling.  */

/* The calling thread's profiling state while a tool listens, else NULL.  */
static struct ok_goacc_thread *
core_acc_profiling (void)
{
  struct ok_goacc_thread *thr = GOMP_PLUGIN_goacc_thread ();
  return thr != NULL && thr->prof_info != NULL ? thr : NULL;
}

bool
ok_acc_profiling (void)
{
  return core_acc_profiling () != NULL;
}

/* Dispatch event TYPE, INFO (VALID_BYTES of its kind's structure), as
   GCC's plugins do: implicit, in a parallel construct, the device API the
   plugin's.  The members this sets begin every kind's structure
   alike.  */
static void
core_acc_dispatch (struct ok_goacc_thread *thr, acc_event_t type,
		   int valid_bytes, acc_event_info *info)
{
  thr->prof_info->event_type = type;
  info->other_event.event_type = type;
  info->other_event.valid_bytes = valid_bytes;
  info->other_event.parent_construct = acc_construct_parallel;
  info->other_event.implicit = 1;
  thr->api_info->device_api = (acc_device_api) ok_plugin.acc_device_api;
  GOMP_PLUGIN_goacc_profiling_dispatch (thr->prof_info, info,
					thr->api_info);
}

/* Data event TYPE about N bytes at device address DEVPTR (host address
   HOSTPTR).  */
static void
core_acc_data_event (struct ok_goacc_thread *thr, acc_event_t type,
		     size_t n, const void *hostptr, const void *devptr)
{
  acc_event_info info;
  memset (&info, 0, sizeof info);
  info.data_event.bytes = n;
  info.data_event.host_ptr = hostptr;
  info.data_event.device_ptr = devptr;
  core_acc_dispatch (thr, type, _ACC_DATA_EVENT_INFO_VALID_BYTES, &info);
}

void
core_acc_alloc_event (void *ptr, size_t size)
{
  struct ok_goacc_thread *thr = core_acc_profiling ();
  if (thr != NULL)
    core_acc_data_event (thr, acc_ev_alloc, size, NULL, ptr);
}

void
core_acc_free_event (void *ptr)
{
  struct ok_goacc_thread *thr = core_acc_profiling ();
  if (thr != NULL)
    /* The size is not known here; GCC's plugins say -1 too.  */
    core_acc_data_event (thr, acc_ev_free, (size_t) -1, NULL, ptr);
}

/* The launch event of the calling thread: the end event is the start
   event's structure again, as in GCC's plugins, so that what a tool
   wrote into it at the start (its TOOL_INFO) is there at the end.  */
static __thread acc_event_info core_launch_info;

void
ok_acc_launch_event (bool end, const char *kernel,
		     const unsigned dims[OK_ACC_DIMS])
{
  struct ok_goacc_thread *thr = core_acc_profiling ();
  if (thr == NULL)
    return;
  acc_event_t type = end ? acc_ev_enqueue_launch_end
    : acc_ev_enqueue_launch_start;
  acc_event_info info;
  memset (&info, 0, sizeof info);
  if (end)
    info = core_launch_info;
  info.launch_event.kernel_name = kernel;
  info.launch_event.num_gangs = dims[OK_ACC_GANG];
  info.launch_event.num_workers = dims[OK_ACC_WORKER];
  info.launch_event.vector_length = dims[OK_ACC_VECTOR];
  core_acc_dispatch (thr, type, _ACC_LAUNCH_EVENT_INFO_VALID_BYTES, &info);
  core_launch_info = info;
}

/* Thread data and properties.  */

void *
GOMP_OFFLOAD_openacc_create_thread_data (int ord)
{
  return core_device (ord, "start OpenACC on a thread");
}

void
GOMP_OFFLOAD_openacc_destroy_thread_data (void *data)
{
  (void) data;
}

union ok_goacc_property_value
GOMP_OFFLOAD_openacc_get_property (int ord, int prop)
{
  union ok_goacc_property_value v = { .val = 0 };
  struct ok_device *dev = core_device (ord, "read a device property");
  if (dev == NULL)
    return v;
  const struct ok_acc_ops *acc = dev->backend->acc;
  size_t num = 0;
  struct ok_acc_names names = { NULL, NULL, NULL };
  switch (prop)
    {
    case OK_ACC_PROP_MEMORY:
    case OK_ACC_PROP_FREE_MEMORY:
      if (acc->memory (dev, prop == OK_ACC_PROP_FREE_MEMORY, &num))
	v.val = num;
      break;
    case OK_ACC_PROP_NAME:
    case OK_ACC_PROP_VENDOR:
    case OK_ACC_PROP_DRIVER:
      acc->names (dev, &names);
      v.ptr = (prop == OK_ACC_PROP_NAME ? names.name
	       : prop == OK_ACC_PROP_VENDOR ? names.vendor : names.driver);
      break;
    default:
      /* libgomp checks the property itself; an unknown one has no
	 value, as in GCC's plugins.  */
      break;
    }
  return v;
}

/* Launches.  */

/* libgomp 12's arguments: the block of MAPNUM device addresses, each
   DEVADDRS[I] or, when NULL, HOSTADDRS[I], made on DEV and uploaded, on Q
   when not NULL, as GCC 12's plugins upload it.  Its device address, or
   NULL after a message; *HOST_BLOCK is the host copy, which the upload
   on Q reads until it has run.  */
static void *
core_acc_args_block (struct ok_device *dev, struct ok_acc_queue *q,
		     size_t mapnum, void **hostaddrs, void **devaddrs,
		     void ***host_block)
{
  size_t bytes = mapnum * sizeof (void *);
  void **block = malloc (bytes);
  if (block == NULL)
    {
      ok_dev_error (dev, "out of memory");
      return NULL;
    }
  for (size_t i = 0; i < mapnum; i++)
    block[i] = devaddrs[i] != NULL ? devaddrs[i] : hostaddrs[i];
  void *dp = core_dev_alloc (dev, bytes);
  if (dp == NULL)
    {
      free (block);
      return NULL;
    }
  struct ok_goacc_thread *thr = core_acc_profiling ();
  if (thr != NULL)
    core_acc_data_event (thr, acc_ev_enqueue_upload_start, bytes, block, dp);
  bool ok = (q != NULL
	     ? dev->backend->acc->queue_copy (q, OK_COPY_H2D, dp, block, bytes)
	     : dev->backend->host2dev (dev, dp, block, bytes));
  if (thr != NULL && ok)
    core_acc_data_event (thr, acc_ev_enqueue_upload_end, bytes, block, dp);
  if (!ok)
    {
      free (block);
      core_dev_free (dev, dp);
      return NULL;
    }
  if (q == NULL)
    free (block);
  *host_block = q != NULL ? block : NULL;
  return dp;
}

/* What a queue callback frees after an asynchronous launch of libgomp
   12's form: its argument block, on the device and on the host.  */
struct core_acc_block
{
  struct ok_device *dev;
  void *block;
  void **host_block;
};

static void
core_acc_free_block (void *data)
{
  struct core_acc_block *b = data;
  core_dev_free (b->dev, b->block);
  free (b->host_block);
  free (b);
}

/* Run FN on the calling thread's device as libgomp asked, on AQ or, when
   NULL, synchronously.  Failures end the program, as libgomp expects of
   a launch (its entry points return nothing).  */
static void
core_acc_exec (void (*fn) (void *), size_t mapnum, void **hostaddrs,
	       void **devaddrs, unsigned *dims, struct goacc_asyncqueue *aq)
{
  struct ok_device *dev = core_acc_device ("run an OpenACC region");
  if (dev == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: OpenACC region not run",
		       ok_plugin.name);
  struct ok_acc_queue *q = core_acc_queue (aq);
  unsigned d[OK_ACC_DIMS];
  for (int i = 0; i < OK_ACC_DIMS; i++)
    d[i] = dims != NULL ? dims[i] : 0;
  OK_DEBUG ("%s: OpenACC region %p (gang %u, worker %u, vector %u)%s",
	    dev->label, (void *) fn, d[OK_ACC_GANG], d[OK_ACC_WORKER],
	    d[OK_ACC_VECTOR], q != NULL ? " queued" : "");

  void *args = devaddrs;
  void *block = NULL;
  void **host_block = NULL;
  if (OK_GCC_ACC_ARGS_ON_HOST (ok_libgomp_gcc ()) && mapnum > 0)
    {
      block = core_acc_args_block (dev, q, mapnum, hostaddrs, devaddrs,
				   &host_block);
      if (block == NULL)
	GOMP_PLUGIN_fatal ("offloadkit-%s: OpenACC region not run",
			   ok_plugin.name);
      args = block;
    }
  else if (mapnum == 0)
    args = NULL;

  if (!dev->backend->acc->exec (dev, (void *) fn, args, d, q))
    GOMP_PLUGIN_fatal ("offloadkit-%s: OpenACC region on %s failed",
		       ok_plugin.name, dev->label);
  if (block == NULL)
    return;
  if (q == NULL)
    {
      core_dev_free (dev, block);
      return;
    }
  struct core_acc_block *b = malloc (sizeof *b);
  if (b != NULL)
    *b = (struct core_acc_block) { dev, block, host_block };
  if (b == NULL
      || !dev->backend->acc->queue_callback (q, core_acc_free_block, b))
    GOMP_PLUGIN_fatal ("offloadkit-%s: cannot queue the end of an OpenACC"
		       " region on %s", ok_plugin.name, dev->label);
}

void
GOMP_OFFLOAD_openacc_exec (void (*fn) (void *), size_t mapnum,
			   void **hostaddrs, void **devaddrs, unsigned *dims,
			   void *targ_mem_desc)
{
  (void) targ_mem_desc;
  core_acc_exec (fn, mapnum, hostaddrs, devaddrs, dims, NULL);
}

void
GOMP_OFFLOAD_openacc_async_exec (void (*fn) (void *), size_t mapnum,
				 void **hostaddrs, void **devaddrs,
				 unsigned *dims, void *targ_mem_desc,
				 struct goacc_asyncqueue *aq)
{
  (void) targ_mem_desc;
  if (aq == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: OpenACC region queued on no queue",
		       ok_plugin.name);
  core_acc_exec (fn, mapnum, hostaddrs, devaddrs, dims, aq);
}

/* Queues.  */

struct goacc_asyncqueue *
GOMP_OFFLOAD_openacc_async_construct (int ord)
{
  struct ok_device *dev = core_device (ord, "make an OpenACC queue");
  if (dev == NULL)
    return NULL;
  struct ok_acc_queue *q = calloc (1, dev->backend->acc->queue_size);
  if (q == NULL)
    {
      ok_dev_error (dev, "cannot make an OpenACC queue: out of memory");
      return NULL;
    }
  q->dev = dev;
  if (!dev->backend->acc->queue_init (q))
    {
      free (q);
      return NULL;
    }
  return (struct goacc_asyncqueue *) q;
}

bool
GOMP_OFFLOAD_openacc_async_destruct (struct goacc_asyncqueue *aq)
{
  struct ok_acc_queue *q = core_acc_queue (aq);
  if (q == NULL)
    return true;
  bool ok = q->dev->backend->acc->queue_fini (q);
  free (q);
  return ok;
}

int
GOMP_OFFLOAD_openacc_async_test (struct goacc_asyncqueue *aq)
{
  struct ok_acc_queue *q = core_acc_queue (aq);
  return q->dev->backend->acc->queue_test (q);
}

bool
GOMP_OFFLOAD_openacc_async_synchronize (struct goacc_asyncqueue *aq)
{
  struct ok_acc_queue *q = core_acc_queue (aq);
  return q->dev->backend->acc->queue_wait (q);
}

bool
GOMP_OFFLOAD_openacc_async_serialize (struct goacc_asyncqueue *aq1,
				      struct goacc_asyncqueue *aq2)
{
  struct ok_acc_queue *first = core_acc_queue (aq1);
  struct ok_acc_queue *later = core_acc_queue (aq2);
  if (first == later)
    return true;
  if (first->dev != later->dev)
    {
      /* libgomp keeps queues per device; it never mixes them.  */
      ok_error ("cannot order OpenACC queues of %s and %s",
		first->dev->label, later->dev->label);
      return false;
    }
  return first->dev->backend->acc->queue_join (first, later);
}

void
GOMP_OFFLOAD_openacc_async_queue_callback (struct goacc_asyncqueue *aq,
					   void (*fn) (void *), void *data)
{
  struct ok_acc_queue *q = core_acc_queue (aq);
  if (!q->dev->backend->acc->queue_callback (q, fn, data))
    GOMP_PLUGIN_fatal ("offloadkit-%s: cannot queue a callback on %s",
		       ok_plugin.name, q->dev->label);
}

/* An asynchronous copy of N bytes on AQ of device ORD.  */
static bool
core_acc_copy (int ord, struct goacc_asyncqueue *aq, enum ok_copy_dir dir,
	       void *dst, const void *src, size_t n)
{
  struct ok_acc_queue *q = core_acc_queue (aq);
  struct ok_device *dev = core_device (ord, "queue a copy");
  if (dev == NULL)
    return false;
  if (q == NULL || q->dev != dev)
    {
      ok_dev_error (dev, "cannot queue a copy on a queue of another device");
      return false;
    }
  if (n == 0)
    return true;
  return dev->backend->acc->queue_copy (q, dir, dst, src, n);
}

bool
GOMP_OFFLOAD_openacc_async_host2dev (int ord, void *dst, const void *src,
				     size_t n, struct goacc_asyncqueue *aq)
{
  return core_acc_copy (ord, aq, OK_COPY_H2D, dst, src, n);
}

bool
GOMP_OFFLOAD_openacc_async_dev2host (int ord, void *dst, const void *src,
				     size_t n, struct goacc_asyncqueue *aq)
{
  return core_acc_copy (ord, aq, OK_COPY_D2H, dst, src, n);
}

/* libgomp 16 and newer.  */
bool
GOMP_OFFLOAD_openacc_async_dev2dev (int ord, void *dst, const void *src,
				    size_t n, struct goacc_asyncqueue *aq)
{
  return core_acc_copy (ord, aq, OK_COPY_D2D, dst, src, n);
}
