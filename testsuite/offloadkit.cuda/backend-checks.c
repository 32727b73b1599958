/* Checks of the CUDA backend that came out of a review of its code, run
   against the fake libcuda.so.1 (testsuite/fakecuda):

   - launch geometry: an OpenMP thread of GCC's nvptx runtime is a warp,
     so thread_limit N gives N warps per team (at most 32), not N / 32;
   - descriptors with a function or variable without a name are refused
     with a message, not a crash;
   - cubins whose section or program headers, or whose sections, lie
     beyond the end of the image are refused before the driver reads
     them.

   With --stub, the library given is the CUDA toolkit's stub libcuda
   (whose cuInit says CUDA_ERROR_STUB_LIBRARY): the plugin must then have
   no device and say nothing, as without a driver.

   Self-contained (it defines the GOMP_PLUGIN_* callbacks itself, and is
   linked with -rdynamic so that the plugin binds to them).  Usage:
   backend-checks [--stub] PLUGIN LIBCUDA.  Prints PASS/FAIL lines.  */

#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-abi.h"
#include "offload-desc.h"

/* ---- libgomp's side.  */

static char last_error[2048];
static int errors;

void
GOMP_PLUGIN_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (last_error, sizeof last_error, fmt, ap);
  va_end (ap);
  errors++;
}

void
GOMP_PLUGIN_debug (int kind, const char *fmt, ...)
{
  (void) kind;
  (void) fmt;
}

void
GOMP_PLUGIN_fatal (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("fatal: ", stdout);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  exit (2);
}

void *
GOMP_PLUGIN_malloc (size_t size)
{
  void *p = malloc (size ? size : 1);
  if (p == NULL)
    GOMP_PLUGIN_fatal ("out of memory");
  return p;
}

void *
GOMP_PLUGIN_malloc_cleared (size_t size)
{
  void *p = calloc (1, size ? size : 1);
  if (p == NULL)
    GOMP_PLUGIN_fatal ("out of memory");
  return p;
}

void
GOMP_PLUGIN_target_task_completion (void *data)
{
  (void) data;
}

/* libgomp's OpenACC callbacks, which the plugin links against too: this
   program runs no OpenACC.  */
void *GOMP_PLUGIN_acc_thread (void);
void *
GOMP_PLUGIN_acc_thread (void)
{
  return NULL;
}

void *GOMP_PLUGIN_goacc_thread (void);
void *
GOMP_PLUGIN_goacc_thread (void)
{
  return NULL;
}

void GOMP_PLUGIN_goacc_profiling_dispatch (void *, void *, void *);
void
GOMP_PLUGIN_goacc_profiling_dispatch (void *prof, void *event, void *api)
{
  (void) prof, (void) event, (void) api;
}

int GOMP_PLUGIN_acc_default_dim (unsigned int);
int
GOMP_PLUGIN_acc_default_dim (unsigned int i)
{
  (void) i;
  return 0;
}

/* ---- Checks.  */

static int failures;

static void
check (const char *name, bool ok)
{
  printf ("%s: %s\n", ok ? "PASS" : "FAIL", name);
  if (!ok)
    failures++;
}

static int (*p_num_devices) (void);
static bool (*p_init) (int);
static bool (*p_fini) (int);
static int (*p_load) (int, unsigned, const void *, struct ok_addr_pair **);
static bool (*p_unload) (int, unsigned, const void *);
static void *(*p_alloc) (int, size_t);
static bool (*p_free) (int, void *);
static void (*p_run) (int, void *, void *, void **);
static int (*f_launch_count) (void);
static int (*f_launch_info) (int, char *, size_t, unsigned[3], unsigned[3],
			     unsigned *, uintptr_t *, unsigned *, int *,
			     unsigned long long[3]);

static const unsigned version
  = OK_GOMP_VERSION_PACK (OK_GOMP_VERSION, OK_DEV_VERSION);

static void host_fn (void) {}
static void *const host_funcs[] = { (void *) host_fn };
static int host_var;
static void *const host_vars[] = { &host_var, (void *) sizeof host_var };

static const char ptx[] =
  ".version 7.0\n"
  ".target sm_30\n"
  ".address_size 64\n"
  ".visible .global .align 4 .u32 var1;\n"
  ".visible .entry kern (.param .u64 a, .param .u64 b, .param .u64 c)\n"
  "{\n"
  "  ret;\n"
  "}\n";

/* A descriptor of one image of FORMAT (ARCH) with IMAGE; NAME and VAR
   name the function and the variable.  */
struct image
{
  const char *func_names[1];
  const char *var_names[1];
  struct ok_tgt_desc tgt;
  struct ok_openmp_target desc;
};

