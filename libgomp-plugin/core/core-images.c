/* Images: libgomp hands each offload image to load_image once per device
   and may unload it (dlclose of a library, or the program's end).  The
   core checks the descriptor, keeps the list of what each device has
   loaded (keyed by libgomp's TARGET_DATA), times loads for the trace,
   and unloads what is left when the device stops.  */

#include <stdint.h>
#include <stdlib.h>

#include "core-internal.h"
#include "desc-check.h"
#include "trace.h"

void
ok_images_hold (struct ok_device *dev)
{
  pthread_mutex_lock (&dev->images_lock);
}

void
ok_images_release (struct ok_device *dev)
{
  pthread_mutex_unlock (&dev->images_lock);
}

struct ok_loaded_image *
ok_images_first (struct ok_device *dev)
{
  return dev->images;
}

/* The record of TARGET_DATA among DEV's images, or NULL; the caller holds
   DEV's images lock.  */
static struct ok_loaded_image **
core_image_find (struct ok_device *dev, const void *target_data)
{
  struct ok_loaded_image **link = &dev->images;
  while (*link != NULL && (*link)->target_data != target_data)
    link = &(*link)->next;
  return link;
}

/* Start loading image TARGET_DATA on DEV: check that it is not loaded
   yet, and hold DEV's images lock (which core_image_end releases).  A
   new record, or NULL after an error, with the lock released.  */
static struct ok_loaded_image *
core_image_begin (struct ok_device *dev, const void *target_data)
{
  if (ok_region_device () == dev)
    {
      /* Its regions hold the images (ok_images_hold).  */
      ok_dev_error (dev, "cannot load an offload image from inside one of"
		    " the device's target regions");
      return NULL;
    }
  ok_images_hold (dev);
  struct ok_loaded_image *img = NULL;
  if (*core_image_find (dev, target_data) != NULL)
    ok_error ("device %d: offload image %p is already loaded", dev->ord,
	      target_data);
  else if ((img = calloc (1, sizeof *img)) == NULL)
    ok_error ("out of memory");
  else
    img->target_data = target_data;
  if (img == NULL)
    ok_images_release (dev);
  return img;
}

/* Finish what core_image_begin started: record IMG as loaded on DEV if
   the backend loaded it (LOADED), else free it; release the lock.  */
static void
core_image_end (struct ok_device *dev, struct ok_loaded_image *img,
		bool loaded)
{
  if (loaded)
    {
      img->next = dev->images;
      dev->images = img;
    }
  else
    free (img);
  ok_images_release (dev);
}

/* libgomp 13+ copies its ICVs for a device (struct gomp_offload_icvs:
   the device number, nteams, ...) into the block that load_image returns
   as the table's trailing entry, and enters the block in the device's
   address map under the address of its own host copy, of which there is
   one per device.  A second image with a block of its own (a program and
   a shared library whose device code both read the ICVs) would be a
   second entry at the same address, on which libgomp stops with
   "Duplicate node" (GCC's own plugins too).  libgomp never removes the
   entry, so it gets the first block a device loads for as long as the
   process runs, and the core copies the ICVs into each later image's
   block itself, leaving that image's trailing entry {0, 0}.  The owner's
   block is read when the second image loads, or when the owner is
   unloaded first.  ENTRY is IMG's trailing entry.  */
static bool
core_share_icvs (struct core_slot *slot, struct ok_device *dev,
		 struct ok_loaded_image *img, struct ok_addr_pair *entry)
{
  if (ok_trailing_var ().size != OK_GOMP_ICVS_SIZE || entry->start == 0)
    return true;
  if (slot->icv_block == 0)
    {
      slot->icv_block = entry->start;
      img->icv_owner = true;
      return true;
    }
  if (!slot->icv_cached)
    {
      if (!dev->backend->dev2host (dev, slot->icv_cache,
				   (const void *) slot->icv_block,
				   sizeof slot->icv_cache))
	return false;
      slot->icv_cached = true;
    }
  if (!dev->backend->host2dev (dev, (void *) entry->start, slot->icv_cache,
			       sizeof slot->icv_cache))
    return false;
  entry->start = entry->end = 0;
  return true;
}

/* Before IMG, about to be unloaded from DEV, takes the ICV block libgomp
   knows with it: keep its contents for the images loaded later.  */
static void
core_keep_icvs (struct ok_device *dev, struct ok_loaded_image *img)
{
  if (!img->icv_owner || dev->broken)
    return;
  struct core_slot *slot = core_slot (dev->ord, "keep the device's ICVs");
  if (slot != NULL && !slot->icv_cached
      && dev->backend->dev2host (dev, slot->icv_cache,
				 (const void *) slot->icv_block,
				 sizeof slot->icv_cache))
    slot->icv_cached = true;
}

/* Whether each variable of REQ's image, loaded on DEV, spans on the
   device what its host copy needs (a pointer for a link variable); else
   one message, naming the first that does not.  */
