/* Checks of mkoffload's input objects; see elf-check.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <ar.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "elf-check.h"
#include "file-io.h"

/* Report the problem WHY (malloc'd) as one error.  */
static void
report (char *why)
{
  ok_error ("%s", why);
  free (why);
}

/* ok_elf_memory, with the problem stored in *WHY (malloc'd) instead of
   reported.  */
static Elf *
open_memory (const char *name, const unsigned char *buf, size_t size,
	     const char *class_note, GElf_Ehdr *eh, char **why)
{
  if (size < EI_NIDENT || memcmp (buf, ELFMAG, SELFMAG) != 0)
    {
      *why = xasprintf ("'%s' is not an ELF object", name);
      return NULL;
    }
  if (buf[EI_CLASS] != ELFCLASS64 || buf[EI_DATA] != ELFDATA2LSB)
    {
      *why = xasprintf ("'%s' is not a 64-bit little-endian ELF object%s",
			name, class_note ? class_note : "");
      return NULL;
    }
  if (size < sizeof (Elf64_Ehdr))
    {
      *why = xasprintf ("'%s' is truncated (%zu bytes, no complete ELF"
			" header)", name, size);
      return NULL;
    }

  /* libelf only reads the buffer (ELF_C_READ semantics).  */
  Elf *elf = elf_memory ((char *) buf, size);
  if (!elf || elf_kind (elf) != ELF_K_ELF || !gelf_getehdr (elf, eh))
    {
      *why = xasprintf ("'%s' is not a valid ELF object: %s", name,
			elf_errmsg (-1));
      if (elf)
	elf_end (elf);
      return NULL;
    }
  return elf;
}

Elf *
ok_elf_memory (const char *name, const unsigned char *buf, size_t size,
	       const char *class_note, GElf_Ehdr *eh)
{
  char *why;
  Elf *elf = open_memory (name, buf, size, class_note, eh, &why);
  if (!elf)
    report (why);
  return elf;
}

/* ok_elf_check_sections, with the problem stored in *WHY (malloc'd)
   instead of reported.  */
static int
check_sections (const char *name, Elf *elf, const GElf_Ehdr *eh,
		size_t size, size_t *shnum, char **why)
{
  if (eh->e_shoff == 0 || eh->e_shentsize != sizeof (Elf64_Shdr))
    {
      *why = xasprintf ("'%s' has no valid section header table", name);
      return -1;
    }
  /* Bounds of the section header table itself, before libelf reads it;
     with extended numbering (e_shnum 0) at least entry 0 must exist.  */
  uint64_t shnum_hdr = eh->e_shnum ? eh->e_shnum : 1;
  if (eh->e_shoff > size
      || shnum_hdr > (size - eh->e_shoff) / sizeof (Elf64_Shdr)
      || elf_getshdrnum (elf, shnum) != 0
      || *shnum > (size - eh->e_shoff) / sizeof (Elf64_Shdr))
    {
      *why = xasprintf ("'%s' is truncated (section headers end past its"
			" %zu bytes)", name, size);
      return -1;
    }
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (!gelf_getshdr (scn, &sh))
	{
	  *why = xasprintf ("'%s' has a bad section header: %s", name,
			    elf_errmsg (-1));
	  return -1;
	}
      if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
	continue;
      if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
	{
	  *why = xasprintf ("'%s' is truncated (section %zu ends at byte %"
			    PRIu64 ", past its %zu bytes)", name,
			    elf_ndxscn (scn), sh.sh_offset + sh.sh_size,
			    size);
	  return -1;
	}
    }
  return 0;
}

int
ok_elf_check_sections (const char *name, Elf *elf, const GElf_Ehdr *eh,
		       size_t size, size_t *shnum)
{
  char *why;
  if (check_sections (name, elf, eh, size, shnum, &why) < 0)
    {
      report (why);
      return -1;
    }
  return 0;
}

/* Set FOUND[I] for each of the N names NAMES[I] that the symbol table
   SCN of ELF defines as a function.  ORDER holds the indices of NAMES
   sorted by name.  */
