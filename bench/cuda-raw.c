/* The benchmarks' direct path to the CUDA driver (see cuda-raw.h).  Only
   the functions the benchmarks call are required; the rest of the
   plugin's list may be missing from the library.  */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-raw.h"

int
okb_cuda_fail (struct okb_cuda *c, const char *call, CUresult r)
{
  const char *name = NULL, *text = NULL;
  if (c->api.cuGetErrorName)
    c->api.cuGetErrorName (r, &name);
  if (c->api.cuGetErrorString)
    c->api.cuGetErrorString (r, &text);
  if (name)
    snprintf (c->why, sizeof c->why, "%s: %s (%s)", call, name,
	      text ? text : "no description");
  else
    snprintf (c->why, sizeof c->why, "%s: CUDA error %d", call, (int) r);
  return -1;
}

int
okb_cuda_open (struct okb_cuda *c)
{
  memset (c, 0, sizeof *c);
  const char *path = getenv ("OFFLOADKIT_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  c->lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!c->lib)
    {
      snprintf (c->why, sizeof c->why, "no CUDA driver (%s)", dlerror ());
      return -1;
    }

#define OK_CUDA_FN(name, symbol, required, params) \
  *(void **) &c->api.name = dlsym (c->lib, symbol);
#include "cuda-calls.def"
#undef OK_CUDA_FN

  /* What the benchmarks call.  */
  static const struct { const char *sym; size_t off; } need[] = {
#define NEED(name, sym) { sym, offsetof (struct ok_cuda_api, name) }
    NEED (cuInit, "cuInit"),
    NEED (cuDeviceGetCount, "cuDeviceGetCount"),
    NEED (cuDeviceGet, "cuDeviceGet"),
    NEED (cuDeviceGetName, "cuDeviceGetName"),
    NEED (cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    NEED (cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    NEED (cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    NEED (cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
    NEED (cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
    NEED (cuMemAlloc, "cuMemAlloc_v2"),
    NEED (cuMemFree, "cuMemFree_v2"),
    NEED (cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
    NEED (cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
#undef NEED
  };
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!*(void **) ((char *) &c->api + need[i].off))
      {
	snprintf (c->why, sizeof c->why, "%s lacks %s", path, need[i].sym);
	okb_cuda_close (c);
	return -1;
      }

  CUresult r = c->api.cuInit (0);
  if (r == CUDA_ERROR_NO_DEVICE)
    {
      snprintf (c->why, sizeof c->why, "no CUDA device");
      okb_cuda_close (c);
      return -1;
    }
  if (r != CUDA_SUCCESS)
    {
      okb_cuda_fail (c, "cuInit", r);
      okb_cuda_close (c);
      return -1;
    }
  r = c->api.cuDeviceGetCount (&c->ndevices);
  if (r != CUDA_SUCCESS || c->ndevices < 1)
    {
      if (r != CUDA_SUCCESS)
	okb_cuda_fail (c, "cuDeviceGetCount", r);
      else
	snprintf (c->why, sizeof c->why, "no CUDA device");
      okb_cuda_close (c);
      return -1;
    }
  return 0;
}

int
okb_cuda_use_device (struct okb_cuda *c, int ordinal)
{
  CUresult r = c->api.cuDeviceGet (&c->dev, ordinal);
  if (r != CUDA_SUCCESS)
    return okb_cuda_fail (c, "cuDeviceGet", r);
  r = c->api.cuDevicePrimaryCtxRetain (&c->ctx, c->dev);
  if (r != CUDA_SUCCESS)
    {
      c->ctx = NULL;
      return okb_cuda_fail (c, "cuDevicePrimaryCtxRetain", r);
    }
  r = c->api.cuCtxPushCurrent (c->ctx);
  if (r != CUDA_SUCCESS)
    return okb_cuda_fail (c, "cuCtxPushCurrent", r);
  c->pushed = 1;
  return 0;
}

void
okb_cuda_close (struct okb_cuda *c)
{
  if (c->pushed)
    {
      CUcontext old;
      c->api.cuCtxPopCurrent (&old);
      c->pushed = 0;
    }
  if (c->ctx)
    {
      c->api.cuDevicePrimaryCtxRelease (c->dev);
      c->ctx = NULL;
    }
  if (c->lib)
    dlclose (c->lib);
  c->lib = NULL;
}
