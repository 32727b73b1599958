/* The GOMP_OFFLOAD_* entry points, implemented once for every plugin.

   libgomp numbers a plugin's devices 0..N-1 (its "target id").  The core
   gives each backend a contiguous range of those numbers, in the order of
   OK_PLUGIN.backends, validates everything libgomp and the wrapper objects
   hand in, keeps track of which images are loaded on which device, and only
   then calls the backend with its own device state.  */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "desc-check.h"
#include "plugin-core.h"
#include "trace.h"

/* An image loaded on a device, keyed by the TARGET_DATA libgomp gives to
   load_image and unload_image.  */
struct core_image
{
  struct core_image *next;
  const void *target_data;
  void *handle;			/* The backend's.  */
};

struct core_device
{
  const struct ok_backend *backend;
  int local;			/* Index among the backend's devices.  */
  pthread_mutex_t lock;		/* Guards changes of STATE, and IMAGES.  */
  void *state;			/* Non-NULL while initialised.  */
  struct core_image *images;
};

/* A plugin combines at most a few kinds of device.  */
#define CORE_MAX_BACKENDS 8

/* Filled once, by the first entry point that needs it (normally
   GOMP_OFFLOAD_get_num_devices), and kept until the plugin is unloaded.  */
static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static bool core_probed;
static int core_num_devices;
static struct core_device *core_devices;

/* Ask every backend how many devices it has, once.  */
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

  /* Before the backends start: they may report what they load.  */
  ok_trace_init ();

  int counts[CORE_MAX_BACKENDS] = { 0 };
  int total = 0;
  for (int b = 0; b < CORE_MAX_BACKENDS && ok_plugin.backends[b] != NULL;
       b++)
    {
      int n = ok_plugin.backends[b]->probe ();
      if (n < 0 || n > 4096)
	n = 0;
      counts[b] = n;
      total += n;
      OK_DEBUG ("%d %s device%s", n, ok_plugin.backends[b]->name,
		n == 1 ? "" : "s");
    }

  struct core_device *devs = NULL;
  if (total > 0)
    {
      devs = calloc ((size_t) total, sizeof *devs);
      if (devs == NULL)
	{
	  GOMP_PLUGIN_error ("offloadkit-%s: out of memory", ok_plugin.name);
	  total = 0;
	}
    }
  int ord = 0;
  for (int b = 0; devs != NULL && b < CORE_MAX_BACKENDS
		  && ok_plugin.backends[b] != NULL; b++)
    for (int i = 0; i < counts[b]; i++, ord++)
      {
	devs[ord].backend = ok_plugin.backends[b];
	devs[ord].local = i;
	pthread_mutex_init (&devs[ord].lock, NULL);
      }

  core_devices = devs;
  core_num_devices = ord;
  __atomic_store_n (&core_probed, true, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&core_lock);
}

/* Return device ORD, or NULL after an error saying that WHAT failed.  */
static struct core_device *
core_device (int ord, const char *what)
{
  core_probe ();
  if (ord < 0 || ord >= core_num_devices)
    {
      GOMP_PLUGIN_error ("offloadkit-%s: cannot %s: no device %d (the plugin"
			 " has %d)", ok_plugin.name, what, ord,
			 core_num_devices);
      return NULL;
    }
  return &core_devices[ord];
}

/* Return the backend state of initialised device ORD, or NULL after an
   error.  Read without the device's lock: libgomp does not finalise a
   device while it still uses it, and a target region that calls back into
   the plugin (omp_target_alloc inside the region, say) must not wait for a
   lock that a loading thread holds while it waits for that region.  */
static void *
core_state (int ord, const char *what)
{
  struct core_device *dev = core_device (ord, what);
  if (dev == NULL)
    return NULL;
  void *state = __atomic_load_n (&dev->state, __ATOMIC_ACQUIRE);
  if (state == NULL)
    GOMP_PLUGIN_error ("offloadkit-%s: cannot %s: device %d is not"
		       " initialised", ok_plugin.name, what, ord);
  return state;
}

void
ok_dev_verror (const char *label, const char *fmt, va_list ap)
{
  char small[1024];
  va_list aq;
  va_copy (aq, ap);
  int n = vsnprintf (small, sizeof small, fmt, ap);
  char *text = small;
  if (n >= (int) sizeof small)
    {
      text = malloc ((size_t) n + 1);
      if (text != NULL)
	vsnprintf (text, (size_t) n + 1, fmt, aq);
      else
	text = small;		/* Cut short rather than nothing.  */
    }
  va_end (aq);
  GOMP_PLUGIN_error ("offloadkit-%s: %s: %s", ok_plugin.name, label,
		     n < 0 ? fmt : text);
  if (text != small)
    free (text);
}

