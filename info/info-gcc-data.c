/* What GCC's own mkoffload's registration data says of a program: the
   OpenMP requires mask, which GCC 13 and newer put first in the data
   passed to GOMP_offload_register_ver (GCC's config/nvptx/mkoffload.cc,
   struct nvptx_data; config/gcn/mkoffload.cc, struct gcn_data), and
   which tells those GCCs from GCC 12, whose data has none.

   The data is a static object of pointers, found from what it points to:
   for nvptx, nvptx_data.ptx_objs points to an array of struct ptx_obj
   { const char *code; size_t size; } whose first CODE is a PTX string of
   SIZE bytes (its NUL included); for gcn, gcn_data.gcn_image points to a
   struct gcn_image { size_t size; void *image; } whose IMAGE is the
   AMDGPU code object.  The mask is the word before that pointer.  In a
   position-independent program a pointer's value is the addend of its
   R_X86_64_RELATIVE dynamic relocation (the file holds 0 or the same
   value there); otherwise the file holds it.  */

#define _GNU_SOURCE 1		/* memmem */

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf-reader.h"
#include "gomp-abi.h"
#include "info.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

/* One pointer of the file: at virtual address AT, with value VALUE.  */
struct slot
{
  uint64_t at, value;
};

struct slots
{
  struct slot *v;
  size_t n, cap;
};

static bool
slots_add (struct slots *s, uint64_t at, uint64_t value)
{
  if (s->n == s->cap)
    {
      size_t cap = s->cap ? 2 * s->cap : 256;
      struct slot *v = realloc (s->v, cap * sizeof *v);
      if (v == NULL)
	return false;
      s->v = v;
      s->cap = cap;
    }
  s->v[s->n].at = at;
  s->v[s->n].value = value;
  s->n++;
  return true;
}

/* The bytes of ELF at virtual address ADDR, N of them inside one
   allocated section with contents; NULL when there are none.  */
static const unsigned char *
bytes_at (const struct ok_elf *elf, uint64_t addr, uint64_t n)
{
  for (unsigned i = 0; i < ok_elf_shnum (elf); i++)
    {
      Elf64_Shdr sh;
      if (ok_elf_section (elf, i, &sh) && (sh.sh_flags & SHF_ALLOC)
	  && ok_elf_has_contents (elf, &sh) && addr >= sh.sh_addr
	  && addr - sh.sh_addr <= sh.sh_size
	  && n <= sh.sh_size - (addr - sh.sh_addr))
	return elf->buf + sh.sh_offset + (addr - sh.sh_addr);
    }
  return NULL;
}

/* The pointer-sized word at ADDR as the program sees it once loaded.  */
static bool
word_at (const struct ok_elf *elf, const struct slots *s, uint64_t addr,
	 uint64_t *value)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].at == addr)
      {
	*value = s->v[i].value;
	return true;
      }
  const unsigned char *b = bytes_at (elf, addr, 8);
  if (b == NULL)
    return false;
  memcpy (value, b, 8);
  return true;
}

/* Every pointer of ELF: the relative relocations of a
   position-independent one, else every aligned word of its writable and
   read-only data that holds an address inside the file's sections.  */
static bool
collect_slots (const struct ok_elf *elf, struct slots *s)
{
  bool relocs = false;
  for (unsigned i = 0; i < ok_elf_shnum (elf); i++)
    {
      Elf64_Shdr sh;
      if (!ok_elf_section (elf, i, &sh) || sh.sh_type != SHT_RELA
	  || sh.sh_entsize != sizeof (Elf64_Rela))
	continue;
      for (uint64_t off = 0; off + sizeof (Elf64_Rela) <= sh.sh_size;
	   off += sizeof (Elf64_Rela))
	{
	  Elf64_Rela r;
	  memcpy (&r, elf->buf + sh.sh_offset + off, sizeof r);
	  if (ELF64_R_TYPE (r.r_info) != R_X86_64_RELATIVE)
	    continue;
	  relocs = true;
	  if (!slots_add (s, r.r_offset, (uint64_t) r.r_addend))
	    return false;
	}
    }
  if (relocs || elf->eh.e_type != ET_EXEC)
    return true;
  for (unsigned i = 0; i < ok_elf_shnum (elf); i++)
    {
      Elf64_Shdr sh;
      if (!ok_elf_section (elf, i, &sh) || !(sh.sh_flags & SHF_ALLOC)
	  || (sh.sh_flags & SHF_EXECINSTR) || !ok_elf_has_contents (elf, &sh))
	continue;
      for (uint64_t off = (8 - sh.sh_addr % 8) % 8; off + 8 <= sh.sh_size;
	   off += 8)
	{
	  uint64_t v;
	  memcpy (&v, elf->buf + sh.sh_offset + off, 8);
	  if (v != 0 && bytes_at (elf, v, 1) != NULL
	      && !slots_add (s, sh.sh_addr + off, v))
	    return false;
	}
    }
  return true;
}

