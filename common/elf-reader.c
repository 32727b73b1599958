/* The ELF reader of mkoffload and the plugins; see elf-reader.h.

   Every structure is copied out of the buffer with memcpy (an image
   embedded in a host binary may sit at any alignment); the byte order is
   the host's, right because only little-endian files get past
   ok_elf_open and the tools and plugins run on little-endian hosts
   (x86_64, AArch64).  Offsets and sizes from the file are added in 128
   bits, so that no sum wraps.  */

#define _GNU_SOURCE 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-reader.h"

typedef unsigned __int128 ok_u128;

bool
ok_elf_open (struct ok_elf *elf, const void *buf, size_t size,
	     const char *name, const char *class_note, char *err,
	     size_t errlen)
{
  const unsigned char *b = buf;
  elf->buf = b;
  elf->size = size;
  elf->name = name;
  memset (&elf->eh, 0, sizeof elf->eh);
  if (b == NULL || size == 0)
    {
      snprintf (err, errlen, "%s is empty", name);
      return false;
    }
  if (size < SELFMAG || memcmp (b, ELFMAG, SELFMAG) != 0)
    {
      char start[16] = "";
      size_t len = 0;
      for (size_t i = 0; i < 4 && i < size; i++)
	len += (size_t) snprintf (start + len, sizeof start - len, "%s%02x",
				  i ? " " : "", b[i]);
      snprintf (err, errlen, "%s is not an ELF file (it begins with %s)",
		name, start);
      return false;
    }
  if (size <= EI_DATA || b[EI_CLASS] != ELFCLASS64
      || b[EI_DATA] != ELFDATA2LSB)
    {
      snprintf (err, errlen, "%s is not a 64-bit little-endian ELF file"
		" (class %u, data %u)%s", name,
		size > EI_CLASS ? b[EI_CLASS] : 0u,
		size > EI_DATA ? b[EI_DATA] : 0u,
		class_note ? class_note : "");
      return false;
    }
  if (size < sizeof elf->eh)
    {
      snprintf (err, errlen, "%s is truncated (%zu bytes: its ELF header"
		" needs %zu)", name, size, sizeof elf->eh);
      return false;
    }
  memcpy (&elf->eh, b, sizeof elf->eh);
  return true;
}

bool
ok_elf_check_kind (const struct ok_elf *elf, unsigned machine,
		   const char *name_of_machine, unsigned type, char *err,
		   size_t errlen)
{
  if (machine != EM_NONE && elf->eh.e_machine != machine)
    {
      snprintf (err, errlen, "%s is for ELF machine %u, not %s (%u)",
		elf->name, (unsigned) elf->eh.e_machine, name_of_machine,
		machine);
      return false;
    }
  if (type != ET_NONE && elf->eh.e_type != type)
    {
      static const char *const names[] = {
	"ET_NONE", "ET_REL", "ET_EXEC", "ET_DYN", "ET_CORE"
      };
      snprintf (err, errlen, "%s has ELF type %u, not %u (%s)", elf->name,
		(unsigned) elf->eh.e_type, type,
		type < sizeof names / sizeof *names ? names[type] : "?");
      return false;
    }
  return true;
}

/* Whether LEN bytes at OFFSET, WHAT of ELF, lie inside it; false with the
   reason in ERR.  */
static bool
in_file (const struct ok_elf *elf, const char *what, uint64_t offset,
	 ok_u128 len, char *err, size_t errlen)
{
  ok_u128 end = (ok_u128) offset + len;
  if (end <= elf->size)
    return true;
  if (end > UINT64_MAX)
    snprintf (err, errlen, "%s is damaged (its %s would end past any file"
	      " size: offset %llu)", elf->name, what,
	      (unsigned long long) offset);
  else
    snprintf (err, errlen, "%s is truncated (%zu bytes: its %s would end at"
	      " byte %llu)", elf->name, elf->size, what,
	      (unsigned long long) end);
  return false;
}