/* Decode libgomp's target-argument vector ARGS (may be NULL) into
   LAUNCH.  As in GCC 12's nvptx and gcn plugins, only entries for all
   devices count: the ids of a device-specific entry are that device's
   own (for GCN, id 1 is GOMP_TARGET_ARG_HSA_KERNEL_ATTRIBUTES, whose
   value is a pointer, not NUM_TEAMS).  */
static void
core_decode_launch_args (void **args, struct ok_launch *launch)
{
  launch->num_teams = 0;
  launch->thread_limit = 0;
  if (args == NULL)
    return;
  while (*args != NULL)
    {
      intptr_t word = (intptr_t) *args++;
      intptr_t value;
      /* The value word may be anything, 0 included: only an id word of 0
	 ends the vector.  */
      if (word & OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM)
	value = (intptr_t) *args++;
      else
	value = word >> OK_GOMP_TARGET_ARG_VALUE_SHIFT;

      if ((word & OK_GOMP_TARGET_ARG_DEVICE_MASK)
	  != OK_GOMP_TARGET_ARG_DEVICE_ALL)
	continue;
      int clamped = (value > INT32_MAX ? INT32_MAX
		     : value < 0 ? 0 : (int) value);
      switch (word & OK_GOMP_TARGET_ARG_ID_MASK)
	{
	case OK_GOMP_TARGET_ARG_NUM_TEAMS:
	  launch->num_teams = clamped;
	  break;
	case OK_GOMP_TARGET_ARG_THREAD_LIMIT:
	  launch->thread_limit = clamped;
	  break;
	default:
	  /* No other id is defined for all devices.  */
	  break;
	}
    }
}

/* Identity.  */

unsigned
GOMP_OFFLOAD_version (void)
{
  return OK_GOMP_VERSION;
}

const char *
GOMP_OFFLOAD_get_name (void)
{
  return ok_plugin.name;
}

unsigned int
GOMP_OFFLOAD_get_caps (void)
{
  return ok_plugin.caps;
}

int
GOMP_OFFLOAD_get_type (void)
{
  return ok_plugin.device_type;
}

/* GCC 12 calls this without arguments (later versions pass the "requires"
   mask, which we could ignore the same way).  */
int
GOMP_OFFLOAD_get_num_devices (void)
{
  core_probe ();
  return core_num_devices;
}

/* Devices.  */

bool
GOMP_OFFLOAD_init_device (int ord)
{
  struct core_device *dev = core_device (ord, "initialise a device");
  if (dev == NULL)
    return false;
  pthread_mutex_lock (&dev->lock);
  bool ok = true;
  if (dev->state == NULL)
    {
      void *state = dev->backend->init_device (dev->local, ord);
      __atomic_store_n (&dev->state, state, __ATOMIC_RELEASE);
      ok = state != NULL;
      OK_DEBUG ("device %d (%s %d) %s", ord, dev->backend->name, dev->local,
		ok ? "initialised" : "failed to initialise");
    }
  pthread_mutex_unlock (&dev->lock);
  return ok;
}

bool
GOMP_OFFLOAD_fini_device (int ord)
{
  struct core_device *dev = core_device (ord, "finalise a device");
  if (dev == NULL)
    return false;
  pthread_mutex_lock (&dev->lock);
  bool ok = true;
  if (dev->state != NULL)
    {
      /* The backend frees the images' contents with the device.  */
      while (dev->images != NULL)
	{
	  struct core_image *img = dev->images;
	  dev->images = img->next;
	  free (img);
	}
      void *state = dev->state;
      __atomic_store_n (&dev->state, NULL, __ATOMIC_RELEASE);
      ok = dev->backend->fini_device (state);
      OK_DEBUG ("device %d (%s %d) finalised", ord, dev->backend->name,
		dev->local);
    }
  pthread_mutex_unlock (&dev->lock);
  return ok;
}

/* Images.  */

/* Start loading the image TARGET_DATA on device ORD, DEV: take DEV's
   lock, check that DEV is initialised and the image not yet loaded
   there, and return a record for it, which core_image_end completes.
   NULL after an error, with the lock released.  */
