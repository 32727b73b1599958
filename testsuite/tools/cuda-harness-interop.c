/* cuda-harness: libgomp 15's interop objects on CUDA devices, as GCC's
   nvptx plugin gives them: the runtime prefer_type chooses (CUDA by
   default), every property through each getter with its return code,
   the type descriptions, the targetsync stream of cuStreamCreate waited
   for on use and destroyed with the object, and the driver's failures,
   each with one message before the program ends.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"
#include "interop-standin.h"

/* libgomp 15's runtimes (omp.h.in) that this plugin names.  */
enum { FR_CUDA = 1, FR_CUDA_DRIVER = 2, FR_HIP = 5 };

static bool
int_is (struct interop_obj *o, int prop, intptr_t want, int want_rc)
{
  int rc = 99;
  intptr_t v = get_int (o, prop, &rc);
  return rc == want_rc && v == want;
}

static bool
ptr_is (struct interop_obj *o, int prop, const void *want, int want_rc)
{
  int rc = 99;
  void *v = get_ptr (o, prop, &rc);
  return rc == want_rc && v == want;
}

static bool
str_is (struct interop_obj *o, int prop, const char *want, int want_rc)
{
  int rc = 99;
  const char *v = get_str (o, prop, &rc);
  return rc == want_rc && (want == NULL ? v == NULL
			   : v != NULL && strcmp (v, want) == 0);
}

static bool
desc_is (struct interop_obj *o, int prop, const char *want)
{
  const char *v = type_desc (o, prop);
  return v != NULL && strcmp (v, want) == 0;
}

/* An object of the CUDA runtime on device 1, without targetsync: every
   property through every getter.  */
static void
interop_plain (void)
{
  struct interop_obj o = new_obj (1, false, NULL);
  check ("interop init: CUDA runtime, no stream",
	 o.fr == FR_CUDA && o.stream == NULL);
  check ("interop fr_id: 1 by get_int, type_int elsewhere",
	 int_is (&o, IPR_FR_ID, FR_CUDA, IRC_SUCCESS)
	 && ptr_is (&o, IPR_FR_ID, NULL, IRC_TYPE_INT)
	 && str_is (&o, IPR_FR_ID, NULL, IRC_TYPE_INT));
  check ("interop fr_name: \"cuda\" by get_str, type_str elsewhere",
	 str_is (&o, IPR_FR_NAME, "cuda", IRC_SUCCESS)
	 && int_is (&o, IPR_FR_NAME, 0, IRC_TYPE_STR)
	 && ptr_is (&o, IPR_FR_NAME, NULL, IRC_TYPE_STR));
  check ("interop vendor: 11 (nvidia)",
	 int_is (&o, IPR_VENDOR, 11, IRC_SUCCESS)
	 && ptr_is (&o, IPR_VENDOR, NULL, IRC_TYPE_INT));
  check ("interop vendor_name: \"nvidia\"",
	 str_is (&o, IPR_VENDOR_NAME, "nvidia", IRC_SUCCESS)
	 && int_is (&o, IPR_VENDOR_NAME, 0, IRC_TYPE_STR));
  check ("interop device_num: the object's",
	 int_is (&o, IPR_DEVICE_NUM, 1, IRC_SUCCESS));
  check ("interop platform: no value",
	 int_is (&o, IPR_PLATFORM, 0, IRC_NO_VALUE)
	 && ptr_is (&o, IPR_PLATFORM, NULL, IRC_NO_VALUE)
	 && str_is (&o, IPR_PLATFORM, NULL, IRC_NO_VALUE));
  check ("interop device: the CUdevice, an int",
	 int_is (&o, IPR_DEVICE, 1, IRC_SUCCESS)
	 && ptr_is (&o, IPR_DEVICE, NULL, IRC_TYPE_INT)
	 && str_is (&o, IPR_DEVICE, NULL, IRC_TYPE_INT));
  check ("interop device_context: none for the CUDA runtime",
	 int_is (&o, IPR_DEVICE_CONTEXT, 0, IRC_NO_VALUE)
	 && ptr_is (&o, IPR_DEVICE_CONTEXT, NULL, IRC_NO_VALUE));
  check ("interop targetsync: no value without targetsync",
	 int_is (&o, IPR_TARGETSYNC, 0, IRC_NO_VALUE)
	 && ptr_is (&o, IPR_TARGETSYNC, NULL, IRC_NO_VALUE)
	 && str_is (&o, IPR_TARGETSYNC, NULL, IRC_NO_VALUE));
  check ("interop properties out of range",
	 int_is (&o, 0, 0, IRC_OUT_OF_RANGE)
	 && ptr_is (&o, -10, NULL, IRC_OUT_OF_RANGE)
	 && str_is (&o, 1, NULL, IRC_OUT_OF_RANGE)
	 && type_desc (&o, -10) == NULL);
  check ("interop getters without a return code",
	 get_int (&o, IPR_VENDOR, NULL) == 11
	 && get_ptr (&o, IPR_DEVICE, NULL) == NULL);
  check ("interop type descriptions for the CUDA runtime",
	 desc_is (&o, IPR_PLATFORM, "N/A") && desc_is (&o, IPR_DEVICE, "int")
	 && desc_is (&o, IPR_DEVICE_CONTEXT, "N/A")
	 && desc_is (&o, IPR_TARGETSYNC, "cudaStream_t")
	 && desc_is (&o, IPR_DEVICE_NUM, "int"));
  long destroys = f_calls ("cuStreamDestroy_v2");
  interop (&o, 1, USE, false, NULL);
  interop (&o, 1, DESTROY, false, NULL);
  check ("interop use and destroy without a stream: no driver call",
	 f_calls ("cuStreamDestroy_v2") == destroys);
}

