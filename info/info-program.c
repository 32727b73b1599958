/* A program's or library's offload images, read from its file: nothing of
   it runs.  offloadkit's wrapper marks the object with an ELF note
   (offload-desc.h: OK_NOTE_OWNER, OK_NOTE_IMAGES, one per device type);
   GCC's own mkoffload leaves none, but both put the host's tables in
   .gnu.offload_funcs and .gnu.offload_vars.  The images lie in the
   object's data as they are: cubins and GCN code objects are ELF files
   (EM_CUDA with the SM in e_flags, EM_AMDGPU with the machine), PTX is
   text that says its target (".target sm_NN"), and offloadkit's
   descriptor begins, after the four words of the host table, with its
   magic and version.  */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-reader.h"
#include "gcn-arch.h"
#include "gomp-abi.h"
#include "info.h"
#include "offload-desc.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
/* EF_AMDGPU_MACH: the low byte of a code object's e_flags.  */
#define INFO_EF_AMDGPU_MACH 0xffu

const char *
info_gcn_name (unsigned mach, char *buf, size_t len)
{
  uint32_t arch = ok_gcn_arch_of_mach (mach);
  const char *name = arch != 0 ? ok_gcn_arch_name (arch) : NULL;
  if (name != NULL)
    return name;
  snprintf (buf, len, "gfx? (EF_AMDGPU_MACH %#x)", mach);
  return buf;
}

unsigned
info_ptx_isa_cuda (unsigned isa)
{
  /* The release history of NVIDIA's PTX ISA manual.  */
  static const struct { unsigned isa, cuda; } first[] = {
    { 20, 3000 }, { 21, 3010 }, { 22, 3020 }, { 23, 4000 }, { 30, 4010 },
    { 31, 5000 }, { 32, 5050 }, { 40, 6000 }, { 41, 6050 }, { 42, 7000 },
    { 43, 7050 }, { 50, 8000 }, { 60, 9000 }, { 61, 9010 }, { 62, 9020 },
    { 63, 10000 }, { 64, 10010 }, { 65, 10020 }, { 70, 11000 },
    { 71, 11010 }, { 72, 11020 }, { 73, 11030 }, { 74, 11040 },
    { 75, 11050 }, { 76, 11060 }, { 77, 11070 }, { 78, 11080 },
    { 80, 12000 }, { 81, 12010 }, { 82, 12020 }, { 83, 12030 },
    { 84, 12040 }, { 85, 12050 }, { 86, 12070 }, { 87, 12080 },
    { 88, 12090 }, { 90, 13000 }, { 91, 13010 },
  };
  for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
    if (first[i].isa == isa)
      return first[i].cuda;
  return 0;
}

static void
add_image (struct info_program *p, enum info_kind kind,
	   enum info_image_form form, unsigned arch, unsigned ptx_isa)
{
  for (int i = 0; i < p->nimages; i++)
    if (p->images[i].kind == kind && p->images[i].form == form
	&& p->images[i].arch == arch && p->images[i].ptx_isa == ptx_isa)
      return;
  if (p->nimages < INFO_MAX_IMAGES)
    {
      struct info_image *im = &p->images[p->nimages++];
      im->kind = kind;
      im->form = form;
      im->arch = arch;
      im->ptx_isa = ptx_isa;
    }
  p->kinds[kind] = true;
}

/* The ISA version of the PTX whose ".target" directive is at B[AT]: its
   ".version X.Y" comes first, at most a line or two before (GCC writes
   "// BEGIN PREAMBLE", ".version", ".target"); 10 * X + Y, or 0.  */
static unsigned
ptx_isa_before (const unsigned char *b, size_t at)
{
  size_t from = at > 256 ? at - 256 : 0;
  for (size_t j = at; j-- > from;)
    if (b[j] == '.' && at - j >= 12 && memcmp (b + j, ".version ", 9) == 0)
      {
	const unsigned char *v = b + j + 9;
	if (v[0] >= '0' && v[0] <= '9' && v[1] == '.' && v[2] >= '0'
	    && v[2] <= '9')
	  return (unsigned) (v[0] - '0') * 10 + (unsigned) (v[2] - '0');
	return 0;
      }
  return 0;
}

/* Look through the bytes [B, B + N) of a data section for images and
   offloadkit's descriptor.  False (ERR) for a descriptor of a version
   this program does not know.  */
