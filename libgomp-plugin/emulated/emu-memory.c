/* Device memory of the emulated device: every allocation a poisoned
   malloc block of its own, recorded in a sorted registry per device, so
   that copies outside a live block and frees of unknown pointers are
   errors (see emu-internal.h).  And what the entry points of libgomp 15
   and 16 ask of the device: its UID, managed memory, accessibility,
   page-locked host memory.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu-internal.h"

/* Filling new device memory with this makes reads of data that was never
   copied in stand out.  */
#define EMU_POISON 0xa5

pthread_mutex_t emu_region_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned emu_regions_on_host;
pthread_cond_t emu_region_cond = PTHREAD_COND_INITIALIZER;

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

/* The newest block of kind KIND that holds some of [PTR, PTR + N), or
   NULL.  */
struct emu_block *
emu_reg_newest (struct emu_device *dev, const void *ptr, size_t n,
		enum emu_kind kind)
{
  uintptr_t lo = (uintptr_t) ptr;
  uintptr_t hi = n > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + n;
  /* The block before the first one after PTR may reach into the range;
     the others must start in it.  */
  size_t i = emu_reg_upper (dev, ptr);
  if (i > 0)
    i--;
  struct emu_block *newest = NULL;
  for (; i < dev->num_blocks && (uintptr_t) dev->blocks[i].start < hi; i++)
    {
      struct emu_block *b = &dev->blocks[i];
      if (b->kind != kind || b->size == 0
	  || (uintptr_t) b->start + b->size <= lo)
	continue;
      if (newest == NULL || b->serial > newest->serial)
	newest = b;
    }
  return newest;
}

/* Whether SIZE more bytes fit in DEV's memory.  The caller holds
   MEM_LOCK.  */
static bool
emu_room (const struct emu_device *dev, size_t size)
{
  return size <= dev->mem_total - dev->mem_used;
}

bool
emu_reg_insert (struct emu_device *dev, char *start, size_t size,
	    enum emu_kind kind)
{
  if (!emu_room (dev, size))
    return false;
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
					.serial = ++dev->last_serial,
					.var = NULL, .link = NULL };
  dev->num_blocks++;
  dev->mem_used += size;
  return true;
}

void
emu_reg_remove (struct emu_device *dev, struct emu_block *b)
{
  dev->mem_used -= b->size;
  size_t i = (size_t) (b - dev->blocks);
  memmove (b, b + 1, (dev->num_blocks - i - 1) * sizeof *b);
  dev->num_blocks--;
}

/* Say that SIZE bytes do not fit in DEV's memory, USED bytes of which
   are in use.  */
static void
emu_full_error (struct emu_device *dev, size_t size, size_t used)
{
  ok_dev_error (&dev->base, "out of memory allocating %zu bytes: %zu of"
		" the device's %zu bytes are free%s", size,
		dev->mem_total - used, dev->mem_total,
		getenv ("OFFLOADKIT_EMULATE_MEMORY") != NULL
		? " (OFFLOADKIT_EMULATE_MEMORY)" : "");
}

/* A new poisoned block of SIZE bytes (a unique one for 0), or NULL after
   an error.  */
