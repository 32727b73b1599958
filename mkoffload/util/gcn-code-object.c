/* Reading AMD GPU code objects; see gcn-code-object.h.

   Facts used (LLVM's AMDGPUUsage, "Kernel Descriptor"): the descriptor is
   64 bytes; bytes 0-3 hold the group (LDS) segment size, 4-7 the private
   (scratch) segment size per work-item, 8-11 the kernarg size (0 where the
   assembler does not fill it in, as LLVM 13's for code object v3), 16-23
   the signed offset from the descriptor to the entry point, 48-51
   COMPUTE_PGM_RSRC1, whose bits 5:0 are the granulated VGPR count (blocks
   of 4 on the GFX8/GFX9 GPUs GCC 12 targets) and bits 9:6 the granulated
   SGPR count (blocks of 8, VCC and the other reserved SGPRs included).
   The counts we report are so the registers the hardware allocates, which
   is what bounds how many wavefronts fit on a compute unit.  A kernarg
   size of 0 in the descriptor is taken from the metadata note
   (gcn-metadata.c) when it has one.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "elf-check.h"
#include "file-io.h"
#include "gcn-code-object.h"
#include "gcn-metadata.h"

/* AMDGPU relocation types (LLVM's AMDGPUUsage, "Relocation Records").  */
#define R_AMDGPU_NONE 0u
#define R_AMDGPU_ABS64 3u
#define R_AMDGPU_RELATIVE64 13u

#define KD_SIZE 64u

static uint32_t
get_u32 (const unsigned char *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
	 | (uint32_t) p[3] << 24;
}

static uint64_t
get_u64 (const unsigned char *p)
{
  return (uint64_t) get_u32 (p) | (uint64_t) get_u32 (p + 4) << 32;
}

/* What a reading pass needs: the object and the pieces found in it.  */
struct reader
{
  const char *name;
  const unsigned char *buf;
  size_t size;
  Elf *elf;
  size_t shstrndx;
  /* Allocated sections with contents, for reading by address.  */
  GElf_Shdr *alloc;
  size_t nalloc;
  /* Every RELA entry of the allocated relocation sections, with the
     symbol table each refers to.  */
  struct rel
  {
    GElf_Rela r;
    Elf_Scn *symtab;
  } *rels;
  size_t nrels;
};

/* Point *P at LEN bytes of the object at virtual address ADDR.  */
static int
bytes_at (struct reader *rd, uint64_t addr, size_t len,
	  const unsigned char **p)
{
  for (size_t i = 0; i < rd->nalloc; i++)
    {
      const GElf_Shdr *sh = &rd->alloc[i];
      if (addr >= sh->sh_addr && addr - sh->sh_addr <= sh->sh_size
	  && len <= sh->sh_size - (addr - sh->sh_addr))
	{
	  /* Section bounds were checked against the file in check_sections.  */
	  *p = rd->buf + sh->sh_offset + (addr - sh->sh_addr);
	  return 0;
	}
    }
  return -1;
}

/* Symbol INDEX of the symbol table SCN.  */
static int
get_symbol (Elf_Scn *scn, size_t index, GElf_Sym *sym)
{
  Elf_Data *d = elf_getdata (scn, NULL);
  if (!d || index >= d->d_size / sizeof (Elf64_Sym))
    return -1;
  return gelf_getsym (d, (int) index, sym) ? 0 : -1;
}

/* The 8-byte word at ADDR as the loader leaves it: the file's bytes, or
   what a dynamic relocation puts there.  */