static bool
scan_data (struct info_program *p, const unsigned char *b, size_t n,
	   char *err, size_t errlen)
{
  for (size_t i = 0; i + 4 <= n; i++)
    {
      if (b[i] == 0x7f && memcmp (b + i, "\177ELF", 4) == 0)
	{
	  struct ok_elf e;
	  char ignored[64];
	  if (!ok_elf_open (&e, b + i, n - i, "image", NULL, ignored,
			    sizeof ignored))
	    continue;
	  if (e.eh.e_machine == OK_EM_CUDA)
	    add_image (p, INFO_NVPTX, INFO_CUBIN, ok_elf_cuda_sm (&e), 0);
	  else if (e.eh.e_machine == EM_AMDGPU)
	    add_image (p, INFO_GCN, INFO_GCN_CODE,
		       e.eh.e_flags & INFO_EF_AMDGPU_MACH, 0);
	}
      else if (b[i] == '.' && i + 11 <= n
	       && memcmp (b + i, ".target sm_", 11) == 0)
	{
	  unsigned sm = 0;
	  for (size_t j = i + 11; j < n && b[j] >= '0' && b[j] <= '9'; j++)
	    sm = sm * 10 + (unsigned) (b[j] - '0');
	  if (sm > 0 && sm < 10000)
	    add_image (p, INFO_NVPTX, INFO_PTX, sm, ptx_isa_before (b, i));
	}
      else if (i % 8 == 0 && i >= 32 && i + 12 <= n)
	{
	  uint32_t magic;
	  memcpy (&magic, b + i, 4);
	  if (magic != OK_DESC_MAGIC)
	    continue;
	  uint16_t version, dev;
	  memcpy (&version, b + i + 4, 2);
	  memcpy (&dev, b + i + 6, 2);
	  if (dev != OK_DEV_VERSION)
	    continue;
	  if (version > OK_DESC_VERSION)
	    {
	      snprintf (err, errlen, "%s has offload images of descriptor"
			" version %u; this offloadkit-info reads versions 2"
			" to %u (a newer offloadkit built it)", p->path,
			version, OK_DESC_VERSION);
	      return false;
	    }
	  if (version > p->desc_version)
	    p->desc_version = version;
	}
    }
  return true;
}

/* The versions of GCC that the .comment section SH of ELF names (its
   strings "GCC: (vendor text) X.Y.Z"), each once, into P->comment_gccs.  */
static void
read_comment (const struct ok_elf *elf, const Elf64_Shdr *sh,
	      struct info_program *p)
{
  const char *s = (const char *) elf->buf + sh->sh_offset;
  const char *end = s + sh->sh_size;
  char *out = p->comment_gccs;
  size_t cap = sizeof p->comment_gccs;
  while (s < end)
    {
      const char *z = memchr (s, '\0', (size_t) (end - s));
      size_t n = z != NULL ? (size_t) (z - s) : (size_t) (end - s);
      /* The version is the last word.  */
      const char *v = s + n;
      while (v > s && v[-1] != ' ')
	v--;
      size_t vn = (size_t) (s + n - v);
      if (n > 5 && memcmp (s, "GCC: ", 5) == 0 && vn > 0 && vn < 24
	  && v[0] >= '0' && v[0] <= '9')
	{
	  char ver[24];
	  memcpy (ver, v, vn);
	  ver[vn] = '\0';
	  /* Once each (the list is short).  */
	  bool seen = false;
	  for (const char *q = out; (q = strstr (q, ver)) != NULL; q += vn)
	    if ((q == out || q[-1] == ' ')
		&& (q[vn] == ',' || q[vn] == '\0'))
	      seen = true;
	  size_t used = strlen (out);
	  if (!seen && used + vn + 3 < cap)
	    snprintf (out + used, cap - used, "%s%s", used ? ", " : "", ver);
	}
      s += n + 1;
    }
}

