/* cuda-harness: device counts and silence without a driver or a device,
   CUDA devices before emulated ones, malformed settings, a device whose
   context cannot be made.  Each runs in a child, over a fresh plugin.
   See cuda-harness.h.  */

#define _GNU_SOURCE
#include <stdlib.h>

#include "cuda-harness.h"

void
child_zero_silent (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
  /* OpenACC programs then stay on the host.  */
  check ("no OpenACC without devices",
	 (p_get_caps () & OK_GOMP_CAP_OPENACC_200) == 0);
}

void
child_zero_error (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("one error naming cuInit and the CUDA error",
	 error_says (0, "cuInit", "CUDA_ERROR_UNKNOWN", NULL));
}

void
child_missing_symbols (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("one error naming a missing function",
	 error_says (0, "cu", NULL));
}

void
child_cuda_and_emulated (void)
{
  check ("3 devices (2 CUDA, then 1 emulated)", p_get_num_devices () == 3);
  check ("no error", errors_now () == 0);
  check ("OpenACC on both kinds of device",
	 (p_get_caps () & OK_GOMP_CAP_OPENACC_200) != 0);
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

/* Two malformed settings and two devices: each setting is reported once,
   whichever device reads it first.  */
void
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

/* FAKECUDA_FAIL=cuDevicePrimaryCtxRetain: the device cannot start.  */
void
child_no_context (void)
{
  check ("1 device", p_get_num_devices () == 1);
  int e = errors_now ();
  check ("init fails", !p_init_device (0));
  check ("init: message",
	 error_says (e, "cuDevicePrimaryCtxRetain", "CUDA_ERROR_", NULL));
  check_no_leaks ("after the failed init");
}

/* The driver has shut down before libgomp finalises the device (its own
   exit handlers ran first), with a target nowait kernel still pending:
   finalisation says nothing and returns at once, without waiting for a
   completion that can no longer come (which the completion thread would
   otherwise turn into a failure).  */
void
child_driver_gone (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  size_t size;
  unsigned char *cubin = make_cubin (90, false, "which_sm90", 0, &size);
  struct image im;
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, cubin, size);
  struct ok_addr_pair *t = load (0, &im.d);
  check ("loads", t != NULL);
  if (t == NULL)
    {
      free (cubin);
      return;
    }
  f_gate (1);
  int token;
  completions_reset ();
  p_async_run (0, (void *) t[0].start, NULL, NULL, &token);
  int e = errors_now ();
  f_fail ("cuCtxPushCurrent_v2=4");
  check ("fini returns at once", p_fini_device (0));
  check ("fini: no message", errors_now () == e);
  check ("no completion", completions_now () == 0);
  /* The kernel stays pending until the process ends.  */
  free (t);
  free (cubin);
}