static struct core_image *
core_image_begin (int ord, struct core_device *dev, const void *target_data)
{
  pthread_mutex_lock (&dev->lock);
  struct core_image *img = NULL;
  if (dev->state == NULL)
    GOMP_PLUGIN_error ("offloadkit-%s: cannot load an offload image:"
		       " device %d is not initialised", ok_plugin.name, ord);
  else
    {
      for (img = dev->images; img != NULL; img = img->next)
	if (img->target_data == target_data)
	  break;
      if (img != NULL)
	{
	  GOMP_PLUGIN_error ("offloadkit-%s: device %d: offload image %p is"
			     " already loaded", ok_plugin.name, ord,
			     target_data);
	  img = NULL;
	}
      else if ((img = calloc (1, sizeof *img)) == NULL)
	GOMP_PLUGIN_error ("offloadkit-%s: out of memory", ok_plugin.name);
      else
	img->target_data = target_data;
    }
  if (img == NULL)
    pthread_mutex_unlock (&dev->lock);
  return img;
}

/* Finish what core_image_begin started: record IMG as loaded on DEV if
   the backend loaded it (LOADED), else free it; release DEV's lock.  */
static void
core_image_end (struct core_device *dev, struct core_image *img, bool loaded)
{
  if (loaded)
    {
      img->next = dev->images;
      dev->images = img;
    }
  else
    free (img);
  pthread_mutex_unlock (&dev->lock);
}

/* Load an image in GCC's own format through the backend's hook.  */
static int
core_load_gcc_image (int ord, struct core_device *dev, unsigned version,
		     const void *target_data, struct ok_addr_pair **table)
{
  if (target_data == NULL)
    {
      GOMP_PLUGIN_error ("offloadkit-%s: device %d: cannot load offload"
			 " image: no target data", ok_plugin.name, ord);
      return -1;
    }
  struct core_image *img = core_image_begin (ord, dev, target_data);
  if (img == NULL)
    return -1;
  int result = dev->backend->load_gcc_image (dev->state, version,
					     target_data, table, &img->handle);
  core_image_end (dev, img, result >= 0);
  if (result >= 0)
    OK_DEBUG ("device %d: loaded GCC-format image %p: %d entries", ord,
	      target_data, result);
  return result;
}

int
GOMP_OFFLOAD_load_image (int ord, unsigned version, const void *target_data,
			 struct ok_addr_pair **table)
{
  struct core_device *dev = core_device (ord, "load an offload image");
  if (dev == NULL)
    return -1;

  unsigned dev_version = OK_GOMP_VERSION_DEV (version);
  if (dev_version == ok_plugin.gcc_dev_version
      && OK_GOMP_VERSION_LIB (version) <= OK_GOMP_VERSION)
    {
      /* The other format libgomp routes to a plugin of this name.  */
      if (dev->backend->load_gcc_image == NULL)
	{
	  GOMP_PLUGIN_error ("offloadkit-%s: device %d (%s) cannot load an"
			     " offload image in GCC's own format (device"
			     " version %u, expected offloadkit's %u): rebuild"
			     " with offloadkit's mkoffload (gcc -B PREFIX/"
			     "libexec/offloadkit/ ...)", ok_plugin.name, ord,
			     dev->backend->name, dev_version, OK_DEV_VERSION);
	  return -1;
	}
      return core_load_gcc_image (ord, dev, version, target_data, table);
    }

  char err[256];
  const struct ok_openmp_target *desc
    = ok_desc_check (version, target_data, ok_plugin.device_type, err,
		     sizeof err);
  if (desc == NULL)
    {
      GOMP_PLUGIN_error ("offloadkit-%s: device %d: cannot load offload"
			 " image: %s", ok_plugin.name, ord, err);
      return -1;
    }

  struct ok_image_req req;
  req.desc = desc;
  req.device_type = ok_plugin.device_type;
  req.num_funcs = (size_t) (desc->host.funcs_end - desc->host.funcs);
  req.num_vars = (size_t) (desc->host.vars_end - desc->host.vars) / 2;
  size_t count = req.num_funcs + req.num_vars + 1;
  if (count > INT32_MAX)
    {
      GOMP_PLUGIN_error ("offloadkit-%s: device %d: offload image has too"
			 " many entries (%zu)", ok_plugin.name, ord, count);
      return -1;
    }

  struct core_image *img = core_image_begin (ord, dev, target_data);
  if (img == NULL)
    return -1;
  req.table = GOMP_PLUGIN_malloc_cleared (count * sizeof *req.table);
  bool loaded = dev->backend->load_image (dev->state, &req, &img->handle);
  core_image_end (dev, img, loaded);
  if (!loaded)
    {
      free (req.table);
      return -1;
    }
  *table = req.table;
  OK_DEBUG ("device %d: loaded image %p: %zu functions, %zu variables",
	    ord, target_data, req.num_funcs, req.num_vars);
  return (int) count;
}

