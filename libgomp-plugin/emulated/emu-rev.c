/* Reverse offload on the emulated device: `target device (ancestor: 1)'
   regions inside a region run on the host, with their map clauses
   copying between the device's data and the host's, as on a GPU.

   Host-fallback code asks for an ancestor region with GOMP_target_ext
   (GOMP_DEVICE_HOST_FALLBACK, FN, ...), FN the region's host function and
   the host table's entry for it (GCC 16's gcc/omp-offload.cc swaps it in
   for the device's nohost clone there), and the addresses it passes are
   those of the
   running region: device addresses.  libgomp's host fallback would run FN
   on them in place.  A GPU's device code instead hands FN and its arrays
   to the plugin, which calls libgomp's GOMP_PLUGIN_target_rev: libgomp
   finds FN in the reverse-offload table load_image gave, copies the
   arrays and the data from the device (dev2host), finds the host's own
   copies of mapped data, runs FN on the host and copies back (host2dev).

   The call goes from the program straight to libgomp, so the plugin
   redirects it: while an image of a program that requires reverse
   offload is loaded, the GOT slots through which the object holding the
   image's functions calls GOMP_target_ext (its JUMP_SLOT relocation, or
   GLOB_DAT with -fno-plt; emu-got.c finds and writes them) hold
   offloadkit_emu_target_ext.  That passes
   every call on but one made by a running region of one of this
   plugin's emulated devices (on its thread, or on one of a parallel
   region in it), for the host fallback, with a function of the device's
   reverse-offload tables: that one becomes a reverse-offload request of
   the device (emu_rev_run, emu_rev_run_guest).  Each function is its own
   "device address" in the table.

   Both of offloadkit's plugins may do this in one process, so the
   interceptors form a chain in rank order (nvptx's, then gcn's, then
   libgomp's GOMP_target_ext), and a slot gets the first of the chain
   whichever plugin writes it.  A slot keeps its interceptor once
   written, also after the image is unloaded: the other plugin may
   still need it, and a call passes through it unchanged when no region
   asks.  If an object's slots cannot be found or written, the program
   gets no emulated devices (emu_requires_unmet) rather than ancestor
   regions run in place.  */

/* dl_iterate_phdr, RTLD_DEFAULT.  */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu-internal.h"

/* gomp-constants.h's GOMP_DEVICE_HOST_FALLBACK, GOMP_MAP_FIRSTPRIVATE_INT
   (the entry is a value, not an address).  */
#define EMU_DEVICE_HOST_FALLBACK (-2)
#define EMU_MAP_FIRSTPRIVATE_INT 0x0d

#define EMU_TARGET_EXT "GOMP_target_ext"
#define EMU_INTERCEPTOR "offloadkit_emu_target_ext"

typedef void (*emu_target_ext_fn) (int, void (*) (void *), size_t, void **,
				   size_t *, unsigned short *, unsigned int,
				   void **, void **);

/* Exported: the other plugin's chain finds it by name.  */
void offloadkit_emu_target_ext (int device, void (*fn) (void *),
				size_t mapnum, void **hostaddrs,
				size_t *sizes, unsigned short *kinds,
				unsigned int flags, void **depend,
				void **args);

/* ---- The chain ---- */

/* Resolved at the first image load or call, not before: libgomp loads
   its plugins one after another, each asked for its devices before the
   next is loaded, and loads images only once all are.  */
static pthread_once_t emu_chain_once = PTHREAD_ONCE_INIT;
/* What a slot gets: the first interceptor of the chain.  */
static void *emu_chain_head;
/* Where the calls this plugin does not take go: the next plugin's
   interceptor, or libgomp's GOMP_target_ext (NULL in a process without
   one).  */
static emu_target_ext_fn emu_chain_next;

