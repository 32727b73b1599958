/* The emulated device (OFFLOADKIT_EMULATE=N): runs each target region's
   host-fallback function, but on separate "device" memory, so that
   programs exercise the whole offloading protocol (mapping, copies, images,
   asynchronous regions) without a GPU, and mapping mistakes show.

   Device memory is host memory from malloc, so device pointers given to a
   region work as they are.  Each allocation is its own malloc block,
   filled with a poison byte and recorded in a sorted per-device registry:
   copies must stay inside one live block and only live blocks may be
   freed, which turns mapping bugs into errors instead of silent
   corruption.

   Host-fallback code reads and writes `declare target' variables two ways:
   code that names a variable uses the host global, and a region body given
   the variable's device address (map clauses, `always' ones included)
   uses that.  On a device both are one place, so here too: an ordinary
   variable's device address is its host global.  Its device bytes are
   kept aside, copies to and from that address go to them, and a launch
   trades them with the host's bytes in the global for the run, all under
   one process-wide lock (the globals exist once per process); copies that
   touch a variable take the same lock, so they never see a half-done
   trade.  Variables in read-only memory (const tables, compiler-made
   constants) are never written: their device bytes cannot differ.
   `declare target link' variables are reached both ways too, but their
   device data is a separate mapping (see emu_view_begin).

   The region runs as on a device: the thread limit of its launch, and
   omp_get_device_num () / omp_is_initial_device () answer as on a device
   (through the wrapper's interposers, see offload-desc.h).

   Each device has a worker thread that runs its regions in order, like a
   stream, and asynchronous launches just queue.  The worker is a thread of
   its own, not one of the program's OpenMP threads, so regions do not see
   the launching thread's ICVs; they do share the worker's, which is why
   each launch sets its thread limit again.  */

/* dl_iterate_phdr, RTLD_DEFAULT.  */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "desc-check.h"
#include "plugin-core.h"
#include "trace.h"

/* Filling new device memory with this makes reads of data that was never
   copied in stand out.  */
#define EMU_POISON 0xa5

/* More would only be a typo.  */
#define EMU_MAX_DEVICES 64

enum emu_kind
{
  EMU_USER,			/* From alloc; free may release it.  */
  EMU_VAR,			/* An image variable's device copy.  */
  EMU_DEVNUM			/* An image's __gomp_device_num.  */
};

struct emu_var;

/* One live allocation.  VIEWS counts the `declare target link' objects
   mapped in it that a running region also sees through their host objects
   (one mapping libgomp made may hold several): the block must not change
   or go away behind the region's back.  */
struct emu_block
{
  char *start;
  size_t size;
  enum emu_kind kind;
  unsigned views;
  /* Non-NULL: START is an ordinary variable's host global, which is also
     its device address; its device bytes live in VAR->copy except while a
     region runs with them in the global.  */
  struct emu_var *var;
};

struct emu_var
{
  char *host;			/* The host global.  */
  size_t size;			/* Its size, without the link bit.  */
  bool link;			/* `declare target link': COPY is a pointer.  */
  bool readonly;		/* HOST lies in read-only memory: no view.  */
  /* Ordinary variables (size > 0): where the device bytes are kept while
     no region has them in the global (see emu_block.var).  Link and empty
     variables: the device copy itself, a block of kind EMU_VAR.  */
  char *copy;
  /* While a region runs: the device bytes HOST stands for (COPY, or for a
     link variable the mapping), else NULL.  */
  char *view;
  size_t view_n;		/* Bytes in view.  */
  /* Link variables in view: 2 * VIEW_N bytes, the host's own bytes, then
     the mapping's bytes the global started with (what tells which bytes
     code wrote through the global).  */
  char *save;
};

/* Whether V's device address is its host global.  */
static inline bool
emu_var_aliased (const struct emu_var *v)
{
  return !v->link && v->size > 0;
}

struct emu_image
{
  struct emu_image *next;
  size_t num_vars;
  struct emu_var *vars;
  char *device_num;
  /* The wrapper's: the calling thread's "current device" slot that its
     omp_get_device_num / omp_is_initial_device interposers read; NULL in
     descriptors without one.  */
  int *(*device_num_slot) (void);
  /* For traces: the host functions and, when the descriptor has a target
     for this device type, their device names (NULL otherwise).  */
  size_t num_funcs;
  void *const *funcs;
  const char *const *func_names;
};