/* Whether the N bytes at B are one PTX module as GCC's mkoffload embeds
   it: text that names its target, ending with its NUL.  */
static bool
is_ptx (const unsigned char *b, uint64_t n)
{
  if (n < 16 || n > ((uint64_t) 1 << 32) || b[n - 1] != '\0')
    return false;
  return memmem (b, n, ".target sm_", 11) != NULL;
}

static bool
is_gcn_code (const unsigned char *b, uint64_t n)
{
  if (n < sizeof (Elf64_Ehdr) || memcmp (b, "\177ELF", 4) != 0)
    return false;
  uint16_t machine;
  memcpy (&machine, b + offsetof (Elf64_Ehdr, e_machine), 2);
  return machine == EM_AMDGPU;
}

/* Whether VALUE can be a requires mask of GCC 13 and newer for a
   program with target regions: TARGET_USED set, no bit libgomp does not
   know.  (An address in a program is never so small.)  */
static bool
plausible_mask (uint64_t value)
{
  const uint64_t known = OK_GOMP_REQUIRES_UNIFIED_ADDRESS
    | OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
    | OK_GOMP_REQUIRES_REVERSE_OFFLOAD | OK_GOMP_REQUIRES_TARGET_USED
    | OK_GOMP_REQUIRES_SELF_MAPS;
  return (value & OK_GOMP_REQUIRES_TARGET_USED) && !(value & ~known);
}

void
info_gcc_data_read (const struct ok_elf *elf, struct info_program *p)
{
  struct slots s = { 0 };
  if (!collect_slots (elf, &s))
    {
      free (s.v);
      return;
    }
  for (size_t i = 0; i < s.n && !p->requires_known; i++)
    {
      /* S.V[I] the image pointer of a ptx_obj or gcn_image; TABLE the
	 address of that structure.  */
      uint64_t table, size;
      const unsigned char *b, *sizep;
      sizep = bytes_at (elf, s.v[i].at + 8, 8);
      if (sizep != NULL)
	{
	  memcpy (&size, sizep, 8);
	  b = bytes_at (elf, s.v[i].value, size);
	  if (b != NULL && is_ptx (b, size))
	    {
	      table = s.v[i].at;
	      goto found;
	    }
	}
      sizep = s.v[i].at >= 8 ? bytes_at (elf, s.v[i].at - 8, 8) : NULL;
      if (sizep != NULL)
	{
	  memcpy (&size, sizep, 8);
	  b = bytes_at (elf, s.v[i].value, size);
	  if (b != NULL && is_gcn_code (b, size))
	    {
	      table = s.v[i].at - 8;
	      goto found;
	    }
	}
      continue;
    found:
      /* The data's pointer to TABLE, and the word before it.  */
      for (size_t j = 0; j < s.n; j++)
	{
	  uint64_t mask;
	  if (s.v[j].value == table && s.v[j].at >= 8
	      && word_at (elf, &s, s.v[j].at - 8, &mask)
	      && plausible_mask (mask))
	    {
	      p->requires_known = true;
	      p->omp_requires = (uint32_t) mask;
	      /* GCC 13 gives libgomp interface version 2, later ones 3;
		 the data does not tell them apart.  */
	      p->gcc_min = 13;
	      p->gomp_lib = OK_GOMP_VERSION_OF_GCC (13);
	      break;
	    }
	}
    }
  free (s.v);
}
