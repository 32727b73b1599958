/* cuda-harness: the images it loads, built in memory: PTX text from a
   template, small cubins made with libelf, descriptors holding them; and
   loads that must succeed or fail.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda-harness.h"

/* Host side: region functions (never run: kernels do not run under the
   fake) and `declare target' variables.  */
static void host_plain (void *v) { (void) v; }
static void host_maxntid (void *v) { (void) v; }
static void host_regs (void *v) { (void) v; }
int hv_counter = 1;
double hv_array[4];
int hv_link[8];

static void *const funcs[] = { (void *) host_plain, (void *) host_maxntid,
			       (void *) host_regs };
static void *const vars[] = {
  &hv_counter, (void *) sizeof hv_counter,
  hv_array, (void *) sizeof hv_array,
  hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
};
const char *const func_names[NFUNCS] = { "k_plain", "k_maxntid",
					 "k_regs" };
const char *const var_names[NVARS] = { "hv_counter", "hv_array",
				       "hv_link" };

/* The device side as PTX.  %s: the .target; %s: a marker global that
   tells which image was loaded.  */
static const char ptx_template[] =
  "// Written for offloadkit's cuda-harness.\n"
  ".version 7.0\n"
  ".target %s\n"
  ".address_size 64\n"
  "\n"
  ".visible .global .align 4 .u32 hv_counter = 5;\n"
  ".visible .global .align 8 .f64 hv_array[4] = { 0d3FF0000000000000,"
  " 0d4000000000000000, 0d4008000000000000, 0d4010000000000000 };\n"
  ".visible .global .align 8 .u64 hv_link;\n"
  ".visible .global .align 4 .u32 __gomp_device_num;\n"
  ".visible .global .align 8 .f64 __nvptx_clocktick;\n"
  ".visible .global .align 1 .u8 %s;\n"
  "/* A comment with braces { that must not count. */\n"
  ".visible .entry k_plain (.param .u64 %%in_ar0, .param .u64 %%in_ar1,\n"
  "                         .param .u64 %%in_ar2)\n"
  "{\n"
  "  .reg .u64 %%r<2>;\n"
  "  ret;\n"
  "}\n"
  ".visible .entry k_maxntid (.param .u64 %%in_ar0, .param .u64 %%in_ar1,"
  " .param .u64 %%in_ar2)\n"
  "  .maxntid 128, 1, 1\n"
  "{\n"
  "  ret;\n"
  "}\n"
  ".visible .entry k_regs (.param .u64 %%in_ar0, .param .u64 %%in_ar1,"
  " .param .u64 %%in_ar2)\n"
  "  .maxnreg 64\n"
  "{\n"
  "  { ret; }\n"
  "}\n";

char *
make_ptx (const char *target, const char *marker)
{
  char *s = NULL;
  if (asprintf (&s, ptx_template, target, marker) < 0)
    abort ();
  return s;
}