bool
ok_elf_has_contents (const struct ok_elf *elf, const Elf64_Shdr *sh)
{
  if (sh->sh_type == SHT_NULL || sh->sh_type == SHT_NOBITS)
    return false;
  if (elf->eh.e_machine == OK_EM_CUDA)
    switch (sh->sh_type)
      {
      case OK_SHT_CUDA_GLOBAL:
      case OK_SHT_CUDA_LOCAL:
      case OK_SHT_CUDA_SHARED:
      case OK_SHT_CUDA_RESERVED_SHARED:
	return false;
      default:
	break;
      }
  return true;
}

unsigned
ok_elf_shnum (const struct ok_elf *elf)
{
  return elf->eh.e_shoff != 0 ? elf->eh.e_shnum : 0;
}

bool
ok_elf_section (const struct ok_elf *elf, unsigned i, Elf64_Shdr *sh)
{
  if (i >= ok_elf_shnum (elf))
    return false;
  memcpy (sh, elf->buf + elf->eh.e_shoff + (size_t) i * sizeof *sh,
	  sizeof *sh);
  return true;
}

const char *
ok_elf_string (const struct ok_elf *elf, unsigned strtab, uint64_t offset)
{
  Elf64_Shdr sh;
  if (!ok_elf_section (elf, strtab, &sh) || sh.sh_type != SHT_STRTAB
      || offset >= sh.sh_size)
    return NULL;
  const char *s = (const char *) elf->buf + sh.sh_offset + offset;
  return memchr (s, '\0', sh.sh_size - offset) ? s : NULL;
}

const char *
ok_elf_section_name (const struct ok_elf *elf, const Elf64_Shdr *sh)
{
  if (elf->eh.e_shstrndx == SHN_UNDEF)
    return NULL;
  return ok_elf_string (elf, elf->eh.e_shstrndx, sh->sh_name);
}

/* The note alignment of section SH: 8 where the section says so (GNU
   property notes of ELF64), else 4, as every tool writes them.  */
static uint64_t
note_align (const Elf64_Shdr *sh)
{
  return sh->sh_addralign == 8 ? 8 : 4;
}

static uint64_t
align_up (uint64_t v, uint64_t a)
{
  return (v + a - 1) & ~(a - 1);
}

/* Where the descriptor of a note with NAMESZ bytes of owner begins, and
   where the note ends with DESCSZ bytes of descriptor, from its start,
   at alignment ALIGN.  */
static uint64_t
note_desc_offset (uint32_t namesz, uint64_t align)
{
  return align_up (sizeof (Elf64_Nhdr) + (uint64_t) namesz, align);
}

static uint64_t
note_end (uint32_t namesz, uint32_t descsz, uint64_t align)
{
  return align_up (note_desc_offset (namesz, align) + descsz, align);
}

/* Check the notes of note section I (header SH, inside the file).  */
static bool
check_notes (const struct ok_elf *elf, unsigned i, const Elf64_Shdr *sh,
	     char *err, size_t errlen)
{
  uint64_t align = note_align (sh);
  uint64_t pos = 0;
  while (pos < sh->sh_size)
    {
      Elf64_Nhdr nh = { 0, 0, 0 };
      /* The last note's padding may be missing.  */
      ok_u128 end = (ok_u128) pos + sizeof nh;
      if (end <= sh->sh_size)
	{
	  memcpy (&nh, elf->buf + sh->sh_offset + pos, sizeof nh);
	  end = (ok_u128) pos + note_desc_offset (nh.n_namesz, align)
		+ nh.n_descsz;
	}
      if (end > sh->sh_size)
	{
	  snprintf (err, errlen, "%s has a damaged note at byte %llu of its"
		    " note section %u (it would end past the section's %llu"
		    " bytes)", elf->name, (unsigned long long) pos, i,
		    (unsigned long long) sh->sh_size);
	  return false;
	}
      const char *owner = (const char *) elf->buf + sh->sh_offset + pos
			  + sizeof nh;
      if (nh.n_namesz > 0 && owner[nh.n_namesz - 1] != '\0')
	{
	  snprintf (err, errlen, "%s has a note at byte %llu of its note"
		    " section %u whose owner's name does not end in NUL",
		    elf->name, (unsigned long long) pos, i);
	  return false;
	}
      ok_u128 next = (ok_u128) pos + note_end (nh.n_namesz, nh.n_descsz,
					       align);
      pos = next > sh->sh_size ? sh->sh_size : (uint64_t) next;
    }
  return true;
}