static int
word_at (struct reader *rd, uint64_t addr, uint64_t *val, const char *what,
	 size_t index)
{
  const unsigned char *p;
  if (bytes_at (rd, addr, 8, &p) < 0)
    {
      ok_error ("'%s': %s entry %zu (address %#" PRIx64 ") is outside the"
		" object's contents", rd->name, what, index, addr);
      return -1;
    }
  *val = get_u64 (p);
  for (size_t i = 0; i < rd->nrels; i++)
    {
      const GElf_Rela *r = &rd->rels[i].r;
      if (r->r_offset != addr)
	continue;
      uint32_t type = GELF_R_TYPE (r->r_info);
      if (type == R_AMDGPU_RELATIVE64)
	*val = (uint64_t) r->r_addend;
      else if (type == R_AMDGPU_ABS64)
	{
	  GElf_Sym sym;
	  if (!rd->rels[i].symtab
	      || get_symbol (rd->rels[i].symtab, GELF_R_SYM (r->r_info),
			     &sym) < 0
	      || sym.st_shndx == SHN_UNDEF)
	    {
	      ok_error ("'%s': %s entry %zu refers to an undefined or"
			" missing symbol", rd->name, what, index);
	      return -1;
	    }
	  *val = sym.st_value + (uint64_t) r->r_addend;
	}
      else if (type != R_AMDGPU_NONE)
	{
	  ok_error ("'%s': %s entry %zu has an unexpected relocation (type"
		    " %u)", rd->name, what, index, (unsigned) type);
	  return -1;
	}
    }
  return 0;
}

/* Check the ELF header and that every section lies inside the file (the
   ELF reader's checks, in ok_elf_memory).  */
static int
check_sections (struct reader *rd, GElf_Ehdr *eh)
{
  rd->elf = ok_elf_memory (rd->name, rd->buf, rd->size, NULL, eh);
  if (!rd->elf)
    return -1;
  if (eh->e_machine != OK_EM_AMDGPU)
    {
      ok_error ("'%s' is for ELF machine %u, not an AMD GPU (%u)", rd->name,
		(unsigned) eh->e_machine, OK_EM_AMDGPU);
      return -1;
    }
  if (eh->e_type != ET_DYN && eh->e_type != ET_EXEC)
    {
      ok_error ("'%s' is not a linked code object (ELF type %u)", rd->name,
		(unsigned) eh->e_type);
      return -1;
    }
  size_t shnum;
  if (elf_getshdrnum (rd->elf, &shnum) != 0
      || elf_getshdrstrndx (rd->elf, &rd->shstrndx) != 0
      || rd->shstrndx >= shnum)
    {
      ok_error ("'%s' has no valid section name table", rd->name);
      return -1;
    }
  /* What this reader needs beyond the bounds: entry sizes it can index
     by, and the allocated sections for reading by address.  */
  for (Elf_Scn *scn = elf_nextscn (rd->elf, NULL); scn;
       scn = elf_nextscn (rd->elf, scn))
    {
      GElf_Shdr sh;
      if (!gelf_getshdr (scn, &sh)
	  || sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
	continue;
      if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM
	   || sh.sh_type == SHT_RELA)
	  && sh.sh_entsize != (sh.sh_type == SHT_RELA ? sizeof (Elf64_Rela)
			       : sizeof (Elf64_Sym)))
	{
	  ok_error ("'%s': section %zu has entries of a bad size (%" PRIu64
		    ")", rd->name, elf_ndxscn (scn), sh.sh_entsize);
	  return -1;
	}
      if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size > 0)
	{
	  rd->alloc = xrealloc (rd->alloc, (rd->nalloc + 1) * sizeof *rd->alloc);
	  rd->alloc[rd->nalloc++] = sh;
	}
    }
  return 0;
}

/* Collect the RELA entries, which the table entries need.  */
static int
collect_relocations (struct reader *rd)
{
  for (Elf_Scn *scn = elf_nextscn (rd->elf, NULL); scn;
       scn = elf_nextscn (rd->elf, scn))
    {
      GElf_Shdr sh;
      if (!gelf_getshdr (scn, &sh) || sh.sh_type != SHT_RELA)
	continue;
      Elf_Scn *symtab = sh.sh_link ? elf_getscn (rd->elf, sh.sh_link) : NULL;
      Elf_Data *d = elf_getdata (scn, NULL);
      if (!d)
	{
	  ok_error ("'%s': cannot read relocation section %zu: %s", rd->name,
		    elf_ndxscn (scn), elf_errmsg (-1));
	  return -1;
	}
      size_t n = d->d_size / sizeof (Elf64_Rela);
      rd->rels = xrealloc (rd->rels, (rd->nrels + n) * sizeof *rd->rels);
      for (size_t i = 0; i < n; i++)
	if (gelf_getrela (d, (int) i, &rd->rels[rd->nrels].r))
	  rd->rels[rd->nrels++].symtab = symtab;
    }
  return 0;
}

