/* cuda-harness: the fake libcuda itself, driven directly (no plugin):
   the other checks rely on it refusing what the real driver refuses.
   Runs in a child.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda-harness.h"

/* The fake's function NAME.  */
#define cu(name) harness_fake_fn (name)

static void
host_fn_calls_driver (void *arg)
{
  int *result = arg;
  int n;
  *result = cu ("cuDeviceGetCount") (&n);
}

void
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
