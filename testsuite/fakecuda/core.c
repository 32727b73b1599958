/* The fake libcuda: its state, configuration, the entry of every call,
   error names, and the library's start and end.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

FAKE_DEFINE_CORE (fk_sym_names, FK_NSYMS, FK_SYMBOLS, fk_lock, fk_cond);

static bool fk_configured;	/* Environment read.  */
bool fk_initialised;
int fk_num_devices = 1;
int fk_driver_version = 13000;
int fk_sm = 90;
int fk_sms = 4;
long fk_pageable;
size_t fk_mem_total = (size_t) 8 << 30;

static long fk_calls_since_spec[FK_NSYMS];
static long fk_calls_total[FK_NSYMS];
static void fk_configure (void);
struct fake_state fk_fs = {
  .tag = "fakecuda", .fail_var = "FAKECUDA_FAIL",
  .sym_names = fk_sym_names, .nsyms = FK_NSYMS,
  .calls_total = fk_calls_total, .calls_since_spec = fk_calls_since_spec,
  .max_fails = 32, .item_max = 128, .v2_alias = true, .log_fd = -1,
  .lock = &fk_lock, .configure = fk_configure,
};

struct fake_handles fk_handles;
struct fake_blocks fk_blocks;

/* ------------------------------------------------------------------ */
/* Configuration.  */

static long
fk_env_long (const char *name, long dflt, long min, long max)
{
  const char *s = getenv (name);
  if (s == NULL || *s == '\0')
    return dflt;
  char *end;
  errno = 0;
  long v = strtol (s, &end, 0);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    {
      fprintf (stderr, "fakecuda: bad %s=%s\n", name, s);
      return dflt;
    }
  return v;
}

static void
fk_configure (void)
{
  if (fk_configured)
    return;
  fk_configured = true;
  fk_num_devices = (int) fk_env_long ("FAKECUDA_DEVICES", 1, 0,
				      FK_MAX_DEVICES);
  fk_sm = (int) fk_env_long ("FAKECUDA_SM", 90, 10, 255);
  fk_driver_version = (int) fk_env_long ("FAKECUDA_DRIVER_VERSION",
					 fk_driver_version, 1000, 99990);
  fk_sms = (int) fk_env_long ("FAKECUDA_SMS", 4, 1, 1024);
  fk_pageable = fk_env_long ("FAKECUDA_PAGEABLE", 0, 0,
			     (1L << FK_MAX_DEVICES) - 1);
  fk_mem_total = (size_t) fk_env_long ("FAKECUDA_MEM", (long) fk_mem_total,
				       0, LONG_MAX);
  fake_open_log (&fk_fs, "FAKECUDA_LOG");
  fake_parse_fail (&fk_fs, getenv ("FAKECUDA_FAIL"));
  for (int d = 0; d < FK_MAX_DEVICES; d++)
    {
      fk_ctxs[d].magic = FK_MAGIC_CTX;
      fk_ctxs[d].device = d;
    }
}

