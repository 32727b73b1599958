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
  if (!v->link)
    {
      emu_swap_bytes (v->host, v->copy, v->size);
      v->view = v->copy;
      v->view_n = v->size;
      return;
    }
  /* Only a mapped link variable has device data: its slot points into a
     live mapping (after an unmap it may dangle, so check).  A partial
     mapping holds only part of the object.  */
  char *target = *(char **) v->copy;
  struct emu_block *b = target != NULL ? emu_reg_find (dev, target, 1) : NULL;
  if (b == NULL)
    return;
  size_t avail = b->size - (size_t) (target - b->start);
  size_t n = v->size < avail ? v->size : avail;
  v->save = n > 0 ? malloc (2 * n) : NULL;
  if (v->save == NULL)
    return;			/* The region sees the host object.  */
  /* The block must stay while the region may use it.  */
  b->views++;
  memcpy (v->save, v->host, n);
  memcpy (v->save + n, target, n);
  memcpy (v->host, target, n);
  v->view = target;
  v->view_n = n;
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
      emu_merge_bytes (v->view, v->host, v->save + n, n);
      memcpy (v->host, v->save, n);
      /* Frees of such blocks wait for the region, so it exists.  */
      struct emu_block *b = emu_reg_find (dev, v->view, n);
      if (b != NULL)
	b->views--;
      free (v->save);
      v->save = NULL;
    }
  v->view = NULL;
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
    emu_merge_bytes (v->view, v->host, v->save + v->view_n, v->view_n);
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
      memcpy (v->host, v->view, v->view_n);
      memcpy (v->save + v->view_n, v->view, v->view_n);
    }
}

void
emu_view_reload (struct emu_device *dev)
{
  emu_each_var (dev, emu_view_reload_var);
}
