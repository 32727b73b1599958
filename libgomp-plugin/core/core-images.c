/* Images: libgomp hands each offload image to load_image once per device
   and may unload it (dlclose of a library, or the program's end).  The
   core checks the descriptor, runs the load over the backend's image
   hooks (struct ok_image_ops, in the order struct ok_image_load says),
   checks what they give, keeps the list of what each device has loaded
   (keyed by libgomp's TARGET_DATA), times loads for the trace, and
   unloads what is left when the device stops.  */

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

/* Whether each variable of LD's image (offloadkit's format), loaded on
   DEV, spans on the device what its host copy needs (a pointer for a link
   variable); else one message, naming the first that does not.  */
static bool
core_check_vars (struct ok_device *dev, const struct ok_image_load *ld,
		 const struct ok_addr_pair *table)
{
  const struct ok_tgt_desc *tgt = ok_desc_target (ld->desc, ld->device_type,
						  0);
  for (size_t i = 0; i < ld->num_vars; i++)
    {
      struct ok_host_var v = ok_host_var (ld, i);
      const struct ok_addr_pair *e = &table[ld->num_funcs + i];
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

/* The trailing entry of LD's image in *ENTRY: the variable the loading
   libgomp wants there, or {0, 0}; refused when it has another size (an
   image for another libgomp).  */
static bool
core_trailing (struct ok_device *dev, struct ok_image_load *ld,
	       struct ok_addr_pair *entry)
{
  struct ok_trailing_var var = ok_trailing_var ();
  if (!dev->backend->image->trailing (dev, ld, &var, entry))
    return false;
  size_t size = (size_t) (entry->end - entry->start);
  if (entry->start != 0 && size != var.size)
    {
      ok_dev_error (dev, "cannot load offload image: variable '%s' has %zu"
		    " bytes on the device, expected %zu (an image for another"
		    " GCC version's libgomp?)", var.name, size, var.size);
      return false;
    }
  return true;
}

/* What libgomp asks of a load besides the image.  */
struct core_load_args
{
  const uint64_t *host_ind_fns;
  bool want_rev_fns;
};

/* Load LD's image, libgomp's TARGET_DATA, on DEV, whose slot is SLOT, in
   either format: the whole sequence of struct ok_image_load over DEV's
   image hooks.  The table
   (GOMP_PLUGIN_malloc) in *TABLE and the reverse-offload table, if any,
   in *REV_FNS; the number of entries, or -1 after a report.  */
static int
core_load (struct core_slot *slot, struct ok_device *dev,
	   const void *target_data, struct ok_image_load *ld,
	   const struct core_load_args *args, struct ok_addr_pair **table,
	   uint64_t **rev_fns)
{
  const struct ok_image_ops *ops = dev->backend->image;
  struct ok_loaded_image *img = core_image_begin (dev, target_data);
  if (img == NULL)
    return -1;
  uint64_t start = ok_trace_on () ? ok_trace_now () : 0;
  if (!(ld->desc != NULL ? ops->open : ops->open_gcc) (dev, ld))
    {
      core_image_end (dev, img, false);
      return -1;
    }
  size_t count = ld->num_funcs + ld->num_vars + 1;
  struct ok_addr_pair *tab = NULL;
  uint64_t *rev = NULL;
  bool ok = true, ctors = false;
  if (count > INT32_MAX)
    {
      ok_dev_error (dev, "offload image has too many entries (%zu)", count);
      ok = false;
    }
  else
    tab = GOMP_PLUGIN_malloc_cleared (count * sizeof *tab);
  for (size_t i = 0; ok && i < ld->num_funcs; i++)
    ok = ops->function (dev, ld, i, &tab[i]);
  for (size_t i = 0; ok && i < ld->num_vars; i++)
    ok = ops->variable (dev, ld, i, &tab[ld->num_funcs + i]);
  ok = ok && (ld->desc == NULL || core_check_vars (dev, ld, tab));
  ok = ok && core_trailing (dev, ld, &tab[count - 1]);
  ok = ok && (ops->map_indirect == NULL
	      || ops->map_indirect (dev, ld, args->host_ind_fns));
  ok = ok && (!args->want_rev_fns || ops->rev_table == NULL
	      || ops->rev_table (dev, ld, &rev));
  ok = ok && (ops->run_ctors == NULL || (ctors = ops->run_ctors (dev, ld)));
  ok = ok && core_share_icvs (slot, dev, img, &tab[count - 1]);
  if (ok)
    img->handle = ld->image;
  else
    ops->close (dev, ld->image, ctors);
  core_image_end (dev, img, ok);
  if (!ok)
    {
      free (tab);
      free (rev);
      return -1;
    }
  if (ok_trace_on ())
    ok_trace_image (dev->ord, dev->backend->name, ld->what, ld->num_funcs,
		    ld->num_vars, start, ok_trace_now ());
  OK_DEBUG ("device %d: loaded %simage %p: %zu functions, %zu variables",
	    dev->ord, ld->desc != NULL ? "" : "GCC-format ", target_data,
	    ld->num_funcs, ld->num_vars);
  *table = tab;
  *rev_fns = rev;
  return (int) count;
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
  struct core_load_args args = {
    .host_ind_fns = (OK_GCC_HAS_INDIRECT_FUNCS (gcc)
		     ? host_ind_fn_table : NULL),
    .want_rev_fns = rev_fn_table != NULL
  };
  struct core_slot *slot = core_slot (ord, "load an offload image");
  if (slot == NULL)
    return -1;
  pthread_mutex_lock (&slot->lock);
  int result = -1;
  struct ok_device *dev = slot->dev;
  unsigned dev_version = OK_GOMP_VERSION_DEV (version);
  char err[256];
  struct ok_image_load ld = { .device_type = ok_plugin.device_type };
  uint64_t *rev = NULL;
  if (dev == NULL)
    ok_error ("cannot load an offload image: device %d is not initialised",
	      ord);
  else if (args.host_ind_fns != NULL && !dev->backend->host_fn_ptrs
	   && dev->backend->image->map_indirect == NULL)
    ok_dev_error (dev, "cannot load offload image %p: it has `declare"
		  " target indirect' functions, which offloadkit's %s backend"
		  " does not map yet", target_data, dev->backend->name);
  else if (core_gcc_format (OK_GOMP_VERSION_LIB (version), dev_version))
    {
      /* The other format libgomp routes to a plugin of this name.  */
      if (target_data == NULL)
	ok_error ("device %d: cannot load offload image: no target data",
		  ord);
      else if (dev->backend->image->open_gcc == NULL)
	ok_error ("device %d (%s) cannot load an offload image in GCC's own"
		  " format (device version %u, expected offloadkit's %u):"
		  " rebuild with offloadkit's mkoffload (gcc -B PREFIX/"
		  "libexec/offloadkit/ ...)", ord, dev->backend->name,
		  dev_version, OK_DEV_VERSION);
      else
	{
	  ld.gcc_data = target_data;
	  ld.gcc_version = version;
	  result = core_load (slot, dev, target_data, &ld, &args, table, &rev);
	}
    }
  else if ((ld.desc = ok_desc_check_lib (version, target_data,
					 ok_plugin.device_type,
					 ok_libgomp_version (), err,
					 sizeof err)) == NULL)
    ok_error ("device %d: cannot load offload image: %s", ord, err);
  else
    {
      ld.num_funcs = (size_t) (ld.desc->host.funcs_end - ld.desc->host.funcs);
      ld.num_vars = (size_t) (ld.desc->host.vars_end - ld.desc->host.vars) / 2;
      result = core_load (slot, dev, target_data, &ld, &args, table, &rev);
    }
  if (rev_fn_table != NULL)
    *rev_fn_table = rev;
  pthread_mutex_unlock (&slot->lock);
  return result;
}

/* Unload image record IMG, which is off DEV's list; the caller holds
   DEV's images lock, and has waited for DEV's asynchronous launches.  */
static bool
core_image_unload (struct ok_device *dev, struct ok_loaded_image *img)
{
  bool ok = dev->backend->image->close (dev, img->handle, true);
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
