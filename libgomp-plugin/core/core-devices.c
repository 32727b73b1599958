/* Devices: libgomp numbers a plugin's devices 0..N-1 (its "target id").
   The core gives each backend a contiguous range of those numbers, in the
   order of OK_PLUGIN.backends, starts a device when libgomp asks, and
   stops it: first waiting for its asynchronous launches, then unloading
   its images and freeing its pool, then letting the backend free the
   rest (as LLVM's GenericDeviceTy::deinit orders it).  */

#include <stdio.h>
#include <stdlib.h>

#include "core-internal.h"
#include "trace.h"

/* The mark by which another offloadkit plugin of the process tells that
   this one is loaded (emu-setting.c): GCC's own plugin of the same file
   name has no such symbol.  */
const char offloadkit_plugin[] = "offloadkit";

/* A plugin combines at most a few kinds of device.  */
#define CORE_MAX_BACKENDS 8

/* Filled once, by the first entry point that needs it (normally
   GOMP_OFFLOAD_get_num_devices), and kept until the plugin is unloaded.  */
static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static bool core_probed;
static int core_num_devices;
static struct core_slot *core_slots;
/* libgomp 13+: the program's "requires" features, given with the first
   GOMP_OFFLOAD_get_num_devices; and whether a backend that has devices
   was left out for not meeting them.  */
static unsigned core_requires;
static bool core_requires_unmet;
/* The program requires unified shared memory or self maps, and the
   plugin has devices, all of which give it (ok_usm).  */
static bool core_usm;

/* The requirements that make libgomp 15+ map nothing (GOMP_OFFLOAD_CAP_
   SHARED_MEM).  */
#define CORE_REQUIRES_USM \
  (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY | OK_GOMP_REQUIRES_SELF_MAPS)

/* The features of a "requires" mask a device must provide (libgomp
   clears TARGET_USED itself from GCC 13, but not everywhere).  */
#define CORE_REQUIRES_FEATURES(mask) \
  ((mask) & ~OK_GOMP_REQUIRES_TARGET_USED)

/* Whether backend B can be driven by this core: a programming error
   otherwise, said once with GOMP_DEBUG=1, and B offers no devices.  */
static bool
core_backend_ok (const struct ok_backend *b)
{
  bool ok = (b->device_size >= sizeof (struct ok_device)
	     && b->job_size >= sizeof (struct ok_job)
	     && b->job_size <= OK_JOB_MAX
	     && ((b->raw_alloc != NULL && b->raw_free != NULL)
		 || (b->alloc != NULL && b->free != NULL))
	     && b->launch != NULL && b->finish != NULL);
  if (!ok)
    OK_DEBUG ("backend %s is incomplete; no %s devices", b->name, b->name);
  return ok;
}

/* How many devices each backend has, asked once (backends probe once),
   before any "requires" mask is applied: get_caps, which libgomp calls
   before get_num_devices, needs it too.  Called with CORE_LOCK held.  */
static bool core_counted;
static int core_counts[CORE_MAX_BACKENDS];

static void
core_count_locked (void)
{
  if (core_counted)
    return;
  /* Before the backends start: they may report what they load.  */
  ok_trace_init ();
  for (int b = 0; b < CORE_MAX_BACKENDS && ok_plugin.backends[b] != NULL;
       b++)
    {
      const struct ok_backend *backend = ok_plugin.backends[b];
      int n = core_backend_ok (backend) ? backend->probe () : 0;
      core_counts[b] = n < 0 || n > 4096 ? 0 : n;
    }
  core_counted = true;
}

int
core_backend_devices (int b)
{
  pthread_mutex_lock (&core_lock);
  core_count_locked ();
  int n = b < CORE_MAX_BACKENDS ? core_counts[b] : 0;
  pthread_mutex_unlock (&core_lock);
  return n;
}

/* Number the devices of every backend that meets the program's
   requirements, once.  */