static void
image_init (struct image *im, uint32_t format, uint32_t arch,
	    const void *image, size_t size, const char *name, const char *var)
{
  memset (im, 0, sizeof *im);
  im->func_names[0] = name;
  im->var_names[0] = var;
  im->tgt.device_type = OK_GOMP_DEVICE_NVIDIA_PTX;
  im->tgt.image_format = format;
  im->tgt.arch = arch;
  im->tgt.image_start = image;
  im->tgt.image_end = (const unsigned char *) image + size;
  im->tgt.num_funcs = 1;
  im->tgt.num_vars = 1;
  im->tgt.func_names = im->func_names;
  im->tgt.var_names = im->var_names;
  im->desc.host.funcs = host_funcs;
  im->desc.host.funcs_end = host_funcs + 1;
  im->desc.host.vars = host_vars;
  im->desc.host.vars_end = host_vars + 2;
  im->desc.magic = OK_DESC_MAGIC;
  im->desc.desc_version = OK_DESC_VERSION;
  im->desc.dev_version = OK_DEV_VERSION;
  im->desc.num_targets = 1;
  im->desc.targets = &im->tgt;
}

/* Loading IM fails, with one message containing WANT (and WANT2).  */
static void
bad_load (const char *name, struct image *im, const char *want,
	  const char *want2)
{
  char buf[256];
  struct ok_addr_pair *table = NULL;
  int before = errors;
  last_error[0] = '\0';
  int n = p_load (0, version, &im->desc, &table);
  snprintf (buf, sizeof buf, "%s: refused", name);
  check (buf, n == -1);
  bool said = (errors == before + 1 && strstr (last_error, want) != NULL
	       && (want2 == NULL || strstr (last_error, want2) != NULL));
  if (!said)
    printf ("  (message: %s)\n", last_error);
  snprintf (buf, sizeof buf, "%s: message", name);
  check (buf, said);
  if (n >= 0)
    p_unload (0, version, &im->desc);
}

/* A cubin for sm_90: an ELF header and one section header after it,
   changed by the caller.  */
struct cubin
{
  Elf64_Ehdr eh;
  Elf64_Shdr sh;
};

static void
cubin_init (struct cubin *c)
{
  memset (c, 0, sizeof *c);
  memcpy (c->eh.e_ident, ELFMAG, SELFMAG);
  c->eh.e_ident[EI_CLASS] = ELFCLASS64;
  c->eh.e_ident[EI_DATA] = ELFDATA2LSB;
  c->eh.e_ident[EI_VERSION] = EV_CURRENT;
  c->eh.e_type = ET_EXEC;
  c->eh.e_machine = 190;
  c->eh.e_version = EV_CURRENT;
  c->eh.e_flags = 90;
  c->eh.e_ehsize = sizeof c->eh;
  c->eh.e_shoff = offsetof (struct cubin, sh);
  c->eh.e_shentsize = sizeof c->sh;
  c->eh.e_shnum = 1;
  c->sh.sh_type = SHT_PROGBITS;
  c->sh.sh_offset = 0;
  c->sh.sh_size = sizeof *c;
}

/* Run the image's kernel with a thread_limit of LIMIT (0: none); its
   block's y extent, or 0.  */
static unsigned
warps_for (void *fn, void *tgt_vars, int limit)
{
  void *args[2] = { NULL, NULL };
  if (limit > 0)
    args[0] = (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_DEVICE_ALL
				    | OK_GOMP_TARGET_ARG_THREAD_LIMIT
				    | ((uintptr_t) limit
				       << OK_GOMP_TARGET_ARG_VALUE_SHIFT));
  int before = f_launch_count ();
  p_run (0, fn, tgt_vars, args);
  unsigned grid[3] = { 0 }, block[3] = { 0 };
  if (f_launch_count () != before + 1
      || !f_launch_info (before, NULL, 0, grid, block, NULL, NULL, NULL, NULL,
			 NULL)
      || block[0] != 32 || block[2] != 1)
    return 0;
  return block[1];
}

#define SYM(h, var, name)						\
  do									\
    {									\
      *(void **) &var = dlsym (h, name);				\
      if (var == NULL)							\
	{								\
	  printf ("FAIL: %s is missing\n", name);			\
	  return 1;							\
	}								\
    }									\
  while (0)

