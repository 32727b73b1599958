/* Unit tests of the CUDA backend of libgomp-plugin-nvptx.so.1, over the
   fake libcuda.so.1 (testsuite/fakecuda), without libgomp or a GPU.

   Usage: cuda-harness PLUGIN.so FAKE-LIBCUDA.so [PTXAS]

   Plays libgomp's part as plugin-harness does (this program is linked
   with -rdynamic and gets the GOMP_PLUGIN_* callbacks from
   gomp-standin.c), points OFFLOADKIT_CUDA_LIBRARY at the fake, builds
   image descriptors in memory (PTX text, small cubins made with libelf, a
   real cubin from PTXAS when given, an image in GCC's own format) and
   drives the GOMP_OFFLOAD_* entry points.  The fake records what the
   plugin asked the driver to do (launches, allocations, copies, modules)
   and counts what is still alive, which the checks read through its
   fakecuda_* functions.  Prints one "PASS: name", "FAIL: name" or
   "UNSUPPORTED: name" line per check (offloadkit.cuda/cuda.exp turns them
   into DejaGnu results) and exits with 1 if any check failed.

   Covered: the fake itself (it must refuse what the driver refuses, or
   the "no invalid driver calls" checks prove nothing); device counts and
   silence without a driver or device; CUDA devices before emulated ones;
   the image choice (exact cubin, same-major lower-minor cubin, else PTX,
   else a clear error); the address table (functions, variable addresses
   and sizes, link variables, __gomp_device_num, __nvptx_clocktick);
   images in GCC's own format; every refused image (descriptor, truncated
   PTX or cubin, wrong machine or architecture, sizes that differ, missing
   symbols, JIT failures with the JIT log); the pool, pinned staging and
   copies in three directions; launch geometry, parameters and soft
   stacks; async_run completions; several threads on two devices; failed
   launches, copies and allocations; fini_device waiting for work and
   leaving nothing behind.

   What the device reads or computes is not checked: kernels do not run.
   Checks that need a fresh plugin (device counts, other compute
   capabilities, environment) run in forked children, before the main
   process loads the plugin.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gcc-nvptx-image.h"
#include "gomp-abi.h"
#include "gomp-standin.h"
#include "harness-common.h"
#include "offload-desc.h"

extern char **environ;

static const char *plugin_path, *fake_path, *ptxas_path;

/* ------------------------------------------------------------------ */
/* The plugin and the fake.  */

static void *fake;
static int (*f_fail) (const char *);
static void (*f_gate) (int);
static long (*f_calls) (const char *);
static long (*f_outstanding) (const char *);
static int (*f_launch_count) (void);
static int (*f_launch_info) (int, char *, size_t, unsigned[3], unsigned[3],
			     unsigned *, uintptr_t *, unsigned *, int *,
			     unsigned long long[3]);
static long (*f_bad_calls) (const char **);
static int (*f_global) (const char *, uintptr_t *, size_t *);

/* Load the fake (the plugin's dlopen of the same path then gets this
   instance) and the plugin.  */
static bool
open_plugin (void)
{
  const struct harness_sym syms[] = {
    { "fakecuda_fail", &f_fail }, { "fakecuda_gate", &f_gate },
    { "fakecuda_calls", &f_calls },
    { "fakecuda_outstanding", &f_outstanding },
    { "fakecuda_launch_count", &f_launch_count },
    { "fakecuda_launch_info", &f_launch_info },
    { "fakecuda_bad_calls", &f_bad_calls },
    { "fakecuda_global", &f_global }, { NULL, NULL } };
  return harness_open ("cuda-harness", fake_path, &fake, plugin_path,
		       syms);
}

static long
bad_calls (void)
{
  const char *last;
  long n = f_bad_calls (&last);
  return n;
}

/* Check that the plugin made no call the driver refuses since BEFORE.  */
static void
check_no_bad_calls (const char *name, long before)
{
  harness_check_no_bad_calls (name, before, f_bad_calls, "driver");
}

/* Check that nothing the plugin created in the driver is left.  */
static void
check_no_leaks (const char *what)
{
  static const char *const kinds[] = { "mem", "host", "module", "stream",
				       "event", "link", "context" };
  harness_check_no_leaks (what, kinds, sizeof kinds / sizeof kinds[0],
			  f_outstanding);
}

/* ------------------------------------------------------------------ */
/* Images.  */

/* Host side: region functions (never run: kernels do not run under the
   fake) and `declare target' variables.  */
static void host_plain (void *v) { (void) v; }
static void host_maxntid (void *v) { (void) v; }
static void host_regs (void *v) { (void) v; }
static int hv_counter = 1;
static double hv_array[4];
static int hv_link[8];

static void *const funcs[] = { (void *) host_plain, (void *) host_maxntid,
			       (void *) host_regs };
static void *const vars[] = {
  &hv_counter, (void *) sizeof hv_counter,
  hv_array, (void *) sizeof hv_array,
  hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
};
#define NFUNCS 3
#define NVARS 3
static const char *const func_names[NFUNCS] = { "k_plain", "k_maxntid",
						"k_regs" };
static const char *const var_names[NVARS] = { "hv_counter", "hv_array",
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

static char *
make_ptx (const char *target, const char *marker)
{
  char *s = NULL;
  if (asprintf (&s, ptx_template, target, marker) < 0)
    abort ();
  return s;
}

/* A small cubin made with libelf: ELF64, EM_CUDA, e_flags for sm_SM in
   CUDA 13's encoding (ELF ABI version 8, arch in bits 8-15) or, with OLD,
   the earlier one (arch in bits 0-7 and 16-23).  Kernels are STT_FUNC
   symbols, variables STT_OBJECT ones in an initialised data section;
   MARKER is one more one-byte variable.  MACHINE replaces EM_CUDA when
   non-zero.  Returns the image (malloc'd) and its size.  */
static unsigned char *
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
			      ".nv.global.init";
  enum { SH_SHSTRTAB = 1, SH_STRTAB = 11, SH_SYMTAB = 19, SH_TEXT = 27,
	 SH_DATA = 33 };
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
	   size_t entsize, align; } secs[5] = {
    { shstr, sizeof shstr, SHT_STRTAB, SH_SHSTRTAB, 0, 0, 0, 1 },
    { strtab, strlen_, SHT_STRTAB, SH_STRTAB, 0, 0, 0, 1 },
    { syms, (size_t) nsyms * sizeof (Elf64_Sym), SHT_SYMTAB, SH_SYMTAB, 2, 1,
      sizeof (Elf64_Sym), 8 },
    { text, sizeof text, SHT_PROGBITS, SH_TEXT, 0, 0, 0, 128 },
    { data, sizeof data, SHT_PROGBITS, SH_DATA, 0, 0, 0, 8 },
  };
  for (int i = 0; i < 5; i++)
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
  *size = (size_t) st.st_size;
  return buf;
}

static const unsigned version = OK_GOMP_VERSION_PACK (1, OK_DEV_VERSION);

/* A descriptor with the host tables above and NT images.  */
struct image
{
  struct ok_tgt_desc t[6];
  struct ok_openmp_target d;
};

static void
image_init (struct image *im)
{
  memset (im, 0, sizeof *im);
  im->d = (struct ok_openmp_target) {
    .host = { funcs, funcs + NFUNCS, vars, vars + 2 * NVARS },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .targets = im->t };
}

/* Add an image of FORMAT for ARCH spanning [START, START + SIZE).  */
static struct ok_tgt_desc *
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

static struct ok_tgt_desc *
image_add_ptx (struct image *im, const char *ptx)
{
  return image_add (im, OK_IMAGE_PTX, 0, ptx, strlen (ptx) + 1);
}

/* Load D on device DEV; return the table (NFUNCS + NVARS + 1 entries) or
   NULL.  */
static struct ok_addr_pair *
load (int dev, const struct ok_openmp_target *d)
{
  struct ok_addr_pair *table = NULL;
  int n = p_load_image (dev, version, d, &table);
  if (n != NFUNCS + NVARS + 1)
    {
      fprintf (stderr, "  (load_image on %d returned %d: %s)\n", dev, n,
	       last_error ());
      if (n > 0)
	{
	  free (table);
	  p_unload_image (dev, version, d);
	}
      return NULL;
    }
  return table;
}

/* A load that must fail with one error containing NEEDLES (NULL-ended),
   leaving no module or link state behind.  */
static void
bad_load (const char *name, const void *data, unsigned ver, ...)
{
  long modules = f_outstanding ("module"), links = f_outstanding ("link");
  struct ok_addr_pair *table = NULL;
  int e = errors_now ();
  char buf[256];
  int n = p_load_image (0, ver, data, &table);
  snprintf (buf, sizeof buf, "%s: load_image returns -1", name);
  check (buf, n == -1);
  va_list ap;
  va_start (ap, ver);
  bool ok = verror_says (e, ap);
  va_end (ap);
  snprintf (buf, sizeof buf, "%s: message", name);
  check (buf, ok);
  snprintf (buf, sizeof buf, "%s: no module or link state left", name);
  check (buf, f_outstanding ("module") == modules
	 && f_outstanding ("link") == links);
  if (n > 0)
    {
      free (table);
      p_unload_image (0, ver, data);
    }
}