/* A queued launch.  Synchronous ones live on the launcher's stack.  */
struct emu_job
{
  struct emu_job *next;
  void (*fn) (void **);
  void **tgt_vars;
  int thread_limit;		/* From the launch; 0: the default.  */
  void *async_data;		/* Non-NULL: asynchronous, free when done.  */
  bool done;
  /* Only with tracing on (ok_trace_on): when the launch was asked for,
     the teams it asked for (0: not given), and what the region ran with:
     its function's name and its threads.  */
  uint64_t start;
  int num_teams;
  unsigned threads;
  const char *name;
  char name_buf[2 + 2 * sizeof (void *) + 1];
};

struct emu_device
{
  int local;
  int ord;			/* libgomp's number, for traces.  */

  pthread_mutex_t mem_lock;	/* Guards the registry.  */
  struct emu_block *blocks;	/* Sorted by start.  */
  size_t num_blocks, max_blocks;

  /* Changed only under emu_region_lock, which launches hold.  */
  struct emu_image *images;

  pthread_mutex_t queue_lock;
  pthread_cond_t queue_cond;	/* Signalled for the worker.  */
  pthread_cond_t done_cond;	/* Signalled when a synchronous job ends.  */
  struct emu_job *head, *tail;
  bool stopping;
  pthread_t worker;
};

/* Held while any region runs, on any emulated device.  */
static pthread_mutex_t emu_region_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device whose region the current thread is running (then it also
   holds emu_region_lock), or NULL.  */
static __thread struct emu_device *emu_current;