static bool
core_check_vars (struct ok_device *dev, const struct ok_image_req *req)
{
  const struct ok_tgt_desc *tgt = ok_desc_target (req->desc,
						  req->device_type, 0);
  for (size_t i = 0; i < req->num_vars; i++)
    {
      struct ok_host_var v = ok_host_var (req, i);
      const struct ok_addr_pair *e = &req->table[req->num_funcs + i];
      size_t want = ok_host_var_device_size (&v);
      size_t device = (size_t) (e->end - e->start);
      if (device == want)
	continue;
      const char *name = (tgt != NULL && tgt->var_names != NULL
			  ? tgt->var_names[i] : "?");
      if (v.link)
	ok_dev_error (dev, "cannot load offload image: link variable '%s'"
		      " has %zu bytes on the device, expected a pointer (%zu)",
		      name, device, want);
      else
	ok_dev_error (dev, "cannot load offload image: variable '%s' has %zu"
		      " bytes on the device, %zu on the host", name, device,
		      want);
      return false;
    }
  return true;
}

/* Load an image in GCC's own format through the backend's hook.  */
static int
core_load_gcc_image (struct core_slot *slot, struct ok_device *dev,
		     unsigned version, const void *target_data,
		     struct ok_addr_pair **table, uint64_t **rev_fn_table,
		     const uint64_t *host_ind_fns)
{
  if (target_data == NULL)
    {
      ok_error ("device %d: cannot load offload image: no target data",
		dev->ord);
      return -1;
    }
  struct ok_loaded_image *img = core_image_begin (dev, target_data);
  if (img == NULL)
    return -1;
  struct ok_gcc_image_req req = { .version = version,
				  .target_data = target_data,
				  .trailing = ok_trailing_var (),
				  .host_ind_fns = host_ind_fns,
				  .want_rev_fns = rev_fn_table != NULL };
  uint64_t start = ok_trace_on () ? ok_trace_now () : 0;
  bool loaded = dev->backend->load_gcc_image (dev, &req, &img->handle);
  if (loaded && req.count > 0
      && !core_share_icvs (slot, dev, img, &req.table[req.count - 1]))
    {
      dev->backend->unload_image (dev, img->handle);
      free (req.table);
      loaded = false;
    }
  core_image_end (dev, img, loaded);
  if (!loaded)
    {
      free (req.rev_fns);
      return -1;
    }
  if (rev_fn_table != NULL)
    *rev_fn_table = req.rev_fns;
  if (ok_trace_on ())
    ok_trace_image (dev->ord, dev->backend->name, req.what, req.num_funcs,
		    req.num_vars, start, ok_trace_now ());
  OK_DEBUG ("device %d: loaded GCC-format image %p: %zu entries", dev->ord,
	    target_data, req.count);
  *table = req.table;
  return (int) req.count;
}

/* Whether device version DEV_VERSION, library version LIB is the format of
   GCC's own mkoffload for this plugin's devices (which libgomp routes to
   a plugin of this name too).  GCC 13+ gcn images have device version 3.  */
static bool
core_gcc_format (unsigned lib, unsigned dev_version)
{
  if (lib > ok_libgomp_version ())
    return false;
  if (dev_version == ok_plugin.gcc_dev_version)
    return true;
  return (ok_plugin.gcc_dev_version_13 != 0
	  && dev_version == ok_plugin.gcc_dev_version_13);
}

/* libgomp 12 passes the first four arguments; 13 adds REV_FN_TABLE (where
   to store the device addresses of the reverse-offload functions, when the
   program requires reverse offload), 14 HOST_IND_FN_TABLE (the host's
   indirect functions).  Each is read only for a libgomp that passes it.  */