/* Whether the most recently loaded module has global MARKER.  */
static bool
loaded_marker (const char *marker)
{
  return f_global (marker, NULL, NULL) != 0;
}

/* ------------------------------------------------------------------ */
/* Children.  */

typedef void (*child_fn) (void);

/* Run FN in a child with the environment changes ENV (name, value pairs;
   a NULL value unsets; NULL-terminated).  If STDERR_EMPTY, check that
   nothing was printed on stderr.  */
static void
in_child (const char *name, const char *const *env, child_fn fn,
	  bool stderr_empty)
{
  harness_in_child (name, env, open_plugin, fn, stderr_empty);
}

static void
child_zero_silent (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

static void
child_zero_error (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("one error naming cuInit and the CUDA error",
	 error_says (0, "cuInit", "CUDA_ERROR_UNKNOWN", NULL));
}

static void
child_missing_symbols (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("one error naming a missing function",
	 error_says (0, "cu", NULL));
}

static void
child_cuda_and_emulated (void)
{
  check ("3 devices (2 CUDA, then 1 emulated)", p_get_num_devices () == 3);
  check ("no error", errors_now () == 0);
  check ("init all", p_init_device (0) && p_init_device (1)
	 && p_init_device (2));
  check ("two primary contexts retained", f_outstanding ("context") == 2);
  /* Device 2 is the emulated one: its memory is not the driver's.  */
  long mem = f_calls ("cuMemAlloc_v2");
  void *p = p_alloc (2, 1 << 20);
  check ("emulated device memory does not come from the driver",
	 p != NULL && f_calls ("cuMemAlloc_v2") == mem);
  p_free (2, p);
  void *q = p_alloc (1, 1 << 20);
  check ("device 1 memory comes from the driver",
	 q != NULL && f_calls ("cuMemAlloc_v2") == mem + 1);
  p_free (1, q);
  check ("fini all", p_fini_device (0) && p_fini_device (1)
	 && p_fini_device (2));
  check_no_leaks ("after fini");
}

/* Images of cubins for several architectures and, optionally, PTX.  */
static void
child_pick (int device_sm, const int *archs, int narchs, bool with_ptx,
	    const char *expect_marker, const char *what)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  unsigned char *cubins[6];
  char *ptx = NULL;
  for (int i = 0; i < narchs; i++)
    {
      char marker[32];
      size_t size;
      snprintf (marker, sizeof marker, "which_sm%d", archs[i]);
      /* Alternate the e_flags encodings.  */
      cubins[i] = make_cubin (archs[i], i % 2 == 1, marker, 0, &size);
      image_add (&im, OK_IMAGE_CUBIN, (unsigned) archs[i], cubins[i], size);
    }
  if (with_ptx)
    {
      char target[16];
      snprintf (target, sizeof target, "sm_%d", device_sm);
      ptx = make_ptx (target, "which_ptx");
      image_add_ptx (&im, ptx);
    }
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, &im.d);
  char buf[128];
  snprintf (buf, sizeof buf, "%s: loads", what);
  check (buf, t != NULL);
  snprintf (buf, sizeof buf, "%s: picked %s", what, expect_marker);
  check (buf, t != NULL && loaded_marker (expect_marker));
  if (strcmp (expect_marker, "which_ptx") == 0)
    {
      snprintf (buf, sizeof buf, "%s: PTX was JIT-linked", what);
      check (buf, f_calls ("cuLinkComplete") > links);
    }
  else
    {
      snprintf (buf, sizeof buf, "%s: cubin loaded without the JIT linker",
		what);
      check (buf, f_calls ("cuLinkComplete") == links);
    }
  free (t);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  for (int i = 0; i < narchs; i++)
    free (cubins[i]);
  free (ptx);
}

static void
child_sm86 (void)
{
  static const int archs[] = { 80, 86, 90 };
  child_pick (86, archs, 3, true, "which_sm86", "exact sm_86 cubin");
}

static void
child_sm87 (void)
{
  static const int archs[] = { 80, 86, 90 };
  child_pick (87, archs, 3, true, "which_sm86",
	      "sm_87 device: highest lower-minor cubin");
}

static void
child_sm89_ptx (void)
{
  static const int archs[] = { 90, 75 };
  child_pick (89, archs, 2, true, "which_ptx",
	      "sm_89 device, cubins of other majors: PTX");
}

static void
child_sm90_no_match (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  size_t s1, s2;
  unsigned char *c80 = make_cubin (80, false, "which_sm80", 0, &s1);
  unsigned char *c100 = make_cubin (100, false, "which_sm100", 0, &s2);
  image_add (&im, OK_IMAGE_CUBIN, 80, c80, s1);
  image_add (&im, OK_IMAGE_CUBIN, 100, c100, s2);
  bad_load ("no usable cubin and no PTX", &im.d, version, "sm_90", "sm_80",
	    "sm_100", "PTX", NULL);
  /* The pool's first chunk cannot be allocated.  */
  f_fail ("cuMemAlloc_v2");
  int e = errors_now ();
  check ("small allocation without memory: NULL", p_alloc (0, 100) == NULL);
  check ("small allocation without memory: message",
	 error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", NULL));
  f_fail (NULL);
  void *p = p_alloc (0, 100);
  check ("small allocation works again", p != NULL && p_free (0, p));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  free (c80);
  free (c100);
}


/* Two malformed settings and two devices: each setting is reported once,
   whichever device reads it first.  */
static void
child_bad_sizes (void)
{
  check ("2 devices", p_get_num_devices () == 2);
  int e = errors_now ();
  check ("init both", p_init_device (0) && p_init_device (1));
  /* The pool setting is read first, the staging one last.  */
  check ("two errors, the last naming the staging setting",
	 error_says (e + 1, "OFFLOADKIT_CUDA_STAGING_MAX=\"1MB\"", NULL));
  check ("fini", p_fini_device (0) && p_fini_device (1));
  check_no_leaks ("after fini");
}

/* OFFLOADKIT_CUDA_POOL_MAX=0, OFFLOADKIT_CUDA_STAGING_MAX=0 and a device
   of 8 MiB.  */
static void
child_no_pool (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  long allocs = f_calls ("cuMemAlloc_v2");
  void *p[4];
  for (int i = 0; i < 4; i++)
    p[i] = p_alloc (0, 64);
  check ("pool off: one driver allocation per request",
	 f_calls ("cuMemAlloc_v2") == allocs + 4
	 && f_outstanding ("mem") == 4);
  int v = 42, back = 0;
  long hd = f_calls ("cuMemcpyHtoD_v2"), dh = f_calls ("cuMemcpyDtoH_v2");
  check ("staging off: small copies straight to the driver",
	 p_host2dev (0, p[0], &v, sizeof v) && p_dev2host (0, &back, p[0],
							     sizeof back)
	 && back == 42 && f_calls ("cuMemcpyHtoD_v2") == hd + 1
	 && f_calls ("cuMemcpyDtoH_v2") == dh + 1
	 && f_calls ("cuMemcpyHtoDAsync_v2") == 0);
  check ("staging off: no pinned memory", f_outstanding ("host") == 0);
  for (int i = 0; i < 4; i++)
    p_free (0, p[i]);
  check ("pool off: frees go to the driver", f_outstanding ("mem") == 0);
  int e = errors_now ();
  check ("16 MiB on an 8 MiB device: NULL", p_alloc (0, 16 << 20) == NULL);
  check ("16 MiB on an 8 MiB device: message",
	 error_says (e, "16777216", "CUDA_ERROR_OUT_OF_MEMORY", NULL));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}


/* FAKECUDA_FAIL=cuDevicePrimaryCtxRetain: the device cannot start.  */
static void
child_no_context (void)
{
  check ("1 device", p_get_num_devices () == 1);
  int e = errors_now ();
  check ("init fails", !p_init_device (0));
  check ("init: message",
	 error_says (e, "cuDevicePrimaryCtxRetain", "CUDA_ERROR_", NULL));
  check_no_leaks ("after the failed init");
}

/* FAKECUDA_FAIL=cuMemHostAlloc: no pinned staging; copies still work.  */
static void
child_no_pinned (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  int e = errors_now ();
  char buf[1000], back[1000];
  for (int i = 0; i < 1000; i++)
    buf[i] = (char) i;
  void *p = p_alloc (0, sizeof buf);
  check ("small copies without pinned memory",
	 p != NULL && p_host2dev (0, p, buf, sizeof buf)
	 && p_dev2host (0, back, p, sizeof back)
	 && memcmp (buf, back, sizeof buf) == 0);
  check ("no error for the missing staging buffer", errors_now () == e);
  p_free (0, p);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* cuStreamCreate fails when a staging slot first needs its stream: the
   slot is given up (its pinned buffer freed) and copies go directly,
   without trying again at every copy.  */
static void
child_no_staging_stream (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  char buf[1000], back[1000];
  for (int i = 0; i < 1000; i++)
    buf[i] = (char) (i * 3);
  void *p = p_alloc (0, sizeof buf);
  int e = errors_now ();
  long creates = f_calls ("cuStreamCreate");
  f_fail ("cuStreamCreate");
  bool ok = p != NULL;
  for (int i = 0; ok && i < 8; i++)
    ok = (p_host2dev (0, p, buf, sizeof buf)
	  && p_dev2host (0, back, p, sizeof back)
	  && memcmp (buf, back, sizeof buf) == 0);
  f_fail (NULL);
  check ("no staging stream: small copies still work", ok);
  check ("no staging stream: no error", errors_now () == e);
  /* One thread takes the same slot every time.  */
  check ("no staging stream: cuStreamCreate tried once",
	 f_calls ("cuStreamCreate") == creates + 1);
  check ("no staging stream: its pinned buffer freed",
	 f_outstanding ("host") == 0);
  p_free (0, p);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* FAKECUDA_FAIL=cuStreamCreate: a launch has no stream.  */
static void
child_no_stream (void)
{
  check ("1 device", p_get_num_devices () == 1);
  if (!p_init_device (0))
    {
      /* Refusing the device is fine too, if it says why.  */
      check ("init refused: message", strstr (last_error (), "cuStreamCreate")
	     != NULL);
      check_no_leaks ("after the failed init");
      return;
    }
  struct image im;
  image_init (&im);
  char *ptx = make_ptx ("sm_90", "which_ptx");
  image_add_ptx (&im, ptx);
  struct ok_addr_pair *t = load (0, &im.d);
  check ("load", t != NULL);
  if (t != NULL)
    {
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) t[0].start, NULL, NULL));
      check ("run without a stream: fatal", fatal);
      check ("run without a stream: message",
	     error_says (e, "cuStreamCreate", "device 0", NULL));
    }
  free (t);
  free (ptx);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* A real cubin from ptxas, for the device's architecture.  */
static void
child_real_cubin (void)
{
  char dir[] = "/tmp/cuda-harness-ptxas-XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      check ("temporary directory", false);
      return;
    }
  char ptxfile[300], cubinfile[300];
  snprintf (ptxfile, sizeof ptxfile, "%s/k.ptx", dir);
  snprintf (cubinfile, sizeof cubinfile, "%s/k.cubin", dir);
  char *ptx = make_ptx ("sm_80", "which_real");
  FILE *f = fopen (ptxfile, "w");
  fputs (ptx, f);
  fclose (f);
  free (ptx);
  char *argv[] = { (char *) ptxas_path, (char *) "-arch=sm_80",
		   (char *) "-o", cubinfile, ptxfile, NULL };
  pid_t pid;
  int status = -1;
  if (posix_spawn (&pid, ptxas_path, NULL, NULL, argv, environ) == 0)
    waitpid (pid, &status, 0);
  check ("ptxas made a cubin", status == 0);
  FILE *cf = fopen (cubinfile, "rb");
  unsigned char *cubin = NULL;
  long size = 0;
  if (cf != NULL)
    {
      fseek (cf, 0, SEEK_END);
      size = ftell (cf);
      rewind (cf);
      cubin = malloc ((size_t) size);
      if (fread (cubin, 1, (size_t) size, cf) != (size_t) size)
	size = 0;
      fclose (cf);
    }
  unlink (ptxfile);
  unlink (cubinfile);
  rmdir (dir);
  if (size == 0)
    {
      free (cubin);
      return;
    }
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  struct image im;
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 80, cubin, (size_t) size);
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, &im.d);
  check ("real sm_80 cubin loads", t != NULL && loaded_marker ("which_real"));
  check ("real cubin: not JIT-linked", f_calls ("cuLinkComplete") == links);
  if (t != NULL)
    {
      int v = 0;
      p_dev2host (0, &v, (void *) t[NFUNCS].start, sizeof v);
      check ("real cubin: initial value of a variable", v == 5);
      check ("real cubin: variable sizes",
	     t[NFUNCS].end - t[NFUNCS].start == 4
	     && t[NFUNCS + 1].end - t[NFUNCS + 1].start == 32);
    }
  free (t);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
  free (cubin);
}