unsigned char *
make_cubin (int sm, bool old, const char *marker, int machine, size_t *size)
{
  int fd = memfd_create ("cubin", 0);
  if (fd < 0)
    abort ();
  elf_version (EV_CURRENT);
  Elf *elf = elf_begin (fd, ELF_C_WRITE, NULL);
  Elf64_Ehdr *eh = elf64_newehdr (elf);
  eh->e_ident[EI_DATA] = ELFDATA2LSB;
  eh->e_ident[EI_OSABI] = old ? 0x33 : 0x41;
  eh->e_ident[EI_ABIVERSION] = old ? 7 : 8;
  eh->e_type = ET_EXEC;
  eh->e_machine = machine ? machine : 190;
  eh->e_version = EV_CURRENT;
  eh->e_flags = old ? ((unsigned) sm << 16 | 0x500u | (unsigned) sm)
		    : (0x6000004u | (unsigned) sm << 8);

  /* String tables.  */
  static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.text\0"
			      ".nv.global.init\0.nv.global";
  enum { SH_SHSTRTAB = 1, SH_STRTAB = 11, SH_SYMTAB = 19, SH_TEXT = 27,
	 SH_DATA = 33, SH_RESERVED = 49 };
  char strtab[512];
  size_t strlen_ = 1;
  strtab[0] = '\0';
  const char *names[16];
  size_t name_off[16];
  int nnames = 0;
  for (int i = 0; i < NFUNCS; i++)
    names[nnames++] = func_names[i];
  names[nnames++] = "hv_counter";
  names[nnames++] = "hv_array";
  names[nnames++] = "hv_link";
  names[nnames++] = "__gomp_device_num";
  names[nnames++] = "__nvptx_clocktick";
  names[nnames++] = marker;
  for (int i = 0; i < nnames; i++)
    {
      name_off[i] = strlen_;
      size_t l = strlen (names[i]) + 1;
      memcpy (strtab + strlen_, names[i], l);
      strlen_ += l;
    }

  /* Data: hv_counter (4), hv_array (32), hv_link (8), device num (4),
     clocktick (8), marker (1).  */
  static unsigned char data[64];
  size_t off_counter = 0, off_array = 8, off_link = 40, off_devnum = 48,
    off_tick = 56, off_marker = 52;
  memset (data, 0, sizeof data);
  int five = 5;
  memcpy (data + off_counter, &five, 4);
  for (int i = 0; i < 4; i++)
    {
      double d = i + 1;
      memcpy (data + off_array + 8 * i, &d, 8);
    }

  Elf64_Sym syms[16];
  memset (syms, 0, sizeof syms);
  int nsyms = 1;
  for (int i = 0; i < NFUNCS; i++, nsyms++)
    {
      syms[nsyms].st_name = (Elf64_Word) name_off[i];
      syms[nsyms].st_info = ELF64_ST_INFO (STB_GLOBAL, STT_FUNC);
      syms[nsyms].st_other = 0x10;
      syms[nsyms].st_shndx = 4;
      syms[nsyms].st_value = 0;
      syms[nsyms].st_size = 16;
    }
  size_t offs[6] = { off_counter, off_array, off_link, off_devnum, off_tick,
		     off_marker };
  size_t sizes[6] = { 4, 32, 8, 4, 8, 1 };
  for (int i = 0; i < 6; i++, nsyms++)
    {
      syms[nsyms].st_name = (Elf64_Word) name_off[NFUNCS + i];
      syms[nsyms].st_info = ELF64_ST_INFO (STB_GLOBAL, STT_OBJECT);
      syms[nsyms].st_shndx = 5;
      syms[nsyms].st_value = offs[i];
      syms[nsyms].st_size = sizes[i];
    }

  static unsigned char text[16];
  struct { const void *buf; size_t size; Elf64_Word type, name, link, info;
	   size_t entsize, align; } secs[6] = {
    { shstr, sizeof shstr, SHT_STRTAB, SH_SHSTRTAB, 0, 0, 0, 1 },
    { strtab, strlen_, SHT_STRTAB, SH_STRTAB, 0, 0, 0, 1 },
    { syms, (size_t) nsyms * sizeof (Elf64_Sym), SHT_SYMTAB, SH_SYMTAB, 2, 1,
      sizeof (Elf64_Sym), 8 },
    { text, sizeof text, SHT_PROGBITS, SH_TEXT, 0, 0, 0, 128 },
    { data, sizeof data, SHT_PROGBITS, SH_DATA, 0, 0, 0, 8 },
    /* NVIDIA's memory reservation of uninitialised globals: no bytes in
       the file, its size set below (libelf writes no size without
       bytes).  */
    { NULL, 0, 0x70000007u, SH_RESERVED, 0, 0, 0, 8 },
  };
  for (int i = 0; i < 6; i++)
    {
      Elf_Scn *scn = elf_newscn (elf);
      Elf_Data *d = elf_newdata (scn);
      d->d_buf = (void *) secs[i].buf;
      d->d_size = secs[i].size;
      d->d_align = secs[i].align;
      d->d_type = ELF_T_BYTE;
      Elf64_Shdr *sh = elf64_getshdr (scn);
      sh->sh_type = secs[i].type;
      sh->sh_name = secs[i].name;
      sh->sh_link = secs[i].link;
      sh->sh_info = secs[i].info;
      sh->sh_entsize = secs[i].entsize;
      if (i == 3)
	sh->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
      if (i == 4)
	sh->sh_flags = SHF_ALLOC | SHF_WRITE;
    }
  eh->e_shstrndx = 1;
  if (elf_update (elf, ELF_C_WRITE) < 0)
    {
      fprintf (stderr, "cuda-harness: libelf: %s\n", elf_errmsg (-1));
      abort ();
    }
  elf_end (elf);
  struct stat st;
  fstat (fd, &st);
  unsigned char *buf = malloc ((size_t) st.st_size);
  if (buf == NULL || pread (fd, buf, (size_t) st.st_size, 0) != st.st_size)
    abort ();
  close (fd);
  /* The reservation, the last section: 1 MiB from the end of the file, as
     ptxas writes its .nv.global (which a bounds check that took it for
     contents would refuse).  */
  Elf64_Ehdr h;
  memcpy (&h, buf, sizeof h);
  Elf64_Shdr rs;
  size_t at = h.e_shoff + (size_t) (h.e_shnum - 1) * sizeof rs;
  memcpy (&rs, buf + at, sizeof rs);
  rs.sh_offset = (Elf64_Off) st.st_size;
  rs.sh_size = 1u << 20;
  rs.sh_flags = SHF_ALLOC | SHF_WRITE;
  memcpy (buf + at, &rs, sizeof rs);
  *size = (size_t) st.st_size;
  return buf;
}