/* prefer_type: the first block with a runtime of ours decides, and in it
   the last one; attributes are skipped; none of ours gives CUDA.  */
static void
interop_prefer (void)
{
  struct interop_obj o = new_obj (0, false, SEP "\x02" SEP "" "\0");
  check ("interop prefer_type {cuda_driver}", o.fr == FR_CUDA_DRIVER);
  check ("interop cuda_driver: fr_name, context and descriptions",
	 str_is (&o, IPR_FR_NAME, "cuda_driver", IRC_SUCCESS)
	 && get_ptr (&o, IPR_DEVICE_CONTEXT, NULL) != NULL
	 && int_is (&o, IPR_DEVICE_CONTEXT, 0, IRC_TYPE_PTR)
	 && str_is (&o, IPR_DEVICE_CONTEXT, NULL, IRC_TYPE_PTR)
	 && desc_is (&o, IPR_DEVICE, "CUdevice")
	 && desc_is (&o, IPR_DEVICE_CONTEXT, "CUcontext")
	 && desc_is (&o, IPR_TARGETSYNC, "CUstream"));
  struct interop_obj o1 = new_obj (1, false, SEP "\x02" SEP "" "\0");
  check ("interop device_context: each device's own",
	 get_ptr (&o1, IPR_DEVICE_CONTEXT, NULL) != NULL
	 && get_ptr (&o1, IPR_DEVICE_CONTEXT, NULL)
	    != get_ptr (&o, IPR_DEVICE_CONTEXT, NULL));
  /* {opencl} attr("ompx_a", "ompx_b") , {hip, cuda_driver, sycl}.  */
  o = new_obj (0, false,
	       SEP "\x03" SEP "ompx_a\0ompx_b\0" "\0"
	       SEP "\x05\x02\x04" SEP "" "\0");
  check ("interop prefer_type: first block with ours, last of ours in it",
	 o.fr == FR_CUDA_DRIVER);
  /* {hip} , {cuda_driver}.  */
  o = new_obj (0, false, SEP "\x05" SEP "\0" SEP "\x02" SEP "\0");
  check ("interop prefer_type {hip}",
	 o.fr == FR_HIP && str_is (&o, IPR_FR_NAME, "hip", IRC_SUCCESS)
	 && desc_is (&o, IPR_DEVICE, "hipDevice_t")
	 && desc_is (&o, IPR_TARGETSYNC, "hipStream_t"));
  /* {sycl} , {unknown}: nothing of ours.  */
  o = new_obj (0, false, SEP "\x04" SEP "\0" SEP "\x81" SEP "\0");
  check ("interop prefer_type without a runtime of ours: CUDA",
	 o.fr == FR_CUDA);
  o = new_obj (0, false, SEP "\x02");
  check ("interop prefer_type cut short: read no further",
	 o.fr == FR_CUDA_DRIVER);
}

/* targetsync: a stream of cuStreamCreate in the device's context,
   synchronised on use, destroyed with the object.  */
static void
interop_targetsync (void)
{
  long streams = f_outstanding ("stream");
  long creates = f_calls ("cuStreamCreate");
  struct interop_obj o = new_obj (1, true, SEP "\x02" SEP "\0");
  check ("interop targetsync: one new stream",
	 o.stream != NULL && f_outstanding ("stream") == streams + 1
	 && f_calls ("cuStreamCreate") == creates + 1);
  check ("interop targetsync: the stream by get_ptr and get_int",
	 ptr_is (&o, IPR_TARGETSYNC, o.stream, IRC_SUCCESS)
	 && int_is (&o, IPR_TARGETSYNC, (intptr_t) o.stream, IRC_SUCCESS)
	 && str_is (&o, IPR_TARGETSYNC, NULL, IRC_TYPE_PTR));
  long syncs = f_calls ("cuStreamSynchronize");
  interop (&o, 1, USE, false, NULL);
  check ("interop use: cuStreamSynchronize of the stream",
	 f_calls ("cuStreamSynchronize") == syncs + 1 && o.stream != NULL);
  interop (&o, 1, DESTROY, false, NULL);
  check ("interop destroy: the stream destroyed",
	 o.stream == NULL && f_outstanding ("stream") == streams);
}