/* ------------------------------------------------------------------ */
/* The fake itself, driven directly (no plugin): the checks above rely on
   it refusing what the real driver refuses.  */

typedef int (*cu_fn) ();

static cu_fn
cu (const char *name)
{
  cu_fn f;
  *(void **) &f = dlsym (fake, name);
  if (f == NULL)
    {
      fprintf (stderr, "cuda-harness: the fake lacks %s\n", name);
      abort ();
    }
  return f;
}

static void
host_fn_calls_driver (void *arg)
{
  int *result = arg;
  int n;
  *result = cu ("cuDeviceGetCount") (&n);
}

static void
child_fake_selftest (void)
{
  enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3,
	 INVALID_IMAGE = 200, INVALID_CONTEXT = 201, NO_BINARY = 209,
	 INVALID_PTX = 218, NOT_FOUND = 500, NOT_READY = 600,
	 NOT_PERMITTED = 800 };
  int n = -1;
  check ("calls before cuInit refused",
	 cu ("cuDeviceGetCount") (&n) == NOT_INITIALIZED);
  check ("cuInit", cu ("cuInit") (0) == OK);
  check ("one device", cu ("cuDeviceGetCount") (&n) == OK && n == 1);
  unsigned long long d = 0;
  long bad = bad_calls ();
  check ("no context: cuMemAlloc refused",
	 cu ("cuMemAlloc_v2") (&d, (size_t) 100) == INVALID_CONTEXT);
  check ("refusal counted as an invalid call", bad_calls () == bad + 1);
  void *ctx = NULL;
  check ("retain and set the primary context",
	 cu ("cuDevicePrimaryCtxRetain") (&ctx, 0) == OK
	 && cu ("cuCtxSetCurrent") (ctx) == OK);
  check ("cuMemAlloc", cu ("cuMemAlloc_v2") (&d, (size_t) 100) == OK
	 && d % 256 == 0);
  char buf[200] = "0123456789";
  check ("copy inside the block",
	 cu ("cuMemcpyHtoD_v2") (d, buf, (size_t) 100) == OK);
  check ("copy one byte past the block refused",
	 cu ("cuMemcpyHtoD_v2") (d + 1, buf, (size_t) 100) == INVALID_VALUE);
  check ("copy from host memory as device memory refused",
	 cu ("cuMemcpyDtoH_v2") (buf, (unsigned long long) (uintptr_t) buf,
				 (size_t) 10) == INVALID_VALUE);
  check ("cuMemFree", cu ("cuMemFree_v2") (d) == OK);
  check ("copy to freed memory refused",
	 cu ("cuMemcpyHtoD_v2") (d, buf, (size_t) 1) == INVALID_VALUE);
  check ("double free refused", cu ("cuMemFree_v2") (d) == INVALID_VALUE);

  f_fail ("cuMemAlloc@2");
  unsigned long long d1 = 0, d2 = 0, d3 = 0;
  check ("FAKECUDA_FAIL=cuMemAlloc@2: only the second call fails",
	 cu ("cuMemAlloc_v2") (&d1, (size_t) 8) == OK
	 && cu ("cuMemAlloc_v2") (&d2, (size_t) 8) == OUT_OF_MEMORY
	 && cu ("cuMemAlloc_v2") (&d3, (size_t) 8) == OK);
  f_fail (NULL);
  cu ("cuMemFree_v2") (d1);
  cu ("cuMemFree_v2") (d3);

  /* PTX.  */
  void *mod = NULL;
  char *ptx = make_ptx ("sm_80", "which_self");
  check ("PTX module loads", cu ("cuModuleLoadData") (&mod, ptx) == OK);
  void *fn = NULL;
  int v = 0;
  check ("kernel found", cu ("cuModuleGetFunction") (&fn, mod, "k_maxntid")
	 == OK);
  check (".maxntid read", cu ("cuFuncGetAttribute") (&v, 0, fn) == OK
	 && v == 128);
  check (".maxnreg read", cu ("cuModuleGetFunction") (&fn, mod, "k_regs")
	 == OK && cu ("cuFuncGetAttribute") (&v, 4, fn) == OK && v == 64);
  check ("unknown kernel: CUDA_ERROR_NOT_FOUND",
	 cu ("cuModuleGetFunction") (&fn, mod, "k_none") == NOT_FOUND);
  size_t size = 0;
  unsigned long long g = 0;
  check ("global and its size",
	 cu ("cuModuleGetGlobal_v2") (&g, &size, mod, "hv_array") == OK
	 && size == 32);
  double arr[4] = { 0 };
  cu ("cuMemcpyDtoH_v2") (arr, g, sizeof arr);
  check ("global initialised from 0d constants", arr[0] == 1 && arr[3] == 4);

  /* A launch: GCC's three parameters, stacks checked.  */
  unsigned long long stacks = 0, tv = 0;
  cu ("cuMemAlloc_v2") (&stacks, (size_t) 2 * 8 * 4096);
  cu ("cuModuleGetFunction") (&fn, mod, "k_plain");
  unsigned long long pv[3] = { 0, stacks, 4096 };
  void *params[3] = { &pv[0], &pv[1], &pv[2] };
  void *stream = NULL;
  cu ("cuStreamCreate") (&stream, 1u);
  int launches = f_launch_count ();
  check ("launch with enough stack",
	 cu ("cuLaunchKernel") (fn, 2u, 1u, 1u, 32u, 8u, 1u, 0u, stream,
				params, NULL) == OK
	 && f_launch_count () == launches + 1);
  check ("launch with too little stack refused",
	 cu ("cuLaunchKernel") (fn, 3u, 1u, 1u, 32u, 8u, 1u, 0u, stream,
				params, NULL) == INVALID_VALUE);
  pv[0] = (unsigned long long) (uintptr_t) buf;
  check ("launch with host memory as tgt_vars refused",
	 cu ("cuLaunchKernel") (fn, 2u, 1u, 1u, 32u, 8u, 1u, 0u, stream,
				params, NULL) == INVALID_VALUE);
  pv[0] = tv;
  check ("block beyond .maxntid refused",
	 cu ("cuModuleGetFunction") (&fn, mod, "k_maxntid") == OK
	 && cu ("cuLaunchKernel") (fn, 1u, 1u, 1u, 32u, 8u, 1u, 0u, stream,
				   params, NULL) != OK);

  /* The gate holds launches back.  */
  cu ("cuModuleGetFunction") (&fn, mod, "k_plain");
  f_gate (1);
  cu ("cuLaunchKernel") (fn, 1u, 1u, 1u, 32u, 8u, 1u, 0u, stream, params,
			 NULL);
  check ("gate closed: stream not ready",
	 cu ("cuStreamQuery") (stream) == NOT_READY);
  int in_host_fn = -1;
  cu ("cuLaunchHostFunc") (stream, host_fn_calls_driver, &in_host_fn);
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  check ("gate closed: host function waits", in_host_fn == -1);
  f_gate (0);
  check ("gate open: stream synchronises",
	 cu ("cuStreamSynchronize") (stream) == OK
	 && cu ("cuStreamQuery") (stream) == OK);
  check ("driver call inside a host function refused",
	 in_host_fn == NOT_PERMITTED);
  cu ("cuStreamDestroy_v2") (stream);
  cu ("cuMemFree_v2") (stacks);
  check ("module unload", cu ("cuModuleUnload") (mod) == OK);
  check ("unloaded module's global gone",
	 cu ("cuMemcpyDtoH_v2") (arr, g, (size_t) 8) == INVALID_VALUE);

  char *bad_ptx[3] = { strdup (ptx), strdup (ptx), make_ptx ("sm_100", "x") };
  *strrchr (bad_ptx[0], '}') = ' ';
  memcpy (strstr (bad_ptx[1], ".version"), "//ersion", 8);
  const char *bad_what[3] = { "unbalanced braces", "no .version",
			      ".target sm_100" };
  for (int i = 0; i < 3; i++)
    {
      char name[128];
      snprintf (name, sizeof name, "PTX with %s: CUDA_ERROR_INVALID_PTX",
		bad_what[i]);
      check (name, cu ("cuModuleLoadData") (&mod, bad_ptx[i]) == INVALID_PTX);
      free (bad_ptx[i]);
    }
  /* The JIT's error log.  */
  char errlog[256] = "";
  int opts[2] = { 5, 6 };
  void *vals[2] = { errlog, (void *) (uintptr_t) sizeof errlog };
  void *link = NULL;
  char *unbal = strdup (ptx);
  *strrchr (unbal, '}') = ' ';
  check ("JIT: bad PTX refused by cuLinkAddData",
	 cu ("cuLinkCreate_v2") (2u, opts, vals, &link) == OK
	 && cu ("cuLinkAddData_v2") (link, 1, unbal, strlen (unbal) + 1, "m",
				     0u, NULL, NULL) == INVALID_PTX);
  check ("JIT: error log says fake ptxas",
	 strstr (errlog, "fake ptxas") != NULL);
  cu ("cuLinkDestroy") (link);
  free (unbal);
  free (ptx);

  /* Cubins: both e_flags encodings, wrong arch, wrong machine.  */
  size_t cs;
  unsigned char *c;
  c = make_cubin (90, false, "m", 0, &cs);
  check ("cubin sm_90 (ABI 8 e_flags) loads",
	 cu ("cuModuleLoadData") (&mod, c) == OK
	 && cu ("cuModuleUnload") (mod) == OK);
  free (c);
  c = make_cubin (90, true, "m", 0, &cs);
  check ("cubin sm_90 (old e_flags) loads",
	 cu ("cuModuleLoadData") (&mod, c) == OK
	 && cu ("cuModuleUnload") (mod) == OK);
  free (c);
  c = make_cubin (80, true, "m", 0, &cs);
  check ("cubin sm_80 on sm_90: CUDA_ERROR_NO_BINARY_FOR_GPU",
	 cu ("cuModuleLoadData") (&mod, c) == NO_BINARY);
  free (c);
  c = make_cubin (90, false, "m", 62, &cs);
  check ("ELF for x86-64: CUDA_ERROR_INVALID_IMAGE",
	 cu ("cuModuleLoadData") (&mod, c) == INVALID_IMAGE);
  free (c);

  check ("release the context",
	 cu ("cuDevicePrimaryCtxRelease_v2") (0) == OK);
  check ("nothing left", f_outstanding ("mem") == 0
	 && f_outstanding ("module") == 0 && f_outstanding ("stream") == 0
	 && f_outstanding ("link") == 0 && f_outstanding ("context") == 0);

  /* FAKECUDA_CHECK_LEAKS: a process that leaks fails at exit.  */
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      setenv ("FAKECUDA_CHECK_LEAKS", "1", 1);
      int fd = open ("/dev/null", O_WRONLY);
      dup2 (fd, 2);
      cu ("cuDevicePrimaryCtxRetain") (&ctx, 0);
      cu ("cuCtxSetCurrent") (ctx);
      cu ("cuMemAlloc_v2") (&d, (size_t) 64);
      exit (0);
    }
  int status = 0;
  waitpid (pid, &status, 0);
  check ("FAKECUDA_CHECK_LEAKS=1: a leak fails the exit",
	 WIFEXITED (status) && WEXITSTATUS (status) == 97);

  /* Unload the fake (the plugin never loaded it here): its callback
     thread ends.  */
  check ("fake unloads", dlclose (fake) == 0);
  fake = NULL;
}