const unsigned version = OK_GOMP_VERSION_PACK (1, OK_DEV_VERSION);

void
image_init (struct image *im)
{
  memset (im, 0, sizeof *im);
  im->d = (struct ok_openmp_target) {
    .host = { funcs, funcs + NFUNCS, vars, vars + 2 * NVARS },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .targets = im->t };
}

struct ok_tgt_desc *
image_add (struct image *im, unsigned format, unsigned arch,
	   const void *start, size_t size)
{
  struct ok_tgt_desc *t = &im->t[im->d.num_targets++];
  *t = (struct ok_tgt_desc) {
    .device_type = OK_GOMP_DEVICE_NVIDIA_PTX, .image_format = format,
    .arch = arch, .image_start = start,
    .image_end = (const unsigned char *) start + size,
    .num_funcs = NFUNCS, .num_vars = NVARS,
    .func_names = func_names, .var_names = var_names };
  return t;
}

struct ok_tgt_desc *
image_add_ptx (struct image *im, const char *ptx)
{
  return image_add (im, OK_IMAGE_PTX, 0, ptx, strlen (ptx) + 1);
}

struct ok_addr_pair *
load (int dev, const struct ok_openmp_target *d)
{
  return harness_load (dev, version, d, NFUNCS + NVARS + 1);
}

void
bad_load (const char *name, const void *data, unsigned ver, ...)
{
  long modules = f_outstanding ("module"), links = f_outstanding ("link");
  struct ok_addr_pair *table;
  int n;
  va_list ap;
  va_start (ap, ver);
  bool said = harness_refused_load (name, 0, ver, data, ap, &n, &table);
  va_end (ap);
  checkf (said, "%s: message", name);
  checkf (f_outstanding ("module") == modules
	  && f_outstanding ("link") == links,
	  "%s: no module or link state left", name);
  harness_undo_load (n, table, 0, ver, data);
}

bool
loaded_marker (const char *marker)
{
  return f_global (marker, NULL, NULL) != 0;
}

/* ------------------------------------------------------------------ */
/* The images of the main process.  */

struct image main_im, ptx_im;
char *ptx90, *ptx80;
unsigned char *cubin90, *cubin80;
size_t cubin90_size, cubin80_size;
struct ok_addr_pair tab0[NFUNCS + NVARS + 1];
struct ok_addr_pair tab1[NFUNCS + NVARS + 1];
bool tab1_ok;

void
build_images (void)
{
  ptx90 = make_ptx ("sm_90", "which_ptx");
  ptx80 = make_ptx ("sm_80", "which_ptx80");
  cubin90 = make_cubin (90, false, "which_sm90", 0, &cubin90_size);
  cubin80 = make_cubin (80, true, "which_sm80", 0, &cubin80_size);
  /* PTX first, then cubins: the plugin must still prefer the cubin.  */
  image_init (&main_im);
  image_add_ptx (&main_im, ptx80);
  image_add (&main_im, OK_IMAGE_CUBIN, 80, cubin80, cubin80_size);
  image_add (&main_im, OK_IMAGE_CUBIN, 90, cubin90, cubin90_size);
  image_init (&ptx_im);
  image_add (&ptx_im, OK_IMAGE_CUBIN, 80, cubin80, cubin80_size);
  image_add_ptx (&ptx_im, ptx90);
}

void
free_images (void)
{
  free (ptx90);
  free (ptx80);
  free (cubin90);
  free (cubin80);
}
