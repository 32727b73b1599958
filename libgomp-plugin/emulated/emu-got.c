/* GOT slots: where a loaded object's calls of a function of another
   object go, found from its dynamic section's relocations (JUMP_SLOT, or
   GLOB_DAT under -fno-plt) and written, a RELRO page opened for the
   write.  Reverse offload on the emulated device (emu-rev.c) redirects
   GOMP_target_ext so.  */

/* dl_iterate_phdr.  */
#define _GNU_SOURCE 1

#include <elf.h>
#include <link.h>
#include <stdio.h>
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

/* Look through the SIZE bytes of relocations at TABLE, ENT bytes each
   (Rel and Rela begin alike), for those naming NAME.  */
static void
emu_scan_relocs (const struct dl_phdr_info *info, const struct emu_dyn *d,
		 const char *name, uintptr_t table, uintptr_t size,
		 uintptr_t ent, struct emu_got *out)
{
  if (table == 0 || ent < sizeof (ElfW (Rel)))
    return;
  for (uintptr_t off = 0; off + ent <= size && out->why == NULL; off += ent)
    {
      const ElfW (Rel) *r = (const ElfW (Rel) *) (table + off);
      size_t sym = EMU_R_SYM (r->r_info);
      if (sym == 0 || d->symtab[sym].st_name >= d->strsz
	  || strcmp (d->strtab + d->symtab[sym].st_name, name) != 0)
	continue;
#ifdef EMU_R_JUMP_SLOT
      unsigned type = (unsigned) EMU_R_TYPE (r->r_info);
      if (type != EMU_R_JUMP_SLOT && type != EMU_R_GLOB_DAT)
	out->why = "it refers to it other than through a GOT slot";
      else if (out->n == EMU_GOT_MAX_SLOTS)
	out->why = "it has too many GOT slots of it";
      else
	out->slot[out->n++] = (void **) (info->dlpi_addr + r->r_offset);
#else
      (void) info;
      out->why = "its relocations are not known on this architecture";
#endif
    }
}

struct emu_got
emu_got_find (const struct dl_phdr_info *info, const char *name)
{
  struct emu_got out = { .n = 0, .why = NULL };
  struct emu_dyn d;
  if (!emu_read_dynamic (info, &d))
    {
      out.why = "it has no dynamic symbol table";
      return out;
    }
  uintptr_t pltent = (d.pltrel == DT_RELA ? sizeof (ElfW (Rela))
		      : sizeof (ElfW (Rel)));
  emu_scan_relocs (info, &d, name, d.jmprel, d.pltrelsz, pltent, &out);
  emu_scan_relocs (info, &d, name, d.rela, d.relasz,
		   d.relaent ? d.relaent : sizeof (ElfW (Rela)), &out);
  emu_scan_relocs (info, &d, name, d.rel, d.relsz,
		   d.relent ? d.relent : sizeof (ElfW (Rel)), &out);
  return out;
}

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

bool
emu_got_write (void **slot, bool relro, void *value)
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

static int
emu_object_visit (struct dl_phdr_info *info, size_t size, void *data)
{
  struct emu_got_object *q = data;
  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      if (ph->p_type != PT_LOAD || q->addr < lo
	  || q->addr >= lo + ph->p_memsz)
	continue;
      q->found = true;
      q->slots = emu_got_find (info, q->symbol);
      for (size_t s = 0; s < q->slots.n; s++)
	q->relro[s] = emu_in_relro (info, (uintptr_t) q->slots.slot[s]);
      snprintf (q->name, sizeof q->name, "%s",
		info->dlpi_name != NULL && info->dlpi_name[0] != '\0'
		? info->dlpi_name : "the program");
      return 1;
    }
  return 0;
}

void
emu_got_object (uintptr_t addr, const char *symbol, struct emu_got_object *q)
{
  memset (q, 0, sizeof *q);
  q->addr = addr;
  q->symbol = symbol;
  dl_iterate_phdr (emu_object_visit, q);
}