int
main (int argc, char **argv)
{
  bool stub = argc == 4 && strcmp (argv[1], "--stub") == 0;
  if (stub)
    argv++, argc--;
  if (argc != 3)
    {
      fprintf (stderr, "usage: %s [--stub] PLUGIN LIBCUDA\n", argv[0]);
      return 2;
    }
  /* Every line out before a crash, which is what some checks look for.  */
  setvbuf (stdout, NULL, _IOLBF, 0);
  setenv ("OFFLOADKIT_CUDA_LIBRARY", argv[2], 1);
  void *plugin = dlopen (argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL)
    {
      printf ("FAIL: cannot load the plugin: %s\n", dlerror ());
      return 1;
    }
  SYM (plugin, p_num_devices, "GOMP_OFFLOAD_get_num_devices");
  SYM (plugin, p_init, "GOMP_OFFLOAD_init_device");
  SYM (plugin, p_fini, "GOMP_OFFLOAD_fini_device");
  SYM (plugin, p_load, "GOMP_OFFLOAD_load_image");
  SYM (plugin, p_unload, "GOMP_OFFLOAD_unload_image");
  SYM (plugin, p_alloc, "GOMP_OFFLOAD_alloc");
  SYM (plugin, p_free, "GOMP_OFFLOAD_free");
  SYM (plugin, p_run, "GOMP_OFFLOAD_run");

  int ndev = p_num_devices ();
  if (stub)
    {
      check ("stub libcuda: no device", ndev == 0);
      if (errors != 0)
	printf ("  (message: %s)\n", last_error);
      check ("stub libcuda: no message", errors == 0);
      return failures != 0;
    }
  check ("the fake driver has a device", ndev >= 1);
  if (ndev < 1 || !p_init (0))
    {
      printf ("FAIL: device 0 starts (%s)\n", last_error);
      return 1;
    }
  /* The plugin has loaded the fake by now: the same handle.  */
  void *fake = dlopen (argv[2], RTLD_NOW | RTLD_NOLOAD);
  if (fake == NULL)
    {
      printf ("FAIL: the fake driver is not loaded\n");
      return 1;
    }
  SYM (fake, f_launch_count, "fakecuda_launch_count");
  SYM (fake, f_launch_info, "fakecuda_launch_info");

  /* Launch geometry.  */
  struct image im;
  image_init (&im, OK_IMAGE_PTX, 0, ptx, sizeof ptx, "kern", "var1");
  struct ok_addr_pair *table = NULL;
  int n = p_load (0, version, &im.desc, &table);
  check ("PTX image loads", n == 3);
  if (n == 3)
    {
      void *tv = p_alloc (0, 64);
      void *fn = (void *) table[0].start;
      check ("no thread_limit: 8 warps", warps_for (fn, tv, 0) == 8);
      check ("thread_limit 1: 1 warp", warps_for (fn, tv, 1) == 1);
      check ("thread_limit 4: 4 warps (a thread is a warp)",
	     warps_for (fn, tv, 4) == 4);
      check ("thread_limit 20: 20 warps", warps_for (fn, tv, 20) == 20);
      check ("thread_limit 64: capped at 32 warps",
	     warps_for (fn, tv, 64) == 32);
      p_free (0, tv);
      check ("PTX image unloads", p_unload (0, version, &im.desc));
    }
  free (table);

  /* Names.  */
  image_init (&im, OK_IMAGE_PTX, 0, ptx, sizeof ptx, NULL, "var1");
  bad_load ("function without a name", &im, "function 1 of 1", "no name");
  image_init (&im, OK_IMAGE_PTX, 0, ptx, sizeof ptx, "kern", NULL);
  bad_load ("variable without a name", &im, "variable 1 of 1", "no name");

  /* Cubins with parts outside the image.  */
  struct cubin c;
  cubin_init (&c);
  c.sh.sh_size = 4096;
  image_init (&im, OK_IMAGE_CUBIN, 90, &c, sizeof c, "kern", "var1");
  bad_load ("cubin section beyond its end", &im,
	    "cubin for sm_90 is truncated", "section 0");
  cubin_init (&c);
  c.sh.sh_offset = UINT64_MAX - 8;
  bad_load ("cubin section offset that wraps", &im, "cubin for sm_90",
	    "section 0");
  cubin_init (&c);
  c.eh.e_phoff = sizeof c;
  c.eh.e_phnum = 1;
  c.eh.e_phentsize = sizeof (Elf64_Phdr);
  bad_load ("cubin program headers beyond its end", &im,
	    "cubin for sm_90 is truncated", "program headers");
  cubin_init (&c);
  c.eh.e_shentsize = 12;
  bad_load ("cubin with odd section header size", &im, "cubin for sm_90",
	    "section headers of 12 bytes, expected 64");
  cubin_init (&c);
  c.eh.e_shnum = 2000;
  bad_load ("cubin section headers beyond its end", &im,
	    "cubin for sm_90 is truncated", "section headers");

  check ("device 0 stops", p_fini (0));
  printf ("# %d failure%s\n", failures, failures == 1 ? "" : "s");
  return failures != 0;
}
