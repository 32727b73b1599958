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

   main (cuda-harness.c) walks a table of areas, each in a file of its
   own but the start and end of the main process's session:
     cuda-harness-selftest.c  the fake itself: it must refuse what the
			      driver refuses, or the "no invalid driver
			      calls" checks prove nothing
     cuda-harness-devices.c   device counts and silence without a driver
			      or device, CUDA devices before emulated ones,
			      malformed settings, no context
     cuda-harness-pick.c      the image choice: exact cubin, same-major
			      lower-minor cubin, else PTX, else a clear
			      error; a real cubin from ptxas
     cuda-harness-load.c      the address table (functions, variable
			      addresses and sizes, link variables,
			      __gomp_device_num, __nvptx_clocktick); images
			      in GCC's own format
     cuda-harness-bad-images.c  every refused image (descriptor,
			      truncated PTX or cubin, wrong machine or
			      architecture, sizes that differ, missing
			      symbols, JIT failures with the JIT log)
     cuda-harness-memory.c    the pool, pinned staging and copies in three
			      directions; failed copies and allocations
     cuda-harness-launch.c    launch geometry, parameters and soft stacks;
			      failed launches
     cuda-harness-async.c     async_run completions; several threads on two
			      devices
     cuda-harness-openacc.c   OpenACC: launch geometry (the compiler's,
			      libgomp's and chosen dimensions, with and
			      without the driver's occupancy advice), GCC's
			      resource checks, queues, callbacks, frees
			      inside them, properties, CUDA handles; the
			      argument block of libgomp 12 and of 14; a
			      driver before CUDA 10 (the fake's
			      libcuda-old.so.1)
     cuda-harness-devcode.c   what GCC 13-16's device code expects: the
			      map of indirect functions in both forms,
			      reverse-offload requests served during run
			      and async_run under libgomp 13 and 14,
			      constructors and destructors
   and cuda-harness-images.c builds the images they load.  Checks that
   need a fresh plugin (device counts, other compute capabilities,
   environment) run in forked children, before the main process loads
   the plugin; the last area finalises the devices, which must wait for
   work and leave nothing behind.

   What the device reads or computes is not checked: kernels do not
   run (but the fake can make one ask for a reverse-offload region).  */

#ifndef OFFLOADKIT_CUDA_HARNESS_H
#define OFFLOADKIT_CUDA_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desc-check.h"
#include "gomp-abi.h"
#include "gomp-standin.h"
#include "harness-common.h"
#include "offload-desc.h"

/* -rdynamic exports the program's globals: these stay out of the dynamic
   symbol table, where the plugin could bind to them.  */
#pragma GCC visibility push(hidden)

extern const char *ptxas_path;

/* The fake's own queries (fakecuda_*).  */
extern int (*f_launch_count) (void);
extern int (*f_launch_info) (int, char *, size_t, unsigned[3], unsigned[3],
			     unsigned *, uintptr_t *, unsigned *, int *,
			     unsigned long long[3]);
extern int (*f_global) (const char *, uintptr_t *, size_t *);
extern int (*f_rev_request) (const char *, const unsigned long long[5], int);
extern long (*f_rev_served) (void);
extern unsigned long long (*f_symbol_address) (const char *);

/* ---- Images (cuda-harness-images.c).  */

/* The host side: NFUNCS region functions (never run: kernels do not run
   under the fake) and NVARS `declare target' variables, named by
   FUNC_NAMES and VAR_NAMES.  */
#define NFUNCS 3
#define NVARS 3
extern int hv_counter;
extern double hv_array[4];
extern int hv_link[8];
extern const char *const func_names[NFUNCS];
extern const char *const var_names[NVARS];

/* The version libgomp registers our images with.  */
extern const unsigned version;

/* The device side as PTX for TARGET ("sm_90"), with one more one-byte
   global MARKER that tells which image was loaded (malloc'd).  */
char *make_ptx (const char *target, const char *marker);

/* A small cubin made with libelf: ELF64, EM_CUDA, e_flags for sm_SM in
   CUDA 13's encoding (ELF ABI version 8, arch in bits 8-15) or, with OLD,
   the earlier one (arch in bits 0-7 and 16-23).  Kernels are STT_FUNC
   symbols, variables STT_OBJECT ones in an initialised data section;
   MARKER is one more one-byte variable.  MACHINE replaces EM_CUDA when
   non-zero.  Returns the image (malloc'd) and its size.  */
unsigned char *make_cubin (int sm, bool old, const char *marker, int machine,
			   size_t *size);

/* A descriptor with the host tables above and its images.  */
struct image
{
  struct ok_tgt_desc t[6];
  struct ok_openmp_target d;
};

void image_init (struct image *im);
/* Add an image of FORMAT for ARCH spanning [START, START + SIZE).  */
struct ok_tgt_desc *image_add (struct image *im, unsigned format,
			       unsigned arch, const void *start, size_t size);
struct ok_tgt_desc *image_add_ptx (struct image *im, const char *ptx);

/* Load D on device DEV; the table (NFUNCS + NVARS + 1 entries) or
   NULL.  */
struct ok_addr_pair *load (int dev, const struct ok_openmp_target *d);

/* A load on device 0 that must fail with one error containing the
   NULL-ended needles after VER, leaving no module or link state
   behind.  */
void bad_load (const char *name, const void *data, unsigned ver, ...);

/* Whether the most recently loaded module has global MARKER.  */
bool loaded_marker (const char *marker);

/* The images of the main process (2 devices of sm_90, 4 SMs each): MAIN_IM
   has PTX for sm_80 and cubins for sm_80 and sm_90, PTX_IM a cubin for
   sm_80 and PTX for sm_90.  */
extern struct image main_im, ptx_im;
extern char *ptx90, *ptx80;
extern unsigned char *cubin90, *cubin80;
extern size_t cubin90_size, cubin80_size;
void build_images (void);
void free_images (void);

/* MAIN_IM's table on device 0, and on device 1 when TAB1_OK.  */
extern struct ok_addr_pair tab0[NFUNCS + NVARS + 1];
extern struct ok_addr_pair tab1[NFUNCS + NVARS + 1];
extern bool tab1_ok;

/* ---- Launch records (cuda-harness-launch.c).  */

struct launch
{
  char name[128];
  unsigned grid[3], block[3], shmem;
  uintptr_t stream;
  unsigned stream_flags;
  int device;
  unsigned long long params[3];
};

/* Launch I's record; false if there is none.  */
bool get_launch (int i, struct launch *l);

/* ---- The areas, in the order main walks them.  */

void child_fake_selftest (void);	/* cuda-harness-selftest.c */
void child_zero_silent (void);		/* cuda-harness-devices.c */
void child_missing_symbols (void);
void child_zero_error (void);
void child_cuda_and_emulated (void);
void child_sm86 (void);			/* cuda-harness-pick.c */
void child_sm87 (void);
void child_sm89_ptx (void);
void child_sm86_v2 (void);
void child_sm89_ptx_v2 (void);
void child_sm90_no_match (void);
void child_no_pool (void);		/* cuda-harness-memory.c */
void child_bad_sizes (void);		/* cuda-harness-devices.c */
void child_no_context (void);
void child_driver_gone (void);
void child_no_pinned (void);		/* cuda-harness-memory.c */
void child_no_stream (void);		/* cuda-harness-launch.c */
void child_no_staging_stream (void);	/* cuda-harness-memory.c */
void child_real_cubin (void);		/* cuda-harness-pick.c */
void test_load (void);			/* cuda-harness-load.c */
void test_bad_images (void);		/* cuda-harness-bad-images.c */
void test_gcc_image (void);		/* cuda-harness-load.c */
void child_libgomp14 (void);		/* cuda-harness-load.c */
void child_devcode13 (void);		/* cuda-harness-devcode.c */
void child_devcode14 (void);
void test_cdtors (void);
void test_memory (void);		/* cuda-harness-memory.c */
void test_memset_rect (void);		/* cuda-harness-memory.c */
void test_entries (void);		/* cuda-harness-entries.c */
void test_interop (void);		/* cuda-harness-interop.c */
void child_interop_emulated (void);
void child_usm_all (void);		/* cuda-harness-usm.c */
void child_self_maps_one_short (void);
void child_usm_libgomp14 (void);
void child_usm_emulated (void);
void child_no_usm (void);
void test_launch (void);		/* cuda-harness-launch.c */
void test_async (void);			/* cuda-harness-async.c */
void test_threads (void);
void test_openacc (void);		/* cuda-harness-openacc.c */
void child_openacc14 (void);
bool open_old_driver (void);
void child_openacc_old_driver (void);

#pragma GCC visibility pop

#endif
