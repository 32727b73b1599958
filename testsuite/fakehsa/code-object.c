/* The fake HSA runtime's code object loader, the ROCr loader's part it
   plays: reads an AMDGPU code object with libelf (ELF64, EM_AMDGPU, the
   agent's machine, PT_LOAD segments inside the file), loads its segments
   into a block, applies its dynamic relocations, and adds its symbols to
   an executable: kernels are the 64-byte STT_OBJECT symbols NAME.kd,
   whose AMDHSA descriptors give the group and private segment sizes (the
   kernarg size comes, as ROCr reports it, from the metadata note's
   .kernarg_segment_size, else from the descriptor); variables are the
   other STT_OBJECT symbols (local ones are recorded for the tests only).
   See fake-hsa.h.  */

#define _GNU_SOURCE
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-hsa.h"


static uint32_t
fh_u32 (const unsigned char *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

/* The next section of ELF after SCN (NULL: from the first) of TYPE, its
   header in *SH; NULL at the end, or at a header libelf cannot read (then
   *BAD is set: the runtime refuses such an object).  */
static Elf_Scn *
fh_next_section (Elf *elf, Elf_Scn *scn, unsigned type, GElf_Shdr *sh,
		 bool *bad)
{
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      if (gelf_getshdr (scn, sh) == NULL)
	{
	  *bad = true;
	  return NULL;
	}
      if (sh->sh_type == type)
	return scn;
    }
  return NULL;
}

/* The data of the table section SCN (header SH) and, in *N, its number
   of entries; NULL if libelf cannot read it.  */
static Elf_Data *
fh_table (Elf_Scn *scn, const GElf_Shdr *sh, size_t *n)
{
  Elf_Data *d = elf_getdata (scn, NULL);
  if (d == NULL || sh->sh_entsize == 0)
    return NULL;
  *n = sh->sh_size / sh->sh_entsize;
  return d;
}

static bool
fh_has_section (Elf *elf, unsigned type)
{
  GElf_Shdr sh;
  bool bad = false;
  return fh_next_section (elf, NULL, type, &sh, &bad) != NULL;
}

/* Apply the dynamic relocations of the loaded image at BASE (SPAN bytes),
   as the runtime's loader does (relocation types from LLVM's AMDGPUUsage:
   ABS32_LO 1, ABS32_HI 2, ABS64 3, ABS32 6, RELATIVE64 13).  */
static bool
fh_relocate (Elf *elf, void *base, uint64_t span, char *why, size_t why_len)
{
  GElf_Shdr sh;
  bool bad = false;
  for (Elf_Scn *scn = NULL;
       (scn = fh_next_section (elf, scn, SHT_RELA, &sh, &bad)) != NULL; )
    {
      if ((sh.sh_flags & SHF_ALLOC) == 0)
	continue;
      size_t n;
      Elf_Data *d = fh_table (scn, &sh, &n);
      Elf_Scn *symscn = elf_getscn (elf, sh.sh_link);
      Elf_Data *syms = symscn != NULL ? elf_getdata (symscn, NULL) : NULL;
      if (d == NULL)
	{
	  snprintf (why, why_len, "unreadable relocations");
	  return false;
	}
      for (size_t i = 0; i < n; i++)
	{
	  GElf_Rela r;
	  if (gelf_getrela (d, (int) i, &r) == NULL || r.r_offset > span - 8)
	    {
	      snprintf (why, why_len, "relocation %zu outside the image", i);
	      return false;
	    }
	  unsigned type = (unsigned) GELF_R_TYPE (r.r_info);
	  size_t symi = GELF_R_SYM (r.r_info);
	  uint64_t S = 0;
	  if (symi != 0)
	    {
	      GElf_Sym sym;
	      if (syms == NULL || gelf_getsym (syms, (int) symi, &sym) == NULL
		  || sym.st_shndx == SHN_UNDEF)
		{
		  snprintf (why, why_len, "relocation %zu: undefined symbol",
			    i);
		  return false;
		}
	      S = (uintptr_t) base + sym.st_value;
	    }
	  uint64_t v = S + (uint64_t) r.r_addend;
	  unsigned char *p = (unsigned char *) base + r.r_offset;
	  uint32_t w;
	  switch (type)
	    {
	    case 0:
	      break;
	    case 1:
	    case 6:
	      w = (uint32_t) v;
	      memcpy (p, &w, 4);
	      break;
	    case 2:
	      w = (uint32_t) (v >> 32);
	      memcpy (p, &w, 4);
	      break;
	    case 3:
	      memcpy (p, &v, 8);
	      break;
	    case 13:
	      v = (uintptr_t) base + (uint64_t) r.r_addend;
	      memcpy (p, &v, 8);
	      break;
	    default:
	      snprintf (why, why_len, "relocation type %u not supported by "
			"the loader", type);
	      return false;
	    }
	}
    }
  if (bad)
    snprintf (why, why_len, "bad section header");
  return !bad;
}

