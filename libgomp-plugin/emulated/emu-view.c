/* What a running region sees: around each launch the host globals of a
   device's `declare target' variables show the device's bytes (see
   emu-internal.h), and afterwards the host's again.  */

#include <stdlib.h>
#include <string.h>

#include "emu-internal.h"

/* Take into DEV each of the N bytes of GLOBAL that differs from BEFORE:
   what code wrote through the variable's name.  Compared in chunks, as
   most regions change little or nothing.  */
static void
emu_merge_bytes (char *dev, const char *global, const char *before, size_t n)
{
  const size_t chunk = 256;
  for (size_t off = 0; off < n; off += chunk)
    {
      size_t c = n - off < chunk ? n - off : chunk;
      if (memcmp (global + off, before + off, c) == 0)
	continue;
      for (size_t i = off; i < off + c; i++)
	if (global[i] != before[i])
	  dev[i] = global[i];
    }
}

static void
emu_swap_bytes (char *a, char *b, size_t n)
{
  char tmp[256];
  while (n > 0)
    {
      size_t chunk = n < sizeof tmp ? n : sizeof tmp;
      memcpy (tmp, a, chunk);
      memcpy (a, b, chunk);
      memcpy (b, tmp, chunk);
      a += chunk;
      b += chunk;
      n -= chunk;
    }
}

/* libgomp sets a link variable's pointer slot, when it maps the variable,
   to the device address of the object's element 0, whatever part of the
   object it maps: from GCC 15 the address of the mapped section less the
   section's offset in the object (GCC 15's libgomp/target.c,
   gomp_map_vars_internal), which lies before the mapping when the section
   does not start at element 0, perhaps in another block.  Up to GCC 14 it
   is the section's own address, so that device code, on any device,
   looks for the elements of a section further in further on than they
   are.  So the mapping is not the
   block that holds the pointer, but one that holds some of the object's
   device range [pointer, pointer + size); several may, other allocations
   lying about it.  libgomp writes the slot right after it allocated the
   mapping, under the device's lock, with no other allocation between:
   the newest block in that range now is the mapping.  Its serial tells
   later whether it is still the mapping: after an unmap the slot dangles
   (libgomp leaves it), and another block may be made at the same
   place.  */
void
emu_link_resolve (struct emu_device *dev, struct emu_var *v)
{
  char *ptr;
  memcpy (&ptr, v->copy, sizeof ptr);
  pthread_mutex_lock (&dev->mem_lock);
  struct emu_block *b = NULL;
  if (ptr != NULL && v->size > 0)
    b = emu_reg_newest (dev, ptr, v->size, EMU_USER);
  v->link_ptr = ptr;
  v->link_block = b != NULL ? b->start : NULL;
  v->link_serial = b != NULL ? b->serial : 0;
  pthread_mutex_unlock (&dev->mem_lock);
}

/* Start the view of link variable V: the part of its host object whose
   device addresses lie in its live mapping shows the mapping's bytes.
   Called with DEV->mem_lock held.  */
static void
emu_view_begin_link (struct emu_device *dev, struct emu_var *v)
{
  /* Only a mapped link variable has device data.  */
  struct emu_block *b = (v->link_block != NULL
			 ? emu_reg_exact (dev, v->link_block) : NULL);
  if (b == NULL || b->serial != v->link_serial)
    return;			/* Unmapped: the region sees the host object.  */
  /* The part of the object's device range in the mapping: a section, or
     all of the object, or (mapped with other data) more than the object
     would need.  */
  uintptr_t obj = (uintptr_t) v->link_ptr;
  uintptr_t obj_end = (v->size > UINTPTR_MAX - obj
		       ? UINTPTR_MAX : obj + v->size);
  uintptr_t start = (uintptr_t) b->start, end = start + b->size;
  uintptr_t lo = obj > start ? obj : start;
  uintptr_t hi = obj_end < end ? obj_end : end;
  if (lo >= hi)
    return;
  size_t off = (size_t) (lo - obj), n = (size_t) (hi - lo);
  char *dev_bytes = (char *) lo;
  v->save = malloc (2 * n);
  if (v->save == NULL)
    return;			/* The region sees the host object.  */
  /* The block must stay while the region may use it.  */
  b->views++;
  memcpy (v->save, v->host + off, n);
  memcpy (v->save + n, dev_bytes, n);
  memcpy (v->host + off, dev_bytes, n);
  v->view = dev_bytes;
  v->view_off = off;
  v->view_n = n;
}