static void
find_functions (Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		const char *const *names, const size_t *order, size_t n,
		char *found)
{
  Elf_Data *data = elf_getdata (scn, NULL);
  size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
  for (size_t i = 0; data && i < count; i++)
    {
      GElf_Sym sym;
      if (!gelf_getsym (data, i, &sym)
	  || GELF_ST_TYPE (sym.st_info) != STT_FUNC
	  || sym.st_shndx == SHN_UNDEF)
	continue;
      const char *nm = elf_strptr (elf, sh->sh_link, sym.st_name);
      if (!nm)
	continue;
      /* Binary search of NM among the sorted names.  */
      size_t lo = 0, hi = n;
      while (lo < hi)
	{
	  size_t mid = lo + (hi - lo) / 2;
	  int c = strcmp (nm, names[order[mid]]);
	  if (c == 0)
	    {
	      found[order[mid]] = 1;
	      break;
	    }
	  if (c < 0)
	    hi = mid;
	  else
	    lo = mid + 1;
	}
    }
}

/* For qsort_r of indices into the array of names NAMES.  */
static int
compare_names (const void *a, const void *b, void *names)
{
  const char *const *v = names;
  return strcmp (v[*(const size_t *) a], v[*(const size_t *) b]);
}

/* The first of the N names NAMES that ELF, reported as NAME, does not
   define as a function in a symbol table, as a malloc'd problem; NULL
   when it defines them all.  */
static char *
missing_function (const char *name, Elf *elf, const char *const *names,
		  size_t n)
{
  if (n == 0)
    return NULL;
  size_t *order = xcalloc (n, sizeof *order);
  char *found = xcalloc (n, 1);
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  qsort_r (order, n, sizeof *order, compare_names, (void *) names);
  int have_symtab = 0;
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) && sh.sh_type == SHT_SYMTAB)
	{
	  have_symtab = 1;
	  find_functions (elf, scn, &sh, names, order, n, found);
	}
    }
  char *why = NULL;
  if (!have_symtab)
    why = xasprintf ("'%s' has no symbol table", name);
  for (size_t i = 0; !why && i < n; i++)
    if (!found[i])
      why = xasprintf ("'%s' defines no function '%s'", name, names[i]);
  free (order);
  free (found);
  return why;
}

char *
ok_elf_image_problem (const char *name, const unsigned char *buf,
		      size_t size, unsigned machine, unsigned type,
		      const char *const *functions, size_t nfunctions)
{
  if (size == 0)
    return xasprintf ("'%s' is empty", name);
  elf_version (EV_CURRENT);
  char *why = NULL;
  GElf_Ehdr eh;
  Elf *elf = open_memory (name, buf, size, NULL, &eh, &why);
  if (!elf)
    return why;
  size_t shnum;
  if (eh.e_machine != machine)
    why = xasprintf ("'%s' is for ELF machine %u, not %u", name,
		     (unsigned) eh.e_machine, machine);
  else if (eh.e_type != type)
    why = xasprintf ("'%s' has ELF type %u, not %u", name,
		     (unsigned) eh.e_type, type);
  else if (check_sections (name, elf, &eh, size, &shnum, &why) == 0)
    why = missing_function (name, elf, functions, nfunctions);
  elf_end (elf);
  return why;
}

char *
ok_elf_file_problem (const char *path, unsigned machine, unsigned type,
		     const char *const *functions, size_t nfunctions)
{
  size_t len;
  const char *reason;
  char *buf = ok_read_file (path, &len, &reason);
  if (!buf)
    return errno == ENOENT ? xasprintf ("'%s' does not exist", path)
			   : xasprintf ("cannot read '%s': %s", path, reason);
  char *why = ok_elf_image_problem (path, (const unsigned char *) buf, len,
				    machine, type, functions, nfunctions);
  free (buf);
  return why;
}

/* Check the ELF object in BUF[0, SIZE), reported as NAME.  */
static int
check_object (const char *name, const unsigned char *buf, size_t size)
{
  GElf_Ehdr eh;
  Elf *elf = ok_elf_memory (name, buf, size,
			    " (only x86_64 hosts are supported)", &eh);
  if (!elf)
    return -1;

  int rc = -1;
  if (eh.e_type != ET_REL)
    {
      ok_error ("'%s' is not a relocatable object (ELF type %u)", name,
		(unsigned) eh.e_type);
      goto out;
    }
  if (eh.e_machine != EM_X86_64)
    {
      ok_error ("'%s' is for ELF machine %u, not x86_64 (%u)", name,
		(unsigned) eh.e_machine, (unsigned) EM_X86_64);
      goto out;
    }
  size_t shnum;
  rc = ok_elf_check_sections (name, elf, &eh, size, &shnum);
out:
  elf_end (elf);
  return rc;
}

