/* Device memory of the emulated device: every allocation a poisoned
   malloc block of its own, recorded in a sorted registry per device, so
   that copies outside a live block and frees of unknown pointers are
   errors (see emu-internal.h).  */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu-internal.h"

/* Filling new device memory with this makes reads of data that was never
   copied in stand out.  */
#define EMU_POISON 0xa5

pthread_mutex_t emu_region_lock = PTHREAD_MUTEX_INITIALIZER;

/* The region lock, unless this thread already holds it because it is
   running a region.  Return whether it was taken.  */
bool
emu_lock_region (void)
{
  if (emu_current () != NULL)
    return false;
  pthread_mutex_lock (&emu_region_lock);
  return true;
}

void
emu_unlock_region (bool taken)
{
  if (taken)
    pthread_mutex_unlock (&emu_region_lock);
}

/* The registry.  The caller holds DEV->mem_lock.  */

/* Index of the first block that starts after PTR.  */
static size_t
emu_reg_upper (struct emu_device *dev, const char *ptr)
{
  size_t lo = 0, hi = dev->num_blocks;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if ((uintptr_t) dev->blocks[mid].start <= (uintptr_t) ptr)
	lo = mid + 1;
      else
	hi = mid;
    }
  return lo;
}

/* The block holding all of [PTR, PTR + N), N > 0, or NULL.  */
struct emu_block *
emu_reg_find (struct emu_device *dev, const void *ptr, size_t n)
{
  size_t i = emu_reg_upper (dev, ptr);
  if (i == 0)
    return NULL;
  struct emu_block *b = &dev->blocks[i - 1];
  uintptr_t off = (uintptr_t) ptr - (uintptr_t) b->start;
  if (off >= b->size || n > b->size - off)
    return NULL;
  return b;
}

/* The block that starts exactly at PTR, or NULL.  */
struct emu_block *
emu_reg_exact (struct emu_device *dev, const void *ptr)
{
  size_t i = emu_reg_upper (dev, ptr);
  if (i == 0 || dev->blocks[i - 1].start != ptr)
    return NULL;
  return &dev->blocks[i - 1];
}

bool
emu_reg_insert (struct emu_device *dev, char *start, size_t size,
	    enum emu_kind kind)
{
  if (dev->num_blocks == dev->max_blocks)
    {
      size_t max = dev->max_blocks ? 2 * dev->max_blocks : 64;
      struct emu_block *blocks = realloc (dev->blocks, max * sizeof *blocks);
      if (blocks == NULL)
	return false;
      dev->blocks = blocks;
      dev->max_blocks = max;
    }
  size_t i = emu_reg_upper (dev, start);
  memmove (&dev->blocks[i + 1], &dev->blocks[i],
	   (dev->num_blocks - i) * sizeof *dev->blocks);
  dev->blocks[i] = (struct emu_block) { .start = start, .size = size,
					.kind = kind, .views = 0,
					.var = NULL };
  dev->num_blocks++;
  return true;
}

void
emu_reg_remove (struct emu_device *dev, struct emu_block *b)
{
  size_t i = (size_t) (b - dev->blocks);
  memmove (b, b + 1, (dev->num_blocks - i - 1) * sizeof *b);
  dev->num_blocks--;
}

/* A new poisoned block of SIZE bytes (a unique one for 0), or NULL after
   an error.  */
char *
emu_new_block (struct emu_device *dev, size_t size, enum emu_kind kind)
{
  char *p = malloc (size ? size : 1);
  if (p == NULL)
    {
      ok_dev_error (&dev->base, "out of memory allocating %zu bytes", size);
      return NULL;
    }
  memset (p, EMU_POISON, size ? size : 1);
  pthread_mutex_lock (&dev->mem_lock);
  bool ok = emu_reg_insert (dev, p, size, kind);
  pthread_mutex_unlock (&dev->mem_lock);
  if (!ok)
    {
      free (p);
      ok_dev_error (&dev->base, "out of memory recording an allocation");
      return NULL;
    }
  return p;
}

/* Release a block that load_image made (no error checking needed).  */
void
emu_drop_block (struct emu_device *dev, char *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock (&dev->mem_lock);
  struct emu_block *b = emu_reg_exact (dev, p);
  if (b != NULL)
    emu_reg_remove (dev, b);
  pthread_mutex_unlock (&dev->mem_lock);
  free (p);
}

/* Copies and frees.  */

/* Whether a region running on the device might be using B's bytes through
   a host global: then it must not be read, written or freed meanwhile.  */
static bool
emu_block_shared (const struct emu_block *b)
{
  return b->kind == EMU_VAR || b->views > 0;
}