/* Check the symbol table I (header SH, inside the file).  */
static bool
check_symtab (const struct ok_elf *elf, unsigned i, const Elf64_Shdr *sh,
	      char *err, size_t errlen)
{
  Elf64_Shdr strtab;
  if (sh->sh_entsize != sizeof (Elf64_Sym)
      || sh->sh_size % sizeof (Elf64_Sym) != 0)
    {
      snprintf (err, errlen, "%s has a symbol table (section %u) of %llu"
		" bytes in entries of %llu, expected entries of %zu", elf->name,
		i, (unsigned long long) sh->sh_size,
		(unsigned long long) sh->sh_entsize, sizeof (Elf64_Sym));
      return false;
    }
  if (!ok_elf_section (elf, sh->sh_link, &strtab)
      || strtab.sh_type != SHT_STRTAB)
    {
      snprintf (err, errlen, "%s has a symbol table (section %u) whose"
		" string table, section %u, is not one", elf->name, i,
		(unsigned) sh->sh_link);
      return false;
    }
  return true;
}

/* Check the NUM headers of a table at OFFSET (sections when SECTIONS,
   else segments) and what they point to.  */
static bool
check_table (const struct ok_elf *elf, bool sections, uint64_t offset,
	     unsigned num, unsigned entsize, char *err, size_t errlen)
{
  const char *kind = sections ? "section" : "program";
  size_t expected = sections ? sizeof (Elf64_Shdr) : sizeof (Elf64_Phdr);
  if (num == 0)
    return true;
  /* ELF64 fixes the sizes: another one means a damaged header, and a
     loader may index the table with either.  */
  if (entsize != expected)
    {
      snprintf (err, errlen, "%s has %s headers of %u bytes, expected %zu",
		elf->name, kind, entsize, expected);
      return false;
    }
  char what[48];
  snprintf (what, sizeof what, "%s headers", kind);
  if (!in_file (elf, what, offset, (ok_u128) num * expected, err, errlen))
    return false;
  for (unsigned i = 0; i < num; i++)
    {
      const unsigned char *h = elf->buf + offset + (size_t) i * expected;
      if (sections)
	{
	  Elf64_Shdr sh;
	  memcpy (&sh, h, sizeof sh);
	  if (!ok_elf_has_contents (elf, &sh))
	    continue;
	  snprintf (what, sizeof what, "section %u", i);
	  if (!in_file (elf, what, sh.sh_offset, sh.sh_size, err, errlen))
	    return false;
	}
      else
	{
	  Elf64_Phdr ph;
	  memcpy (&ph, h, sizeof ph);
	  snprintf (what, sizeof what, "segment %u", i);
	  if (!in_file (elf, what, ph.p_offset, ph.p_filesz, err, errlen))
	    return false;
	}
    }
  return true;
}

