/* cuda-harness: main, which walks the table of areas, and the start and
   end of the main process's session.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda-harness.h"

const char *ptxas_path;
int (*f_launch_count) (void);
int (*f_launch_info) (int, char *, size_t, unsigned[3], unsigned[3],
		      unsigned *, uintptr_t *, unsigned *, int *,
		      unsigned long long[3]);
int (*f_global) (const char *, uintptr_t *, size_t *);
int (*f_rev_request) (const char *, const unsigned long long[5], int);
long (*f_rev_served) (void);
unsigned long long (*f_symbol_address) (const char *);

/* A library without the driver's functions: libelf, which this program
   uses anyway.  */
static const char *libelf_path;

static bool
have_libelf (void)
{
  return libelf_path != NULL;
}

static bool
have_ptxas (void)
{
  return ptxas_path != NULL && access (ptxas_path, X_OK) == 0;
}

/* The main process: 2 devices of sm_90, 4 SMs each, and the images its
   areas load.  */
static void
test_devices (void)
{
  check ("two CUDA devices", p_get_num_devices () == 2);
  check ("no error", errors_now () == 0);
  check ("init devices", p_init_device (0) && p_init_device (1));
  check ("a primary context per device", f_outstanding ("context") == 2);
  build_images ();
}

static struct ok_addr_pair *
load_main_image (int dev)
{
  return load (dev, &main_im.d);
}

/* fini_device waits for a kernel still running and leaves nothing
   behind; a device starts again after it.  */
