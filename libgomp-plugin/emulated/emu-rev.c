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
   GLOB_DAT with -fno-plt) hold offloadkit_emu_target_ext.  That passes
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
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu-internal.h"

/* The relocations of a GOT slot that holds a function's address.  */
#if defined __x86_64__
# define EMU_R_JUMP_SLOT R_X86_64_JUMP_SLOT
# define EMU_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined __aarch64__
# define EMU_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
# define EMU_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#if __ELF_NATIVE_CLASS == 64
# define EMU_R_SYM(i) ELF64_R_SYM (i)
# define EMU_R_TYPE(i) ELF64_R_TYPE (i)
#else
# define EMU_R_SYM(i) ELF32_R_SYM (i)
# define EMU_R_TYPE(i) ELF32_R_TYPE (i)
#endif

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

/* ---- Finding the slots ---- */

/* A dynamic entry's address.  glibc relocates those of the dynamic
   section in place on most targets (x86-64 and AArch64 among them); a
   link-time address lies below the load address.  */
static uintptr_t
emu_dyn_addr (uintptr_t base, ElfW (Addr) v)
{
  return v < base ? base + v : v;
}

/* What the loaded object's dynamic section says about its relocations.  */
struct emu_dyn
{
  const ElfW (Sym) *symtab;
  const char *strtab;
  size_t strsz;
  /* The PLT's relocations, and the others (RELA or REL).  */
  uintptr_t jmprel, pltrelsz, pltrel;
  uintptr_t rela, relasz, relaent;
  uintptr_t rel, relsz, relent;
};

static bool
emu_read_dynamic (const struct dl_phdr_info *info, struct emu_dyn *d)
{
  memset (d, 0, sizeof *d);
  const ElfW (Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW (Dyn) *) (info->dlpi_addr
				   + info->dlpi_phdr[i].p_vaddr);
  if (dyn == NULL)
    return false;
  uintptr_t base = info->dlpi_addr;
  for (; dyn->d_tag != DT_NULL; dyn++)
    switch (dyn->d_tag)
      {
      case DT_SYMTAB:
	d->symtab = (const ElfW (Sym) *) emu_dyn_addr (base, dyn->d_un.d_ptr);
	break;
      case DT_STRTAB:
	d->strtab = (const char *) emu_dyn_addr (base, dyn->d_un.d_ptr);
	break;
      case DT_STRSZ: d->strsz = dyn->d_un.d_val; break;
      case DT_JMPREL: d->jmprel = emu_dyn_addr (base, dyn->d_un.d_ptr); break;
      case DT_PLTRELSZ: d->pltrelsz = dyn->d_un.d_val; break;
      case DT_PLTREL: d->pltrel = dyn->d_un.d_val; break;
      case DT_RELA: d->rela = emu_dyn_addr (base, dyn->d_un.d_ptr); break;
      case DT_RELASZ: d->relasz = dyn->d_un.d_val; break;
      case DT_RELAENT: d->relaent = dyn->d_un.d_val; break;
      case DT_REL: d->rel = emu_dyn_addr (base, dyn->d_un.d_ptr); break;
      case DT_RELSZ: d->relsz = dyn->d_un.d_val; break;
      case DT_RELENT: d->relent = dyn->d_un.d_val; break;
      default: break;
      }
  return d->symtab != NULL && d->strtab != NULL;
}

/* The GOT slots of GOMP_target_ext in one object.  */
struct emu_slots
{
  void **slot[EMU_REV_MAX_SLOTS];
  size_t n;
  const char *why;		/* Why they cannot be used, or NULL.  */
};

/* Look through the SIZE bytes of relocations at TABLE, ENT bytes each
   (Rel and Rela begin alike), for those naming GOMP_target_ext.  */
static void
emu_scan_relocs (const struct dl_phdr_info *info, const struct emu_dyn *d,
		 uintptr_t table, uintptr_t size, uintptr_t ent,
		 struct emu_slots *out)
{
  if (table == 0 || ent < sizeof (ElfW (Rel)))
    return;
  for (uintptr_t off = 0; off + ent <= size && out->why == NULL; off += ent)
    {
      const ElfW (Rel) *r = (const ElfW (Rel) *) (table + off);
      size_t sym = EMU_R_SYM (r->r_info);
      if (sym == 0 || d->symtab[sym].st_name >= d->strsz
	  || strcmp (d->strtab + d->symtab[sym].st_name, EMU_TARGET_EXT) != 0)
	continue;
#ifdef EMU_R_JUMP_SLOT
      unsigned type = (unsigned) EMU_R_TYPE (r->r_info);
      if (type != EMU_R_JUMP_SLOT && type != EMU_R_GLOB_DAT)
	out->why = "it refers to " EMU_TARGET_EXT " other than through a"
		   " GOT slot";
      else if (out->n == EMU_REV_MAX_SLOTS)
	out->why = "it has too many GOT slots of " EMU_TARGET_EXT;
      else
	out->slot[out->n++] = (void **) (info->dlpi_addr + r->r_offset);
#else
      (void) info;
      out->why = "its relocations are not known on this architecture";
#endif
    }
}