static void
emu_chain_resolve (void)
{
  int me = emu_rank ();
  void *head = (void *) offloadkit_emu_target_ext, *next = NULL;
  for (int r = 0; r < me; r++)
    {
      void *p = emu_peer_symbol (r, EMU_INTERCEPTOR);
      if (p != NULL)
	{
	  head = p;
	  break;
	}
    }
  for (int r = me + 1; r < emu_num_ranks () && next == NULL; r++)
    next = emu_peer_symbol (r, EMU_INTERCEPTOR);
  if (next == NULL)
    next = dlsym (RTLD_DEFAULT, EMU_TARGET_EXT);
  emu_chain_head = head;
  *(void **) &emu_chain_next = next;
}

/* A slot this plugin wrote, with the number of loaded images (on any of
   its devices) whose object it belongs to.  */
struct emu_rev_slot
{
  struct emu_rev_slot *next;
  void **slot;
  bool relro;
  unsigned images;
};

/* Guards the records and every write of a slot.  */
static pthread_mutex_t emu_slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_rev_slot *emu_slot_list;

/* The record of SLOT, made if need be, with one image more; NULL when
   out of memory.  EMU_SLOTS_LOCK held.  */
static struct emu_rev_slot *
emu_slot_take (void **slot, bool relro)
{
  struct emu_rev_slot *s;
  for (s = emu_slot_list; s != NULL; s = s->next)
    if (s->slot == slot)
      break;
  if (s == NULL)
    {
      s = calloc (1, sizeof *s);
      if (s == NULL)
	return NULL;
      s->slot = slot;
      s->relro = relro;
      s->next = emu_slot_list;
      emu_slot_list = s;
    }
  s->images++;
  return s;
}

static void
emu_slot_drop (struct emu_rev_slot *s)
{
  if (--s->images > 0)
    return;
  for (struct emu_rev_slot **p = &emu_slot_list; *p != NULL;
       p = &(*p)->next)
    if (*p == s)
      {
	*p = s->next;
	break;
      }
  free (s);
}

/* ---- The plugin's side ---- */

/* The program requires reverse offload and the emulated devices took it
   on (emu_requires_unmet): libgomp asks for the table, and gets it, only
   then.  */
static bool emu_rev_claimed;

/* Why reverse-offload regions cannot be sent to libgomp from the loaded
   object INFO, which has offloadkit images; NULL when they can.  */
static int
emu_check_visit (struct dl_phdr_info *info, size_t size, void *data)
{
  const char **why = data;
  (void) size;
  if (emu_object_kinds (info) == 0)
    return 0;
  struct emu_got slots = emu_got_find (info, EMU_TARGET_EXT);
  if (slots.why == NULL)
    return 0;
  OK_DEBUG ("%s: %s (" EMU_TARGET_EXT ")",
	    info->dlpi_name != NULL && info->dlpi_name[0] != '\0'
	    ? info->dlpi_name : "the program", slots.why);
  *why = "an object's calls of " EMU_TARGET_EXT " cannot be redirected";
  return 1;
}

unsigned
emu_requires_unmet (unsigned features, int n)
{
  (void) n;
  if (!(features & OK_GOMP_REQUIRES_REVERSE_OFFLOAD))
    return 0;
  const char *why = NULL;
  if (!OK_GCC_HAS_REVERSE_OFFLOAD (ok_libgomp_gcc ()))
    why = "the libgomp has no reverse offload";
  else if (dlsym (RTLD_DEFAULT, EMU_TARGET_EXT) == NULL)
    why = "the process has no " EMU_TARGET_EXT;
  else
    dl_iterate_phdr (emu_check_visit, &why);
  if (why == NULL)
    {
      emu_rev_claimed = true;
      return 0;
    }
  OK_DEBUG ("emulated devices cannot run reverse-offload regions: %s", why);
  return OK_GOMP_REQUIRES_REVERSE_OFFLOAD;
}