int
GOMP_OFFLOAD_load_image (int ord, unsigned version, const void *target_data,
			 struct ok_addr_pair **table, uint64_t **rev_fn_table,
			 uint64_t *host_ind_fn_table)
{
  int gcc = ok_libgomp_gcc ();
  /* libgomp 13+ asks for the reverse-offload table when the program
     requires reverse offload; NULL (the default) when the backend gives
     none.  */
  if (!OK_GCC_HAS_REVERSE_OFFLOAD (gcc))
    rev_fn_table = NULL;
  if (rev_fn_table != NULL)
    *rev_fn_table = NULL;
  /* libgomp 14+ passes the host table of the image's indirect functions
     only when it has some.  */
  const uint64_t *host_ind_fns = (OK_GCC_HAS_INDIRECT_FUNCS (gcc)
				   ? host_ind_fn_table : NULL);
  struct core_slot *slot = core_slot (ord, "load an offload image");
  if (slot == NULL)
    return -1;
  pthread_mutex_lock (&slot->lock);
  int result = -1;
  struct ok_device *dev = slot->dev;
  unsigned dev_version = OK_GOMP_VERSION_DEV (version);
  char err[256];
  const struct ok_openmp_target *desc = NULL;
  if (dev == NULL)
    ok_error ("cannot load an offload image: device %d is not initialised",
	      ord);
  else if (host_ind_fns != NULL && !dev->backend->host_fn_ptrs
	   && !dev->backend->maps_indirect)
    ok_dev_error (dev, "cannot load offload image %p: it has `declare"
		  " target indirect' functions, which offloadkit's %s backend"
		  " does not map yet", target_data, dev->backend->name);
  else if (core_gcc_format (OK_GOMP_VERSION_LIB (version), dev_version))
    {
      /* The other format libgomp routes to a plugin of this name.  */
      if (dev->backend->load_gcc_image != NULL)
	result = core_load_gcc_image (slot, dev, version, target_data,
				      table, rev_fn_table, host_ind_fns);
      else
	ok_error ("device %d (%s) cannot load an offload image in GCC's own"
		  " format (device version %u, expected offloadkit's %u):"
		  " rebuild with offloadkit's mkoffload (gcc -B PREFIX/"
		  "libexec/offloadkit/ ...)", ord, dev->backend->name,
		  dev_version, OK_DEV_VERSION);
    }
  else if ((desc = ok_desc_check_lib (version, target_data,
				      ok_plugin.device_type,
				      ok_libgomp_version (), err,
				      sizeof err)) == NULL)
    ok_error ("device %d: cannot load offload image: %s", ord, err);
  else
    {
      struct ok_image_req req = { .desc = desc,
				  .device_type = ok_plugin.device_type,
				  .trailing = ok_trailing_var (),
				  .host_ind_fns = host_ind_fns,
				  .want_rev_fns = rev_fn_table != NULL };
      req.num_funcs = (size_t) (desc->host.funcs_end - desc->host.funcs);
      req.num_vars = (size_t) (desc->host.vars_end - desc->host.vars) / 2;
      size_t count = req.num_funcs + req.num_vars + 1;
      struct ok_loaded_image *img = NULL;
      if (count > INT32_MAX)
	ok_error ("device %d: offload image has too many entries (%zu)", ord,
		  count);
      else if ((img = core_image_begin (dev, target_data)) != NULL)
	{
	  uint64_t start = ok_trace_on () ? ok_trace_now () : 0;
	  req.table = GOMP_PLUGIN_malloc_cleared (count * sizeof *req.table);
	  bool loaded = dev->backend->load_image (dev, &req, &img->handle);
	  if (loaded
	      && (!core_check_vars (dev, &req)
		  || !core_share_icvs (slot, dev, img, &req.table[count - 1])))
	    {
	      dev->backend->unload_image (dev, img->handle);
	      loaded = false;
	    }
	  core_image_end (dev, img, loaded);
	  if (!loaded)
	    {
	      free (req.table);
	      free (req.rev_fns);
	    }
	  else
	    {
	      if (rev_fn_table != NULL)
		*rev_fn_table = req.rev_fns;
	      if (ok_trace_on ())
		ok_trace_image (ord, dev->backend->name, req.what,
				req.num_funcs, req.num_vars, start,
				ok_trace_now ());
	      OK_DEBUG ("device %d: loaded image %p: %zu functions, %zu"
			" variables", ord, target_data, req.num_funcs,
			req.num_vars);
	      *table = req.table;
	      result = (int) count;
	    }
	}
    }
  pthread_mutex_unlock (&slot->lock);
  return result;
}

/* Unload image record IMG, which is off DEV's list; the caller holds
   DEV's images lock, and has waited for DEV's asynchronous launches.  */
static bool
core_image_unload (struct ok_device *dev, struct ok_loaded_image *img)
{
  bool ok = dev->backend->unload_image (dev, img->handle);
  OK_DEBUG ("device %d: unloaded image %p", dev->ord, img->target_data);
  free (img);
  return ok;
}

bool
GOMP_OFFLOAD_unload_image (int ord, unsigned version, const void *target_data)
{
  (void) version;
  struct core_slot *slot = core_slot (ord, "unload an offload image");
  if (slot == NULL)
    return false;
  pthread_mutex_lock (&slot->lock);
  bool ok = false;
  struct ok_device *dev = slot->dev;
  if (dev == NULL)
    ok_error ("cannot unload an offload image: device %d is not"
	      " initialised", ord);
  else if (ok_region_device () == dev)
    ok_dev_error (dev, "cannot unload an image from inside one of the"
		  " device's target regions");
  else
    {
      /* The image's kernels may still run in target nowait regions.  Not
	 while holding the images: an emulated region about to run one of
	 them needs them.  */
      ok_completion_drain (&dev->async);
      ok_images_hold (dev);
      struct ok_loaded_image **link = core_image_find (dev, target_data);
      struct ok_loaded_image *img = *link;
      if (img == NULL)
	ok_error ("device %d: cannot unload offload image %p: it is not"
		  " loaded", ord, target_data);
      else
	{
	  *link = img->next;
	  core_keep_icvs (dev, img);
	  ok = core_image_unload (dev, img);
	}
      ok_images_release (dev);
    }
  pthread_mutex_unlock (&slot->lock);
  return ok;
}

bool
core_images_unload_all (struct ok_device *dev)
{
  bool ok = true;
  ok_completion_drain (&dev->async);
  ok_images_hold (dev);
  while (dev->images != NULL)
    {
      struct ok_loaded_image *img = dev->images;
      dev->images = img->next;
      ok &= core_image_unload (dev, img);
    }
  ok_images_release (dev);
  return ok;
}