/* The GOT slots of GOMP_target_ext in the loaded object INFO (none when
   it calls it not at all).  */
static struct emu_slots
emu_find_slots (const struct dl_phdr_info *info)
{
  struct emu_slots out = { .n = 0, .why = NULL };
  struct emu_dyn d;
  if (!emu_read_dynamic (info, &d))
    {
      out.why = "it has no dynamic symbol table";
      return out;
    }
  uintptr_t pltent = (d.pltrel == DT_RELA ? sizeof (ElfW (Rela))
		      : sizeof (ElfW (Rel)));
  emu_scan_relocs (info, &d, d.jmprel, d.pltrelsz, pltent, &out);
  emu_scan_relocs (info, &d, d.rela, d.relasz,
		   d.relaent ? d.relaent : sizeof (ElfW (Rela)), &out);
  emu_scan_relocs (info, &d, d.rel, d.relsz,
		   d.relent ? d.relent : sizeof (ElfW (Rel)), &out);
  return out;
}

/* ---- Writing them ---- */

/* Whether ADDR lies in INFO's RELRO part, which the dynamic linker made
   read-only after relocation (whole pages: both ends rounded down).  */
static bool
emu_in_relro (const struct dl_phdr_info *info, uintptr_t addr)
{
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_GNU_RELRO)
	continue;
      uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
      uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
		     & ~(page - 1);
      if (addr >= lo && addr < hi)
	return true;
    }
  return false;
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

/* Make *SLOT hold VALUE, opening a RELRO page for the write.  False when
   the page cannot be opened.  EMU_SLOTS_LOCK held.  */
static bool
emu_slot_write (void **slot, bool relro, void *value)
{
  if (__atomic_load_n (slot, __ATOMIC_ACQUIRE) == value)
    return true;
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  void *start = (void *) ((uintptr_t) slot & ~(page - 1));
  if (relro && mprotect (start, page, PROT_READ | PROT_WRITE) != 0)
    return false;
  /* Other threads may call through the slot meanwhile: one store.  */
  __atomic_store_n (slot, value, __ATOMIC_RELEASE);
  if (relro)
    mprotect (start, page, PROT_READ);
  return true;
}

/* The object holding ADDR, found by dl_iterate_phdr.  */
struct emu_object_query
{
  uintptr_t addr;
  bool found;
  struct emu_slots slots;
  bool relro[EMU_REV_MAX_SLOTS];
  char name[128];
};

static int
emu_object_visit (struct dl_phdr_info *info, size_t size, void *data)
{
  struct emu_object_query *q = data;
  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      if (ph->p_type != PT_LOAD || q->addr < lo
	  || q->addr >= lo + ph->p_memsz)
	continue;
      q->found = true;
      q->slots = emu_find_slots (info);
      for (size_t s = 0; s < q->slots.n; s++)
	q->relro[s] = emu_in_relro (info, (uintptr_t) q->slots.slot[s]);
      snprintf (q->name, sizeof q->name, "%s",
		info->dlpi_name != NULL && info->dlpi_name[0] != '\0'
		? info->dlpi_name : "the program");
      return 1;
    }
  return 0;
}

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
  struct emu_slots slots = emu_find_slots (info);
  if (slots.why == NULL)
    return 0;
  OK_DEBUG ("%s: %s", info->dlpi_name != NULL && info->dlpi_name[0] != '\0'
	    ? info->dlpi_name : "the program", slots.why);
  *why = "an object's calls of " EMU_TARGET_EXT " cannot be redirected";
  return 1;
}

unsigned
emu_requires_unmet (unsigned features)
{
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
	      struct ok_image_req *req)
{
  if (!req->want_rev_fns || !emu_rev_claimed || req->num_funcs == 0)
    return true;
  const struct ok_host_table *host = &req->desc->host;
  pthread_once (&emu_chain_once, emu_chain_resolve);
  struct emu_object_query q = { .addr = (uintptr_t) host->funcs[0] };
  dl_iterate_phdr (emu_object_visit, &q);
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
	  if (!emu_slot_write (s->slot, s->relro, emu_chain_head))
	    why = "its GOT cannot be made writable";
	}
    }
  pthread_mutex_unlock (&emu_slots_lock);
  if (why != NULL)
    {
      ok_dev_error (&dev->base, "cannot load an image of a program that"
		    " requires reverse offload: %s%s%s", q.found ? q.name : "",
		    q.found ? ": " : "", why);
      emu_rev_unload (img);
      return false;
    }
  OK_DEBUG ("%s: ancestor regions in %s go to libgomp as reverse-offload"
	    " requests (%zu GOT slot%s of " EMU_TARGET_EXT ")", dev->base.label,
	    q.name, q.slots.n, q.slots.n == 1 ? "" : "s");
  /* Each function is its own device address: the interceptor hands
     libgomp the function the program called.  */
  req->rev_fns = GOMP_PLUGIN_malloc (req->num_funcs * sizeof (uint64_t));
  for (size_t i = 0; i < req->num_funcs; i++)
    req->rev_fns[i] = (uintptr_t) host->funcs[i];
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
    emu_slot_write (s->slot, s->relro, emu_chain_head);
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