/* The error a failing SYM returns when FAKECUDA_FAIL names none.  */
int
fk_default_error (int sym)
{
  switch (sym)
    {
    case FK_cuMemAlloc_v2:
    case FK_cuMemHostAlloc:
    case FK_cuMemAllocHost_v2:
    case FK_cuCtxCreate_v2:
      return CUDA_ERROR_OUT_OF_MEMORY;
    case FK_cuLinkAddData_v2:
    case FK_cuLinkAddData:
    case FK_cuLinkComplete:
    case FK_cuModuleLoadData:
    case FK_cuModuleLoadDataEx:
    case FK_cuModuleLoad:
      return CUDA_ERROR_INVALID_PTX;
    case FK_cuLaunchKernel:
    case FK_kernel_fault:
    case FK_cuStreamSynchronize:
    case FK_cuCtxSynchronize:
    case FK_cuEventSynchronize:
    case FK_cuStreamQuery:
    case FK_cuEventQuery:
      return CUDA_ERROR_LAUNCH_FAILED;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
}

/* Entry of every exported function; see fake-cuda.h.  */
CUresult
fk_enter (int sym)
{
  pthread_mutex_lock (&fk_lock);
  fk_configure ();
  long n;
  const struct fake_fail *f = fake_count_call (&fk_fs, sym, &n);
  if (fk_in_callback)
    {
      fk_bad (sym, "driver call from inside a stream host function");
      pthread_mutex_unlock (&fk_lock);
      return CUDA_ERROR_NOT_PERMITTED;
    }
  if (f != NULL)
    {
      int err = f->err >= 0 ? f->err : fk_default_error (sym);
      fk_log ("fail %s call %ld -> %d", fk_sym_names[sym], n, err);
      pthread_mutex_unlock (&fk_lock);
      return err;
    }
  return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Errors.  */

static const struct { int code; const char *name, *text; } fk_errors[] = {
  { 0, "CUDA_SUCCESS", "no error" },
  { 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
  { 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
  { 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
  { 4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
  { 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
  { 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
  { 200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
  { 201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
  { 209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
    "no kernel image is available for execution on the device" },
  { 215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "limit is not supported on this"
    " architecture" },
  { 218, "CUDA_ERROR_INVALID_PTX",
    "a PTX JIT compilation failed" },
  { 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "the provided PTX was compiled with an unsupported toolchain." },
  { 301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found" },
  { 400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
  { 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
  { 600, "CUDA_ERROR_NOT_READY", "device not ready" },
  { 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
    "an illegal memory access was encountered" },
  { 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
    "too many resources requested for launch" },
  { 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed" },
  { 719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
  { 800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
  { 801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
  { 999, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

/* cuGetErrorName and cuGetErrorString: the name or the TEXT of ERROR in
   *STR; an unknown ERROR is refused with *STR set to NULL.  */
static CUresult
fk_error_describe (CUresult error, bool text, const char **str)
{
  if (str == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *str = NULL;
  for (size_t i = 0; i < sizeof fk_errors / sizeof fk_errors[0]; i++)
    if (fk_errors[i].code == error)
      {
	*str = text ? fk_errors[i].text : fk_errors[i].name;
	return CUDA_SUCCESS;
      }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult
cuGetErrorName (CUresult error, const char **str)
{
  ENTER (cuGetErrorName);
  RETURN (fk_error_describe (error, false, str));
}

CUresult
cuGetErrorString (CUresult error, const char **str)
{
  ENTER (cuGetErrorString);
  RETURN (fk_error_describe (error, true, str));
}

/* ------------------------------------------------------------------ */
/* The library's start and end.  */

/* fork: keep the lock consistent, and in the child, forget the callback
   thread.  */
static void
fk_atfork_prepare (void)
{
  pthread_mutex_lock (&fk_lock);
}

static void
fk_atfork_parent (void)
{
  pthread_mutex_unlock (&fk_lock);
}

static void
fk_atfork_child (void)
{
  fk_callbacks_forget ();
  pthread_mutex_unlock (&fk_lock);
}

__attribute__ ((constructor)) static void
fk_init (void)
{
  pthread_atfork (fk_atfork_prepare, fk_atfork_parent, fk_atfork_child);
}

/* FAKECUDA_CALLS=FILE: append the calls of each exported driver function
   called at least once, "SYM N" a line.  */
static void
fk_write_calls (void)
{
  const char *name = getenv ("FAKECUDA_CALLS");
  if (name == NULL || *name == '\0')
    return;
  FILE *f = fopen (name, "a");
  if (f == NULL)
    {
      fprintf (stderr, "fakecuda: cannot open FAKECUDA_CALLS=%s\n", name);
      return;
    }
  pthread_mutex_lock (&fk_lock);
  for (int i = 0; i < FK_NSYMS; i++)
    if (i != FK_kernel_fault && fk_calls_total[i] > 0)
      fprintf (f, "%s %ld\n", fk_sym_names[i], fk_calls_total[i]);
  pthread_mutex_unlock (&fk_lock);
  fclose (f);
}

/* At unload or exit: stop the callback thread (its code is about to go
   away), write the call counts if asked, and, if asked, fail when
   anything is still alive.  */
__attribute__ ((destructor)) static void
fk_fini (void)
{
  fk_callbacks_stop ();
  fk_write_calls ();

  /* Our own tables (what they point to, if anything, is the caller's
     leak).  */
  pthread_mutex_lock (&fk_lock);
  fake_records_free (&fk_launches);
  fake_tables_release (&fk_handles, &fk_blocks);
  pthread_mutex_unlock (&fk_lock);

  static const char *const kinds[] = { "mem", "host", "module", "stream",
				       "event", "link", "context" };
  fake_check_leaks ("fakecuda", "FAKECUDA_CHECK_LEAKS", kinds,
		    sizeof kinds / sizeof kinds[0], fakecuda_outstanding);
}
