/* Bounds check of ELF device images; see elf-image.h.

   The structures of <elf.h> are copied out with memcpy, since the image
   may sit at any alignment inside the host binary; their byte order is
   the host's, which is right because the plugins only run on x86_64 and
   every image is checked to be little-endian first.  */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elf-image.h"

/* Whether the LEN bytes at OFFSET, WHAT of image NAME of SIZE bytes, lie
   inside it; false with the reason in ERR.  */
static bool
elf_image_range (size_t size, const char *name, const char *what,
		 uint64_t offset, unsigned __int128 len, char *err,
		 size_t errlen)
{
  unsigned __int128 end = (unsigned __int128) offset + len;
  if (end <= size)
    return true;
  if (end > UINT64_MAX)
    snprintf (err, errlen, "damaged %s: its %s would end beyond any size"
	      " (offset %llu)", name, what, (unsigned long long) offset);
  else
    snprintf (err, errlen, "truncated %s: %zu bytes, its %s would end at"
	      " %llu", name, size, what, (unsigned long long) end);
  return false;
}

/* Check that the NUM section headers (SECTIONS) or program headers of
   ENTSIZE bytes at OFFSET in image IMG, and the contents of the sections
   or segments they describe, lie inside it; false with the reason in
   ERR.  */
static bool
elf_image_headers (const unsigned char *img, size_t size, const char *name,
		   bool sections, uint64_t offset, unsigned num,
		   unsigned entsize, char *err, size_t errlen)
{
  const char *kind = sections ? "section" : "program";
  size_t expected = sections ? sizeof (Elf64_Shdr) : sizeof (Elf64_Phdr);
  if (num == 0)
    return true;
  /* ELF64 fixes the sizes: another one means a corrupt header, and a
     loader may index the table with either.  */
  if (entsize != expected)
    {
      snprintf (err, errlen, "%s has %s headers of %u bytes, expected %zu",
		name, kind, entsize, expected);
      return false;
    }
  char what[48];
  snprintf (what, sizeof what, "%s headers", kind);
  if (!elf_image_range (size, name, what, offset,
			(unsigned __int128) num * expected, err, errlen))
    return false;
  for (unsigned i = 0; i < num; i++)
    {
      const unsigned char *h = img + offset + (size_t) i * expected;
      uint64_t start, len;
      if (sections)
	{
	  Elf64_Shdr sh;
	  memcpy (&sh, h, sizeof sh);
	  /* No room in the file, or (SHT_NULL) offset and size that mean
	     nothing.  */
	  if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
	    continue;
	  start = sh.sh_offset;
	  len = sh.sh_size;
	}
      else
	{
	  Elf64_Phdr ph;
	  memcpy (&ph, h, sizeof ph);
	  start = ph.p_offset;
	  len = ph.p_filesz;
	}
      snprintf (what, sizeof what, "%s %u", sections ? "section" : "segment",
		i);
      if (!elf_image_range (size, name, what, start, len, err, errlen))
	return false;
    }
  return true;
}

bool
ok_elf_image_check (const unsigned char *img, size_t size, const char *name,
		    unsigned machine, const char *machine_name,
		    Elf64_Ehdr *eh, char *err, size_t errlen)
{
  if (img == NULL || size < sizeof *eh)
    {
      snprintf (err, errlen, "truncated %s: %zu bytes, its ELF header needs"
		" %zu", name, img == NULL ? 0 : size, sizeof *eh);
      return false;
    }
  memcpy (eh, img, sizeof *eh);
  if (memcmp (eh->e_ident, ELFMAG, SELFMAG) != 0)
    {
      snprintf (err, errlen, "%s is not an ELF file (it starts with %02x"
		" %02x %02x %02x)", name, img[0], img[1], img[2], img[3]);
      return false;
    }
  if (eh->e_ident[EI_CLASS] != ELFCLASS64
      || eh->e_ident[EI_DATA] != ELFDATA2LSB)
    {
      snprintf (err, errlen, "%s is ELF class %u, data %u; expected 64-bit"
		" little-endian (2, 1)", name, eh->e_ident[EI_CLASS],
		eh->e_ident[EI_DATA]);
      return false;
    }
  if (eh->e_machine != machine)
    {
      snprintf (err, errlen, "%s has e_machine %u, expected %u (%s)", name,
		(unsigned) eh->e_machine, machine, machine_name);
      return false;
    }
  /* e_shnum 0 with a table: extended numbering, the count in section 0's
     header, which a loader would read; no device image needs it, and the
     checks below would take the table for empty.  */
  if (eh->e_shnum == 0 && eh->e_shoff != 0)
    {
      snprintf (err, errlen, "%s has a section header table at offset %llu"
		" but an e_shnum of 0 (extended section numbering is not"
		" supported)", name, (unsigned long long) eh->e_shoff);
      return false;
    }
  /* A loader looks section names up in this section without checking its
     number (SHN_XINDEX, extended numbering again, is refused here too).  */
  if (eh->e_shstrndx != SHN_UNDEF && eh->e_shstrndx >= eh->e_shnum)
    {
      snprintf (err, errlen, "%s names section %u as its section name"
		" table but has %u sections: truncated or corrupt", name,
		(unsigned) eh->e_shstrndx, (unsigned) eh->e_shnum);
      return false;
    }
  /* The runtimes read the header tables and what they point to in place:
     everything must lie inside the image.  */
  return (elf_image_headers (img, size, name, true, eh->e_shoff, eh->e_shnum,
			     eh->e_shentsize, err, errlen)
	  && elf_image_headers (img, size, name, false, eh->e_phoff,
				eh->e_phnum, eh->e_phentsize, err, errlen));
}