/* ------------------------------------------------------------------ */
/* Tests in the main process: 2 devices of sm_90, 4 SMs each.  */

static struct image main_im, ptx_im;
static char *ptx90, *ptx80;
static unsigned char *cubin90, *cubin80;
static size_t cubin90_size, cubin80_size;
/* The main image's entries on device 0.  */
static struct ok_addr_pair tab0[NFUNCS + NVARS + 1];
static const struct ok_addr_pair *const var0 = tab0 + NFUNCS;
/* The same on device 1.  */
static struct ok_addr_pair tab1[NFUNCS + NVARS + 1];
static bool tab1_ok;

static void
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

static bool
entry_size (const struct ok_addr_pair *e, size_t size)
{
  return e->start != 0 && e->end - e->start == size;
}

static void
test_load (void)
{
  long bad = bad_calls ();
  long links = f_calls ("cuLinkComplete");
  struct ok_addr_pair *t = load (0, &main_im.d);
  check ("cubin image: load", t != NULL);
  if (t == NULL)
    return;
  memcpy (tab0, t, sizeof tab0);
  free (t);
  check ("cubin image: sm_90 cubin chosen", loaded_marker ("which_sm90"));
  check ("cubin image: no JIT link", f_calls ("cuLinkComplete") == links);
  bool funcs_ok = true;
  for (int i = 0; i < NFUNCS; i++)
    {
      funcs_ok &= tab0[i].start != 0 && tab0[i].end == tab0[i].start + 1;
      for (int j = 0; j < i; j++)
	funcs_ok &= tab0[i].start != tab0[j].start;
    }
  check ("function entries distinct, END = START + 1", funcs_ok);
  uintptr_t a = 0;
  size_t s = 0;
  f_global ("hv_counter", &a, &s);
  check ("int variable: the module's global, host size",
	 var0[0].start == a && entry_size (&var0[0], sizeof hv_counter));
  f_global ("hv_array", &a, &s);
  check ("array variable: the module's global, host size",
	 var0[1].start == a && entry_size (&var0[1], sizeof hv_array));
  f_global ("hv_link", &a, &s);
  check ("link variable: the module's pointer",
	 var0[2].start == a && entry_size (&var0[2], sizeof (void *)));
  f_global ("__gomp_device_num", &a, &s);
  check ("device-num entry: __gomp_device_num",
	 var0[3].start == a && entry_size (&var0[3], sizeof (int)));
  int v = 0;
  check ("variable readable", p_dev2host (0, &v, (void *) var0[0].start,
					 sizeof v));
  check ("variable: the image's initial value", v == 5);
  double arr[4] = { 0 };
  p_dev2host (0, arr, (void *) var0[1].start, sizeof arr);
  check ("array: the image's initial values", arr[0] == 1 && arr[3] == 4);
  check ("host variables untouched", hv_counter == 1 && hv_array[0] == 0);
  f_global ("__nvptx_clocktick", &a, &s);
  double tick = 0;
  if (a != 0)
    memcpy (&tick, (void *) a, sizeof tick);
  check ("__nvptx_clocktick = 1e-3 / clock rate in kHz",
	 tick > 0.99e-3 / 1500000 && tick < 1.01e-3 / 1500000);
  int devnum = 0;
  check ("device-num entry writable",
	 p_host2dev (0, (void *) var0[3].start, &devnum, sizeof devnum));
  check_no_bad_calls ("load: no invalid driver calls", bad);

  /* The same image on device 1, then PTX on device 1.  */
  t = load (1, &main_im.d);
  check ("device 1: load", t != NULL);
  check ("device 1: its own variables", t != NULL
	 && t[NFUNCS].start != var0[0].start);
  if (t != NULL)
    {
      memcpy (tab1, t, sizeof tab1);
      tab1_ok = true;
    }
  free (t);
  links = f_calls ("cuLinkComplete");
  long modules = f_outstanding ("module");
  t = load (1, &ptx_im.d);
  check ("PTX image (cubin only for sm_80): load", t != NULL);
  check ("PTX image: JIT-linked", f_calls ("cuLinkComplete") == links + 1
	 && loaded_marker ("which_ptx"));
  check ("PTX image: link state destroyed", f_outstanding ("link") == 0);
  check ("PTX image: one more module", f_outstanding ("module")
	 == modules + 1);
  if (t != NULL)
    {
      v = 0;
      p_dev2host (1, &v, (void *) t[NFUNCS].start, sizeof v);
      check ("PTX image: initial value", v == 5);
      check ("PTX image: link variable is a pointer",
	     entry_size (&t[NFUNCS + 2], sizeof (void *)));
    }
  free (t);
  check ("PTX image: unload", p_unload_image (1, version, &ptx_im.d));

  /* An image without __gomp_device_num or __nvptx_clocktick.  */
  char *bare = strdup (ptx90);
  memcpy (strstr (bare, ".visible .global .align 4 .u32 __gomp_device_num"),
	  "//", 2);
  memcpy (strstr (bare, ".visible .global .align 8 .f64 __nvptx_clocktick"),
	  "//", 2);
  struct image bim;
  image_init (&bim);
  image_add_ptx (&bim, bare);
  t = load (1, &bim.d);
  check ("image without __gomp_device_num: loads", t != NULL);
  check ("image without __gomp_device_num: entry {0, 0}",
	 t != NULL && t[NFUNCS + NVARS].start == 0
	 && t[NFUNCS + NVARS].end == 0);
  free (t);
  check ("image without __gomp_device_num: unload",
	 p_unload_image (1, version, &bim.d));
  free (bare);
  check ("PTX image: module unloaded", f_outstanding ("module") == modules);
  check_no_bad_calls ("device 1 loads: no invalid driver calls", bad);
}

