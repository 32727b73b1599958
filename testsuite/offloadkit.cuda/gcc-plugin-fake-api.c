/* The fake libcuda's entry points that GCC's nvptx plugin (12 to 16)
   needs beside offloadkit's, called directly and checked against the
   driver API's documented behaviour (gcc-plugin-fake.exp): created
   contexts (cuCtxCreate_v2, cuCtxDestroy_v2 and what it frees,
   cuCtxGetDevice, CUDA_ERROR_CONTEXT_IS_DESTROYED on another thread),
   cuCtxSetLimit, cuMemcpy's inference of the copy's kind, cuMemsetD8_v2,
   cuMemGetAddressRange_v2, cuMemHostGetDevicePointer_v2,
   cuMemcpy2DUnaligned_v2, cuModuleLoad, the unversioned cuLinkCreate and
   cuLinkAddData, cuDeviceGetUuid, and failure injection into them.

   Usage: gcc-plugin-fake-api LIBCUDA SCRATCH-DIR (run with
   FAKECUDA_DEVICES=2).  Prints PASS/FAIL lines.  */

#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;

enum
{
  OK = 0, INVALID_VALUE = 1, INVALID_CONTEXT = 201, UNSUPPORTED_LIMIT = 215,
  INVALID_PTX = 218, FILE_NOT_FOUND = 301, NOT_FOUND = 500,
  CONTEXT_IS_DESTROYED = 709
};

static void *lib;
static int failures;

static void *
sym (const char *name)
{
  void *p = dlsym (lib, name);
  if (p == NULL)
    {
      printf ("FAIL: fake api: %s exported\n", name);
      exit (1);
    }
  return p;
}

#define CU(name, ...) ((CUresult (*) (__VA_ARGS__)) sym (#name))

static void
check (const char *what, int ok)
{
  printf ("%s: fake api: %s\n", ok ? "PASS" : "FAIL", what);
  failures += !ok;
}

/* A small PTX module with one kernel.  */
static const char ptx[] =
  ".version 7.0\n.target sm_70\n.address_size 64\n"
  ".visible .global .align 4 .u32 counter;\n"
  ".visible .entry probe (.param .u64 a)\n{\nret;\n}\n";

static CUcontext destroyed_elsewhere;
static pthread_barrier_t barrier;
static CUresult thread_get_device, thread_alloc;

/* Make the context current here, let the main thread destroy it, then
   use it.  */