/* Check that [PTR, PTR + N), N > 0, lies in one live block and store a
   copy of it in *OUT; error naming WHAT if not.  If the block is shared,
   make sure the region lock is held: *HELD says whether this thread took
   it (the caller releases it, also after an error).  */
static bool
emu_access (struct emu_device *dev, const void *ptr, size_t n,
	    const char *what, struct emu_block *out, bool *held)
{
  for (;;)
    {
      pthread_mutex_lock (&dev->mem_lock);
      struct emu_block *b = emu_reg_find (dev, ptr, n);
      if (b != NULL)
	*out = *b;
      pthread_mutex_unlock (&dev->mem_lock);
      if (b == NULL)
	{
	  ok_dev_error (&dev->base, "%s [%p, %p) is not inside one live allocation",
		     what, ptr, (const void *) ((const char *) ptr + n));
	  return false;
	}
      if (*held || emu_current () != NULL || !emu_block_shared (out))
	return true;
      /* Look again under the lock: the block may have gone meanwhile.  */
      *held = emu_lock_region ();
    }
}

/* Where the device bytes at PTR, inside block B (a zeroed B: PTR is host
   memory), are now.  A variable's bytes are in its host global
   while its device's region runs, else in its copy.  The caller holds the
   region lock if B is a variable's.  */
static char *
emu_where (const struct emu_block *b, const void *ptr)
{
  const struct emu_var *v = b->var;
  if (v == NULL || v->view != NULL)
    return (char *) ptr;
  return v->copy + ((const char *) ptr - b->start);
}

/* Copy N bytes from SRC to DST; CHECK_SRC and CHECK_DST say which of them
   are device addresses.  */
static bool
emu_copy (struct emu_device *dev, void *dst, const void *src, size_t n,
	  bool check_src, bool check_dst)
{
  struct emu_block bs = { 0 }, bd = { 0 };
  bool held = false;
  if ((check_src
       && !emu_access (dev, src, n, "copy from device memory", &bs, &held))
      || (check_dst
	  && !emu_access (dev, dst, n, "copy to device memory", &bd, &held)))
    {
      emu_unlock_region (held);
      return false;
    }
  /* A copy made by a region of this device (omp_target_memcpy inside it,
     say) must see what the region wrote through link variables' host
     objects, and those must show afterwards what the copy wrote into
     their mappings.  Ordinary variables need nothing: emu_where finds
     their bytes.  */
  bool resync = (emu_current () == dev
		 && (emu_block_shared (&bs) || emu_block_shared (&bd)));
  if (resync)
    emu_view_merge (dev);
  memmove (emu_where (&bd, dst), emu_where (&bs, src), n);
  if (resync)
    emu_view_reload (dev);
  emu_unlock_region (held);
  return true;
}

bool
emu_host2dev (struct ok_device *d, void *dst, const void *src, size_t n)
{
  return emu_copy (emu_dev (d), dst, src, n, false, true);
}

bool
emu_dev2host (struct ok_device *d, void *dst, const void *src, size_t n)
{
  return emu_copy (emu_dev (d), dst, src, n, true, false);
}

bool
emu_dev2dev (struct ok_device *d, void *dst, const void *src, size_t n)
{
  return emu_copy (emu_dev (d), dst, src, n, true, true);
}

void *
emu_alloc (struct ok_device *d, size_t size)
{
  return emu_new_block (emu_dev (d), size, EMU_USER);
}

bool
emu_free (struct ok_device *d, void *ptr)
{
  struct emu_device *dev = emu_dev (d);
  bool held = false;
  if (ptr == NULL)
    return true;
  for (;;)
    {
      pthread_mutex_lock (&dev->mem_lock);
      struct emu_block *b = emu_reg_exact (dev, ptr);
      const char *why = NULL;
      if (b == NULL)
	why = "it is not the start of a live allocation";
      else if (b->kind != EMU_USER)
	why = "it belongs to a loaded image";
      else if (b->views > 0 && emu_current () != NULL)
	why = "the running target region uses it";
      else if (b->views == 0 || held)
	emu_reg_remove (dev, b);
      else
	b = NULL;		/* Shared: retry under the region lock.  */
      pthread_mutex_unlock (&dev->mem_lock);
      if (why != NULL)
	{
	  emu_unlock_region (held);
	  ok_dev_error (&dev->base, "cannot free %p: %s", ptr, why);
	  return false;
	}
      if (b != NULL)
	break;
      held = emu_lock_region ();
    }
  emu_unlock_region (held);
  free (ptr);
  return true;
}