bool
ok_elf_check_layout (const struct ok_elf *elf, bool need_sections,
		     char *err, size_t errlen)
{
  const Elf64_Ehdr *eh = &elf->eh;
  /* e_shnum 0 with a table: extended numbering, the count in section 0's
     header, which a loader would read; no file here needs it, and the
     checks below would take the table for empty.  The same for e_phnum
     PN_XNUM and for e_shstrndx SHN_XINDEX.  */
  if (eh->e_shoff != 0
      && (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX))
    {
      snprintf (err, errlen, "%s has a section header table at offset %llu"
		" but an e_shnum of %u and an e_shstrndx of %u (extended"
		" section numbering is not supported)", elf->name,
		(unsigned long long) eh->e_shoff, (unsigned) eh->e_shnum,
		(unsigned) eh->e_shstrndx);
      return false;
    }
  if (eh->e_phnum == PN_XNUM)
    {
      snprintf (err, errlen, "%s has an e_phnum of %u (extended program"
		" header numbering is not supported)", elf->name,
		(unsigned) eh->e_phnum);
      return false;
    }
  if (eh->e_shoff == 0 && (need_sections || eh->e_shnum != 0))
    {
      snprintf (err, errlen, "%s has no section header table%s", elf->name,
		eh->e_shnum != 0 ? " (e_shoff 0, e_shnum not 0)" : "");
      return false;
    }
  unsigned shnum = ok_elf_shnum (elf);
  /* A loader looks section names up in this section without checking its
     number.  */
  if (eh->e_shstrndx != SHN_UNDEF && eh->e_shstrndx >= shnum)
    {
      snprintf (err, errlen, "%s names section %u as its section name"
		" table but has %u sections: truncated or damaged", elf->name,
		(unsigned) eh->e_shstrndx, shnum);
      return false;
    }
  if (!check_table (elf, true, eh->e_shoff, shnum, eh->e_shentsize, err,
		    errlen)
      || !check_table (elf, false, eh->e_phoff, eh->e_phnum,
		       eh->e_phentsize, err, errlen))
    return false;
  Elf64_Shdr sh;
  if (eh->e_shstrndx != SHN_UNDEF
      && (!ok_elf_section (elf, eh->e_shstrndx, &sh)
	  || sh.sh_type != SHT_STRTAB))
    {
      snprintf (err, errlen, "%s names section %u as its section name"
		" table, which is not a string table", elf->name,
		(unsigned) eh->e_shstrndx);
      return false;
    }
  for (unsigned i = 0; i < shnum; i++)
    {
      ok_elf_section (elf, i, &sh);
      if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
	  && !check_symtab (elf, i, &sh, err, errlen))
	return false;
      if (sh.sh_type == SHT_NOTE && !check_notes (elf, i, &sh, err, errlen))
	return false;
    }
  return true;
}

/* For qsort_r of indices into the array of names NAMES.  */
static int
compare_names (const void *a, const void *b, void *names)
{
  const char *const *v = names;
  return strcmp (v[*(const size_t *) a], v[*(const size_t *) b]);
}

bool
ok_elf_find_symbols (const struct ok_elf *elf, const char *const *names,
		     size_t n, struct ok_elf_symbol *syms, char *err,
		     size_t errlen)
{
  memset (syms, 0, n * sizeof *syms);
  if (n == 0)
    return true;
  size_t *order = malloc (n * sizeof *order);
  if (order == NULL)
    {
      snprintf (err, errlen, "out of memory reading the symbols of %s",
		elf->name);
      return false;
    }
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  qsort_r (order, n, sizeof *order, compare_names, (void *) names);

  unsigned shnum = ok_elf_shnum (elf);
  for (unsigned s = 0; s < shnum; s++)
    {
      Elf64_Shdr sh;
      ok_elf_section (elf, s, &sh);
      if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
	continue;
      size_t count = sh.sh_size / sizeof (Elf64_Sym);
      for (size_t k = 1; k < count; k++)
	{
	  Elf64_Sym sym;
	  memcpy (&sym, elf->buf + sh.sh_offset + k * sizeof sym,
		  sizeof sym);
	  if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
	    continue;
	  const char *nm = ok_elf_string (elf, sh.sh_link, sym.st_name);
	  if (nm == NULL)
	    continue;
	  size_t lo = 0, hi = n;
	  while (lo < hi)
	    {
	      size_t mid = lo + (hi - lo) / 2;
	      int c = strcmp (nm, names[order[mid]]);
	      if (c == 0)
		{
		  /* Every name equal to NM (a name may be asked for twice)
		     is next to MID.  */
		  while (mid > 0 && strcmp (nm, names[order[mid - 1]]) == 0)
		    mid--;
		  for (; mid < n && strcmp (nm, names[order[mid]]) == 0; mid++)
		    {
		      struct ok_elf_symbol *o = &syms[order[mid]];
		      unsigned char bind = ELF64_ST_BIND (sym.st_info);
		      if (o->found && !(o->bind == STB_LOCAL
					&& bind != STB_LOCAL))
			continue;
		      o->found = true;
		      o->type = ELF64_ST_TYPE (sym.st_info);
		      o->bind = bind;
		      o->shndx = sym.st_shndx;
		      o->value = sym.st_value;
		      o->size = sym.st_size;
		    }
		  break;
		}
	      if (c < 0)
		hi = mid;
	      else
		lo = mid + 1;
	    }
	}
    }
  free (order);
  return true;
}