/* Each driver failure: one message naming the call, then the program
   ends (GOMP_PLUGIN_fatal), nothing left behind.  */
static void
interop_failures (void)
{
  long streams = f_outstanding ("stream");
  int e;
  f_fail ("cuStreamCreate=2");
  bool fatal = new_obj_fatal (0, &e);
  check ("interop init, cuStreamCreate fails: fatal, one message",
	 fatal && error_says (e, "interop", "cuStreamCreate",
			      "CUDA_ERROR_OUT_OF_MEMORY", NULL)
	 && f_outstanding ("stream") == streams);
  f_fail ("cuCtxPushCurrent_v2=201");
  fatal = new_obj_fatal (0, &e);
  check ("interop init, cuCtxPushCurrent fails: fatal, one message",
	 fatal && error_says (e, "cuCtxPushCurrent", NULL)
	 && f_outstanding ("stream") == streams);
  f_fail (NULL);

  struct interop_obj o = new_obj (0, true, NULL);
  f_fail ("cuStreamSynchronize=700");
  fatal = interop_fatal (&o, 0, USE, &e);
  check ("interop use, cuStreamSynchronize fails: fatal, one message",
	 fatal && error_says (e, "cuStreamSynchronize",
			      "CUDA_ERROR_ILLEGAL_ADDRESS", NULL));
  f_fail ("cuStreamDestroy_v2=700");
  fatal = interop_fatal (&o, 0, DESTROY, &e);
  check ("interop destroy, cuStreamDestroy fails: fatal, one message",
	 fatal && error_says (e, "cuStreamDestroy", NULL)
	 && o.stream != NULL);
  f_fail (NULL);
  interop (&o, 0, DESTROY, false, NULL);
  check ("interop destroy after the failure: nothing left",
	 o.stream == NULL && f_outstanding ("stream") == streams);
}

/* The entry points, looked up as libgomp 15 does; false after a failed
   check.  */
static bool
interop_syms (void)
{
  if (interop_standin_syms ())
    return true;
  check ("interop entry points exported", false);
  return false;
}

/* An emulated device, after a CUDA one in the same plugin (so the entry
   points are there), under libgomp 15: libgomp makes an object for every
   init, and the emulated device, which has no foreign runtime, leaves it
   of none: no stream, every property without a value, no type
   descriptions, use and destroy doing nothing.  */
void
child_interop_emulated (void)
{
  check ("1 CUDA device, then 1 emulated", p_get_num_devices () == 2);
  check ("init both", p_init_device (0) && p_init_device (1));
  if (!interop_syms ())
    return;
  long creates = f_calls ("cuStreamCreate");
  struct interop_obj o = new_obj (1, true, SEP "\x02" SEP "\0" "\0");
  check ("emulated interop object: no runtime, no stream",
	 o.fr == 0 && o.stream == NULL
	 && f_calls ("cuStreamCreate") == creates);
  bool none = true;
  for (int prop = IPR_TARGETSYNC; prop <= IPR_FR_ID; prop++)
    none &= int_is (&o, prop, 0, IRC_NO_VALUE)
	    && ptr_is (&o, prop, NULL, IRC_NO_VALUE)
	    && str_is (&o, prop, NULL, IRC_NO_VALUE)
	    && type_desc (&o, prop) == NULL;
  check ("emulated interop object: every property without a value", none);
  check ("emulated interop object: out of range all the same",
	 int_is (&o, 0, 0, IRC_OUT_OF_RANGE));
  int e = errors_now ();
  interop (&o, 1, USE, false, NULL);
  interop (&o, 1, DESTROY, false, NULL);
  check ("emulated interop object: use and destroy, silently",
	 errors_now () == e && f_calls ("cuStreamCreate") == creates);
  struct interop_obj c = new_obj (0, true, NULL);
  check ("the CUDA device's object beside it: CUDA, a stream",
	 c.fr == FR_CUDA && c.stream != NULL);
  interop (&c, 0, DESTROY, false, NULL);
  check ("fini both", p_fini_device (0) && p_fini_device (1));
  check_no_leaks ("after the emulated interop objects");
}

void
test_interop (void)
{
  if (!interop_syms ())
    return;
  long bad = bad_calls ();
  interop_plain ();
  interop_prefer ();
  interop_targetsync ();
  check_no_bad_calls ("interop: no invalid driver calls", bad);
  interop_failures ();
}
