/* libgomp 15's interop objects on CUDA devices, answered as GCC 15's and
   16's nvptx plugin answers them (libgomp/plugin/plugin-nvptx.c,
   GOMP_OFFLOAD_interop and the get_interop_* getters): the runtime is
   CUDA unless prefer_type chooses the CUDA driver or HIP (HIP on an
   NVIDIA GPU is CUDA underneath); the device is the CUdevice, the
   context the primary context (none for the CUDA runtime, whose programs
   do not see contexts), and targetsync a stream of cuStreamCreate,
   destroyed with the object.

   The stream is created in, and waited for and destroyed under, the
   device's context pushed for the call and popped after it, so that the
   program's own current context (it is about to use the stream with its
   own CUDA calls) is the same before and after, as in GCC's plugin.

   One difference from GCC's getters, where their return codes disagree
   with the property's type: GCC 15's omp_get_interop_str answers
   omp_irc_type_ptr for the device, an int; here every getter names the
   type the property has (core-interop.c).  */

#include "cuda-internal.h"

const int cuda_interop_frs[] = { OK_IFR_CUDA, OK_IFR_CUDA_DRIVER, OK_IFR_HIP,
				 0 };

/* Push DEV's context for an interop call doing WHAT; false after a
   message.  */
static bool
cuda_interop_push (struct cuda_device *dev, const char *what)
{
  CUresult r = ok_cuda.cuCtxPushCurrent (dev->ctx);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, what, "cuCtxPushCurrent", r);
      return false;
    }
  return true;
}

static bool
cuda_interop_pop (struct cuda_device *dev, const char *what)
{
  CUcontext old;
  CUresult r = ok_cuda.cuCtxPopCurrent (&old);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, what, "cuCtxPopCurrent", r);
      return false;
    }
  return true;
}

bool
cuda_interop_init (struct ok_device *d, struct ok_interop *obj, int fr,
		   bool targetsync)
{
  struct cuda_device *dev = cuda_dev (d);
  static const char what[] = "cannot create the interop object's stream";
  obj->fr = fr != 0 ? fr : OK_IFR_CUDA;
  if (!targetsync)
    return true;
  if (!cuda_interop_push (dev, what))
    return false;
  CUstream stream = NULL;
  CUresult r = ok_cuda.cuStreamCreate (&stream, 0 /* CU_STREAM_DEFAULT */);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (d, what, "cuStreamCreate", r);
      cuda_interop_pop (dev, what);
      return false;
    }
  if (!cuda_interop_pop (dev, what))
    {
      ok_cuda.cuStreamDestroy (stream);
      return false;
    }
  obj->stream = stream;
  return true;
}

bool
cuda_interop_sync (struct ok_device *d, struct ok_interop *obj,
		   bool destroy)
{
  struct cuda_device *dev = cuda_dev (d);
  const char *what = destroy ? "cannot destroy the interop object's stream"
		     : "cannot wait for the interop object's stream";
  if (!cuda_interop_push (dev, what))
    return false;
  CUstream stream = obj->stream;
  CUresult r = destroy ? ok_cuda.cuStreamDestroy (stream)
		       : ok_cuda.cuStreamSynchronize (stream);
  if (r != CUDA_SUCCESS)
    ok_dev_call_error (d, what,
		       destroy ? "cuStreamDestroy" : "cuStreamSynchronize", r);
  bool popped = cuda_interop_pop (dev, what);
  return r == CUDA_SUCCESS && popped;
}

/* The C types of platform, device, device_context and targetsync for
   each runtime, as GCC's plugin describes them.  */
static const char *
cuda_interop_desc (int fr, enum ok_ipr prop)
{
  static const char *const cuda[] = {
    "N/A", "int", "N/A", "cudaStream_t"
  };
  static const char *const driver[] = {
    "N/A", "CUdevice", "CUcontext", "CUstream"
  };
  static const char *const hip[] = {
    "N/A", "hipDevice_t", "hipCtx_t", "hipStream_t"
  };
  const char *const *desc = fr == OK_IFR_CUDA ? cuda
			    : fr == OK_IFR_CUDA_DRIVER ? driver : hip;
  return prop <= OK_IPR_PLATFORM ? desc[OK_IPR_PLATFORM - prop] : NULL;
}

void
cuda_interop_property (struct ok_device *d, const struct ok_interop *obj,
		       enum ok_ipr prop, struct ok_interop_value *val)
{
  struct cuda_device *dev = cuda_dev (d);
  val->type_desc = cuda_interop_desc (obj->fr, prop);
  val->type = OK_IRC_NO_VALUE;
  switch (prop)
    {
    case OK_IPR_DEVICE:
      val->type = OK_IRC_TYPE_INT;
      val->i = dev->handle;
      break;
    case OK_IPR_DEVICE_CONTEXT:
      if (obj->fr != OK_IFR_CUDA)
	{
	  val->type = OK_IRC_TYPE_PTR;
	  val->p = dev->ctx;
	}
      break;
    case OK_IPR_TARGETSYNC:
      if (obj->stream != NULL)
	{
	  /* GCC's plugin gives the stream to omp_get_interop_int too.  */
	  val->type = OK_IRC_TYPE_PTR;
	  val->p = obj->stream;
	  val->ptr_as_int = true;
	}
      break;
    default:			/* The platform: none.  */
      break;
    }
}