/* Call FN on every named symbol of every symbol table (the static one
   first, then the dynamic one).  Return -1 when FN does.  */
static int
each_symbol (struct reader *rd,
	     int (*fn) (struct reader *, const GElf_Sym *, const char *,
			int dynamic, void *),
	     void *arg)
{
  for (int pass = 0; pass < 2; pass++)
    for (Elf_Scn *scn = elf_nextscn (rd->elf, NULL); scn;
	 scn = elf_nextscn (rd->elf, scn))
      {
	GElf_Shdr sh;
	if (!gelf_getshdr (scn, &sh)
	    || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
	  continue;
	Elf_Data *d = elf_getdata (scn, NULL);
	if (!d)
	  {
	    ok_error ("'%s': cannot read symbol table %zu: %s", rd->name,
		      elf_ndxscn (scn), elf_errmsg (-1));
	    return -1;
	  }
	size_t n = d->d_size / sizeof (Elf64_Sym);
	for (size_t i = 1; i < n; i++)
	  {
	    GElf_Sym sym;
	    if (!gelf_getsym (d, (int) i, &sym))
	      continue;
	    const char *nm = elf_strptr (rd->elf, sh.sh_link, sym.st_name);
	    if (!nm || !*nm)
	      continue;
	    if (fn (rd, &sym, nm, pass, arg) < 0)
	      return -1;
	  }
      }
  return 0;
}

static int
add_kernel (struct reader *rd, const GElf_Sym *sym, const char *nm,
	    int dynamic, void *arg)
{
  struct ok_gcn_code_object *co = arg;
  size_t len = strlen (nm);
  (void) dynamic;
  if (strcmp (nm, ".offload_var_table") == 0
      && GELF_ST_BIND (sym->st_info) != STB_LOCAL
      && sym->st_shndx != SHN_UNDEF)
    {
      co->has_var_table_sym = 1;
      co->var_table_sym = sym->st_value;
      return 0;
    }
  if (len <= 3 || strcmp (nm + len - 3, ".kd") != 0
      || GELF_ST_TYPE (sym->st_info) != STT_OBJECT
      || sym->st_shndx == SHN_UNDEF)
    return 0;
  for (size_t i = 0; i < co->num_kernels; i++)
    if (strlen (co->kernels[i].name) == len - 3
	&& memcmp (co->kernels[i].name, nm, len - 3) == 0)
      return 0;			/* In both symbol tables.  */
  const unsigned char *kd;
  if (sym->st_size < KD_SIZE || bytes_at (rd, sym->st_value, KD_SIZE, &kd) < 0)
    {
      ok_error ("'%s': kernel descriptor '%s' is not a complete %u-byte"
		" descriptor inside the object", rd->name, nm, KD_SIZE);
      return -1;
    }
  co->kernels = xrealloc (co->kernels,
			  (co->num_kernels + 1) * sizeof *co->kernels);
  struct ok_gcn_kernel *k = &co->kernels[co->num_kernels++];
  memset (k, 0, sizeof *k);
  k->name = xstrndup (nm, len - 3);
  k->kd_addr = sym->st_value;
  k->entry = sym->st_value + get_u64 (kd + 16);
  uint32_t rsrc1 = get_u32 (kd + 48);
  k->info.group_segment_size = get_u32 (kd + 0);
  k->info.private_segment_size = get_u32 (kd + 4);
  k->info.kernarg_size = get_u32 (kd + 8);
  k->info.vgprs = ((rsrc1 & 0x3f) + 1) * 4;
  k->info.sgprs = (((rsrc1 >> 6) & 0xf) + 1) * 8;
  k->info.flags = 0;
  return 0;
}

/* Looking for the symbol of one variable.  */
struct var_search
{
  uint64_t addr, size;
  int link;
  const char *best;
  int best_rank;
};

static int
match_var (struct reader *rd, const GElf_Sym *sym, const char *nm,
	   int dynamic, void *arg)
{
  struct var_search *s = arg;
  (void) rd;
  if (sym->st_value != s->addr || sym->st_shndx == SHN_UNDEF
      || GELF_ST_TYPE (sym->st_info) != STT_OBJECT
      || sym->st_size == 0)
    return 0;
  /* A global symbol can be looked up by the loader; the dynamic table is
     what a stripped object keeps.  */
  int rank = 1 + (GELF_ST_BIND (sym->st_info) != STB_LOCAL) * 2 + dynamic;
  if (rank > s->best_rank)
    {
      s->best = nm;
      s->best_rank = rank;
    }
  return 0;
}

/* The section named NAME, or NULL.  */
static Elf_Scn *
find_section (struct reader *rd, const char *name, GElf_Shdr *sh)
{
  for (Elf_Scn *scn = elf_nextscn (rd->elf, NULL); scn;
       scn = elf_nextscn (rd->elf, scn))
    {
      const char *nm;
      if (gelf_getshdr (scn, sh)
	  && (nm = elf_strptr (rd->elf, rd->shstrndx, sh->sh_name))
	  && strcmp (nm, name) == 0)
	return scn;
    }
  return NULL;
}

static void
metadata_entry (const char *symbol, size_t symlen, const char *key,
		size_t keylen, uint64_t value, void *arg)
{
  struct ok_gcn_code_object *co = arg;
  static const char kernarg[] = ".kernarg_segment_size";
  if (keylen != sizeof kernarg - 1 || memcmp (key, kernarg, keylen) != 0
      || value > UINT32_MAX)
    return;
  for (size_t i = 0; i < co->num_kernels; i++)
    {
      struct ok_gcn_kernel *k = &co->kernels[i];
      size_t len = strlen (k->name);
      if (symlen == len + 3 && memcmp (symbol, k->name, len) == 0
	  && memcmp (symbol + len, ".kd", 3) == 0
	  && k->info.kernarg_size == 0)
	k->info.kernarg_size = (uint32_t) value;
    }
}

/* Walk the notes of every SHT_NOTE section for the metadata notes.  */
static int
read_metadata (struct reader *rd, struct ok_gcn_code_object *co)
{
  for (Elf_Scn *scn = elf_nextscn (rd->elf, NULL); scn;
       scn = elf_nextscn (rd->elf, scn))
    {
      GElf_Shdr sh;
      if (!gelf_getshdr (scn, &sh) || sh.sh_type != SHT_NOTE)
	continue;
      /* Bounds checked in check_sections.  */
      const unsigned char *p = rd->buf + sh.sh_offset;
      uint64_t left = sh.sh_size;
      while (left >= 12)
	{
	  uint64_t namesz = get_u32 (p), descsz = get_u32 (p + 4);
	  uint32_t type = get_u32 (p + 8);
	  uint64_t name_pad = (namesz + 3) & ~(uint64_t) 3;
	  uint64_t desc_pad = (descsz + 3) & ~(uint64_t) 3;
	  if (name_pad > left - 12 || desc_pad > left - 12 - name_pad)
	    {
	      ok_error ("'%s': note section %zu is malformed (a note runs"
			" past its end)", rd->name, elf_ndxscn (scn));
	      return -1;
	    }
	  const unsigned char *name = p + 12, *desc = name + name_pad;
	  if (type == OK_NT_AMDGPU_METADATA
	      && namesz == sizeof OK_AMDGPU_NOTE_OWNER
	      && memcmp (name, OK_AMDGPU_NOTE_OWNER, namesz) == 0
	      && ok_gcn_metadata_scan (desc, descsz, metadata_entry, co) < 0)
	    {
	      ok_error ("'%s': the AMDGPU metadata note in section %zu is"
			" not well-formed MessagePack", rd->name,
			elf_ndxscn (scn));
	      return -1;
	    }
	  p = desc + desc_pad;
	  left -= 12 + name_pad + desc_pad;
	}
    }
  return 0;
}

/* Looking for the function symbol at an address.  */
struct func_search
{
  uint64_t addr;
  const char *name;
};

static int
match_func (struct reader *rd, const GElf_Sym *sym, const char *nm,
	    int dynamic, void *arg)
{
  struct func_search *s = arg;
  (void) rd;
  (void) dynamic;
  if (s->name == NULL && sym->st_value == s->addr
      && sym->st_shndx != SHN_UNDEF
      && GELF_ST_TYPE (sym->st_info) == STT_FUNC)
    s->name = nm;
  return 0;
}

/* A function-table entry at ADDR that is no kernel's entry point: GCC
   13+ lists there, for each `target device (ancestor: 1)' region, its
   `nohost' clone, an ordinary (local) device function whose address the
   device's reverse-offload requests pass to the host.  Append it to
   CO's kernels as a device function, named by the function symbol that
   starts at ADDR; return -1 when there is none (nothing reported).  */
static int
add_device_fn (struct reader *rd, struct ok_gcn_code_object *co,
	       uint64_t addr)
{
  struct func_search s = { .addr = addr };
  if (each_symbol (rd, match_func, &s) < 0 || s.name == NULL)
    return -1;
  co->kernels = xrealloc (co->kernels,
			  (co->num_kernels + 1) * sizeof *co->kernels);
  struct ok_gcn_kernel *k = &co->kernels[co->num_kernels++];
  memset (k, 0, sizeof *k);
  k->name = xstrdup (s.name);
  k->entry = addr;
  k->info.flags = OK_KINFO_DEVICE_FN;
  return 0;
}

static int
read_funcs (struct reader *rd, struct ok_gcn_code_object *co)
{
  GElf_Shdr sh;
  if (!find_section (rd, ".gnu.offload_funcs", &sh))
    return 0;
  if (sh.sh_size % 8 != 0 || sh.sh_type == SHT_NOBITS)
    {
      ok_error ("'%s': the function table .gnu.offload_funcs has a bad size"
		" (%" PRIu64 " bytes, not a multiple of 8)", rd->name,
		sh.sh_size);
      return -1;
    }
  co->num_funcs = sh.sh_size / 8;
  co->funcs = xcalloc (co->num_funcs ? co->num_funcs : 1, sizeof *co->funcs);
  for (size_t i = 0; i < co->num_funcs; i++)
    {
      uint64_t addr;
      if (word_at (rd, sh.sh_addr + 8 * i, &addr, "function table", i) < 0)
	return -1;
      size_t k;
      for (k = 0; k < co->num_kernels; k++)
	if (co->kernels[k].entry == addr)
	  break;
      if (k == co->num_kernels && add_device_fn (rd, co, addr) < 0)
	{
	  ok_error ("'%s': function table entry %zu (address %#" PRIx64 ")"
		    " is not the entry point of any kernel, nor the start of"
		    " a device function", rd->name, i, addr);
	  return -1;
	}
      co->funcs[i] = k;
    }
  return 0;
}

static int
read_vars (struct reader *rd, struct ok_gcn_code_object *co)
{
  GElf_Shdr sh;
  if (!find_section (rd, ".gnu.offload_vars", &sh))
    return 0;
  if (sh.sh_size % 16 != 0 || sh.sh_type == SHT_NOBITS)
    {
      ok_error ("'%s': the variable table .gnu.offload_vars has a bad size"
		" (%" PRIu64 " bytes, not a multiple of 16)", rd->name,
		sh.sh_size);
      return -1;
    }
  size_t n = sh.sh_size / 16;
  co->var_table_addr = sh.sh_addr;
  co->vars = xcalloc (n ? n : 1, sizeof *co->vars);
  for (size_t i = 0; i < n; i++)
    {
      struct var_search s = { 0 };
      if (word_at (rd, sh.sh_addr + 16 * i, &s.addr, "variable table", i) < 0
	  || word_at (rd, sh.sh_addr + 16 * i + 8, &s.size, "variable table",
		      i) < 0)
	return -1;
      s.link = (s.size & OK_GCN_VAR_LINK_BIT) != 0;
      s.size &= ~OK_GCN_VAR_LINK_BIT;
      if (each_symbol (rd, match_var, &s) < 0)
	return -1;
      if (!s.best)
	{
	  ok_error ("'%s': variable table entry %zu (address %#" PRIx64 ","
		    " %" PRIu64 " bytes) is no variable of the object",
		    rd->name, i, s.addr, s.size);
	  return -1;
	}
      struct ok_gcn_var *v = &co->vars[co->num_vars++];
      v->name = xstrdup (s.best);
      v->addr = s.addr;
      v->size = s.size;
      v->link = s.link;
    }
  return 0;
}

int
ok_gcn_read_code_object (const char *name, const unsigned char *buf,
			 size_t size, struct ok_gcn_code_object *co)
{
  struct reader rd = { .name = name, .buf = buf, .size = size };
  GElf_Ehdr eh;
  int rc = -1;

  memset (co, 0, sizeof *co);
  elf_version (EV_CURRENT);
  if (check_sections (&rd, &eh) < 0 || collect_relocations (&rd) < 0)
    goto out;
  co->e_flags = (uint32_t) eh.e_flags;
  co->mach = co->e_flags & OK_EF_AMDGPU_MACH_MASK;
  co->arch = ok_gcn_arch_of_mach (co->mach);
  if (each_symbol (&rd, add_kernel, co) < 0 || read_metadata (&rd, co) < 0
      || read_funcs (&rd, co) < 0 || read_vars (&rd, co) < 0)
    goto out;
  rc = 0;
out:
  if (rd.elf)
    elf_end (rd.elf);
  free (rd.alloc);
  free (rd.rels);
  if (rc < 0)
    ok_gcn_code_object_free (co);
  return rc;
}

int
ok_gcn_read_code_object_file (const char *path,
			      struct ok_gcn_code_object *co)
{
  size_t len;
  const char *why;
  memset (co, 0, sizeof *co);
  char *buf = ok_read_file (path, &len, &why);
  if (!buf)
    {
      ok_error ("cannot read '%s': %s", path, why);
      return -1;
    }
  int rc = ok_gcn_read_code_object (path, (const unsigned char *) buf, len,
				    co);
  free (buf);
  return rc;
}

void
ok_gcn_code_object_free (struct ok_gcn_code_object *co)
{
  for (size_t i = 0; i < co->num_kernels; i++)
    free (co->kernels[i].name);
  for (size_t i = 0; i < co->num_vars; i++)
    free (co->vars[i].name);
  free (co->kernels);
  free (co->funcs);
  free (co->vars);
  memset (co, 0, sizeof *co);
}

/* The EF_AMDGPU_MACH of the first AMD GPU object in ELF (an archive is
   walked member by member), or 0.  */
static uint32_t
first_member_mach (int fd, Elf *elf)
{
  if (elf_kind (elf) == ELF_K_ELF)
    {
      GElf_Ehdr eh;
      if (gelf_getehdr (elf, &eh) != NULL && eh.e_machine == OK_EM_AMDGPU)
	return (uint32_t) eh.e_flags & OK_EF_AMDGPU_MACH_MASK;
      return 0;
    }
  if (elf_kind (elf) != ELF_K_AR)
    return 0;
  uint32_t mach = 0;
  Elf_Cmd cmd = ELF_C_READ;
  Elf *member;
  while (mach == 0 && (member = elf_begin (fd, cmd, elf)) != NULL)
    {
      if (elf_kind (member) == ELF_K_ELF)
	mach = first_member_mach (fd, member);
      cmd = elf_next (member);
      elf_end (member);
    }
  return mach;
}

int
ok_gcn_library_mach (const char *path, uint32_t *mach)
{
  struct stat st;
  const char *why;
  int fd = ok_open_regular (path, &st, &why);
  if (fd < 0)
    return -1;
  elf_version (EV_CURRENT);
  Elf *elf = elf_begin (fd, ELF_C_READ, NULL);
  *mach = elf ? first_member_mach (fd, elf) : 0;
  if (elf)
    elf_end (elf);
  close (fd);
  return *mach ? 0 : -1;
}