#define EMU_ERROR(dev, fmt, ...) \
  GOMP_PLUGIN_error ("offloadkit-%s: emulated device %d: " fmt, \
		     ok_plugin.name, (dev)->local, ##__VA_ARGS__)

static void emu_view_merge (struct emu_device *dev);
static void emu_view_reload (struct emu_device *dev);

/* The region lock, unless this thread already holds it because it is
   running a region.  Return whether it was taken.  */
static bool
emu_lock_region (void)
{
  if (emu_current != NULL)
    return false;
  pthread_mutex_lock (&emu_region_lock);
  return true;
}

static void
emu_unlock_region (bool taken)
{
  if (taken)
    pthread_mutex_unlock (&emu_region_lock);
}

/* The registry.  The caller holds DEV->mem_lock.  */

/* Index of the first block that starts after PTR.  */
static size_t
reg_upper (struct emu_device *dev, const char *ptr)
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
static struct emu_block *
reg_find (struct emu_device *dev, const void *ptr, size_t n)
{
  size_t i = reg_upper (dev, ptr);
  if (i == 0)
    return NULL;
  struct emu_block *b = &dev->blocks[i - 1];
  uintptr_t off = (uintptr_t) ptr - (uintptr_t) b->start;
  if (off >= b->size || n > b->size - off)
    return NULL;
  return b;
}

/* The block that starts exactly at PTR, or NULL.  */
static struct emu_block *
reg_exact (struct emu_device *dev, const void *ptr)
{
  size_t i = reg_upper (dev, ptr);
  if (i == 0 || dev->blocks[i - 1].start != ptr)
    return NULL;
  return &dev->blocks[i - 1];
}

static bool
reg_insert (struct emu_device *dev, char *start, size_t size,
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
  size_t i = reg_upper (dev, start);
  memmove (&dev->blocks[i + 1], &dev->blocks[i],
	   (dev->num_blocks - i) * sizeof *dev->blocks);
  dev->blocks[i] = (struct emu_block) { .start = start, .size = size,
					.kind = kind, .views = 0,
					.var = NULL };
  dev->num_blocks++;
  return true;
}

static void
reg_remove (struct emu_device *dev, struct emu_block *b)
{
  size_t i = (size_t) (b - dev->blocks);
  memmove (b, b + 1, (dev->num_blocks - i - 1) * sizeof *b);
  dev->num_blocks--;
}

/* A new poisoned block of SIZE bytes (a unique one for 0), or NULL after
   an error.  */
static char *
emu_new_block (struct emu_device *dev, size_t size, enum emu_kind kind)
{
  char *p = malloc (size ? size : 1);
  if (p == NULL)
    {
      EMU_ERROR (dev, "out of memory allocating %zu bytes", size);
      return NULL;
    }
  memset (p, EMU_POISON, size ? size : 1);
  pthread_mutex_lock (&dev->mem_lock);
  bool ok = reg_insert (dev, p, size, kind);
  pthread_mutex_unlock (&dev->mem_lock);
  if (!ok)
    {
      free (p);
      EMU_ERROR (dev, "out of memory recording an allocation");
      return NULL;
    }
  return p;
}

/* Release a block that load_image made (no error checking needed).  */
static void
emu_drop_block (struct emu_device *dev, char *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock (&dev->mem_lock);
  struct emu_block *b = reg_exact (dev, p);
  if (b != NULL)
    reg_remove (dev, b);
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
      struct emu_block *b = reg_find (dev, ptr, n);
      if (b != NULL)
	*out = *b;
      pthread_mutex_unlock (&dev->mem_lock);
      if (b == NULL)
	{
	  EMU_ERROR (dev, "%s [%p, %p) is not inside one live allocation",
		     what, ptr, (const void *) ((const char *) ptr + n));
	  return false;
	}
      if (*held || emu_current != NULL || !emu_block_shared (out))
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
  if (n == 0)
    return true;
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
  bool resync = (emu_current == dev
		 && (emu_block_shared (&bs) || emu_block_shared (&bd)));
  if (resync)
    emu_view_merge (dev);
  memmove (emu_where (&bd, dst), emu_where (&bs, src), n);
  if (resync)
    emu_view_reload (dev);
  emu_unlock_region (held);
  return true;
}

static bool
emu_host2dev (void *d, void *dst, const void *src, size_t n)
{
  return emu_copy (d, dst, src, n, false, true);
}

static bool
emu_dev2host (void *d, void *dst, const void *src, size_t n)
{
  return emu_copy (d, dst, src, n, true, false);
}

static bool
emu_dev2dev (void *d, void *dst, const void *src, size_t n)
{
  return emu_copy (d, dst, src, n, true, true);
}

static void *
emu_alloc (void *d, size_t size)
{
  return emu_new_block (d, size, EMU_USER);
}

static bool
emu_free (void *d, void *ptr)
{
  struct emu_device *dev = d;
  bool held = false;
  if (ptr == NULL)
    return true;
  for (;;)
    {
      pthread_mutex_lock (&dev->mem_lock);
      struct emu_block *b = reg_exact (dev, ptr);
      const char *why = NULL;
      if (b == NULL)
	why = "it is not the start of a live allocation";
      else if (b->kind != EMU_USER)
	why = "it belongs to a loaded image";
      else if (b->views > 0 && emu_current != NULL)
	why = "the running target region uses it";
      else if (b->views == 0 || held)
	reg_remove (dev, b);
      else
	b = NULL;		/* Shared: retry under the region lock.  */
      pthread_mutex_unlock (&dev->mem_lock);
      if (why != NULL)
	{
	  emu_unlock_region (held);
	  EMU_ERROR (dev, "cannot free %p: %s", ptr, why);
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

/* Images.  */

/* Whether ADDR lies in memory that the program cannot write: a loadable
   segment without write permission (.rodata), or the part of one that the
   dynamic linker makes read-only after relocation (RELRO: const data with
   addresses in it).  gfortran puts compiler-made constant arrays in the
   variable table, and a const declare target variable is one too.  */
struct emu_ro_query
{
  uintptr_t addr;
  bool readonly;
};

static int
emu_ro_visit (struct dl_phdr_info *info, size_t size, void *data)
{
  struct emu_ro_query *q = data;
  (void) size;
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      uintptr_t hi = lo + ph->p_memsz;
      if (ph->p_type == PT_GNU_RELRO)
	{
	  /* The loader protects whole pages only: the start rounded down,
	     the end too.  */
	  lo &= ~(page - 1);
	  hi &= ~(page - 1);
	}
      else if (ph->p_type != PT_LOAD)
	continue;
      if (q->addr < lo || q->addr >= hi)
	continue;
      inside = true;
      if (ph->p_type == PT_GNU_RELRO || !(ph->p_flags & PF_W))
	q->readonly = true;
    }
  return inside;		/* Non-zero stops: the object is found.  */
}

static bool
emu_readonly (const void *addr)
{
  struct emu_ro_query q = { (uintptr_t) addr, false };
  dl_iterate_phdr (emu_ro_visit, &q);
  return q.readonly;
}

static void
emu_free_image (struct emu_device *dev, struct emu_image *img)
{
  for (size_t i = 0; i < img->num_vars; i++)
    {
      struct emu_var *v = &img->vars[i];
      if (!emu_var_aliased (v))
	emu_drop_block (dev, v->copy);
      else if (v->copy != NULL)
	{
	  pthread_mutex_lock (&dev->mem_lock);
	  struct emu_block *b = reg_exact (dev, v->host);
	  if (b != NULL && b->var == v)
	    reg_remove (dev, b);
	  pthread_mutex_unlock (&dev->mem_lock);
	  free (v->copy);
	}
    }
  emu_drop_block (dev, img->device_num);
  free (img->vars);
  free (img);
}

static bool
emu_load_image (void *d, const struct ok_image_req *req, void **handle)
{
  struct emu_device *dev = d;
  uint64_t start = ok_trace_on () ? ok_trace_now () : 0;
  const struct ok_host_table *host = &req->desc->host;
  struct emu_image *img = calloc (1, sizeof *img);
  struct emu_var *vars = calloc (req->num_vars ? req->num_vars : 1,
				 sizeof *vars);
  if (img == NULL || vars == NULL)
    {
      free (img);
      free (vars);
      EMU_ERROR (dev, "out of memory loading an image");
      return false;
    }
  img->vars = vars;

  /* Functions run as themselves: the host-fallback code is the device
     code.  */
  for (size_t i = 0; i < req->num_funcs; i++)
    {
      req->table[i].start = (uintptr_t) host->funcs[i];
      req->table[i].end = req->table[i].start + 1;
    }
  img->num_funcs = req->num_funcs;
  img->funcs = host->funcs;
  const struct ok_tgt_desc *tgt = ok_desc_target (req->desc,
						  req->device_type, 0);
  if (tgt != NULL && tgt->num_funcs == req->num_funcs)
    img->func_names = tgt->func_names;

  /* The wrapper's snapshot of the initial values, when it took one, is
     what a real device image would start from.  */
  const unsigned char *init = NULL;
  if (req->desc->host_var_init != NULL)
    init = *req->desc->host_var_init;

  for (size_t i = 0; i < req->num_vars; i++)
    {
      struct emu_var *v = &vars[i];
      uintptr_t size = (uintptr_t) host->vars[2 * i + 1];
      v->host = (char *) host->vars[2 * i];
      v->link = (size & OK_GOMP_LINK_BIT) != 0;
      v->size = (size_t) (size & ~OK_GOMP_LINK_BIT);
      v->readonly = v->size > 0 && emu_readonly (v->host);
      size_t copy_size = v->link ? sizeof (void *) : v->size;
      img->num_vars = i + 1;
      if (emu_var_aliased (v))
	{
	  /* The device address is the host global's, so that a region
	     reaches the variable at the same place through its name and
	     through the address libgomp passes, as on a device.  */
	  v->copy = malloc (v->size);
	  pthread_mutex_lock (&dev->mem_lock);
	  bool ok = (v->copy != NULL
		     && reg_insert (dev, v->host, v->size, EMU_VAR));
	  if (ok)
	    reg_exact (dev, v->host)->var = v;
	  pthread_mutex_unlock (&dev->mem_lock);
	  if (!ok)
	    {
	      free (v->copy);
	      v->copy = NULL;
	      EMU_ERROR (dev, "out of memory loading an image");
	      goto fail;
	    }
	}
      else
	{
	  v->copy = emu_new_block (dev, copy_size, EMU_VAR);
	  if (v->copy == NULL)
	    goto fail;
	}
      if (v->link)
	/* Null until libgomp maps the variable and stores its address.  */
	memset (v->copy, 0, sizeof (void *));
      else if (init != NULL)
	{
	  memcpy (v->copy, init, v->size);
	  init += v->size;
	}
      else
	memcpy (v->copy, v->host, v->size);
      char *addr = emu_var_aliased (v) ? v->host : v->copy;
      req->table[req->num_funcs + i].start = (uintptr_t) addr;
      req->table[req->num_funcs + i].end = (uintptr_t) addr + copy_size;
    }

  img->device_num = emu_new_block (dev, sizeof (int), EMU_DEVNUM);
  if (img->device_num == NULL)
    goto fail;
  memset (img->device_num, 0, sizeof (int));
  img->device_num_slot = req->desc->device_num_slot;
  struct ok_addr_pair *last = &req->table[req->num_funcs + req->num_vars];
  last->start = (uintptr_t) img->device_num;
  last->end = last->start + sizeof (int);

  bool locked = emu_lock_region ();
  img->next = dev->images;
  dev->images = img;
  emu_unlock_region (locked);
  *handle = img;
  if (ok_trace_on ())
    ok_trace_image (dev->ord, "emulated", "host-fallback code",
		    req->num_funcs, req->num_vars, start, ok_trace_now ());
  return true;

 fail:
  emu_free_image (dev, img);
  return false;
}

static bool
emu_unload_image (void *d, void *handle)
{
  struct emu_device *dev = d;
  struct emu_image *img = handle;
  /* Not while a region might have its variables in view.  */
  bool locked = emu_lock_region ();
  if (emu_current == dev)
    {
      emu_unlock_region (locked);
      EMU_ERROR (dev, "cannot unload an image from inside one of the"
		 " device's target regions");
      return false;
    }
  struct emu_image **link = &dev->images;
  while (*link != NULL && *link != img)
    link = &(*link)->next;
  if (*link != NULL)
    *link = img->next;
  emu_unlock_region (locked);
  emu_free_image (dev, img);
  return true;
}

/* Running regions.  */

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
  struct emu_block *b = target != NULL ? reg_find (dev, target, 1) : NULL;
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
      struct emu_block *b = reg_find (dev, v->view, n);
      if (b != NULL)
	b->views--;
      free (v->save);
      v->save = NULL;
    }
  v->view = NULL;
  v->view_n = 0;
}

/* Start (IN) or end the views of all of DEV's variables.  Called with
   emu_region_lock held.  */
static void
emu_view_all (struct emu_device *dev, bool in)
{
  pthread_mutex_lock (&dev->mem_lock);
  for (struct emu_image *img = dev->images; img != NULL; img = img->next)
    for (size_t i = 0; i < img->num_vars; i++)
      {
	struct emu_var *v = &img->vars[i];
	if (in)
	  emu_view_begin (dev, v);
	else if (v->view != NULL)
	  emu_view_end (dev, v);
      }
  pthread_mutex_unlock (&dev->mem_lock);
}

/* In the middle of a region of DEV: bring what was written through the
   host objects of link variables into their mappings, so that these are
   complete.  (Ordinary variables need nothing: their device bytes are
   the globals.)  */
static void
emu_view_merge (struct emu_device *dev)
{
  pthread_mutex_lock (&dev->mem_lock);
  for (struct emu_image *img = dev->images; img != NULL; img = img->next)
    for (size_t i = 0; i < img->num_vars; i++)
      {
	struct emu_var *v = &img->vars[i];
	if (v->link && v->view != NULL)
	  emu_merge_bytes (v->view, v->host, v->save + v->view_n, v->view_n);
      }
  pthread_mutex_unlock (&dev->mem_lock);
}

/* After emu_view_merge and a change of device bytes: show the mappings
   in the host objects again.  */
static void
emu_view_reload (struct emu_device *dev)
{
  pthread_mutex_lock (&dev->mem_lock);
  for (struct emu_image *img = dev->images; img != NULL; img = img->next)
    for (size_t i = 0; i < img->num_vars; i++)
      {
	struct emu_var *v = &img->vars[i];
	if (v->link && v->view != NULL)
	  {
	    memcpy (v->host, v->view, v->view_n);
	    memcpy (v->save + v->view_n, v->view, v->view_n);
	  }
      }
  pthread_mutex_unlock (&dev->mem_lock);
}

/* libgomp's GOMP_teams4, when libgomp loaded the plugin (the plugin
   harness has none): it sets the calling thread's thread limit, as
   libgomp's own host fallback does for a thread_limit clause.  */
static pthread_once_t emu_gomp_once = PTHREAD_ONCE_INIT;
static bool (*emu_gomp_teams4) (unsigned, unsigned, unsigned, bool);
/* libgomp's too, for traces: the threads a parallel region would get.  */
static int (*emu_gomp_max_threads) (void);

static void
emu_gomp_resolve (void)
{
  *(void **) &emu_gomp_teams4 = dlsym (RTLD_DEFAULT, "GOMP_teams4");
  *(void **) &emu_gomp_max_threads = dlsym (RTLD_DEFAULT,
					    "omp_get_max_threads");
}

/* For traces: the name of region function FN of DEV.  The device name
   from the image's descriptor comes first, because it is what a real
   device reports for the same region; else the host symbol, when the
   dynamic symbol table has one that starts exactly at FN (local
   functions, as GCC's outlined regions are, have none); else FN's
   address, formatted in JOB.  Called with emu_region_lock held, which
   keeps DEV's images.  */
static const char *
emu_fn_name (struct emu_device *dev, void *fn, struct emu_job *job)
{
  for (struct emu_image *img = dev->images; img != NULL; img = img->next)
    if (img->func_names != NULL)
      for (size_t i = 0; i < img->num_funcs; i++)
	if (img->funcs[i] == fn && img->func_names[i] != NULL)
	  return img->func_names[i];
  Dl_info info;
  if (dladdr (fn, &info) != 0 && info.dli_sname != NULL
      && info.dli_saddr == fn)
    return info.dli_sname;
  snprintf (job->name_buf, sizeof job->name_buf, "%p", fn);
  return job->name_buf;
}

/* Tell the wrappers of DEV's images which device the calling thread runs
   a region of (ON), or that it runs none.  The program and each of its
   shared libraries have a wrapper, and the interposer that answers may be
   any of theirs, so all are told.  */
static void
emu_set_device_num (struct emu_device *dev, bool on)
{
  for (struct emu_image *img = dev->images; img != NULL; img = img->next)
    if (img->device_num_slot != NULL)
      {
	int *slot = img->device_num_slot ();
	if (slot != NULL)
	  /* libgomp stored its number of the device there at load.  */
	  *slot = on ? *(const int *) img->device_num : -1;
      }
}

struct emu_region
{
  struct emu_device *dev;
  struct emu_job *job;
};

/* Run one region.  This is the region's initial thread: what it knows as
   "current device" and its OpenMP settings are its own.  */
static void *
emu_region_thread (void *r)
{
  struct emu_region *region = r;
  emu_current = region->dev;
  emu_set_device_num (region->dev, true);
  if (emu_gomp_teams4 != NULL && region->job->thread_limit > 0)
    emu_gomp_teams4 (1, 1, (unsigned) region->job->thread_limit, true);
  if (ok_trace_on ())
    {
      /* What a parallel region in it would get, at most.  */
      int max = emu_gomp_max_threads != NULL ? emu_gomp_max_threads () : 1;
      int limit = region->job->thread_limit;
      region->job->threads = (unsigned) (limit > 0 && limit < max ? limit
					 : max > 0 ? max : 1);
    }
  region->job->fn (region->job->tgt_vars);
  emu_set_device_num (region->dev, false);
  emu_current = NULL;
  return NULL;
}

/* Each region runs on a thread of its own, started here and joined: like
   libgomp's host fallback, which clears the thread's OpenMP state around
   a region, it starts from the global settings (omp_set_num_threads in
   one region does not leak into the next), and libgomp frees what the
   thread used when it ends.  */
static void
emu_execute (struct emu_device *dev, struct emu_job *job)
{
  struct emu_region region = { dev, job };
  pthread_t thread;
  pthread_mutex_lock (&emu_region_lock);
  if (ok_trace_on ())
    job->name = emu_fn_name (dev, (void *) job->fn, job);
  emu_view_all (dev, true);
  if (pthread_create (&thread, NULL, emu_region_thread, &region) == 0)
    pthread_join (thread, NULL);
  else
    /* No thread to be had: run it here, on the worker, rather than not
       at all; only settings a previous region changed can differ.  */
    emu_region_thread (&region);
  emu_view_all (dev, false);
  pthread_mutex_unlock (&emu_region_lock);
}

static void *
emu_worker (void *d)
{
  struct emu_device *dev = d;
  pthread_once (&emu_gomp_once, emu_gomp_resolve);
  pthread_mutex_lock (&dev->queue_lock);
  for (;;)
    {
      while (dev->head == NULL && !dev->stopping)
	pthread_cond_wait (&dev->queue_cond, &dev->queue_lock);
      struct emu_job *job = dev->head;
      if (job == NULL)
	break;			/* Stopping, and the queue is drained.  */
      dev->head = job->next;
      if (dev->head == NULL)
	dev->tail = NULL;
      pthread_mutex_unlock (&dev->queue_lock);

      emu_execute (dev, job);
      if (ok_trace_on ())
	{
	  /* Host-fallback code runs its teams one after another: one
	     block of the region's threads per team.  */
	  unsigned grid[3] = { job->num_teams > 0 ? (unsigned) job->num_teams
			       : 1u, 1, 1 };
	  unsigned block[3] = { job->threads, 1, 1 };
	  ok_trace_launch (dev->ord, "emulated", job->name, grid, block,
			   job->async_data != NULL, job->start,
			   ok_trace_now ());
	}

      if (job->async_data != NULL)
	{
	  void *async_data = job->async_data;
	  free (job);
	  GOMP_PLUGIN_target_task_completion (async_data);
	  pthread_mutex_lock (&dev->queue_lock);
	}
      else
	{
	  pthread_mutex_lock (&dev->queue_lock);
	  job->done = true;
	  pthread_cond_broadcast (&dev->done_cond);
	}
    }
  pthread_mutex_unlock (&dev->queue_lock);
  return NULL;
}

static void
emu_enqueue (struct emu_device *dev, struct emu_job *job)
{
  job->next = NULL;
  if (dev->tail != NULL)
    dev->tail->next = job;
  else
    dev->head = job;
  dev->tail = job;
  pthread_cond_signal (&dev->queue_cond);
}

/* A region that launches another would wait for itself: the worker, or the
   region lock, is busy with it.  */
static bool
emu_check_nested (struct emu_device *dev)
{
  if (emu_current == NULL)
    return true;
  EMU_ERROR (dev, "cannot launch a target region from inside a target"
	     " region (running on emulated device %d)", emu_current->local);
  return false;
}

static bool
emu_run (void *d, void *fn, void *tgt_vars, const struct ok_launch *launch)
{
  struct emu_device *dev = d;
  if (!emu_check_nested (dev))
    return false;
  struct emu_job job = { .fn = (void (*) (void **)) fn,
			 .tgt_vars = tgt_vars,
			 .thread_limit = launch->thread_limit,
			 .num_teams = launch->num_teams };
  if (ok_trace_on ())
    job.start = ok_trace_now ();
  pthread_mutex_lock (&dev->queue_lock);
  emu_enqueue (dev, &job);
  while (!job.done)
    pthread_cond_wait (&dev->done_cond, &dev->queue_lock);
  pthread_mutex_unlock (&dev->queue_lock);
  return true;
}

static bool
emu_async_run (void *d, void *fn, void *tgt_vars,
	       const struct ok_launch *launch, void *async_data)
{
  struct emu_device *dev = d;
  if (!emu_check_nested (dev))
    return false;
  if (async_data == NULL)
    {
      EMU_ERROR (dev, "asynchronous launch without completion data");
      return false;
    }
  struct emu_job *job = malloc (sizeof *job);
  if (job == NULL)
    {
      EMU_ERROR (dev, "out of memory queueing a target region");
      return false;
    }
  *job = (struct emu_job) { .fn = (void (*) (void **)) fn,
			    .tgt_vars = tgt_vars,
			    .thread_limit = launch->thread_limit,
			    .async_data = async_data,
			    .num_teams = launch->num_teams };
  if (ok_trace_on ())
    job->start = ok_trace_now ();
  pthread_mutex_lock (&dev->queue_lock);
  emu_enqueue (dev, job);
  pthread_mutex_unlock (&dev->queue_lock);
  return true;
}

/* Devices.  */

/* Parse a device count in [S, E): a decimal number from 0 to
   EMU_MAX_DEVICES.  -1 if it is not one.  */
static long
emu_parse_count (const char *s, const char *e)
{
  if (s == e || e - s > 6)
    return -1;
  long n = 0;
  for (const char *p = s; p < e; p++)
    {
      if (*p < '0' || *p > '9')
	return -1;
      n = n * 10 + (*p - '0');
    }
  return n <= EMU_MAX_DEVICES ? n : -1;
}

/* OFFLOADKIT_EMULATE is either N, for every offloadkit plugin, or a
   comma-separated list of PLUGIN:N (e.g. "gcn:1" or "nvptx:2,gcn:1"),
   naming the plugins that get emulated devices: libgomp counts the
   devices of all its plugins, so with both of ours installed a plain N
   gives N nvptx and N gcn devices, and a program built for one target
   finds devices without its image in front.  */
static int
emu_probe (void)
{
  const char *env = getenv ("OFFLOADKIT_EMULATE");
  if (env == NULL || *env == '\0')
    return 0;
  if (strchr (env, ':') == NULL)
    {
      long n = emu_parse_count (env, env + strlen (env));
      if (n >= 0)
	return (int) n;
    }
  else
    {
      size_t len = strlen (ok_plugin.name);
      long mine = 0;
      const char *p = env;
      for (;;)
	{
	  const char *comma = strchr (p, ',');
	  const char *end = comma ? comma : p + strlen (p);
	  const char *colon = memchr (p, ':', (size_t) (end - p));
	  long n = colon ? emu_parse_count (colon + 1, end) : -1;
	  if (n < 0 || colon == p)
	    {
	      mine = -1;
	      break;
	    }
	  if ((size_t) (colon - p) == len && memcmp (p, ok_plugin.name, len) == 0)
	    mine = n;
	  if (comma == NULL)
	    break;
	  p = comma + 1;
	}
      if (mine >= 0)
	return (int) mine;
    }
  GOMP_PLUGIN_error ("offloadkit-%s: OFFLOADKIT_EMULATE=\"%s\" is neither a"
		     " number of emulated devices from 0 to %d nor a list"
		     " such as \"nvptx:1,gcn:2\"; no emulated devices",
		     ok_plugin.name, env, EMU_MAX_DEVICES);
  return 0;
}

static void *
emu_init_device (int local, int ord)
{
  struct emu_device *dev = calloc (1, sizeof *dev);
  if (dev == NULL)
    {
      GOMP_PLUGIN_error ("offloadkit-%s: emulated device %d: out of memory",
			 ok_plugin.name, local);
      return NULL;
    }
  dev->local = local;
  dev->ord = ord;
  pthread_mutex_init (&dev->mem_lock, NULL);
  pthread_mutex_init (&dev->queue_lock, NULL);
  pthread_cond_init (&dev->queue_cond, NULL);
  pthread_cond_init (&dev->done_cond, NULL);
  int err = pthread_create (&dev->worker, NULL, emu_worker, dev);
  if (err != 0)
    {
      EMU_ERROR (dev, "cannot start its thread: %s", strerror (err));
      pthread_cond_destroy (&dev->done_cond);
      pthread_cond_destroy (&dev->queue_cond);
      pthread_mutex_destroy (&dev->queue_lock);
      pthread_mutex_destroy (&dev->mem_lock);
      free (dev);
      return NULL;
    }
  return dev;
}

static bool
emu_fini_device (void *d)
{
  struct emu_device *dev = d;
  if (emu_current != NULL)
    {
      /* exit () called inside a region (libgomp finalises devices from
	 atexit): this thread cannot wait for any worker, which might wait
	 for it.  Leave everything to the ending process.  */
      OK_DEBUG ("emulated device %d left running: the program exits from"
		" inside a target region", dev->local);
      return true;
    }
  /* The worker finishes what is queued, then ends.  */
  pthread_mutex_lock (&dev->queue_lock);
  dev->stopping = true;
  pthread_cond_signal (&dev->queue_cond);
  pthread_mutex_unlock (&dev->queue_lock);
  pthread_join (dev->worker, NULL);

  bool locked = emu_lock_region ();
  struct emu_image *images = dev->images;
  dev->images = NULL;
  emu_unlock_region (locked);
  while (images != NULL)
    {
      struct emu_image *next = images->next;
      emu_free_image (dev, images);
      images = next;
    }
  /* What the program did not free goes with the device.  */
  for (size_t i = 0; i < dev->num_blocks; i++)
    free (dev->blocks[i].start);
  free (dev->blocks);
  pthread_cond_destroy (&dev->done_cond);
  pthread_cond_destroy (&dev->queue_cond);
  pthread_mutex_destroy (&dev->queue_lock);
  pthread_mutex_destroy (&dev->mem_lock);
  free (dev);
  return true;
}

const struct ok_backend ok_backend_emulated = {
  .name = "emulated",
  .probe = emu_probe,
  .init_device = emu_init_device,
  .fini_device = emu_fini_device,
  .load_image = emu_load_image,
  .unload_image = emu_unload_image,
  .alloc = emu_alloc,
  .free = emu_free,
  .host2dev = emu_host2dev,
  .dev2host = emu_dev2host,
  .dev2dev = emu_dev2dev,
  .run = emu_run,
  .async_run = emu_async_run,
};