/* The image in GCC's own format (device version 1), as GCC 12's nvptx
   mkoffload emits it (layout: gcc-nvptx-image.h, which the end-to-end
   tests in offloadkit.cuda check against a program GCC built).  */
static void
test_gcc_image (void)
{
  const unsigned gver = OK_GOMP_VERSION_PACK (1, OK_GCC_DEV_VERSION_NVPTX);
  char *ptx = make_ptx ("sm_80", "which_gcc");
  struct ok_gcc_ptx_obj objs[1] = { { ptx, strlen (ptx) + 1 } };
  static const char *const gvars[] = { "hv_counter", "hv_array" };
  static const struct ok_gcc_fn_launch fns[] = {
    { "k_plain", { 0, 0, 0 } }, { "k_regs", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, gvars, 2, fns, 2 };
  long bad = bad_calls ();
  struct ok_addr_pair *t = NULL;
  int n = p_load_image (0, gver, &g, &t);
  check ("GCC-format image: fn_num + var_num + 1 entries", n == 5);
  if (n == 5)
    {
      check ("GCC-format image: JIT-linked", loaded_marker ("which_gcc"));
      check ("GCC-format image: functions",
	     t[0].start != 0 && t[1].start != 0 && t[0].start != t[1].start);
      uintptr_t a = 0;
      f_global ("hv_array", &a, NULL);
      check ("GCC-format image: variable address and size",
	     t[3].start == a && entry_size (&t[3], 32));
      f_global ("__gomp_device_num", &a, NULL);
      check ("GCC-format image: device-num entry",
	     t[4].start == a && entry_size (&t[4], 4));
      /* A launch of its kernel.  */
      int before = f_launch_count ();
      p_run (0, (void *) t[1].start, NULL, NULL);
      char name[64] = "";
      f_launch_info (before, name, sizeof name, NULL, NULL, NULL, NULL, NULL,
		     NULL, NULL);
      check ("GCC-format image: run launches its kernel",
	     f_launch_count () == before + 1 && strcmp (name, "k_regs") == 0);
      free (t);
      check ("GCC-format image: unload", p_unload_image (0, gver, &g));
    }
  check_no_bad_calls ("GCC-format image: no invalid driver calls", bad);

  struct ok_gcc_nvptx_data b = g;
  b.ptx_num = 0;
  bad_load ("GCC-format image without PTX", &b, gver, "PTX", NULL);
  b = g;
  b.ptx_objs = NULL;
  bad_load ("GCC-format image with NULL PTX table", &b, gver, "PTX", NULL);
  struct ok_gcc_ptx_obj cut[1] = { { ptx, 40 } };
  b = g;
  b.ptx_objs = cut;
  bad_load ("GCC-format image, PTX not NUL-terminated", &b, gver, "PTX",
	    NULL);
  /* Bytes after the NUL: not what GCC's mkoffload makes (the size is
     sizeof the string), and the driver would be given them.  */
  size_t plen = strlen (ptx);
  char *tail = malloc (plen + 8);
  memcpy (tail, ptx, plen + 1);
  memcpy (tail + plen + 1, "garbage", 7);
  struct ok_gcc_ptx_obj trailing[1] = { { tail, plen + 8 } };
  b = g;
  b.ptx_objs = trailing;
  bad_load ("GCC-format image, bytes after the PTX's NUL", &b, gver,
	    "PTX module 1 of 1", "NUL-terminated", NULL);
  free (tail);
  struct ok_gcc_fn_launch missing[] = { { "k_nowhere", { 0, 0, 0 } } };
  b = g;
  b.fn_descs = missing;
  b.fn_num = 1;
  bad_load ("GCC-format image naming a missing kernel", &b, gver,
	    "k_nowhere", NULL);
  free (ptx);
}

static void
test_bad_images (void)
{
  struct image im;
  struct ok_openmp_target d;

  d = main_im.d;
  d.magic = 0x12345678;
  bad_load ("bad magic", &d, version, "0x54494b4f", "0x12345678", NULL);
  d = main_im.d;
  d.desc_version = 7;
  bad_load ("bad descriptor version", &d, version, "version 7", NULL);
  bad_load ("newer libgomp version", &main_im.d,
	    OK_GOMP_VERSION_PACK (2, OK_DEV_VERSION), "version 2", NULL);
  image_init (&im);
  image_add_ptx (&im, ptx90)->device_type = OK_GOMP_DEVICE_GCN;
  bad_load ("wrong device type", &im.d, version, "device type", NULL);

  /* PTX cut short: no NUL inside the image.  */
  image_init (&im);
  image_add (&im, OK_IMAGE_PTX, 0, ptx90, strlen (ptx90) / 2);
  bad_load ("truncated PTX", &im.d, version, "PTX", NULL);

  /* PTX without .version: refused before or by the JIT.  */
  char *nover = strdup (ptx90);
  memcpy (strstr (nover, ".version"), "//ersion", 8);
  image_init (&im);
  image_add_ptx (&im, nover);
  bad_load ("PTX without .version", &im.d, version, ".version", NULL);

  /* Unbalanced braces: only the JIT sees it; its log is in the message.  */
  char *unbal = strdup (ptx90);
  *strrchr (unbal, '}') = ' ';
  image_init (&im);
  image_add_ptx (&im, unbal);
  bad_load ("PTX the JIT refuses", &im.d, version, "CUDA_ERROR_INVALID_PTX",
	    "fake ptxas", "unbalanced", NULL);

  char *ptx100 = make_ptx ("sm_100", "which_100");
  image_init (&im);
  image_add_ptx (&im, ptx100);
  bad_load ("PTX for a newer sm", &im.d, version, "sm_100", "sm_90", NULL);

  /* Cubins.  */
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, 1000 < cubin90_size
	     ? cubin90_size - 100 : 40);
  bad_load ("truncated cubin", &im.d, version, "truncated", NULL);

  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, 30);
  bad_load ("cubin shorter than an ELF header", &im.d, version, "cubin",
	    NULL);

  /* Header fields a loader indexes by: refused before the driver sees
     the cubin.  */
  {
    unsigned char *odd = malloc (cubin90_size);
    memcpy (odd, cubin90, cubin90_size);
    Elf64_Ehdr eh;
    memcpy (&eh, odd, sizeof eh);
    eh.e_shstrndx = eh.e_shnum + 3;
    memcpy (odd, &eh, sizeof eh);
    long loads = f_calls ("cuModuleLoadData");
    image_init (&im);
    image_add (&im, OK_IMAGE_CUBIN, 90, odd, cubin90_size);
    bad_load ("cubin whose e_shstrndx is out of range", &im.d, version,
	      "cubin for sm_90", "section name table", NULL);
    memcpy (&eh, cubin90, sizeof eh);
    eh.e_shnum = 0;
    memcpy (odd, &eh, sizeof eh);
    bad_load ("cubin with extended section numbering", &im.d, version,
	      "cubin for sm_90", "extended section numbering", NULL);
    check ("bad cubin headers: the driver never saw them",
	   f_calls ("cuModuleLoadData") == loads);
    free (odd);
  }

  size_t wsize;
  unsigned char *wrong = make_cubin (90, false, "which_x", 62, &wsize);
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, wrong, wsize);
  bad_load ("cubin with e_machine 62", &im.d, version, "190", "62", NULL);
  free (wrong);

  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 80, cubin80, cubin80_size);
  bad_load ("only a cubin for sm_80", &im.d, version, "sm_90", "sm_80",
	    NULL);

  /* The descriptor says sm_90, the cubin's e_flags say sm_100: the driver
     refuses it.  */
  size_t lsize;
  unsigned char *lie = make_cubin (100, false, "which_lie", 0, &lsize);
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, lie, lsize);
  bad_load ("cubin whose ELF is for sm_100", &im.d, version,
	    "CUDA_ERROR_NO_BINARY_FOR_GPU", "cuModuleLoadData", NULL);
  free (lie);

  /* Variable sizes: the host says 8 bytes, the device has 4.  */
  static void *const vars_bad[] = {
    &hv_counter, (void *) 8,
    hv_array, (void *) sizeof hv_array,
    hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
  };
  image_init (&im);
  im.d.host.vars = vars_bad;
  im.d.host.vars_end = vars_bad + 2 * NVARS;
  image_add_ptx (&im, ptx90);
  bad_load ("variable size differs", &im.d, version, "hv_counter", "8", "4",
	    NULL);

  /* A link variable whose device object is not a pointer.  */
  static const char *const var_names_bad[NVARS] = { "hv_counter",
						    "hv_link", "hv_array" };
  static void *const vars_link[] = {
    &hv_counter, (void *) sizeof hv_counter,
    hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
    hv_array, (void *) (sizeof hv_array | OK_GOMP_LINK_BIT),
  };
  image_init (&im);
  im.d.host.vars = vars_link;
  im.d.host.vars_end = vars_link + 2 * NVARS;
  image_add_ptx (&im, ptx90)->var_names = var_names_bad;
  bad_load ("link variable of 32 bytes on the device", &im.d, version,
	    "hv_array", "32", "8", NULL);

  static const char *const fn_missing[NFUNCS] = { "k_plain", "k_gone",
						  "k_regs" };
  image_init (&im);
  image_add_ptx (&im, ptx90)->func_names = fn_missing;
  bad_load ("missing kernel", &im.d, version, "k_gone", NULL);

  static const char *const var_missing[NVARS] = { "hv_counter", "hv_gone",
						  "hv_link" };
  image_init (&im);
  image_add_ptx (&im, ptx90)->var_names = var_missing;
  bad_load ("missing variable", &im.d, version, "hv_gone", NULL);

  /* The JIT linker fails.  */
  f_fail ("cuLinkComplete");
  image_init (&im);
  image_add_ptx (&im, ptx90);
  bad_load ("failed JIT link", &im.d, version, "cuLinkComplete",
	    "CUDA_ERROR_INVALID_PTX", "fake ptxas: injected failure", NULL);
  f_fail ("cuLinkAddData_v2");
  bad_load ("failed JIT input", &im.d, version, "cuLinkAddData",
	    "fake ptxas: injected failure", NULL);
  f_fail ("cuModuleLoadData");
  bad_load ("failed module load", &im.d, version, "cuModuleLoadData",
	    "CUDA_ERROR_INVALID_PTX", NULL);
  f_fail ("cuModuleGetGlobal_v2@2=500");
  bad_load ("variable lookup fails", &im.d, version, "CUDA_ERROR_NOT_FOUND",
	    NULL);
  /* The lookups: the NVARS variables, __gomp_device_num, then the clock
     tick, whose failure (other than its absence) fails the load.  */
  f_fail ("cuModuleGetGlobal_v2@5=1");
  bad_load ("clock tick lookup fails", &im.d, version, "__nvptx_clocktick",
	    "CUDA_ERROR_INVALID_VALUE", NULL);
  f_fail (NULL);

  free (nover);
  free (unbal);
  free (ptx100);
}

