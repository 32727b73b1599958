/* Direct use of the CUDA driver for the benchmarks: the raw copies that
   map clauses are compared with, and the device description printed with
   the results.  The driver is loaded with dlopen, as the plugins do, with
   offloadkit's own declarations (libgomp-plugin/cuda/cuda-api.h and
   cuda-calls.def), so the benchmarks build and run without CUDA and skip
   the raw path cleanly when there is no driver or no device.  */

#ifndef OKB_CUDA_RAW_H
#define OKB_CUDA_RAW_H

#include <stddef.h>

#include "cuda-api.h"

struct okb_cuda
{
  void *lib;
  struct ok_cuda_api api;
  CUdevice dev;
  CUcontext ctx;		/* The retained primary context, or NULL.  */
  int pushed;			/* CTX is pushed on this thread.  */
  int ndevices;
  char why[256];		/* Why the driver is unusable.  */
};

/* Load the driver (OFFLOADKIT_CUDA_LIBRARY, as for the plugin, else
   libcuda.so.1) and initialise it.  Returns 0, or -1 with C->why set: no
   library, a symbol missing, cuInit failing, no device.  */
int okb_cuda_open (struct okb_cuda *c);

/* Retain device ORDINAL's primary context (the one the plugins use too)
   and make it current on this thread.  0, or -1 with C->why set.  */
int okb_cuda_use_device (struct okb_cuda *c, int ordinal);

/* Release the context and unload the driver.  */
void okb_cuda_close (struct okb_cuda *c);

/* "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" into C->why for
   a failed call; returns -1 so callers can write return okb_cuda_fail.  */
int okb_cuda_fail (struct okb_cuda *c, const char *call, CUresult r);

#endif
