/* The fake libcuda's own declarations of the driver API's types and
   constants, with the values of CUDA 13's cuda.h.  They are written here
   on purpose, not taken from the plugin's cuda-api.h: a wrong constant or
   symbol name there then shows up as a test failure.  */

#ifndef OFFLOADKIT_FAKECUDA_CUDA_TYPES_H
#define OFFLOADKIT_FAKECUDA_CUDA_TYPES_H

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fk_ctx *CUcontext;
typedef struct fk_module *CUmodule;
typedef struct fk_func *CUfunction;
typedef struct fk_stream *CUstream;
typedef struct fk_event *CUevent;
typedef struct fk_link *CUlinkState;
typedef int CUjit_option;
typedef int CUjitInputType;
typedef void (*CUhostFn) (void *);
typedef void (*CUstreamCallback) (CUstream, CUresult, void *);
typedef size_t (*CUoccupancyB2DSize) (int);

enum
{
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice_attribute values the fake answers specially.  */
enum
{
  FK_ATTR_MAX_THREADS_PER_BLOCK = 1,
  FK_ATTR_MAX_BLOCK_DIM_X = 2,
  FK_ATTR_MAX_BLOCK_DIM_Y = 3,
  FK_ATTR_MAX_BLOCK_DIM_Z = 4,
  FK_ATTR_MAX_GRID_DIM_X = 5,
  FK_ATTR_MAX_GRID_DIM_Y = 6,
  FK_ATTR_MAX_GRID_DIM_Z = 7,
  FK_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  FK_ATTR_TOTAL_CONSTANT_MEMORY = 9,
  FK_ATTR_WARP_SIZE = 10,
  FK_ATTR_MAX_PITCH = 11,
  FK_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  FK_ATTR_CLOCK_RATE = 13,
  FK_ATTR_MULTIPROCESSOR_COUNT = 16,
  FK_ATTR_CAN_MAP_HOST_MEMORY = 19,
  FK_ATTR_CONCURRENT_KERNELS = 31,
  FK_ATTR_PCI_BUS_ID = 33,
  FK_ATTR_MEMORY_CLOCK_RATE = 36,
  FK_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
  FK_ATTR_L2_CACHE_SIZE = 38,
  FK_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  FK_ATTR_ASYNC_ENGINE_COUNT = 40,
  FK_ATTR_UNIFIED_ADDRESSING = 41,
  FK_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  FK_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  FK_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  FK_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  FK_ATTR_MANAGED_MEMORY = 83,
  FK_ATTR_PAGEABLE_MEMORY_ACCESS = 88,
  FK_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  FK_ATTR_MAX = 148		/* CU_DEVICE_ATTRIBUTE_MAX in CUDA 13.  */
};

/* CUfunction_attribute.  */
enum
{
  FK_FUNC_MAX_THREADS_PER_BLOCK = 0,
  FK_FUNC_SHARED_SIZE_BYTES = 1,
  FK_FUNC_CONST_SIZE_BYTES = 2,
  FK_FUNC_LOCAL_SIZE_BYTES = 3,
  FK_FUNC_NUM_REGS = 4,
  FK_FUNC_PTX_VERSION = 5,
  FK_FUNC_BINARY_VERSION = 6,
  FK_FUNC_MAX = 16
};

/* CUjit_option values with a meaning here, and CUjitInputType.  */
enum
{
  FK_JIT_INFO_LOG_BUFFER = 3,
  FK_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  FK_JIT_ERROR_LOG_BUFFER = 5,
  FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  FK_JIT_NUM_OPTIONS = 35,
  FK_JIT_INPUT_CUBIN = 0,
  FK_JIT_INPUT_PTX = 1
};

#define FK_STREAM_NON_BLOCKING 0x1u
#define FK_STREAM_LEGACY ((CUstream) 0x1)
#define FK_STREAM_PER_THREAD ((CUstream) 0x2)
#define FK_EVENT_DISABLE_TIMING 0x2u
#define FK_LAUNCH_PARAM_BUFFER_POINTER ((void *) 0x01)
#define FK_LAUNCH_PARAM_BUFFER_SIZE ((void *) 0x02)

#endif