/* Kernarg sizes as ROCr reports them for code object v3: from the
   metadata note's ".kernarg_segment_size" of the kernel whose ".symbol"
   is NAME.kd (LLVM 13's assembler leaves the descriptor's field 0).  */
struct fh_meta
{
  struct fh_symbol **syms;
  int nsyms;
};

static void
fh_meta_kernarg (const char *symbol, size_t symlen, uint64_t value, void *arg)
{
  struct fh_meta *m = arg;
  for (int i = 0; i < m->nsyms; i++)
    if (m->syms[i]->kernel && strlen (m->syms[i]->name) == symlen
	&& memcmp (m->syms[i]->name, symbol, symlen) == 0)
      m->syms[i]->kernarg = value > UINT32_MAX ? UINT32_MAX
			    : (uint32_t) value;
}

/* Read the AMDGPU metadata notes of ELF into the kernels SYMS; a kernel
   without an entry keeps its descriptor's kernarg size.  False (with
   *WHY) when a note is malformed, as the runtime refuses the object.  */
static bool
fh_metadata (Elf *elf, struct fh_symbol **syms, int nsyms, char *why,
	     size_t why_len)
{
  struct fh_meta m = { syms, nsyms };
  GElf_Shdr sh;
  bool bad = false;
  for (Elf_Scn *scn = NULL;
       (scn = fh_next_section (elf, scn, SHT_NOTE, &sh, &bad)) != NULL; )
    {
      Elf_Data *d = elf_getdata (scn, NULL);
      if (d == NULL)
	{
	  snprintf (why, why_len, "unreadable note section");
	  return false;
	}
      size_t off = 0, name_off, desc_off;
      GElf_Nhdr nh;
      while (off < d->d_size
	     && (off = gelf_getnote (d, off, &nh, &name_off, &desc_off)) > 0)
	if (nh.n_type == FH_NT_AMDGPU_METADATA
	    && nh.n_namesz == sizeof FH_AMDGPU_NOTE_OWNER
	    && memcmp ((char *) d->d_buf + name_off, FH_AMDGPU_NOTE_OWNER,
		       nh.n_namesz) == 0
	    && fh_metadata_kernargs ((const unsigned char *) d->d_buf
				     + desc_off, nh.n_descsz, fh_meta_kernarg,
				     &m) < 0)
	  {
	    snprintf (why, why_len, "malformed AMDGPU metadata note");
	    return false;
	  }
    }
  return true;
}