bool
ok_elf_next_note (const struct ok_elf *elf, uint64_t *cursor,
		  struct ok_elf_note *note)
{
  /* The cursor: section number in the high 24 bits, offset in the
     section in the low 40 (ok_elf_check_layout has made sure the notes
     are whole; a note section of 2^40 bytes or more is not read).  */
  const unsigned off_bits = 40;
  const uint64_t off_mask = ((uint64_t) 1 << off_bits) - 1;
  unsigned shnum = ok_elf_shnum (elf);
  uint64_t pos = *cursor & off_mask;
  for (unsigned i = (unsigned) (*cursor >> off_bits); i < shnum; i++, pos = 0)
    {
      Elf64_Shdr sh;
      ok_elf_section (elf, i, &sh);
      if (sh.sh_type != SHT_NOTE || pos >= sh.sh_size
	  || sh.sh_size > off_mask)
	continue;
      uint64_t align = note_align (&sh);
      Elf64_Nhdr nh;
      const unsigned char *p = elf->buf + sh.sh_offset + pos;
      memcpy (&nh, p, sizeof nh);
      note->owner = nh.n_namesz ? (const char *) p + sizeof nh : "";
      note->type = nh.n_type;
      note->desc = p + (size_t) note_desc_offset (nh.n_namesz, align);
      note->desc_size = nh.n_descsz;
      ok_u128 next = (ok_u128) pos + note_end (nh.n_namesz, nh.n_descsz,
					       align);
      *cursor = ((uint64_t) i << off_bits)
		| (next > sh.sh_size ? sh.sh_size : (uint64_t) next);
      return true;
    }
  *cursor = (uint64_t) shnum << off_bits;
  return false;
}

unsigned
ok_elf_cuda_sm (const struct ok_elf *elf)
{
  uint32_t flags = elf->eh.e_flags;
  switch (elf->eh.e_ident[EI_ABIVERSION])
    {
    case OK_ELFABIVERSION_CUDA_V1:
      return flags & OK_EF_CUDA_SM;
    case OK_ELFABIVERSION_CUDA_V2:
      return (flags & OK_EF_CUDA_SM_MASK) >> OK_EF_CUDA_SM_SHIFT;
    default:
      return 0;
    }
}

bool
ok_elf_cuda_info (const struct ok_elf *elf, unsigned *ptx_sm,
		  unsigned *toolkit)
{
  uint64_t cursor = 0;
  struct ok_elf_note note;
  while (ok_elf_next_note (elf, &cursor, &note))
    if (note.type == OK_NT_CUDA_CUINFO && note.desc_size >= 6
	&& strcmp (note.owner, OK_NOTE_NVIDIA_OWNER) == 0)
      {
	*ptx_sm = note.desc[2] | (unsigned) note.desc[3] << 8;
	*toolkit = note.desc[4] | (unsigned) note.desc[5] << 8;
	return true;
      }
  return false;
}

bool
ok_elf_check_defined (const struct ok_elf *elf, const char *const *names,
		      size_t n, unsigned type, const uint64_t *sizes,
		      const char *what, char *err, size_t errlen)
{
  struct ok_elf_symbol *syms = calloc (n ? n : 1, sizeof *syms);
  if (syms == NULL)
    {
      snprintf (err, errlen, "out of memory reading the symbols of %s",
		elf->name);
      return false;
    }
  bool ok = ok_elf_find_symbols (elf, names, n, syms, err, errlen);
  for (size_t i = 0; ok && i < n; i++)
    {
      if (!syms[i].found)
	snprintf (err, errlen, "%s defines no %s '%s'", elf->name, what,
		  names[i]);
      else if (syms[i].type != type)
	snprintf (err, errlen, "%s defines %s '%s' as a symbol of type %u,"
		  " not %u", elf->name, what, names[i],
		  (unsigned) syms[i].type, type);
      else if (sizes != NULL && syms[i].size != sizes[i])
	snprintf (err, errlen, "%s has %llu bytes of %s '%s', expected %llu",
		  elf->name, (unsigned long long) syms[i].size, what,
		  names[i], (unsigned long long) sizes[i]);
      else
	continue;
      ok = false;
    }
  free (syms);
  return ok;
}