static void
core_probe (void)
{
  /* Every entry point comes here; after the first, no lock is needed.  */
  if (__atomic_load_n (&core_probed, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock (&core_lock);
  if (core_probed)
    {
      pthread_mutex_unlock (&core_lock);
      return;
    }
  core_count_locked ();

  int counts[CORE_MAX_BACKENDS] = { 0 };
  int total = 0;
  for (int b = 0; b < CORE_MAX_BACKENDS && ok_plugin.backends[b] != NULL;
       b++)
    {
      const struct ok_backend *backend = ok_plugin.backends[b];
      int n = core_counts[b];
      unsigned features = CORE_REQUIRES_FEATURES (core_requires);
      unsigned unmet = features & ~backend->requires_supported;
      /* libgomp 13 and 14 would go on mapping data as ever.  */
      if (!OK_GCC_HAS_USM (ok_libgomp_gcc ()))
	unmet |= features & CORE_REQUIRES_USM;
      if (n > 0 && unmet == 0 && features != 0
	  && backend->requires_unmet != NULL)
	unmet = backend->requires_unmet (features, n);
      if (n > 0 && unmet != 0)
	{
	  OK_DEBUG ("%d %s device%s left out: the program requires features"
		    " %#x they do not provide", n, backend->name,
		    n == 1 ? "" : "s", unmet);
	  core_requires_unmet = true;
	  continue;
	}
      counts[b] = n;
      total += n;
      OK_DEBUG ("%d %s device%s", n, backend->name, n == 1 ? "" : "s");
    }

  /* Only devices that meet the program's requirements were counted: with
     unified shared memory among them, libgomp 15+ gives them all the
     host's memory.  Said at start-up, which memory each kind has.  */
  unsigned usm = CORE_REQUIRES_FEATURES (core_requires) & CORE_REQUIRES_USM;
  core_usm = usm != 0 && total > 0;
  for (int b = 0; b < CORE_MAX_BACKENDS && ok_plugin.backends[b] != NULL;
       b++)
    if (counts[b] > 0)
      ok_trace_memory (ok_plugin.backends[b]->name, counts[b], usm);

  struct core_slot *slots = NULL;
  if (total > 0)
    {
      slots = calloc ((size_t) total, sizeof *slots);
      if (slots == NULL)
	{
	  ok_error ("out of memory");
	  total = 0;
	}
    }
  int ord = 0;
  for (int b = 0; slots != NULL && b < CORE_MAX_BACKENDS
		  && ok_plugin.backends[b] != NULL; b++)
    for (int i = 0; i < counts[b]; i++, ord++)
      {
	slots[ord].backend = ok_plugin.backends[b];
	slots[ord].local = i;
	pthread_mutex_init (&slots[ord].lock, NULL);
      }

  core_slots = slots;
  core_num_devices = ord;
  __atomic_store_n (&core_probed, true, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&core_lock);
}

struct core_slot *
core_slot (int ord, const char *what)
{
  core_probe ();
  if (ord < 0 || ord >= core_num_devices)
    {
      ok_error ("cannot %s: no device %d (the plugin has %d)", what, ord,
		core_num_devices);
      return NULL;
    }
  return &core_slots[ord];
}

/* For offloadkit-info: the backend and label of device ORD, initialised
   ("cuda: device 0 (NVIDIA H100, sm_90)"), into BUF; false when there is
   no such device.  Exported beside the GOMP_OFFLOAD_ entry points; no
   libgomp calls it.  */
bool
offloadkit_plugin_describe (int ord, char *buf, size_t len)
{
  if (ord < 0 || ord >= core_num_devices || buf == NULL || len == 0)
    return false;
  struct ok_device *dev = __atomic_load_n (&core_slots[ord].dev,
					   __ATOMIC_ACQUIRE);
  snprintf (buf, len, "%s: %s", core_slots[ord].backend->name,
	    dev != NULL ? dev->label : "not initialised");
  return true;
}

bool
ok_usm (void)
{
  core_probe ();
  return core_usm;
}

struct ok_device *
core_device (int ord, const char *what)
{
  struct core_slot *slot = core_slot (ord, what);
  if (slot == NULL)
    return NULL;
  struct ok_device *dev = __atomic_load_n (&slot->dev, __ATOMIC_ACQUIRE);
  if (dev == NULL)
    ok_error ("cannot %s: device %d is not initialised", what, ord);
  return dev;
}

void
ok_device_set_label (struct ok_device *dev, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (dev->label, sizeof dev->label, fmt, ap);
  va_end (ap);
}

/* Identity.  */

/* The GOMP_VERSION of the libgomp that loaded us: it refuses any other.  */
unsigned
GOMP_OFFLOAD_version (void)
{
  return ok_libgomp_version ();
}

const char *
GOMP_OFFLOAD_get_name (void)
{
  return ok_plugin.name;
}

/* OpenACC only where every backend with devices runs it
   (core-openacc.c).  */
unsigned int
GOMP_OFFLOAD_get_caps (void)
{
  return ok_plugin.caps | core_acc_caps ();
}

int
GOMP_OFFLOAD_get_type (void)
{
  return ok_plugin.device_type;
}

/* GCC 12's libgomp calls this without arguments, so REQUIRES_MASK is read
   only for a libgomp that passes it.  -1 (libgomp 13+) when the plugin
   has devices but none that meets the program's requirements.  The first
   call decides; later ones answer the same.  */
int
GOMP_OFFLOAD_get_num_devices (unsigned requires_mask)
{
  if (OK_GCC_HAS_REQUIRES (ok_libgomp_gcc ()))
    {
      pthread_mutex_lock (&core_lock);
      if (!core_probed)
	core_requires = requires_mask;
      pthread_mutex_unlock (&core_lock);
    }
  core_probe ();
  if (core_num_devices == 0 && core_requires_unmet)
    return -1;
  return core_num_devices;
}

/* Starting and stopping.  */

/* Free DEV's core half and DEV.  */
static void
core_device_free (struct ok_device *dev)
{
  ok_completion_destroy (&dev->async);
  pthread_mutex_destroy (&dev->images_lock);
  pthread_mutex_destroy (&dev->hostqs_lock);
  free (dev);
}

/* Allocate and start device ORD of SLOT; NULL after an error.  */
static struct ok_device *
core_device_start (struct core_slot *slot, int ord)
{
  const struct ok_backend *backend = slot->backend;
  struct ok_device *dev = calloc (1, backend->device_size);
  if (dev == NULL)
    {
      ok_error ("device %d: out of memory", ord);
      return NULL;
    }
  dev->backend = backend;
  dev->local = slot->local;
  dev->ord = ord;
  ok_device_set_label (dev, "device %d", ord);
  ok_completion_init (&dev->async, dev, core_complete);
  pthread_mutex_init (&dev->images_lock, NULL);
  pthread_mutex_init (&dev->hostqs_lock, NULL);
  /* The pool first: it only reads its setting and takes device memory
     when asked for some.  */
  if (!core_pool_init (dev))
    {
      core_device_free (dev);
      return NULL;
    }
  if (!backend->init_device (dev))
    {
      core_pool_fini (dev);
      core_device_free (dev);
      return NULL;
    }
  return dev;
}

bool
GOMP_OFFLOAD_init_device (int ord)
{
  struct core_slot *slot = core_slot (ord, "initialise a device");
  if (slot == NULL)
    return false;
  pthread_mutex_lock (&slot->lock);
  bool ok = true;
  if (slot->dev == NULL)
    {
      struct ok_device *dev = core_device_start (slot, ord);
      __atomic_store_n (&slot->dev, dev, __ATOMIC_RELEASE);
      ok = dev != NULL;
      OK_DEBUG ("device %d (%s %d) %s", ord, slot->backend->name, slot->local,
		ok ? "initialised" : "failed to initialise");
    }
  pthread_mutex_unlock (&slot->lock);
  return ok;
}

/* Stop DEV, SLOT's device: its asynchronous launches, its images, its
   pool, then the backend's part.  False if a step failed (reported); the
   device is gone anyway, or left in SLOT->left when it cannot be
   stopped.  */
static bool
core_device_stop (struct core_slot *slot, struct ok_device *dev)
{
  struct ok_device *region = ok_region_device ();
  if (region != NULL && region->backend == dev->backend)
    {
      /* exit () called inside a region that runs as host code (libgomp
	 finalises devices from atexit): the threads this would wait for
	 (the region's device's worker, and those of devices of its kind,
	 which wait for the region to end) wait for this one.  Leave
	 everything to the ending process.  */
      OK_DEBUG ("%s left running: the program exits from inside a target"
		" region", dev->label);
      slot->left = dev;
      return true;
    }
  if (dev->backend->fini_enter != NULL && !dev->backend->fini_enter (dev))
    {
      /* The driver is gone (the process is exiting and its own exit
	 handlers ran first), and has taken everything with it, launches
	 still to complete included.  */
      OK_DEBUG ("%s: its driver is already shut down", dev->label);
      slot->left = dev;
      return true;
    }
  if (!ok_completion_fini (&dev->async))
    {
      /* Called from the completion thread (by a completion that ended
	 the program): it is in the middle of its work.  */
      OK_DEBUG ("%s left running: the program exits from a completion",
		dev->label);
      slot->left = dev;
      return true;
    }
  bool ok = core_images_unload_all (dev);
  ok &= core_pool_fini (dev);
  ok &= dev->backend->fini_device (dev);
  core_device_free (dev);
  return ok;
}

bool
GOMP_OFFLOAD_fini_device (int ord)
{
  struct core_slot *slot = core_slot (ord, "finalise a device");
  if (slot == NULL)
    return false;
  pthread_mutex_lock (&slot->lock);
  bool ok = true;
  struct ok_device *dev = slot->dev;
  if (dev != NULL)
    {
      __atomic_store_n (&slot->dev, NULL, __ATOMIC_RELEASE);
      ok = core_device_stop (slot, dev);
      OK_DEBUG ("device %d (%s %d) finalised", ord, slot->backend->name,
		slot->local);
    }
  pthread_mutex_unlock (&slot->lock);
  return ok;
}

/* When the plugin is unloaded (dlclose; libgomp itself never does), free
   the device table, unless a device is still running or was left so:
   then its backend may still use it, and the process is about to end
   anyway.  */
__attribute__ ((destructor)) static void
core_unload (void)
{
  for (int i = 0; i < core_num_devices; i++)
    if (core_slots[i].dev != NULL || core_slots[i].left != NULL)
      return;
  for (int i = 0; i < core_num_devices; i++)
    pthread_mutex_destroy (&core_slots[i].lock);
  free (core_slots);
  core_slots = NULL;
  core_num_devices = 0;
  core_probed = false;
  core_counted = false;
  core_requires = 0;
  core_requires_unmet = false;
  core_usm = false;
}