/* Parse a decimal ar header field of LEN bytes.  */
static int
ar_number (const char *field, size_t len, uint64_t *val)
{
  uint64_t v = 0;
  size_t i = 0;
  while (i < len && field[i] == ' ')
    i++;
  if (i == len || field[i] < '0' || field[i] > '9')
    return -1;
  for (; i < len && field[i] >= '0' && field[i] <= '9'; i++)
    v = v * 10 + (field[i] - '0');
  for (; i < len; i++)
    if (field[i] != ' ')
      return -1;
  *val = v;
  return 0;
}

/* Check every member of the ar archive in BUF[0, SIZE).  The archive's
   own tables ("/", "//", "/SYM64/") are skipped; members are named by
   their byte offset, as lto-wrapper does.  */
static int
check_archive (const char *name, const unsigned char *buf, size_t size)
{
  size_t off = SARMAG;
  while (off < size)
    {
      struct ar_hdr hdr;
      if (size - off < sizeof hdr)
	{
	  ok_error ("'%s' is truncated (incomplete archive member header"
		    " at byte %zu)", name, off);
	  return -1;
	}
      memcpy (&hdr, buf + off, sizeof hdr);
      uint64_t msize;
      if (memcmp (hdr.ar_fmag, ARFMAG, 2) != 0
	  || ar_number (hdr.ar_size, sizeof hdr.ar_size, &msize) < 0)
	{
	  ok_error ("'%s' is not a valid archive (bad member header at"
		    " byte %zu)", name, off);
	  return -1;
	}
      off += sizeof hdr;
      if (msize > size - off)
	{
	  ok_error ("'%s' is truncated (archive member at byte %zu ends"
		    " past its %zu bytes)", name, off, size);
	  return -1;
	}
      if (hdr.ar_name[0] != '/'
	  || (hdr.ar_name[1] != ' ' && hdr.ar_name[1] != '/'
	      && memcmp (hdr.ar_name, "/SYM64/", 7) != 0))
	{
	  char *mname = xasprintf ("%s@0x%zx", name, off);
	  int rc = check_object (mname, buf + off, msize);
	  free (mname);
	  if (rc < 0)
	    return -1;
	}
      off += msize + (msize & 1);
    }
  return 0;
}

int
ok_elf_check_input (const char *arg, struct stat *st)
{
  const char *path = arg;
  char *owned = NULL;
  uint64_t offset = 0;
  int has_offset = 0;

  /* lto-wrapper names an archive member "ARCHIVE@0xOFFSET"; take that
     form only when ARG itself is not an existing file.  */
  const char *at = strrchr (arg, '@');
  if (at && at != arg && access (arg, F_OK) != 0)
    {
      char *end;
      errno = 0;
      unsigned long long v = strtoull (at + 1, &end, 0);
      if (errno == 0 && end != at + 1 && *end == '\0')
	{
	  owned = xstrndup (arg, at - arg);
	  path = owned;
	  offset = v;
	  has_offset = 1;
	}
    }

  int rc = -1;
  const char *why;
  int fd = ok_open_regular (path, st, &why);
  if (fd < 0)
    {
      if (fd == -1)
	ok_error ("cannot open '%s': %s", path, why);
      else
	ok_error ("cannot read '%s': %s", path, why);
      goto out;
    }
  size_t size = st->st_size;
  if (has_offset && offset > size)
    {
      ok_error ("'%s' is truncated (member offset %" PRIu64 " is past its"
		" %zu bytes)", path, offset, size);
      goto out_fd;
    }
  if (size == 0)
    {
      ok_error ("'%s' is not an ELF object (empty file)", path);
      goto out_fd;
    }
  void *map = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED)
    {
      ok_error ("cannot read '%s': %s", path, strerror (errno));
      goto out_fd;
    }
  /* A read error on a mapped file would be a SIGBUS; check that the
     file can be read at all first (EISDIR, EIO).  */
  char probe;
  if (pread (fd, &probe, 1, 0) < 0)
    ok_error ("cannot read '%s': %s", path, strerror (errno));
  else
    {
      elf_version (EV_CURRENT);
      const unsigned char *buf = map;
      if (has_offset)
	rc = check_object (arg, buf + offset, size - offset);
      else if (size >= SARMAG && memcmp (buf, ARMAG, SARMAG) == 0)
	rc = check_archive (path, buf, size);
      else if (size >= SARMAG && memcmp (buf, "!<thin>\n", SARMAG) == 0)
	rc = 0;  /* Members live in other files, checked when named.  */
      else
	rc = check_object (path, buf, size);
    }
  munmap (map, size);
out_fd:
  close (fd);
out:
  free (owned);
  return rc;
}
