/* The driver's types and values for what the entry points of libgomp 14
   to 16 ask of the CUDA backend: rectangular copies, device UUIDs,
   managed memory and pointer attributes.  Checked one by one against
   CUDA 13's cuda.h, as cuda-api.h's; included by it.  */

#ifndef OFFLOADKIT_CUDA_API_ENTRIES_H
#define OFFLOADKIT_CUDA_API_ENTRIES_H

/* CUresult value: a rectangular copy the driver does not take.  */
#define CUDA_ERROR_INVALID_VALUE 1

typedef struct CUarray_st *CUarray;
typedef int CUmemorytype;
typedef int CUpointer_attribute;

/* CUmemorytype values.  */
#define CU_MEMORYTYPE_HOST 0x01
#define CU_MEMORYTYPE_DEVICE 0x02
#define CU_MEMORYTYPE_ARRAY 0x03
#define CU_MEMORYTYPE_UNIFIED 0x04

/* CUpointer_attribute value: the CUmemorytype of a pointer.  */
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2

/* CUdevice_attribute value: the device can allocate managed memory.  */
#define CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY 83

/* cuMemAllocManaged flag: any stream on any device may access it.  */
#define CU_MEM_ATTACH_GLOBAL 0x1

/* cuDeviceGetUuid's result.  */
typedef struct
{
  char bytes[16];
} CUuuid;

/* cuMemcpy2D_v2's parameters (CUDA_MEMCPY2D_v2).  */
typedef struct
{
  size_t srcXInBytes;
  size_t srcY;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
} CUDA_MEMCPY2D;

/* cuMemcpy3D_v2's parameters (CUDA_MEMCPY3D_v2); RESERVED0 and
   RESERVED1 must be NULL.  */
typedef struct
{
  size_t srcXInBytes;
  size_t srcY;
  size_t srcZ;
  size_t srcLOD;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void *reserved0;
  size_t srcPitch;
  size_t srcHeight;
  size_t dstXInBytes;
  size_t dstY;
  size_t dstZ;
  size_t dstLOD;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void *reserved1;
  size_t dstPitch;
  size_t dstHeight;
  size_t WidthInBytes;
  size_t Height;
  size_t Depth;
} CUDA_MEMCPY3D;

#endif /* OFFLOADKIT_CUDA_API_ENTRIES_H */