static void
test_fini (void)
{
  harness_check_fini ((void *) tab0[0].start, load_main_image);
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
  ptxas_path = argc == 4 ? argv[3] : NULL;
  standin_init ("cuda-harness");
  standin_verbose = getenv ("HARNESS_VERBOSE") != NULL;
  /* Settings the checks assume: the defaults.  */
  static const char *const defaults[] = {
    "OFFLOADKIT_EMULATE", "FAKECUDA_FAIL", "FAKECUDA_CHECK_LEAKS",
    "FAKECUDA_LOG", "FAKECUDA_DEVICES", "FAKECUDA_SM", "FAKECUDA_SMS",
    "FAKECUDA_MEM", "FAKECUDA_PAGEABLE", "OFFLOADKIT_CUDA_POOL_MAX",
    "OFFLOADKIT_CUDA_STAGING_MAX", "OFFLOADKIT_INFO", "OFFLOADKIT_PROFILE", "GOMP_DEBUG" };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    unsetenv (defaults[i]);
  Dl_info info;
  if (dladdr ((void *) elf_version, &info) != 0 && info.dli_fname != NULL)
    libelf_path = info.dli_fname;

  static const struct harness_sym syms[] = {
    { "fakecuda_launch_count", &f_launch_count },
    { "fakecuda_launch_info", &f_launch_info },
    { "fakecuda_global", &f_global },
    { "fakecuda_rev_request", &f_rev_request },
    { "fakecuda_rev_served", &f_rev_served },
    { "fakecuda_symbol_address", &f_symbol_address }, { NULL, NULL } };
  const struct harness h = {
    .program = "cuda-harness", .plugin_path = argv[1], .fake_path = argv[2],
    .library_var = "OFFLOADKIT_CUDA_LIBRARY",
    .fake_prefix = "fakecuda", .fake_syms = syms, .fake_who = "driver",
    .leak_kinds = HARNESS_LIST ("mem", "host", "module", "stream", "event",
			       "link", "context"),
    .env = HARNESS_LIST ("FAKECUDA_DEVICES", "2", "FAKECUDA_SM", "90"),
  };
  const struct harness_area areas[] = {
    { AREA_CHILD ("fake libcuda self-test", child_fake_selftest,
		  HARNESS_LIST ("FAKECUDA_SM", "90"), true) },
    { AREA_CHILD ("FAKECUDA_DEVICES=0", child_zero_silent,
		  HARNESS_LIST ("FAKECUDA_DEVICES", "0"), true) },
    HARNESS_NAMED_LIBRARY_AREAS ("OFFLOADKIT_CUDA_LIBRARY"),
    { AREA_CHILD ("library without CUDA functions", child_missing_symbols,
		  HARNESS_LIST ("OFFLOADKIT_CUDA_LIBRARY", libelf_path), false),
      .can_run = have_libelf },
    { AREA_CHILD ("cuInit fails", child_zero_error,
		  HARNESS_LIST ("FAKECUDA_FAIL", "cuInit=999"), false) },
    { AREA_CHILD ("2 CUDA + 1 emulated", child_cuda_and_emulated,
		  HARNESS_LIST ("FAKECUDA_DEVICES", "2",
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("sm_86", child_sm86, HARNESS_LIST ("FAKECUDA_SM", "86"),
		  true) },
    { AREA_CHILD ("sm_87", child_sm87, HARNESS_LIST ("FAKECUDA_SM", "87"),
		  true) },
    { AREA_CHILD ("sm_89", child_sm89_ptx, HARNESS_LIST ("FAKECUDA_SM", "89"),
		  true) },
    { AREA_CHILD ("sm_86, descriptor version 2", child_sm86_v2,
		  HARNESS_LIST ("FAKECUDA_SM", "86"), true) },
    { AREA_CHILD ("sm_89, descriptor version 2", child_sm89_ptx_v2,
		  HARNESS_LIST ("FAKECUDA_SM", "89"), true) },
    { AREA_CHILD ("sm_90, no usable image", child_sm90_no_match,
		  HARNESS_LIST ("FAKECUDA_SM", "90"), true) },
    { AREA_CHILD ("no pool, no staging, 8 MiB", child_no_pool,
		  HARNESS_LIST ("OFFLOADKIT_CUDA_POOL_MAX", "0",
			       "OFFLOADKIT_CUDA_STAGING_MAX", "0",
			       "FAKECUDA_MEM", "8388608"), true) },
    { AREA_CHILD ("malformed sizes", child_bad_sizes,
		  HARNESS_LIST ("OFFLOADKIT_CUDA_POOL_MAX", "64k",
			       "OFFLOADKIT_CUDA_STAGING_MAX", "1MB",
			       "FAKECUDA_DEVICES", "2"), false) },
    { AREA_CHILD ("driver shut down first", child_driver_gone,
		  HARNESS_LIST ("FAKECUDA_SM", "90"), true) },
    { AREA_CHILD ("no primary context", child_no_context,
		  HARNESS_LIST ("FAKECUDA_FAIL", "cuDevicePrimaryCtxRetain"),
		  true) },
    { AREA_CHILD ("no pinned memory", child_no_pinned,
		  HARNESS_LIST ("FAKECUDA_FAIL", "cuMemHostAlloc"), true) },
    { AREA_CHILD ("no streams", child_no_stream,
		  HARNESS_LIST ("FAKECUDA_FAIL", "cuStreamCreate"), true) },
    { AREA_CHILD ("no staging stream", child_no_staging_stream,
		  HARNESS_LIST ("FAKECUDA_DEVICES", "1"), true) },
    { AREA_CHILD ("real cubin", child_real_cubin,
		  HARNESS_LIST ("FAKECUDA_SM", "86"), true),
      .can_run = have_ptxas,
      .unsupported = "real cubin from ptxas (no ptxas)" },
    { AREA_CHILD ("loaded by libgomp 14", child_libgomp14,
		  HARNESS_LIST ("FAKECUDA_DEVICES", "2", "FAKECUDA_SM", "90"),
		  true) },
    { AREA_CHILD ("device code, libgomp 13", child_devcode13,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "13",
			       "FAKECUDA_DEVICES", "1"), true) },
    { AREA_CHILD ("device code, libgomp 14", child_devcode14,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "14",
			       "FAKECUDA_DEVICES", "1"), true) },
    { AREA_CHILD ("OpenACC, libgomp 14", child_openacc14,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "14",
			       "FAKECUDA_DEVICES", "1"), true) },
    { AREA_CHILD ("OpenACC, driver before CUDA 10", child_openacc_old_driver,
		  HARNESS_LIST ("FAKECUDA_DEVICES", "1"), true),
      .open = open_old_driver },
    { AREA_CHILD ("interop, emulated device", child_interop_emulated,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "15",
			       "FAKECUDA_DEVICES", "1",
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("USM, every device reaches pageable memory", child_usm_all,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "16",
			       "FAKECUDA_DEVICES", "2",
			       "FAKECUDA_PAGEABLE", "3"), true) },
    { AREA_CHILD ("self maps, one device does not", child_self_maps_one_short,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "16",
			       "FAKECUDA_DEVICES", "2",
			       "FAKECUDA_PAGEABLE", "1"), true) },
    { AREA_CHILD ("USM, libgomp 14", child_usm_libgomp14,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "14",
			       "FAKECUDA_DEVICES", "1",
			       "FAKECUDA_PAGEABLE", "1"), true) },
    { AREA_CHILD ("USM, CUDA device without, emulated device",
		  child_usm_emulated,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "15",
			       "FAKECUDA_DEVICES", "1",
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("USM not required", child_no_usm,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "16",
			       "FAKECUDA_DEVICES", "1",
			       "FAKECUDA_PAGEABLE", "1"), true) },
    { AREA_LOADED ("devices", test_devices) },
    { AREA_LOADED ("images", test_load) },
    { AREA_LOADED ("refused images", test_bad_images) },
    { AREA_LOADED ("GCC's image format", test_gcc_image) },
    { AREA_LOADED ("constructors and destructors", test_cdtors) },
    { AREA_LOADED ("memory", test_memory) },
    { AREA_LOADED ("memset and 2D copies", test_memset_rect) },
    { AREA_LOADED ("libgomp 14 to 16's entry points", test_entries) },
    { AREA_LOADED ("interop objects", test_interop) },
    { AREA_LOADED ("launches", test_launch) },
    { AREA_LOADED ("async", test_async) },
    { AREA_LOADED ("threads", test_threads) },
    { AREA_LOADED ("OpenACC", test_openacc) },
    { AREA_LOADED ("fini", test_fini) },
  };
  int status = harness_run (&h, areas, sizeof areas / sizeof areas[0]);
  free_images ();
  return status;
}
