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
#include "elf-reader.h"
#include "file-io.h"

/* Check BUF[0, SIZE) as an ELF file, reported as NAME: its header, and
   its layout when LAYOUT.  False with the problem in ERR.  */
static bool
open_checked (struct ok_elf *elf, const char *name, const unsigned char *buf,
	      size_t size, const char *class_note, bool layout, char *err,
	      size_t errlen)
{
  return (ok_elf_open (elf, buf, size, name, class_note, err, errlen)
	  && (!layout || ok_elf_check_layout (elf, true, err, errlen)));
}

Elf *
ok_elf_memory (const char *name, const unsigned char *buf, size_t size,
	       const char *class_note, GElf_Ehdr *eh)
{
  char *quoted = xasprintf ("'%s'", name);
  char err[1024];
  struct ok_elf checked;
  bool ok = open_checked (&checked, quoted, buf, size, class_note, true,
			  err, sizeof err);
  free (quoted);
  if (!ok)
    {
      ok_error ("%s", err);
      return NULL;
    }
  /* libelf only reads the buffer (ELF_C_READ semantics).  */
  Elf *elf = elf_memory ((char *) buf, size);
  if (!elf || elf_kind (elf) != ELF_K_ELF || !gelf_getehdr (elf, eh))
    {
      ok_error ("'%s' is not a valid ELF object: %s", name, elf_errmsg (-1));
      if (elf)
	elf_end (elf);
      return NULL;
    }
  return elf;
}

char *
ok_cuda_elf_problem (const char *name, const unsigned char *buf,
		     size_t size, const struct ok_cuda_want *want)
{
  char *quoted = xasprintf ("'%s'", name);
  char err[1024];
  struct ok_elf elf;
  bool ok = (open_checked (&elf, quoted, buf, size, NULL, false, err,
			   sizeof err)
	     && ok_elf_check_kind (&elf, OK_EM_CUDA, "EM_CUDA", want->type, err,
				   sizeof err)
	     && ok_elf_check_layout (&elf, true, err, sizeof err));
  if (ok && ok_elf_cuda_sm (&elf) != want->sm)
    {
      unsigned sm = ok_elf_cuda_sm (&elf);
      if (sm == 0)
	snprintf (err, sizeof err, "%s has CUDA ELF ABI version %u, not one"
		  " offloadkit reads (%u or %u)", quoted,
		  (unsigned) elf.eh.e_ident[EI_ABIVERSION],
		  OK_ELFABIVERSION_CUDA_V1, OK_ELFABIVERSION_CUDA_V2);
      else
	snprintf (err, sizeof err, "%s is for sm_%u by its ELF header, not"
		  " sm_%u (e_flags %#x)", quoted, sm, want->sm,
		  (unsigned) elf.eh.e_flags);
      ok = false;
    }
  ok = ok && ok_elf_check_defined (&elf, want->functions, want->nfunctions,
				   STT_FUNC, NULL, "function", err,
				   sizeof err);
  /* nvlink's cubins have STT_OBJECT variables; ptxas' objects have
     NVIDIA's own type for them, and only cubins are asked for any.  */
  ok = ok && ok_elf_check_defined (&elf, want->variables, want->nvariables,
				   STT_OBJECT, NULL, "variable", err,
				   sizeof err);
  free (quoted);
  return ok ? NULL : xstrdup (err);
}

char *
ok_cuda_file_problem (const char *path, const struct ok_cuda_want *want)
{
  size_t len;
  const char *reason;
  char *buf = ok_read_file (path, &len, &reason);
  if (!buf)
    return errno == ENOENT ? xasprintf ("'%s' does not exist", path)
			   : xasprintf ("cannot read '%s': %s", path, reason);
  char *why = ok_cuda_elf_problem (path, (const unsigned char *) buf, len,
				   want);
  free (buf);
  return why;
}

/* Check the ELF object in BUF[0, SIZE), reported as NAME.  */
static int
check_object (const char *name, const unsigned char *buf, size_t size)
{
  char *quoted = xasprintf ("'%s'", name);
  char err[1024];
  struct ok_elf elf;
  bool ok = open_checked (&elf, quoted, buf, size,
			  " (only x86_64 hosts are supported)", false, err,
			  sizeof err);
  if (ok && elf.eh.e_type != ET_REL)
    {
      snprintf (err, sizeof err, "%s is not a relocatable object (ELF type"
		" %u)", quoted, (unsigned) elf.eh.e_type);
      ok = false;
    }
  ok = ok && ok_elf_check_kind (&elf, EM_X86_64, "x86_64", ET_NONE, err,
				sizeof err);
  ok = ok && ok_elf_check_layout (&elf, true, err, sizeof err);
  free (quoted);
  if (!ok)
    {
      ok_error ("%s", err);
      return -1;
    }
  return 0;
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