bool
emu_rev_load (struct emu_device *dev, struct emu_image *img,
	      const struct ok_image_load *ld, uint64_t **rev_fns)
{
  if (!emu_rev_claimed || ld->num_funcs == 0)
    return true;
  const struct ok_host_table *host = &ld->desc->host;
  pthread_once (&emu_chain_once, emu_chain_resolve);
  struct emu_got_object q;
  emu_got_object ((uintptr_t) host->funcs[0], EMU_TARGET_EXT, &q);
  const char *why = (emu_chain_next == NULL
		     ? "the process has no " EMU_TARGET_EXT
		     : !q.found ? "no loaded object holds its functions"
		     : q.slots.why);
  pthread_mutex_lock (&emu_slots_lock);
  for (size_t i = 0; why == NULL && i < q.slots.n; i++)
    {
      struct emu_rev_slot *s = emu_slot_take (q.slots.slot[i], q.relro[i]);
      if (s == NULL)
	why = "out of memory";
      else
	{
	  img->rev_slots[img->num_rev_slots++] = s;
	  if (!emu_got_write (s->slot, s->relro, emu_chain_head))
	    why = "its GOT cannot be made writable";
	}
    }
  pthread_mutex_unlock (&emu_slots_lock);
  if (why != NULL)
    {
      ok_dev_error (&dev->base, "cannot load an image of a program that"
		    " requires reverse offload: %s%s%s (" EMU_TARGET_EXT ")",
		    q.found ? q.name : "", q.found ? ": " : "", why);
      emu_rev_unload (img);
      return false;
    }
  OK_DEBUG ("%s: ancestor regions in %s go to libgomp as reverse-offload"
	    " requests (%zu GOT slot%s of " EMU_TARGET_EXT ")", dev->base.label,
	    q.name, q.slots.n, q.slots.n == 1 ? "" : "s");
  /* Each function is its own device address: the interceptor hands
     libgomp the function the program called.  */
  uint64_t *fns = GOMP_PLUGIN_malloc (ld->num_funcs * sizeof *fns);
  for (size_t i = 0; i < ld->num_funcs; i++)
    fns[i] = (uintptr_t) host->funcs[i];
  *rev_fns = fns;
  img->rev = true;
  return true;
}

void
emu_rev_unload (struct emu_image *img)
{
  pthread_mutex_lock (&emu_slots_lock);
  for (size_t i = 0; i < img->num_rev_slots; i++)
    emu_slot_drop (img->rev_slots[i]);
  pthread_mutex_unlock (&emu_slots_lock);
  img->num_rev_slots = 0;
  img->rev = false;
}

/* A lazy binding of GOMP_target_ext that was under way on another thread
   while a slot was written stores libgomp's address over ours when it
   ends; after that the slot is bound and stays as written here.  */
void
emu_rev_recheck (void)
{
  if (__atomic_load_n (&emu_slot_list, __ATOMIC_ACQUIRE) == NULL)
    return;
  pthread_mutex_lock (&emu_slots_lock);
  for (struct emu_rev_slot *s = emu_slot_list; s != NULL; s = s->next)
    emu_got_write (s->slot, s->relro, emu_chain_head);
  pthread_mutex_unlock (&emu_slots_lock);
}

/* ---- Requests ---- */

/* A reverse-offload request that libgomp serves: the region's arrays.  */
struct emu_rev_req
{
  struct emu_rev_req *next;
  size_t mapnum;
  void **addrs;
  size_t *sizes;
  unsigned short *kinds;
};

static bool
emu_range_in (const void *ptr, size_t n, const void *start, size_t size)
{
  uintptr_t off = (uintptr_t) ptr - (uintptr_t) start;
  return (uintptr_t) ptr >= (uintptr_t) start && off <= size
	 && n <= size - off;
}

/* Whether [PTR, PTR + N) lies in what request R names.  */
static bool
emu_req_covers (const struct emu_rev_req *r, const void *ptr, size_t n)
{
  if (emu_range_in (ptr, n, r->addrs, r->mapnum * sizeof *r->addrs)
      || emu_range_in (ptr, n, r->sizes, r->mapnum * sizeof *r->sizes)
      || emu_range_in (ptr, n, r->kinds, r->mapnum * sizeof *r->kinds))
    return true;
  for (size_t i = 0; i < r->mapnum; i++)
    if ((r->kinds[i] & 0xff) != EMU_MAP_FIRSTPRIVATE_INT
	&& r->addrs[i] != NULL
	&& emu_range_in (ptr, n, r->addrs[i], r->sizes[i]))
      return true;
  return false;
}