static void *
other_thread (void *arg)
{
  (void) arg;
  int dev = -1;
  CUdeviceptr d;
  CU (cuCtxPushCurrent_v2, CUcontext) (destroyed_elsewhere);
  pthread_barrier_wait (&barrier);
  pthread_barrier_wait (&barrier);
  thread_get_device = CU (cuCtxGetDevice, int *) (&dev);
  thread_alloc = CU (cuMemAlloc_v2, CUdeviceptr *, size_t) (&d, 64);
  CU (cuCtxPopCurrent_v2, CUcontext *) (NULL);
  return NULL;
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: gcc-plugin-fake-api LIBCUDA SCRATCH-DIR\n");
      return 2;
    }
  lib = dlopen (argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    {
      printf ("FAIL: fake api: dlopen: %s\n", dlerror ());
      return 1;
    }
  long (*calls) (const char *) = sym ("fakecuda_calls");
  long (*outstanding) (const char *) = sym ("fakecuda_outstanding");
  int (*fail) (const char *) = sym ("fakecuda_fail");
  long (*bad_calls) (const char **) = sym ("fakecuda_bad_calls");

  CU (cuInit, unsigned) (0);
  int dev = -1;
  check ("cuCtxGetDevice without a context: CUDA_ERROR_INVALID_CONTEXT",
	 CU (cuCtxGetDevice, int *) (&dev) == INVALID_CONTEXT);

  /* Contexts: created, pushed, popped.  */
  CUcontext c0 = NULL, c1 = NULL, cur = NULL;
  CUresult r = CU (cuCtxCreate_v2, CUcontext *, unsigned, int) (&c0, 0, 0);
  CU (cuCtxGetCurrent, CUcontext *) (&cur);
  check ("cuCtxCreate_v2 makes a context current",
	 r == OK && c0 != NULL && cur == c0
	 && CU (cuCtxGetDevice, int *) (&dev) == OK && dev == 0);
  r = CU (cuCtxCreate_v2, CUcontext *, unsigned, int) (&c1, 4, 1);
  int dev1 = -1;
  CU (cuCtxGetDevice, int *) (&dev1);
  CUcontext popped = NULL;
  CU (cuCtxPopCurrent_v2, CUcontext *) (&popped);
  CU (cuCtxGetDevice, int *) (&dev);
  check ("a second context supplants the first, popping restores it",
	 r == OK && c1 != c0 && dev1 == 1 && popped == c1 && dev == 0);
  check ("cuCtxCreate_v2 refuses flags beyond CU_CTX_FLAGS_MASK",
	 CU (cuCtxCreate_v2, CUcontext *, unsigned, int) (&cur, 0x100, 0)
	 == INVALID_VALUE);
  check ("two created contexts alive",
	 outstanding ("context") == 2);

  /* Limits.  */
  check ("cuCtxSetLimit: stack size set, CIG_ENABLED refused, unknown"
	 " limit unsupported",
	 CU (cuCtxSetLimit, int, size_t) (0, 4096) == OK
	 && CU (cuCtxSetLimit, int, size_t) (8, 1) == INVALID_VALUE
	 && CU (cuCtxSetLimit, int, size_t) (99, 1) == UNSUPPORTED_LIMIT);

  /* Memory.  */
  CUdeviceptr d = 0, e = 0, base = 0;
  size_t size = 0;
  CU (cuMemAlloc_v2, CUdeviceptr *, size_t) (&d, 100);
  CU (cuMemAlloc_v2, CUdeviceptr *, size_t) (&e, 100);
  int on_stack = 0;
  check ("cuMemGetAddressRange_v2: base and size of the allocation",
	 CU (cuMemGetAddressRange_v2, CUdeviceptr *, size_t *, CUdeviceptr)
	   (&base, &size, d + 37) == OK && base == d && size == 100
	 && CU (cuMemGetAddressRange_v2, CUdeviceptr *, size_t *, CUdeviceptr)
	   (NULL, NULL, d) == OK);
  check ("cuMemGetAddressRange_v2: host memory not found",
	 CU (cuMemGetAddressRange_v2, CUdeviceptr *, size_t *, CUdeviceptr)
	   (&base, &size, (CUdeviceptr) (uintptr_t) &on_stack) == NOT_FOUND);

  unsigned char in[100], out[100];
  for (int i = 0; i < 100; i++)
    in[i] = (unsigned char) (i * 7 + 1);
  memset (out, 0, sizeof out);
  CUresult (*memcpy_u) (CUdeviceptr, CUdeviceptr, size_t)
    = CU (cuMemcpy, CUdeviceptr, CUdeviceptr, size_t);
  r = memcpy_u (d, (CUdeviceptr) (uintptr_t) in, 100);
  CUresult r2 = memcpy_u (e, d, 100);
  CUresult r3 = memcpy_u ((CUdeviceptr) (uintptr_t) out, e, 100);
  check ("cuMemcpy infers host to device, device to device, device to host",
	 r == OK && r2 == OK && r3 == OK && memcmp (in, out, 100) == 0);
  check ("cuMemcpy refuses a copy leaving its device allocation",
	 memcpy_u (d + 50, (CUdeviceptr) (uintptr_t) in, 51) == INVALID_VALUE
	 && memcpy_u ((CUdeviceptr) (uintptr_t) out, e + 1, 100)
	    == INVALID_VALUE);
  r = CU (cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t) (d + 10, 0xab,
							   20);
  memcpy_u ((CUdeviceptr) (uintptr_t) out, d, 100);
  int set_ok = r == OK;
  for (int i = 0; i < 100; i++)
    set_ok &= out[i] == (i >= 10 && i < 30 ? 0xab : in[i]);
  check ("cuMemsetD8_v2 sets the bytes, and only those", set_ok
	 && CU (cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t) (d + 90, 0,
								 11)
	    == INVALID_VALUE);

  void *h = NULL;
  CUdeviceptr hd = 0;
  CU (cuMemAllocHost_v2, void **, size_t) (&h, 256);
  CUresult (*host_dev) (CUdeviceptr *, void *, unsigned)
    = CU (cuMemHostGetDevicePointer_v2, CUdeviceptr *, void *, unsigned);
  check ("cuMemHostGetDevicePointer_v2: page-locked memory at its host"
	 " address (unified addressing)",
	 host_dev (&hd, (char *) h + 8, 0) == OK
	 && hd == (CUdeviceptr) (uintptr_t) ((char *) h + 8));
  long bad0 = bad_calls (NULL);
  check ("cuMemHostGetDevicePointer_v2: pageable memory and flags refused",
	 host_dev (&hd, &on_stack, 0) == INVALID_VALUE
	 && host_dev (&hd, h, 1) == INVALID_VALUE
	 && bad_calls (NULL) == bad0 + 2);

  /* cuMemcpy2DUnaligned_v2: CUDA_MEMCPY2D, 3 rows of 5 bytes from host
     (pitch 8) to device (pitch 16).  */
  struct
  {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
  } c2 = { 0, 0, 1, in, 0, NULL, 8, 0, 0, 2, NULL, e, NULL, 16, 5, 3 };
  r = CU (cuMemcpy2DUnaligned_v2, void *) (&c2);
  memcpy_u ((CUdeviceptr) (uintptr_t) out, e, 100);
  check ("cuMemcpy2DUnaligned_v2 copies the rows",
	 r == OK && memcmp (out, in, 5) == 0 && memcmp (out + 16, in + 8, 5) == 0
	 && memcmp (out + 32, in + 16, 5) == 0);

  /* cuModuleLoad.  */
  char path[4096];
  snprintf (path, sizeof path, "%s/probe.ptx", argv[2]);
  FILE *f = fopen (path, "w");
  if (f != NULL)
    {
      fputs (ptx, f);
      fclose (f);
    }
  void *mod = NULL, *fn = NULL;
  r = CU (cuModuleLoad, void **, const char *) (&mod, path);
  check ("cuModuleLoad loads a PTX file",
	 r == OK && CU (cuModuleGetFunction, void **, void *, const char *)
			(&fn, mod, "probe") == OK);
  snprintf (path, sizeof path, "%s/no-such.ptx", argv[2]);
  void *mod2 = NULL;
  check ("cuModuleLoad of a missing file: CUDA_ERROR_FILE_NOT_FOUND",
	 CU (cuModuleLoad, void **, const char *) (&mod2, path)
	 == FILE_NOT_FOUND);

  /* The unversioned JIT linker entry points.  */
  void *link = NULL, *cubin = NULL, *mod3 = NULL;
  size_t cubin_size = 0;
  r = CU (cuLinkCreate, unsigned, int *, void **, void **) (0, NULL, NULL,
							  &link);
  r2 = CU (cuLinkAddData, void *, int, void *, size_t, const char *,
	   unsigned, int *, void **) (link, 1, (void *) ptx, sizeof ptx,
				      "probe", 0, NULL, NULL);
  r3 = CU (cuLinkComplete, void *, void **, size_t *) (link, &cubin,
						      &cubin_size);
  CUresult r4 = CU (cuModuleLoadData, void **, const void *) (&mod3, cubin);
  CU (cuLinkDestroy, void *) (link);
  check ("cuLinkCreate and cuLinkAddData (unversioned) link PTX",
	 r == OK && r2 == OK && r3 == OK && r4 == OK
	 && calls ("cuLinkCreate") == 1 && calls ("cuLinkCreate_v2") == 0
	 && calls ("cuLinkAddData") == 1);

  unsigned char u1[16], u2[16];
  check ("cuDeviceGetUuid gives cuDeviceGetUuid_v2's UUID",
	 CU (cuDeviceGetUuid, unsigned char *, int) (u1, 1) == OK
	 && CU (cuDeviceGetUuid_v2, unsigned char *, int) (u2, 1) == OK
	 && memcmp (u1, u2, 16) == 0);

  /* Failure injection reaches the new entry points.  */
  fail ("cuModuleLoad,cuCtxGetDevice=999");
  snprintf (path, sizeof path, "%s/probe.ptx", argv[2]);
  check ("FAKECUDA_FAIL: cuModuleLoad (default error), cuCtxGetDevice"
	 " (given error)",
	 CU (cuModuleLoad, void **, const char *) (&mod2, path) == INVALID_PTX
	 && CU (cuCtxGetDevice, int *) (&dev) == 999);
  fail ("");

  /* Destroying C0 frees what was made in it.  */
  void *stream = NULL, *event = NULL;
  CU (cuStreamCreate, void **, unsigned) (&stream, 0);
  CU (cuEventCreate, void **, unsigned) (&event, 0);
  long mem0 = outstanding ("mem"), modules0 = outstanding ("module");
  r = CU (cuCtxDestroy_v2, CUcontext) (c0);
  CU (cuCtxGetCurrent, CUcontext *) (&cur);
  check ("cuCtxDestroy_v2 frees memory, page-locked memory, modules,"
	 " streams and events of the context, and pops it",
	 r == OK && mem0 == 2 && modules0 == 2 && outstanding ("mem") == 0
	 && outstanding ("host") == 0 && outstanding ("module") == 0
	 && outstanding ("stream") == 0 && outstanding ("event") == 0
	 && cur == NULL && outstanding ("context") == 1);
  bad0 = bad_calls (NULL);
  check ("cuCtxDestroy_v2 refuses a destroyed context",
	 CU (cuCtxDestroy_v2, CUcontext) (c0) == INVALID_CONTEXT
	 && bad_calls (NULL) == bad0 + 1);

  /* A primary context is not destroyed this way.  */
  CUcontext primary = NULL;
  CU (cuDevicePrimaryCtxRetain, CUcontext *, int) (&primary, 0);
  check ("cuCtxDestroy_v2 refuses a primary context",
	 CU (cuCtxDestroy_v2, CUcontext) (primary) == INVALID_CONTEXT);
  CU (cuDevicePrimaryCtxRelease_v2, int) (0);

  /* Current on another thread when destroyed.  */
  CU (cuCtxCreate_v2, CUcontext *, unsigned, int) (&destroyed_elsewhere, 0,
						   0);
  CU (cuCtxPopCurrent_v2, CUcontext *) (NULL);
  pthread_t t;
  pthread_barrier_init (&barrier, NULL, 2);
  pthread_create (&t, NULL, other_thread, NULL);
  pthread_barrier_wait (&barrier);
  r = CU (cuCtxDestroy_v2, CUcontext) (destroyed_elsewhere);
  pthread_barrier_wait (&barrier);
  pthread_join (t, NULL);
  check ("a context destroyed while current on another thread:"
	 " CUDA_ERROR_CONTEXT_IS_DESTROYED there",
	 r == OK && thread_get_device == CONTEXT_IS_DESTROYED
	 && thread_alloc == CONTEXT_IS_DESTROYED);

  CU (cuCtxDestroy_v2, CUcontext) (c1);
  check ("no context left", outstanding ("context") == 0);
  return failures != 0;
}
