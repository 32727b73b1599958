/* Our own declarations of the part of the CUDA driver API that offloadkit
   uses.  The driver (libcuda.so.1) is loaded with dlopen at run time, so
   building needs no CUDA installation; the types and values here are the
   driver's ABI and were checked one by one against CUDA 13's cuda.h.
   Only values we use are listed (the fake driver of the testsuite has
   its own, on purpose).

   Self-contained (stddef/stdint only) so that other programs (the bench
   tools) can include it together with cuda-calls.def.  */

#ifndef OFFLOADKIT_CUDA_API_H
#define OFFLOADKIT_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* The driver's calling convention on Linux is the plain C one.  */
#define OK_CUDAAPI

/* Handles and scalar types.  CUdeviceptr is 64 bits wide on every 64-bit
   host (cuda.h's CUdeviceptr_v2).  */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;
typedef int CUjit_option;
typedef int CUjitInputType;

/* CUresult values.  */
#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_DEINITIALIZED 4
#define CUDA_ERROR_STUB_LIBRARY 34
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_NOT_PERMITTED 800
#define CUDA_ERROR_LAUNCH_FAILED 719
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_CONTEXT_IS_DESTROYED 709

/* CUdevice_attribute values.  */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE 13		/* kHz.  */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR 39
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR 82
#define CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS 88

/* CUfunction_attribute values.  */
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4

/* CUjit_option values (cuLinkCreate and cuLinkAddData options).  The
   values of the *_LOG_BUFFER_SIZE_BYTES options are passed as integers
   cast to void *; the log buffers themselves as char *.  */
#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_JIT_LOG_VERBOSE 12

/* CUjitInputType value.  */
#define CU_JIT_INPUT_PTX 1

/* cuMemHostAlloc flag: the page-locked memory is mapped into the device's
   address space (at the same address, with unified addressing).  */
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02

/* cuStreamCreate flag: a non-blocking stream does not synchronise with
   the legacy default (NULL) stream.  */
#define CU_STREAM_NON_BLOCKING 0x1
/* cuStreamCreate flag: a blocking stream, which the legacy default stream
   waits for and which waits for it.  */
#define CU_STREAM_DEFAULT 0x0

/* cuEventCreate flag: an event for ordering only, without timestamps.  */
#define CU_EVENT_DISABLE_TIMING 0x2

/* A host function queued on a stream (cuLaunchHostFunc), and the older
   form that also gets the stream and its status (cuStreamAddCallback).  */
typedef void (*CUhostFn) (void *);
typedef void (*CUstreamCallback) (CUstream, CUresult, void *);

/* cuOccupancyMaxPotentialBlockSize's function from block size to dynamic
   shared memory bytes.  */
typedef size_t (*CUoccupancyB2DSize) (int);

#include "cuda-api-entries.h"

/* The table of driver entry points, one member per line of
   cuda-calls.def, named by API name (cuMemAlloc, whose exported symbol is
   cuMemAlloc_v2).  Optional members may be NULL.  */
struct ok_cuda_api
{
#define OK_CUDA_FN(name, symbol, required, params) \
  CUresult (OK_CUDAAPI *name) params;
#include "cuda-calls.def"
#undef OK_CUDA_FN
};

#endif /* OFFLOADKIT_CUDA_API_H */