bool
emu_rev_covers (struct emu_device *dev, const void *ptr, size_t n)
{
  for (const struct emu_rev_req *r = dev->rev_reqs; r != NULL; r = r->next)
    if (emu_req_covers (r, ptr, n))
      return true;
  return false;
}

/* Whether FN is a function of a reverse-offload table of DEV's loaded
   images; its device's number, as libgomp knows it, into *DEV_NUM.
   Called on the region's thread, on behalf of the worker that holds the
   images.  */
static bool
emu_rev_fn (struct emu_device *dev, void *fn, int *dev_num)
{
  for (struct ok_loaded_image *l = ok_images_first (&dev->base); l != NULL;
       l = l->next)
    {
      const struct emu_image *img = emu_image_of (l);
      if (!img->rev)
	continue;
      for (size_t i = 0; i < img->num_funcs; i++)
	if (img->funcs[i] == fn)
	  {
	    /* libgomp stored it there at load.  */
	    *dev_num = *(const int *) img->device_num;
	    return true;
	  }
    }
  return false;
}

/* ---- Whose region runs ---- */

/* The device whose region holds the region lock now, and how many
   threads other than the region's own (those of a parallel region in it)
   are serving one of its reverse-offload regions; under EMU_OWNER_LOCK.
   The owner's images are held while it is set.  */
static pthread_mutex_t emu_owner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t emu_owner_cond = PTHREAD_COND_INITIALIZER;
static struct emu_device *emu_owner;
static unsigned emu_guests;

void
emu_rev_own (struct emu_device *dev)
{
  pthread_mutex_lock (&emu_owner_lock);
  emu_owner = dev;
  pthread_mutex_unlock (&emu_owner_lock);
}

void
emu_rev_disown (void)
{
  pthread_mutex_lock (&emu_owner_lock);
  while (emu_guests > 0)
    pthread_cond_wait (&emu_owner_cond, &emu_owner_lock);
  emu_owner = NULL;
  pthread_mutex_unlock (&emu_owner_lock);
}

/* On a thread that runs no region: the device of the running region when
   FN is a function of its reverse-offload tables (its number into
   *DEV_NUM), now a guest of it; else NULL.  Such a thread is one of a
   parallel region inside the region (or, rarely, one running the host
   fallback of the same code meanwhile, for which the request comes to
   the same: libgomp finds none of its host addresses mapped, and copies
   them in and out around FN).  */
static struct emu_device *
emu_guest_enter (void *fn, int *dev_num)
{
  pthread_mutex_lock (&emu_owner_lock);
  struct emu_device *dev = emu_owner;
  if (dev != NULL && emu_rev_fn (dev, fn, dev_num))
    emu_guests++;
  else
    dev = NULL;
  pthread_mutex_unlock (&emu_owner_lock);
  return dev;
}

static void
emu_guest_leave (void)
{
  pthread_mutex_lock (&emu_owner_lock);
  if (--emu_guests == 0)
    pthread_cond_broadcast (&emu_owner_cond);
  pthread_mutex_unlock (&emu_owner_lock);
}

/* ---- Serving a request ---- */

__thread bool emu_on_host;

/* Have libgomp run reverse-offload region FN of DEV with the region's
   arrays, as a GPU's plugin does for its device code; the copies it makes
   may reach what the arrays name (emu_rev_covers).  */
static void
emu_rev_serve (struct emu_device *dev, void *fn, int dev_num, size_t mapnum,
	       void **addrs, size_t *sizes, unsigned short *kinds)
{
  struct emu_rev_req req = { .mapnum = mapnum, .addrs = addrs,
			     .sizes = sizes, .kinds = kinds };
  pthread_mutex_lock (&dev->mem_lock);
  req.next = dev->rev_reqs;
  dev->rev_reqs = &req;
  pthread_mutex_unlock (&dev->mem_lock);
  bool ok = ok_target_rev (&dev->base, (uintptr_t) fn, mapnum,
			   (uintptr_t) addrs, (uintptr_t) sizes,
			   (uintptr_t) kinds, dev_num);
  pthread_mutex_lock (&dev->mem_lock);
  for (struct emu_rev_req **p = &dev->rev_reqs; *p != NULL; p = &(*p)->next)
    if (*p == &req)
      {
	*p = req.next;
	break;
      }
  pthread_mutex_unlock (&dev->mem_lock);
  if (!ok)
    /* The region cannot go on without it: ok_target_rev said why.  */
    GOMP_PLUGIN_fatal ("offloadkit-%s: the target region cannot go on",
		       ok_plugin.name);
}