static void
test_memory (void)
{
  long bad = bad_calls ();
  long allocs = f_calls ("cuMemAlloc_v2");
  void *small[20];
  bool ok = true;
  for (int i = 0; i < 20; i++)
    {
      small[i] = p_alloc (0, 100 + (size_t) i * 1000);
      ok &= small[i] != NULL;
      for (int j = 0; j < i; j++)
	ok &= small[i] != small[j];
    }
  check ("20 small allocations", ok);
  check ("small allocations pooled (at most one driver allocation)",
	 f_calls ("cuMemAlloc_v2") - allocs <= 1);
  void *z1 = p_alloc (0, 0), *z2 = p_alloc (0, 0);
  check ("alloc (0): unique pointers", z1 != NULL && z2 != NULL && z1 != z2);
  check ("free (alloc (0))", p_free (0, z1) && p_free (0, z2));
  for (int i = 0; i < 20; i++)
    ok &= p_free (0, small[i]);
  check ("free small allocations", ok);

  allocs = f_calls ("cuMemAlloc_v2");
  long live = f_outstanding ("mem");
  size_t big_size = 3 << 20;
  unsigned char *big = p_alloc (0, big_size);
  check ("big allocation", big != NULL);
  check ("big allocation: one driver allocation",
	 f_calls ("cuMemAlloc_v2") == allocs + 1
	 && f_outstanding ("mem") == live + 1);

  /* Copies, staged (small) and direct (big), in three directions.  */
  unsigned char *buf = malloc (big_size), *back = malloc (big_size);
  for (size_t i = 0; i < big_size; i++)
    buf[i] = (unsigned char) (i * 7 + 3);
  unsigned char *dev = p_alloc (0, 4096);
  long hd_async = f_calls ("cuMemcpyHtoDAsync_v2");
  check ("host2dev small", p_host2dev (0, dev, buf, 4096));
  check ("small host2dev went through the pinned staging buffer",
	 f_calls ("cuMemcpyHtoDAsync_v2") > hd_async);
  memset (back, 0, 4096);
  check ("dev2host small", p_dev2host (0, back, dev, 4096));
  check ("small round trip", memcmp (buf, back, 4096) == 0);
  check ("pinned staging memory exists", f_outstanding ("host") > 0);
  long hd = f_calls ("cuMemcpyHtoD_v2"), dh = f_calls ("cuMemcpyDtoH_v2");
  check ("host2dev big", p_host2dev (0, big, buf, big_size));
  memset (back, 0, big_size);
  check ("dev2host big", p_dev2host (0, back, big, big_size));
  check ("big round trip", memcmp (buf, back, big_size) == 0);
  check ("big copies go straight to the driver",
	 f_calls ("cuMemcpyHtoD_v2") == hd + 1
	 && f_calls ("cuMemcpyDtoH_v2") == dh + 1);
  check ("dev2dev", p_dev2dev (0, dev, big + 1000, 4000));
  memset (back, 0, 4000);
  p_dev2host (0, back, dev, 4000);
  check ("dev2dev contents", memcmp (back, buf + 1000, 4000) == 0);
  check ("zero-byte copy", p_host2dev (0, dev, buf, 0));
  check_no_bad_calls ("memory: no invalid driver calls", bad);

  /* Copies the driver refuses.  */
  /* (A copy past the end of a pooled block stays inside the pool's chunk,
     which the driver cannot tell.)  */
  int e = errors_now ();
  int local[64];
  check ("copy to host memory fails", !p_host2dev (0, local, buf, 200));
  check ("copy to host memory: message",
	 error_says (e, "200", "CUDA_ERROR_INVALID_VALUE", NULL));
  e = errors_now ();
  check ("big copy past the end fails",
	 !p_dev2host (0, back, big + 4096, big_size));
  check ("big copy past the end: message names the direction and bytes",
	 error_says (e, "3145728", NULL));

  /* Failures injected.  */
  f_fail ("cuMemcpyHtoD_v2=700");
  e = errors_now ();
  check ("failed copy returns false", !p_host2dev (0, big, buf, big_size));
  check ("failed copy: message",
	 error_says (e, "CUDA_ERROR_ILLEGAL_ADDRESS", "3145728", NULL));
  f_fail ("cuMemcpyDtoHAsync_v2=700,cuMemcpyDtoH_v2=700");
  e = errors_now ();
  check ("failed staged copy returns false", !p_dev2host (0, back, dev, 64));
  check ("failed staged copy: message",
	 error_says (e, "CUDA_ERROR_ILLEGAL_ADDRESS", "64", NULL));
  f_fail ("cuMemcpyDtoD_v2=1,cuMemcpyDtoDAsync_v2=1");
  e = errors_now ();
  check ("failed dev2dev returns false", !p_dev2dev (0, dev, big, 64));
  check ("failed dev2dev: message",
	 error_says (e, "CUDA_ERROR_INVALID_VALUE", NULL));
  f_fail ("cuMemAlloc_v2");
  e = errors_now ();
  check ("out of memory: NULL", p_alloc (0, 5 << 20) == NULL);
  check ("out of memory: message",
	 error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", "5242880", NULL));
  f_fail (NULL);
  check ("copies work again", p_host2dev (0, dev, buf, 64)
	 && p_host2dev (0, big, buf, big_size));

  e = errors_now ();
  check ("free of an unknown pointer fails", !p_free (0, local));
  check ("free of an unknown pointer: message", error_says (e, "free", NULL));
  /* (The failed allocation may have made the plugin give cached stacks
     back: count from here.)  */
  live = f_outstanding ("mem");
  check ("free big", p_free (0, big));
  check ("big block returned to the driver",
	 f_outstanding ("mem") == live - 1);
  check ("free small", p_free (0, dev));
  free (buf);
  free (back);
}

/* Launch I's record.  */
struct launch
{
  char name[128];
  unsigned grid[3], block[3], shmem;
  uintptr_t stream;
  unsigned stream_flags;
  int device;
  unsigned long long params[3];
};

static bool
get_launch (int i, struct launch *l)
{
  memset (l, 0, sizeof *l);
  return f_launch_info (i, l->name, sizeof l->name, l->grid, l->block,
			&l->shmem, &l->stream, &l->stream_flags, &l->device,
			l->params) != 0;
}

/* Run kernel K on DEV with ARGS; return the launch record.  */
static bool
run_one (int dev, int k, void *tgt_vars, void **args, struct launch *l)
{
  int before = f_launch_count ();
  void *fn = (void *) (dev == 0 ? tab0[k].start : 0);
  p_run (dev, fn, tgt_vars, args);
  return f_launch_count () == before + 1 && get_launch (before, l);
}

static bool
dims_are (const struct launch *l, unsigned gx, unsigned bx, unsigned by)
{
  bool ok = l->grid[0] == gx && l->grid[1] == 1 && l->grid[2] == 1
	    && l->block[0] == bx && l->block[1] == by && l->block[2] == 1;
  if (!ok)
    fprintf (stderr, "  (grid %u,%u,%u block %u,%u,%u; expected %u,1,1"
	     " %u,%u,1)\n", l->grid[0], l->grid[1], l->grid[2], l->block[0],
	     l->block[1], l->block[2], gx, bx, by);
  return ok;
}

#define ARG_TEAMS(n) \
  (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_NUM_TEAMS \
			| ((uintptr_t) (n) << OK_GOMP_TARGET_ARG_VALUE_SHIFT))
#define ARG_LIMIT(n) \
  (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_THREAD_LIMIT \
			| ((uintptr_t) (n) << OK_GOMP_TARGET_ARG_VALUE_SHIFT))

static void
test_launch (void)
{
  long bad = bad_calls ();
  void **tv = p_alloc (0, 4 * sizeof (void *));
  struct launch l;

  /* The fake: 4 SMs of 65536 registers; kernels use 32 registers unless
     .maxnreg says otherwise, and 1024 threads unless .maxntid does.  */
  check ("run, no arguments: one launch", run_one (0, 0, tv, NULL, &l));
  check ("launch: the kernel's name", strcmp (l.name, "k_plain") == 0);
  check ("launch: default 8 warps, 65536 / (32 * 32 * 8) * 4 SMs = 32 teams",
	 dims_are (&l, 32, 32, 8));
  check ("launch: tgt_vars passed through",
	 l.params[0] == (uintptr_t) tv);
  check ("launch: 128 KiB stack per warp", l.params[2] == 128 * 1024);
  check ("launch: stacks are device memory", l.params[1] != 0);
  check ("launch: on a stream of its own, not the legacy default stream",
	 l.stream != 0 && l.stream != 1 && l.stream != 2);
  check ("launch: non-blocking stream", (l.stream_flags & 1) != 0);
  check ("launch: device 0", l.device == 0);
  check ("launch: no dynamic shared memory", l.shmem == 0);

  long allocs = f_calls ("cuMemAlloc_v2");
  unsigned long long stacks = l.params[1];
  check ("run again", run_one (0, 0, tv, NULL, &l));
  check ("stacks reused: no new allocation",
	 f_calls ("cuMemAlloc_v2") == allocs && l.params[1] == stacks);

  void *a1[] = { ARG_TEAMS (4), NULL };
  check ("num_teams 4", run_one (0, 0, tv, a1, &l) && dims_are (&l, 4, 32, 8));
  /* GCC's nvptx runtime runs one OpenMP thread per warp: thread_limit
     counts warps.  */
  void *a2[] = { ARG_LIMIT (6), NULL };
  check ("thread_limit 6: block (32, 6, 1)",
	 run_one (0, 0, tv, a2, &l) && l.block[0] == 32 && l.block[1] == 6
	 && l.block[2] == 1);
  void *a2b[] = { ARG_LIMIT (1), NULL };
  check ("thread_limit 1: one warp",
	 run_one (0, 0, tv, a2b, &l) && l.block[0] == 32 && l.block[1] == 1);
  void *a3[] = { ARG_TEAMS (3), ARG_LIMIT (20), NULL };
  check ("num_teams 3, thread_limit 20: grid 3, 20 warps",
	 run_one (0, 0, tv, a3, &l) && dims_are (&l, 3, 32, 20));
  void *a4[] = { ARG_TEAMS (2), ARG_LIMIT (4096), NULL };
  check ("thread_limit 4096: capped at 32 warps",
	 run_one (0, 0, tv, a4, &l) && dims_are (&l, 2, 32, 32));
  /* Kernel attributes come from PTX directives (the fake's cubins have
     none).  */
  struct ok_addr_pair *pt = load (0, &ptx_im.d);
  check ("PTX image on device 0", pt != NULL);
  if (pt != NULL)
    {
      void *a5[] = { ARG_TEAMS (2), NULL };
      int before = f_launch_count ();
      p_run (0, (void *) pt[1].start, tv, a5);
      check ("kernel with .maxntid 128: 4 warps",
	     get_launch (before, &l) && dims_are (&l, 2, 32, 4)
	     && strcmp (l.name, "k_maxntid") == 0);
      p_run (0, (void *) pt[2].start, tv, NULL);
      check ("kernel with .maxnreg 64: 65536 / (64 * 32 * 8) * 4 = 16 teams",
	     get_launch (before + 1, &l) && dims_are (&l, 16, 32, 8));
      free (pt);
      check ("PTX image on device 0: unload",
	     p_unload_image (0, version, &ptx_im.d));
    }
  void *a7[] = { ARG_TEAMS (5000), NULL };
  check ("num_teams 5000: capped at the 32 teams the device holds",
	 run_one (0, 0, tv, a7, &l) && dims_are (&l, 32, 32, 8));
  check ("run with NULL tgt_vars", run_one (0, 0, NULL, NULL, &l)
	 && l.params[0] == 0);
  check_no_bad_calls ("launches: no invalid driver calls", bad);

  /* Failures.  */
  const char *const fails[][2] = {
    { "cuLaunchKernel", "cuLaunchKernel" },
    { "cuStreamSynchronize", "cuStreamSynchronize" },
  };
  for (int i = 0; i < 2; i++)
    {
      f_fail (fails[i][0]);
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) tab0[0].start, tv, NULL));
      f_fail (NULL);
      char name[128];
      snprintf (name, sizeof name, "failed %s: the run is fatal",
		fails[i][0]);
      check (name, fatal);
      snprintf (name, sizeof name, "failed %s: message", fails[i][0]);
      check (name, error_says (e, "k_plain", "device 0", fails[i][1],
			       "CUDA_ERROR_LAUNCH_FAILED", NULL));
    }
  /* A trap in the kernel (abort, assert, Fortran STOP) shows only as
     CUDA_ERROR_LAUNCH_FAILED at the synchronisation: say what it may be.  */
  {
    f_fail ("cuStreamSynchronize");
    int e = errors_now ();
    volatile bool fatal;
    STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) tab0[0].start, tv, NULL));
    f_fail (NULL);
    check ("kernel failure: the message suggests abort",
	   fatal && error_says (e, "k_plain", "CUDA_ERROR_LAUNCH_FAILED",
				"perhaps abort was called", NULL));
  }
  check ("runs work after failed launches", run_one (0, 0, tv, NULL, &l));

  /* async_run whose launch fails: nothing started, no completion.  */
  {
    f_fail ("cuLaunchKernel");
    int e = errors_now (), c = completions_now (), token;
    volatile bool fatal;
    STANDIN_CATCH_FATAL (fatal, p_async_run (0, (void *) tab0[0].start, tv,
					     NULL, &token));
    f_fail (NULL);
    check ("failed async launch: fatal", fatal);
    check ("failed async launch: message",
	   error_says (e, "k_plain", "cuLaunchKernel",
		       "CUDA_ERROR_LAUNCH_FAILED", NULL));
    struct timespec pause = { 0, 100 * 1000 * 1000 };
    nanosleep (&pause, NULL);
    check ("failed async launch: no completion", completions_now () == c);
  }

  /* Stacks cannot be allocated: on device 1, which has none cached
     yet.  */
  if (tab1_ok)
    {
      f_fail ("cuMemAlloc_v2");
      int e = errors_now ();
      volatile bool fatal;
      STANDIN_CATCH_FATAL (fatal, p_run (1, (void *) tab1[0].start, NULL,
						 NULL));
      f_fail (NULL);
      check ("stacks out of memory: fatal", fatal);
      check ("stacks out of memory: message",
	     error_says (e, "CUDA_ERROR_OUT_OF_MEMORY", "k_plain", NULL));
      int before = f_launch_count ();
      p_run (1, (void *) tab1[0].start, NULL, NULL);
      check ("runs work after it", f_launch_count () == before + 1);
    }
  p_free (0, tv);
}