hsa_status_t
fh_load (struct fh_exec *e, struct fh_agent *a, const unsigned char *bytes,
	 size_t size, char *why, size_t why_len)
{
  why[0] = '\0';
  if (size < sizeof (Elf64_Ehdr) || memcmp (bytes, ELFMAG, SELFMAG) != 0
      || bytes[EI_CLASS] != ELFCLASS64 || bytes[EI_DATA] != ELFDATA2LSB)
    {
      snprintf (why, why_len, "not a 64-bit little-endian ELF file");
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
  /* libelf wants a writable buffer.  */
  unsigned char *copy = malloc (size);
  if (copy == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy (copy, bytes, size);
  hsa_status_t st = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  struct fh_symbol **syms = NULL;
  int nsyms = 0;
  void *base = NULL;
  Elf *elf = elf_memory ((char *) copy, size);
  GElf_Ehdr eh;
  size_t phnum = 0;
  if (elf == NULL || gelf_getehdr (elf, &eh) == NULL)
    {
      snprintf (why, why_len, "unreadable ELF header");
      goto out;
    }
  if (eh.e_machine != EM_AMDGPU_)
    {
      snprintf (why, why_len, "e_machine %u is not EM_AMDGPU",
		eh.e_machine);
      goto out;
    }
  /* A generic code object runs on the members of its target; every
     member has been in it since version 1 (e_flags bits 31:24).  */
  unsigned co_mach = (unsigned) (eh.e_flags & EF_AMDGPU_MACH_);
  bool generic_ok = a->generic_mach != 0 && co_mach == a->generic_mach
		    && (eh.e_flags >> 24) >= 1;
  if (co_mach != a->mach && !generic_ok)
    {
      snprintf (why, why_len, "code object machine %#x, agent %s is %#x",
		(unsigned) (eh.e_flags & EF_AMDGPU_MACH_), a->name, a->mach);
      st = HSA_STATUS_ERROR_INVALID_ISA;
      goto out;
    }
  if (elf_getphdrnum (elf, &phnum) != 0 || phnum == 0)
    {
      snprintf (why, why_len, "no program headers (not a linked object)");
      goto out;
    }
  uint64_t span = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
	{
	  snprintf (why, why_len, "bad program header %zu", i);
	  goto out;
	}
      if (ph.p_type != PT_LOAD)
	continue;
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset
	  || ph.p_filesz > ph.p_memsz || ph.p_memsz > (1u << 30)
	  || ph.p_vaddr > (1u << 30))
	{
	  snprintf (why, why_len, "segment %zu outside the file", i);
	  goto out;
	}
      if (ph.p_vaddr + ph.p_memsz > span)
	span = ph.p_vaddr + ph.p_memsz;
    }
  if (span == 0)
    {
      snprintf (why, why_len, "nothing to load");
      goto out;
    }
  base = fh_block_new (span, FH_BLOCK_CODE, NULL);
  if (base == NULL)
    {
      st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      goto out;
    }
  memset (base, 0, span);
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      gelf_getphdr (elf, (int) i, &ph);
      if (ph.p_type == PT_LOAD)
	memcpy ((char *) base + ph.p_vaddr, copy + ph.p_offset, ph.p_filesz);
    }
  if (!fh_relocate (elf, base, span, why, why_len))
    goto out;
  /* Symbols from .symtab, else (a stripped object) from .dynsym; local
     symbols are not the executable's.  */
  bool have_symtab = false, bad = false;
  unsigned symtab_type = (fh_has_section (elf, SHT_SYMTAB) ? SHT_SYMTAB
			  : SHT_DYNSYM);
  GElf_Shdr sh;
  for (Elf_Scn *scn = NULL;
       (scn = fh_next_section (elf, scn, symtab_type, &sh, &bad)) != NULL; )
    {
      have_symtab = true;
      size_t n;
      Elf_Data *d = fh_table (scn, &sh, &n);
      if (d == NULL)
	{
	  snprintf (why, why_len, "unreadable symbol table");
	  goto out;
	}
      for (size_t k = 0; k < n; k++)
	{
	  GElf_Sym s;
	  if (gelf_getsym (d, (int) k, &s) == NULL)
	    {
	      snprintf (why, why_len, "bad symbol %zu", k);
	      goto out;
	    }
	  bool local = GELF_ST_BIND (s.st_info) == STB_LOCAL;
	  if (GELF_ST_TYPE (s.st_info) != STT_OBJECT
	      || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
	    continue;
	  const char *name = elf_strptr (elf, sh.sh_link, s.st_name);
	  if (name == NULL || *name == '\0')
	    continue;
	  size_t len = strlen (name);
	  bool kernel = len > 3 && strcmp (name + len - 3, ".kd") == 0;
	  if (local && (kernel || s.st_value + s.st_size > span
			|| s.st_value > span))
	    continue;
	  if (s.st_value + s.st_size > span || s.st_value > span)
	    {
	      snprintf (why, why_len, "symbol %s outside the loaded image",
			name);
	      goto out;
	    }
	  if (kernel && s.st_size != 64)
	    {
	      snprintf (why, why_len, "kernel descriptor %s is %llu bytes",
			name, (unsigned long long) s.st_size);
	      goto out;
	    }
	  struct fh_symbol *sym = calloc (1, sizeof *sym);
	  struct fh_symbol **ns = realloc (syms, (nsyms + 1) * sizeof *ns);
	  if (sym == NULL || ns == NULL || (sym->name = strdup (name)) == NULL)
	    {
	      free (sym);
	      if (ns != NULL)
		syms = ns;
	      st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	      goto out;
	    }
	  syms = ns;
	  syms[nsyms++] = sym;
	  sym->exec = e;
	  sym->agent = a;
	  sym->kernel = kernel;
	  sym->local = local;
	  sym->addr = (uintptr_t) base + s.st_value;
	  sym->size = s.st_size;
	  if (kernel)
	    {
	      /* AMDHSA kernel descriptor: group segment fixed size at 0,
		 private segment fixed size at 4, kernarg size at 8.  */
	      const unsigned char *kd = (const unsigned char *) sym->addr;
	      sym->group = fh_u32 (kd);
	      sym->private_ = fh_u32 (kd + 4);
	      sym->kernarg = fh_u32 (kd + 8);
	    }
	}
    }
  if (bad || !have_symtab)
    {
      snprintf (why, why_len, bad ? "bad section header" : "no symbol table");
      goto out;
    }
  if (!fh_metadata (elf, syms, nsyms, why, why_len))
    goto out;
  /* Commit.  */
  {
    struct fh_symbol **all = realloc (e->syms, (e->nsyms + nsyms)
				      * sizeof *all + 1);
    uintptr_t *code = realloc (e->code, (e->ncode + 1) * sizeof *code);
    if (all != NULL)
      e->syms = all;
    if (code != NULL)
      e->code = code;
    if (all == NULL || code == NULL)
      {
	st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	goto out;
      }
    memcpy (e->syms + e->nsyms, syms, nsyms * sizeof *syms);
    e->nsyms += nsyms;
    e->code[e->ncode++] = (uintptr_t) base;
    free (syms);
    syms = NULL;
    nsyms = 0;
    base = NULL;
    st = HSA_STATUS_SUCCESS;
  }
 out:
  for (int i = 0; i < nsyms; i++)
    fh_symbol_free (syms[i]);
  free (syms);
  if (base != NULL)
    fh_block_free ((uintptr_t) base, FH_BLOCK_CODE);
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  return st;
}