bool
GOMP_OFFLOAD_unload_image (int ord, unsigned version, const void *target_data)
{
  (void) version;
  struct core_device *dev = core_device (ord, "unload an offload image");
  if (dev == NULL)
    return false;

  pthread_mutex_lock (&dev->lock);
  struct core_image **link = &dev->images;
  while (*link != NULL && (*link)->target_data != target_data)
    link = &(*link)->next;
  struct core_image *img = *link;
  bool ok = false;
  if (img == NULL)
    GOMP_PLUGIN_error ("offloadkit-%s: device %d: cannot unload offload"
		       " image %p: it is not loaded", ok_plugin.name, ord,
		       target_data);
  else
    {
      *link = img->next;
      ok = dev->backend->unload_image (dev->state, img->handle);
      free (img);
      OK_DEBUG ("device %d: unloaded image %p", ord, target_data);
    }
  pthread_mutex_unlock (&dev->lock);
  return ok;
}

/* Memory.  */

void *
GOMP_OFFLOAD_alloc (int ord, size_t size)
{
  void *state = core_state (ord, "allocate device memory");
  return state == NULL ? NULL : core_devices[ord].backend->alloc (state, size);
}

bool
GOMP_OFFLOAD_free (int ord, void *ptr)
{
  void *state = core_state (ord, "free device memory");
  return state != NULL && core_devices[ord].backend->free (state, ptr);
}

/* Copy N bytes with the backend's copy hook for DIR; WHAT names the
   operation in messages.  With tracing on, the copy is timed and
   reported when it succeeded.  */
static bool
core_copy (int ord, const char *what, enum ok_trace_dir dir, void *dst,
	   const void *src, size_t n)
{
  void *state = core_state (ord, what);
  if (state == NULL)
    return false;
  const struct ok_backend *backend = core_devices[ord].backend;
  bool (*copy) (void *, void *, const void *, size_t)
    = (dir == OK_TRACE_H2D ? backend->host2dev
       : dir == OK_TRACE_D2H ? backend->dev2host : backend->dev2dev);
  if (!ok_trace_on ())
    return copy (state, dst, src, n);
  uint64_t start = ok_trace_now ();
  bool ok = copy (state, dst, src, n);
  if (ok)
    ok_trace_transfer (ord, backend->name, dir, n, start, ok_trace_now ());
  return ok;
}

bool
GOMP_OFFLOAD_host2dev (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy to the device", OK_TRACE_H2D, dst, src, n);
}

bool
GOMP_OFFLOAD_dev2host (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy from the device", OK_TRACE_D2H, dst, src, n);
}

bool
GOMP_OFFLOAD_dev2dev (int ord, void *dst, const void *src, size_t n)
{
  return core_copy (ord, "copy within the device", OK_TRACE_D2D, dst, src,
		    n);
}

/* Execution.  libgomp's run entry points return nothing, so a failure that
   the backend reported ends the program, as with GCC's own plugins.  */

void
GOMP_OFFLOAD_run (int ord, void *fn, void *tgt_vars, void **args)
{
  void *state = core_state (ord, "run a target region");
  if (state == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region not run",
		       ok_plugin.name);
  struct ok_launch launch;
  core_decode_launch_args (args, &launch);
  OK_DEBUG ("device %d: run %p (num_teams %d, thread_limit %d)", ord, fn,
	    launch.num_teams, launch.thread_limit);
  if (!core_devices[ord].backend->run (state, fn, tgt_vars, &launch))
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region on device %d failed",
		       ok_plugin.name, ord);
}

void
GOMP_OFFLOAD_async_run (int ord, void *fn, void *tgt_vars, void **args,
			void *async_data)
{
  void *state = core_state (ord, "run a target region");
  if (state == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region not run",
		       ok_plugin.name);
  struct ok_launch launch;
  core_decode_launch_args (args, &launch);
  OK_DEBUG ("device %d: async run %p (num_teams %d, thread_limit %d)", ord,
	    fn, launch.num_teams, launch.thread_limit);
  if (!core_devices[ord].backend->async_run (state, fn, tgt_vars, &launch,
					     async_data))
    GOMP_PLUGIN_fatal ("offloadkit-%s: target region on device %d could not"
		       " be started", ok_plugin.name, ord);
}

/* When the plugin is unloaded (dlclose; libgomp itself never does), free
   the device table, unless a device is still running: then its backend
   may still use it, and the process is about to end anyway.  */
__attribute__ ((destructor)) static void
core_unload (void)
{
  for (int i = 0; i < core_num_devices; i++)
    if (core_devices[i].state != NULL)
      return;
  for (int i = 0; i < core_num_devices; i++)
    pthread_mutex_destroy (&core_devices[i].lock);
  free (core_devices);
  core_devices = NULL;
  core_num_devices = 0;
  core_probed = false;
}