static void
test_async (void)
{
  long bad = bad_calls ();
  int token1, token2;
  completions_reset ();
  int before = f_launch_count ();
  p_async_run (0, (void *) tab0[0].start, NULL, NULL, &token1);
  wait_completions (1, 10);
  check ("async_run: completion called", completions_now () == 1);
  check ("async_run: with its async_data", last_completion () == &token1);
  check ("async_run: completion from another thread",
	 !pthread_equal (completion_thread (), pthread_self ()));
  check ("async_run: one launch", f_launch_count () == before + 1);

  /* While the kernel is held back, the completion must wait.  */
  f_gate (1);
  completions_reset ();
  void *a[] = { ARG_TEAMS (2), NULL };
  p_async_run (0, (void *) tab0[0].start, NULL, a, &token1);
  p_async_run (0, (void *) tab0[2].start, NULL, NULL, &token2);
  struct timespec pause = { 0, 300 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  check ("async_run: no completion before the kernels finish",
	 completions_now () == 0);
  /* A synchronous copy on another stream is not held up by them.  */
  void *p = p_alloc (0, 64);
  int v = 3;
  check ("copy while kernels run", p != NULL && p_host2dev (0, p, &v,
							   sizeof v));
  f_gate (0);
  wait_completions (2, 10);
  check ("async_run: both completions after the kernels finish",
	 completions_now () == 2);
  p_free (0, p);
  check_no_bad_calls ("async: no invalid driver calls", bad);
}

/* Several host threads launching at once, on both devices.  */
static void
test_threads (void)
{
  long bad = bad_calls ();
  const struct ok_addr_pair *t1 = tab1;
  if (!tab1_ok)
    {
      check ("threads: image on device 1", false);
      return;
    }
  int before = f_launch_count ();
  void *fns[6];
  for (int i = 0; i < 6; i++)
    fns[i] = (void *) (i % 2 == 0 ? tab0 : t1)[i % 3].start;
  harness_hammer_threads (fns);
  check ("threads: 240 launches", f_launch_count () == before + 240);
  bool devs_ok = true;
  int on1 = 0;
  for (int i = before; i < before + 240; i++)
    {
      struct launch l;
      get_launch (i, &l);
      on1 += l.device == 1;
      devs_ok &= l.stream > 2;
    }
  check ("threads: half the launches on device 1 (its context)", on1 == 120);
  check ("threads: every launch on a stream of its own", devs_ok);
  check_no_bad_calls ("threads: no invalid driver calls", bad);
}

int
main (int argc, char **argv)
{
  if (argc < 3 || argc > 4)
    {
      fprintf (stderr, "usage: %s PLUGIN.so FAKE-LIBCUDA.so [PTXAS]\n",
	       argv[0]);
      return 2;
    }
  plugin_path = argv[1];
  fake_path = argv[2];
  ptxas_path = argc == 4 ? argv[3] : NULL;
  standin_init ("cuda-harness");
  standin_verbose = getenv ("HARNESS_VERBOSE") != NULL;
  setenv ("OFFLOADKIT_CUDA_LIBRARY", fake_path, 1);
  unsetenv ("OFFLOADKIT_EMULATE");
  unsetenv ("FAKECUDA_FAIL");
  unsetenv ("FAKECUDA_CHECK_LEAKS");
  unsetenv ("FAKECUDA_LOG");
  /* Settings the checks assume: the defaults.  */
  static const char *const defaults[] = {
    "FAKECUDA_DEVICES", "FAKECUDA_SM", "FAKECUDA_SMS", "FAKECUDA_MEM",
    "OFFLOADKIT_CUDA_POOL_MAX", "OFFLOADKIT_CUDA_STAGING_MAX",
    "OFFLOADKIT_INFO", "OFFLOADKIT_PROFILE", "GOMP_DEBUG" };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    unsetenv (defaults[i]);

  /* A library without the driver's functions: libelf, which this program
     uses anyway.  */
  Dl_info info;
  const char *libelf = NULL;
  if (dladdr ((void *) elf_version, &info) != 0 && info.dli_fname != NULL)
    libelf = info.dli_fname;

  {
    const char *const env[] = { "FAKECUDA_SM", "90", NULL };
    in_child ("fake libcuda self-test", env, child_fake_selftest, true);
  }
  {
    const char *const env[] = { "FAKECUDA_DEVICES", "0", NULL };
    in_child ("FAKECUDA_DEVICES=0", env, child_zero_silent, true);
  }
  {
    const char *const env[] = { "OFFLOADKIT_CUDA_LIBRARY",
				"/nonexistent/libcuda.so.1", NULL };
    in_child ("missing OFFLOADKIT_CUDA_LIBRARY", env, child_zero_silent,
	      true);
  }
  if (libelf != NULL)
    {
      const char *const env[] = { "OFFLOADKIT_CUDA_LIBRARY", libelf, NULL };
      in_child ("library without CUDA functions", env, child_missing_symbols,
		false);
    }
  {
    const char *const env[] = { "FAKECUDA_FAIL", "cuInit=999", NULL };
    in_child ("cuInit fails", env, child_zero_error, false);
  }
  {
    const char *const env[] = { "FAKECUDA_DEVICES", "2", "OFFLOADKIT_EMULATE",
				"1", NULL };
    in_child ("2 CUDA + 1 emulated", env, child_cuda_and_emulated, true);
  }
  {
    const char *const env[] = { "FAKECUDA_SM", "86", NULL };
    in_child ("sm_86", env, child_sm86, true);
  }
  {
    const char *const env[] = { "FAKECUDA_SM", "87", NULL };
    in_child ("sm_87", env, child_sm87, true);
  }
  {
    const char *const env[] = { "FAKECUDA_SM", "89", NULL };
    in_child ("sm_89", env, child_sm89_ptx, true);
  }
  {
    const char *const env[] = { "FAKECUDA_SM", "90", NULL };
    in_child ("sm_90, no usable image", env, child_sm90_no_match, true);
  }
  {
    const char *const env[] = { "OFFLOADKIT_CUDA_POOL_MAX", "0",
				"OFFLOADKIT_CUDA_STAGING_MAX", "0",
				"FAKECUDA_MEM", "8388608", NULL };
    in_child ("no pool, no staging, 8 MiB", env, child_no_pool, true);
  }
  {
    const char *const env[] = { "OFFLOADKIT_CUDA_POOL_MAX", "64k",
				"OFFLOADKIT_CUDA_STAGING_MAX", "1MB",
				"FAKECUDA_DEVICES", "2", NULL };
    in_child ("malformed sizes", env, child_bad_sizes, false);
  }
  {
    const char *const env[] = { "FAKECUDA_FAIL", "cuDevicePrimaryCtxRetain",
				NULL };
    in_child ("no primary context", env, child_no_context, true);
  }
  {
    const char *const env[] = { "FAKECUDA_FAIL", "cuMemHostAlloc", NULL };
    in_child ("no pinned memory", env, child_no_pinned, true);
  }
  {
    const char *const env[] = { "FAKECUDA_FAIL", "cuStreamCreate", NULL };
    in_child ("no streams", env, child_no_stream, true);
  }
  {
    const char *const env[] = { "FAKECUDA_DEVICES", "1", NULL };
    in_child ("no staging stream", env, child_no_staging_stream, true);
  }
  if (ptxas_path != NULL && access (ptxas_path, X_OK) == 0)
    {
      const char *const env[] = { "FAKECUDA_SM", "86", NULL };
      in_child ("real cubin", env, child_real_cubin, true);
    }
  else
    unsupported ("real cubin from ptxas (no ptxas)");

  setenv ("FAKECUDA_DEVICES", "2", 1);
  setenv ("FAKECUDA_SM", "90", 1);
  if (!open_plugin ())
    return 2;
  check ("two CUDA devices", p_get_num_devices () == 2);
  check ("no error", errors_now () == 0);
  check ("init devices", p_init_device (0) && p_init_device (1));
  check ("a primary context per device", f_outstanding ("context") == 2);
  build_images ();
  test_load ();
  test_bad_images ();
  test_gcc_image ();
  test_memory ();
  test_launch ();
  test_async ();
  test_threads ();

  /* fini_device waits for a kernel still running.  */
  harness_check_fini_waits ((void *) tab0[0].start, f_gate);
  check ("fini device 1", p_fini_device (1));
  check_no_leaks ("after fini");
  check ("init again", p_init_device (0));
  struct ok_addr_pair *t = load (0, &main_im.d);
  check ("load again", t != NULL);
  free (t);
  check ("fini again", p_fini_device (0));
  check_no_leaks ("after the second fini");

  standin_close_plugin ();
  free (ptx90);
  free (ptx80);
  free (cubin90);
  free (cubin80);
  return check_summary ();
}