char *
emu_new_block (struct emu_device *dev, size_t size, enum emu_kind kind)
{
  /* Refused before the host is asked, as a GPU's driver refuses more
     than its free memory.  */
  pthread_mutex_lock (&dev->mem_lock);
  bool room = emu_room (dev, size);
  size_t used = dev->mem_used;
  pthread_mutex_unlock (&dev->mem_lock);
  char *p = room ? malloc (size ? size : 1) : NULL;
  if (p == NULL)
    {
      if (room)
	ok_dev_error (&dev->base, "out of memory allocating %zu bytes",
		      size);
      else
	emu_full_error (dev, size, used);
      return NULL;
    }
  memset (p, EMU_POISON, size ? size : 1);
  pthread_mutex_lock (&dev->mem_lock);
  room = emu_room (dev, size);
  used = dev->mem_used;
  bool ok = room && emu_reg_insert (dev, p, size, kind);
  pthread_mutex_unlock (&dev->mem_lock);
  if (!ok)
    {
      free (p);
      if (room)
	ok_dev_error (&dev->base, "out of memory recording an allocation");
      else
	emu_full_error (dev, size, used);
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

/* Report that [PTR, PTR + N), N > 0, named WHAT, is no device memory of
   DEV.  The message begins as GCC's nvptx plugin's for the same mistake
   (libgomp's tests look for its words): "invalid device address" when
   PTR lies in no live block, "invalid size" when the range runs past the
   end of the one it starts in.  The caller holds DEV->mem_lock.  */
static void
emu_range_error (struct emu_device *dev, const void *ptr, size_t n,
		 const char *what)
{
  const void *end = (const char *) ptr + n;
  struct emu_block *b = emu_reg_find (dev, ptr, 1);
  if (b == NULL)
    ok_dev_error (&dev->base, "invalid device address: %s [%p, %p) is not"
		  " inside one live allocation", what, ptr, end);
  else
    ok_dev_error (&dev->base, "invalid size: %s [%p, %p) runs past the end"
		  " of the allocation [%p, %p)", what, ptr, end,
		  (void *) b->start, (void *) (b->start + b->size));
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
      /* libgomp's copies for a reverse-offload request: the region's
	 arrays and the data they name on its stack are device memory on
	 a GPU (host memory, as a zeroed block says).  */
      bool request = b == NULL && emu_rev_covers (dev, ptr, n);
      if (b == NULL && !request)
	emu_range_error (dev, ptr, n, what);
      pthread_mutex_unlock (&dev->mem_lock);
      if (request)
	{
	  *out = (struct emu_block) { .start = NULL };
	  return true;
	}
      if (b == NULL)
	return false;
      if (*held || emu_current () != NULL || !emu_block_shared (out))
	return true;
      /* Look again under the lock: the block may have gone meanwhile.  */
      *held = emu_lock_region ();
    }
}

bool
emu_check_range (struct emu_device *dev, const void *ptr, size_t n,
		 const char *what)
{
  pthread_mutex_lock (&dev->mem_lock);
  bool ok = emu_reg_find (dev, ptr, n) != NULL;
  if (!ok)
    emu_range_error (dev, ptr, n, what);
  pthread_mutex_unlock (&dev->mem_lock);
  return ok;
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
  if ((!check_src && src == NULL) || (!check_dst && dst == NULL))
    {
      ok_dev_error (&dev->base, "invalid host address: copy of %zu bytes"
		    " %s host address NULL", n, check_src ? "to" : "from");
      return false;
    }
  if ((check_src
       && !emu_access (dev, src, n, "copy from device memory", &bs, &held))
      || (check_dst
	  && !emu_access (dev, dst, n, "copy to device memory", &bd, &held)))
    {
      emu_unlock_region (held);
      return false;
    }
  /* The host side is the device memory itself: a mistake GCC's nvptx
     plugin names so (but a variable's device address is its host
     global: copies between the two are libgomp's updates).  */
  if (check_src != check_dst && dst == src
      && (check_dst ? bd.var : bs.var) == NULL)
    {
      emu_unlock_region (held);
      ok_dev_error (&dev->base, "invalid host or device address: copy of %zu"
		    " bytes between device memory at %p and itself", n, dst);
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
  if (bd.link != NULL)
    emu_link_resolve (dev, bd.link);
  if (resync)
    emu_view_reload (dev);
  emu_unlock_region (held);
  return true;
}

bool
emu_host2dev (struct ok_device *d, void *dst, const void *src, size_t n)
{
  emu_acc_sync (emu_dev (d));
  return emu_copy (emu_dev (d), dst, src, n, false, true);
}

bool
emu_dev2host (struct ok_device *d, void *dst, const void *src, size_t n)
{
  emu_acc_sync (emu_dev (d));
  return emu_copy (emu_dev (d), dst, src, n, true, false);
}

bool
emu_dev2dev (struct ok_device *d, void *dst, const void *src, size_t n)
{
  emu_acc_sync (emu_dev (d));
  return emu_copy (emu_dev (d), dst, src, n, true, true);
}

/* Report that PTR, which the program asked DEV to free, is no start of a
   live allocation.  Inside one (INSIDE), GCC's plugin's words: libgomp's
   tests and programs look for them.  */
static void
emu_bad_free (struct emu_device *dev, const void *ptr, bool inside)
{
  if (inside)
    ok_inner_free_error (&dev->base, ptr);
  else
    ok_dev_error (&dev->base, "cannot free %p: it is not device memory"
		  " (never allocated, or freed already)", ptr);
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
  if (emu_on_queue_thread ())
    {
      /* Checked now, freed later (emu_acc_sync).  */
      pthread_mutex_lock (&dev->mem_lock);
      struct emu_block *b = emu_reg_exact (dev, ptr);
      bool ok = b != NULL && b->kind == EMU_USER;
      bool inside = b == NULL && emu_reg_find (dev, ptr, 1) != NULL;
      pthread_mutex_unlock (&dev->mem_lock);
      if (!ok)
	{
	  emu_bad_free (dev, ptr, inside);
	  return false;
	}
      return emu_defer_free (dev, ptr);
    }
  emu_acc_sync (dev);
  for (;;)
    {
      pthread_mutex_lock (&dev->mem_lock);
      struct emu_block *b = emu_reg_exact (dev, ptr);
      const char *why = NULL;
      if (b == NULL)
	{
	  bool inside = emu_reg_find (dev, ptr, 1) != NULL;
	  pthread_mutex_unlock (&dev->mem_lock);
	  emu_unlock_region (held);
	  emu_bad_free (dev, ptr, inside);
	  return false;
	}
      if (b->kind != EMU_USER)
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

/* The entry points of libgomp 15 and 16.  */

/* The UID: "offloadkit-emulated-PLUGIN-N", N the device's index among
   the plugin's emulated devices.  It stays the same from run to run
   with the same OFFLOADKIT_EMULATE, and differs between the two plugins'
   emulated devices, which libgomp numbers together.  */
char *
emu_get_uid (struct ok_device *d)
{
  const char *fmt = "offloadkit-emulated-%s-%d";
  int n = snprintf (NULL, 0, fmt, ok_plugin.name, d->local);
  char *uid = GOMP_PLUGIN_malloc ((size_t) n + 1);
  snprintf (uid, (size_t) n + 1, fmt, ok_plugin.name, d->local);
  return uid;
}

/* Managed memory is real here: device memory is host memory, so one
   block is what both the host and the device's regions see at the same
   address.  It is an ordinary allocation of the device (copies may use
   it, and it goes with the device), as cuMemAllocManaged's is one that
   cuMemFree frees.  */
void *
emu_managed_alloc (struct ok_device *d, size_t size)
{
  return emu_alloc (d, size);
}

bool
emu_managed_free (struct ok_device *d, void *ptr)
{
  return emu_free (d, ptr);
}

/* Page-locked host memory: whole pages, mapped for it alone and locked
   (mlock), as libgomp pins memory itself when no plugin does; recorded
   here, process-wide, so that frees of anything else are refused.  */
struct emu_locked
{
  struct emu_locked *next;
  void *start;
  size_t size;			/* Mapped bytes, whole pages.  */
};

static pthread_mutex_t emu_locked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_locked *emu_locked_list;

/* Whether all of [PTR, PTR + N) is page-locked memory given out here.  */
bool
emu_locked_holds (const void *ptr, size_t n)
{
  bool found = false;
  pthread_mutex_lock (&emu_locked_lock);
  for (struct emu_locked *l = emu_locked_list; l != NULL && !found;
       l = l->next)
    {
      uintptr_t off = (uintptr_t) ptr - (uintptr_t) l->start;
      found = (uintptr_t) ptr >= (uintptr_t) l->start && off < l->size
	      && n <= l->size - off;
    }
  pthread_mutex_unlock (&emu_locked_lock);
  return found;
}

/* When the pages cannot be mapped or locked (RLIMIT_MEMLOCK), there is
   no page-locked memory to be had: *PTR stays NULL and the allocator's
   fallback decides, as when libgomp's own mlock fails.  */
bool
emu_page_locked_alloc (struct ok_device *d, void **ptr, size_t size)
{
  *ptr = NULL;
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t mapped;
  if (__builtin_add_overflow (size, page - 1, &mapped))
    return true;
  mapped -= mapped % page;
  struct emu_locked *l = malloc (sizeof *l);
  if (l == NULL)
    {
      ok_dev_error (d, "out of memory recording page-locked memory");
      return false;
    }
  void *p = mmap (NULL, mapped, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || mlock (p, mapped) != 0)
    {
      OK_DEBUG ("%s: cannot lock %zu bytes of host memory (%s)", d->label,
		mapped, p == MAP_FAILED ? "mmap" : "mlock");
      if (p != MAP_FAILED)
	munmap (p, mapped);
      free (l);
      return true;
    }
  *l = (struct emu_locked) { .start = p, .size = mapped };
  pthread_mutex_lock (&emu_locked_lock);
  l->next = emu_locked_list;
  emu_locked_list = l;
  pthread_mutex_unlock (&emu_locked_lock);
  *ptr = p;
  return true;
}

bool
emu_page_locked_free (struct ok_device *d, void *ptr)
{
  struct emu_locked *l = NULL;
  pthread_mutex_lock (&emu_locked_lock);
  for (struct emu_locked **pl = &emu_locked_list; *pl != NULL;
       pl = &(*pl)->next)
    if ((*pl)->start == ptr)
      {
	l = *pl;
	*pl = l->next;
	break;
      }
  pthread_mutex_unlock (&emu_locked_lock);
  if (l == NULL)
    {
      ok_dev_error (d, "cannot free page-locked host memory at %p: it is"
		    " not the start of any", ptr);
      return false;
    }
  munmap (l->start, l->size);
  free (l);
  return true;
}

/* What the device reaches, as a GPU's driver answers for memory it
   knows: its live allocations (managed memory included) and variables,
   and page-locked host memory.  Other host memory is the host's, which
   the emulation keeps apart, as a GPU without unified shared memory
   would.  */
int
emu_is_accessible (struct ok_device *d, const void *ptr, size_t size)
{
  struct emu_device *dev = emu_dev (d);
  pthread_mutex_lock (&dev->mem_lock);
  bool in = emu_reg_find (dev, ptr, size) != NULL;
  pthread_mutex_unlock (&dev->mem_lock);
  return in || emu_locked_holds (ptr, size);
}