static bool
read_elf (struct info_program *p, const unsigned char *buf, size_t size,
	  char *err, size_t errlen)
{
  struct ok_elf elf;
  char quoted[PATH_MAX + 2];
  snprintf (quoted, sizeof quoted, "'%s'", p->path);
  if (!ok_elf_open (&elf, buf, size, quoted, " (only x86_64 programs are"
		    " read)", err, errlen)
      || !ok_elf_check_layout (&elf, true, err, errlen))
    return false;
  if (elf.eh.e_type != ET_EXEC && elf.eh.e_type != ET_DYN)
    {
      snprintf (err, errlen, "%s is not a program or shared library (ELF"
		" type %u)", quoted, elf.eh.e_type);
      return false;
    }
  uint64_t cursor = 0;
  struct ok_elf_note note;
  while (ok_elf_next_note (&elf, &cursor, &note))
    if (strcmp (note.owner, OK_NOTE_OWNER) == 0
	&& note.type == OK_NOTE_IMAGES && note.desc_size >= 4)
      {
	struct ok_note_images n = { 0, 0, 0, OK_NOTE_REQUIRES_UNKNOWN };
	memcpy (&n, note.desc, note.desc_size < sizeof n ? note.desc_size
		: sizeof n);
	uint32_t type = n.device_type;
	p->offloadkit = true;
	if (note.desc_size >= sizeof n)
	  {
	    /* Several images (one per device type, or per shared object
	       linked in) agree unless built by different GCCs: keep what
	       the newest needs.  */
	    if (n.gcc_major > p->gcc_major)
	      p->gcc_major = n.gcc_major;
	    if (OK_GOMP_VERSION_LIB (n.gomp_version) > p->gomp_lib)
	      p->gomp_lib = OK_GOMP_VERSION_LIB (n.gomp_version);
	    if (n.omp_requires != OK_NOTE_REQUIRES_UNKNOWN)
	      {
		p->requires_known = true;
		p->omp_requires |= n.omp_requires;
	      }
	  }
	if (type == OK_GOMP_DEVICE_NVIDIA_PTX)
	  p->kinds[INFO_NVPTX] = true;
	else if (type == OK_GOMP_DEVICE_GCN)
	  p->kinds[INFO_GCN] = true;
      }
  bool tables = false;
  for (unsigned i = 0; i < ok_elf_shnum (&elf); i++)
    {
      Elf64_Shdr sh;
      const char *name = (ok_elf_section (&elf, i, &sh)
			  ? ok_elf_section_name (&elf, &sh) : NULL);
      if (name != NULL && strcmp (name, ".gnu.offload_funcs") == 0)
	{
	  p->num_funcs = (size_t) sh.sh_size / sizeof (void *);
	  tables = true;
	}
      else if (name != NULL && strcmp (name, ".gnu.offload_vars") == 0)
	{
	  p->num_vars = (size_t) sh.sh_size / (2 * sizeof (void *));
	  tables = true;
	}
      else if (name != NULL && strcmp (name, ".comment") == 0
	       && ok_elf_has_contents (&elf, &sh))
	read_comment (&elf, &sh, p);
    }
  /* A program without offloading: nothing to look for.  */
  for (unsigned i = 0; (tables || p->offloadkit) && i < ok_elf_shnum (&elf);
       i++)
    {
      Elf64_Shdr sh;
      if (ok_elf_section (&elf, i, &sh) && (sh.sh_flags & SHF_ALLOC)
	  && !(sh.sh_flags & SHF_EXECINSTR) && ok_elf_has_contents (&elf, &sh)
	  && !scan_data (p, buf + sh.sh_offset, (size_t) sh.sh_size, err,
			 errlen))
	return false;
    }
  p->gcc_format = tables && !p->offloadkit && p->nimages > 0;
  if (p->gcc_format)
    info_gcc_data_read (&elf, p);
  return true;
}

bool
info_program_read (const char *path, struct info_program *p, char *err,
		   size_t errlen)
{
  memset (p, 0, sizeof *p);
  p->path = path;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      snprintf (err, errlen, "cannot open '%s': %s", path, strerror (errno));
      return false;
    }
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      snprintf (err, errlen, "'%s' is not a regular file", path);
      close (fd);
      return false;
    }
  if (st.st_size == 0)
    {
      snprintf (err, errlen, "'%s' is empty", path);
      close (fd);
      return false;
    }
  void *map = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close (fd);
  if (map == MAP_FAILED)
    {
      snprintf (err, errlen, "cannot read '%s': %s", path, strerror (errno));
      return false;
    }
  bool ok = read_elf (p, map, (size_t) st.st_size, err, errlen);
  munmap (map, (size_t) st.st_size);
  return ok;
}
