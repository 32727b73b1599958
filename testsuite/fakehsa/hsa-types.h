/* The fake HSA runtime's own declarations of the HSA types and constants,
   with the values of ROCm's hsa.h, hsa_ext_amd.h and amd_hsa_elf.h.  They
   are written here on purpose, never taken from the plugin's hsa-api.h:
   a wrong constant there then shows up as a test failure.  */

#ifndef OFFLOADKIT_FAKEHSA_HSA_TYPES_H
#define OFFLOADKIT_FAKEHSA_HSA_TYPES_H

#include <stdint.h>

typedef int hsa_status_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_region_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_code_object_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef int64_t hsa_signal_value_t;

/* 40 bytes on a 64-bit host (HSA_LARGE_MODEL).  */
typedef struct
{
  uint32_t type;
  uint32_t features;
  void *base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

/* The AQL kernel-dispatch packet: 64 bytes.  */
typedef struct
{
  uint16_t header;
  uint16_t setup;
  uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  void *kernarg_address;
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} fh_dispatch_packet;

_Static_assert (sizeof (hsa_queue_t) == 40, "hsa_queue_t layout");
_Static_assert (sizeof (fh_dispatch_packet) == 64, "packet layout");

#define HSA_STATUS_SUCCESS 0x0
#define HSA_STATUS_INFO_BREAK 0x1
#define HSA_STATUS_ERROR 0x1000
#define HSA_STATUS_ERROR_INVALID_ARGUMENT 0x1001
#define HSA_STATUS_ERROR_INVALID_QUEUE_CREATION 0x1002
#define HSA_STATUS_ERROR_INVALID_ALLOCATION 0x1003
#define HSA_STATUS_ERROR_INVALID_AGENT 0x1004
#define HSA_STATUS_ERROR_INVALID_REGION 0x1005
#define HSA_STATUS_ERROR_INVALID_SIGNAL 0x1006
#define HSA_STATUS_ERROR_INVALID_QUEUE 0x1007
#define HSA_STATUS_ERROR_OUT_OF_RESOURCES 0x1008
#define HSA_STATUS_ERROR_INVALID_PACKET_FORMAT 0x1009
#define HSA_STATUS_ERROR_RESOURCE_FREE 0x100A
#define HSA_STATUS_ERROR_NOT_INITIALIZED 0x100B
#define HSA_STATUS_ERROR_INVALID_ISA 0x100F
#define HSA_STATUS_ERROR_INVALID_CODE_OBJECT 0x1010
#define HSA_STATUS_ERROR_INVALID_EXECUTABLE 0x1011
#define HSA_STATUS_ERROR_FROZEN_EXECUTABLE 0x1012
#define HSA_STATUS_ERROR_INVALID_SYMBOL_NAME 0x1013
#define HSA_STATUS_ERROR_VARIABLE_UNDEFINED 0x1015
#define HSA_STATUS_ERROR_EXCEPTION 0x1016
#define HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL 0x1019
#define HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER 0x1021
#define HSA_STATUS_ERROR_FATAL 0x1026

#define HSA_DEVICE_TYPE_CPU 0
#define HSA_DEVICE_TYPE_GPU 1

#define HSA_AGENT_INFO_NAME 0
#define HSA_AGENT_INFO_VENDOR_NAME 1
#define HSA_AGENT_INFO_FEATURE 2
#define HSA_AGENT_INFO_PROFILE 4
#define HSA_AGENT_INFO_WAVEFRONT_SIZE 6
#define HSA_AGENT_INFO_WORKGROUP_MAX_DIM 7
#define HSA_AGENT_INFO_WORKGROUP_MAX_SIZE 8
#define HSA_AGENT_INFO_GRID_MAX_DIM 9
#define HSA_AGENT_INFO_GRID_MAX_SIZE 10
#define HSA_AGENT_INFO_QUEUES_MAX 12
#define HSA_AGENT_INFO_QUEUE_MIN_SIZE 13
#define HSA_AGENT_INFO_QUEUE_MAX_SIZE 14
#define HSA_AGENT_INFO_NODE 16
#define HSA_AGENT_INFO_DEVICE 17
#define HSA_AGENT_INFO_ISA 19
#define HSA_AMD_AGENT_INFO_CHIP_ID 0xA000
#define HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT 0xA002
#define HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY 0xA003
#define HSA_AMD_AGENT_INFO_PRODUCT_NAME 0xA009
#define HSA_AMD_AGENT_INFO_UUID 0xA011
#define HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU 0xA00A
#define HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU 0xA00B

#define HSA_FEATURE_KERNEL_DISPATCH 1
#define HSA_FEATURE_AGENT_DISPATCH 2

#define HSA_SYSTEM_INFO_VERSION_MAJOR 0
#define HSA_SYSTEM_INFO_VERSION_MINOR 1
#define HSA_SYSTEM_INFO_TIMESTAMP 2
#define HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY 3
#define HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT 4
#define HSA_SYSTEM_INFO_ENDIANNESS 5
#define HSA_SYSTEM_INFO_MACHINE_MODEL 6

#define HSA_ISA_INFO_NAME_LENGTH 0
#define HSA_ISA_INFO_NAME 1

#define HSA_REGION_SEGMENT_GLOBAL 0
#define HSA_REGION_SEGMENT_GROUP 3
#define HSA_REGION_GLOBAL_FLAG_KERNARG 1
#define HSA_REGION_GLOBAL_FLAG_FINE_GRAINED 2
#define HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED 4
#define HSA_REGION_INFO_SEGMENT 0
#define HSA_REGION_INFO_GLOBAL_FLAGS 1
#define HSA_REGION_INFO_SIZE 2
#define HSA_REGION_INFO_ALLOC_MAX_SIZE 4
#define HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED 5
#define HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE 6
#define HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT 7
#define HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL 15
#define HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE 16

#define HSA_SYMBOL_KIND_VARIABLE 0
#define HSA_SYMBOL_KIND_KERNEL 1
#define HSA_EXECUTABLE_SYMBOL_INFO_TYPE 0
#define HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH 1
#define HSA_EXECUTABLE_SYMBOL_INFO_NAME 2
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE 9
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE 11
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT 12
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE 13
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE 14
#define HSA_EXECUTABLE_SYMBOL_INFO_AGENT 20
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS 21
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT 22

#define HSA_PACKET_TYPE_INVALID 1
#define HSA_PACKET_TYPE_KERNEL_DISPATCH 2
#define HSA_PACKET_TYPE_BARRIER_AND 3
#define HSA_PACKET_TYPE_BARRIER_OR 5

#define HSA_SIGNAL_CONDITION_EQ 0
#define HSA_SIGNAL_CONDITION_NE 1
#define HSA_SIGNAL_CONDITION_LT 2
#define HSA_SIGNAL_CONDITION_GTE 3

/* hsa.h's AMD system information.  */
#define HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED 0x201
#define HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT 0x202

/* hsa_ext_amd.h: rectangular copies ("provisional API").  */
typedef struct
{
  void *base;
  size_t pitch;			/* Bytes; 4-byte aligned, as BASE.  */
  size_t slice;
} hsa_pitched_ptr_t;
typedef struct { uint32_t x, y, z; } hsa_dim3_t;
#define hsaHostToHost 0
#define hsaHostToDevice 1
#define hsaDeviceToHost 2
#define hsaDeviceToDevice 3

/* hsa_ext_amd.h: shared virtual memory.  */
typedef struct
{
  uint64_t attribute;
  uint64_t value;
} hsa_amd_svm_attribute_pair_t;
#define HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG 0
#define HSA_AMD_SVM_ATTRIB_READ_ONLY 1
#define HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED 0
#define HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED 1
#define HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE 2
#define HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE 0x200
#define HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE 0x201
#define HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS 0x202
#define HSA_AMD_SVM_ATTRIB_ACCESS_QUERY 0x203

/* hsa_ext_amd.h: what the runtime knows of a pointer.  */
typedef struct
{
  uint32_t size;
  int type;
  void *agentBaseAddress;
  void *hostBaseAddress;
  size_t sizeInBytes;
  void *userData;
  hsa_agent_t agentOwner;
  uint32_t global_flags;
} hsa_amd_pointer_info_t;
#define HSA_EXT_POINTER_TYPE_UNKNOWN 0
#define HSA_EXT_POINTER_TYPE_HSA 1
#define HSA_EXT_POINTER_TYPE_LOCKED 2

#define EM_AMDGPU_ 224
#define EF_AMDGPU_MACH_ 0xff

#endif