/* Start the view of V for a launch: its host global shows the device
   bytes.  An ordinary variable's device address is the global itself, so
   its device bytes and the host's trade places.  A link variable's device
   data is a mapping that the region body reaches through its own address
   while code it calls names the host object: the object gets a copy of
   the mapping, and the two are merged after.  Called with DEV->mem_lock
   held.  */
static void
emu_view_begin (struct emu_device *dev, struct emu_var *v)
{
  if (v->readonly || v->size == 0)
    return;
  if (v->link)
    {
      emu_view_begin_link (dev, v);
      return;
    }
  emu_swap_bytes (v->host, v->copy, v->size);
  v->view = v->copy;
  v->view_off = 0;
  v->view_n = v->size;
}

/* End the view of V.  A link variable's mapping gets each byte that was
   written through the host object (the others keep what the mapping now
   holds, perhaps written through its address), and the object its own
   bytes back.  Called with DEV->mem_lock held.  */
static void
emu_view_end (struct emu_device *dev, struct emu_var *v)
{
  size_t n = v->view_n;
  if (!v->link)
    emu_swap_bytes (v->host, v->copy, n);
  else
    {
      char *host = v->host + v->view_off;
      emu_merge_bytes (v->view, host, v->save + n, n);
      memcpy (host, v->save, n);
      /* Frees of such blocks wait for the region, so it exists.  */
      struct emu_block *b = emu_reg_find (dev, v->view, n);
      if (b != NULL)
	b->views--;
      free (v->save);
      v->save = NULL;
    }
  v->view = NULL;
  v->view_off = 0;
  v->view_n = 0;
}

/* Call FN (DEV, V) for each variable V of DEV's loaded images, with
   DEV->mem_lock held.  The caller holds DEV's images (ok_images_hold), or
   runs the region of a thread that does.  */
static void
emu_each_var (struct emu_device *dev,
	      void (*fn) (struct emu_device *, struct emu_var *))
{
  pthread_mutex_lock (&dev->mem_lock);
  for (struct ok_loaded_image *l = ok_images_first (&dev->base); l != NULL;
       l = l->next)
    {
      struct emu_image *img = emu_image_of (l);
      for (size_t i = 0; i < img->num_vars; i++)
	fn (dev, &img->vars[i]);
    }
  pthread_mutex_unlock (&dev->mem_lock);
}

static void
emu_view_end_if (struct emu_device *dev, struct emu_var *v)
{
  if (v->view != NULL)
    emu_view_end (dev, v);
}

void
emu_view_all (struct emu_device *dev, bool in)
{
  emu_each_var (dev, in ? emu_view_begin : emu_view_end_if);
}

/* Bring what was written through the host object of link variable V into
   its mapping.  (Ordinary variables need nothing: their device bytes are
   the globals.)  */
static void
emu_view_merge_var (struct emu_device *dev, struct emu_var *v)
{
  (void) dev;
  if (v->link && v->view != NULL)
    emu_merge_bytes (v->view, v->host + v->view_off, v->save + v->view_n,
		     v->view_n);
}

void
emu_view_merge (struct emu_device *dev)
{
  emu_each_var (dev, emu_view_merge_var);
}

/* Show the mapping of link variable V in its host object again.  */
static void
emu_view_reload_var (struct emu_device *dev, struct emu_var *v)
{
  (void) dev;
  if (v->link && v->view != NULL)
    {
      memcpy (v->host + v->view_off, v->view, v->view_n);
      memcpy (v->save + v->view_n, v->view, v->view_n);
    }
}

void
emu_view_reload (struct emu_device *dev)
{
  emu_each_var (dev, emu_view_reload_var);
}