/* The request of DEV's region, made on the region's own thread.  When
   the region runs alone here (in no parallel region of several threads),
   the host code sees the host: the variables' globals get the host's
   bytes back, omp_get_device_num () answers the host's, and the region
   lock is free for the host's copies meanwhile, while other regions wait
   (emu_regions_on_host).  Otherwise other threads
   of the region run on the device's bytes in the globals, which must
   stay: then map clauses are the host's, but FN, naming a `declare
   target' variable, sees the device's (doc/design.md); and requests are
   served one at a time, as a GPU's device libgomp sends them, so that
   the copies' views of link variables stay whole.  */
static void
emu_rev_run (struct emu_device *dev, void *fn, int dev_num, size_t mapnum,
	     void **addrs, size_t *sizes, unsigned short *kinds)
{
  bool alone = emu_region_alone ();
  emu_set_device_num (dev, false);
  if (alone)
    {
      emu_rev_disown ();
      emu_view_all (dev, false);
      emu_on_host = true;
      emu_regions_on_host++;
      pthread_mutex_unlock (&emu_region_lock);
    }
  else
    pthread_mutex_lock (&dev->rev_lock);
  emu_rev_serve (dev, fn, dev_num, mapnum, addrs, sizes, kinds);
  if (alone)
    {
      pthread_mutex_lock (&emu_region_lock);
      emu_regions_on_host--;
      pthread_cond_broadcast (&emu_region_cond);
      emu_on_host = false;
      emu_view_all (dev, true);
      emu_rev_own (dev);
    }
  else
    pthread_mutex_unlock (&dev->rev_lock);
  emu_set_device_num (dev, true);
}

/* The request of DEV's region made on another thread, a guest: it runs
   as part of the region meanwhile, copies included.  */
static void
emu_rev_run_guest (struct emu_device *dev, void *fn, int dev_num,
		   size_t mapnum, void **addrs, size_t *sizes,
		   unsigned short *kinds)
{
  pthread_mutex_lock (&dev->rev_lock);
  ok_region_enter (&dev->base);
  emu_rev_serve (dev, fn, dev_num, mapnum, addrs, sizes, kinds);
  ok_region_leave ();
  pthread_mutex_unlock (&dev->rev_lock);
}

void
offloadkit_emu_target_ext (int device, void (*fn) (void *), size_t mapnum,
			   void **hostaddrs, size_t *sizes,
			   unsigned short *kinds, unsigned int flags,
			   void **depend, void **args)
{
  /* As on a GPU, whose device libgomp ignores them, FLAGS, DEPEND and
     ARGS (no nowait, no depend for an ancestor region) are not used.  */
  if (device == EMU_DEVICE_HOST_FALLBACK && fn != NULL)
    {
      struct emu_device *dev = emu_current ();
      int dev_num;
      if (dev != NULL && emu_rev_fn (dev, (void *) fn, &dev_num))
	{
	  emu_rev_run (dev, (void *) fn, dev_num, mapnum, hostaddrs, sizes,
		       kinds);
	  return;
	}
      if (dev == NULL
	  && (dev = emu_guest_enter ((void *) fn, &dev_num)) != NULL)
	{
	  emu_rev_run_guest (dev, (void *) fn, dev_num, mapnum, hostaddrs,
			     sizes, kinds);
	  emu_guest_leave ();
	  return;
	}
    }
  pthread_once (&emu_chain_once, emu_chain_resolve);
  if (emu_chain_next == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: no " EMU_TARGET_EXT " to call",
		       ok_plugin.name);
  emu_chain_next (device, fn, mapnum, hostaddrs, sizes, kinds, flags, depend,
		  args);
}
