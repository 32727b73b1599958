/* Our own declarations of the part of the HSA runtime API (ROCm's
   libhsa-runtime64.so.1) that offloadkit uses.  The runtime is loaded with
   dlopen, so building needs no ROCm headers; every type, constant and
   layout here is the runtime's ABI, checked one by one against
   /usr/include/hsa/hsa.h and hsa_ext_amd.h (values printed by a throwaway
   program that included them; offloadkit itself never does).  Only what
   we use is listed.  Self-contained (stddef/stdint only).  */

#ifndef OFFLOADKIT_HSA_API_H
#define OFFLOADKIT_HSA_API_H

#include <stddef.h>
#include <stdint.h>

/* Enumerations are C enums in hsa.h, hence int-sized; we use plain
   integer types so that values outside our list pass through.  */
typedef int hsa_status_t;
typedef int hsa_agent_info_t;
typedef int hsa_isa_info_t;
typedef int hsa_region_info_t;
typedef int hsa_profile_t;
typedef int hsa_default_float_rounding_mode_t;
typedef int hsa_executable_symbol_info_t;
typedef int hsa_signal_condition_t;
typedef int hsa_wait_state_t;
typedef int hsa_device_type_t;
typedef int hsa_region_segment_t;
typedef int hsa_system_info_t;
typedef int hsa_amd_copy_direction_t;
typedef int hsa_amd_pointer_type_t;
typedef uint32_t hsa_queue_type32_t;
typedef int64_t hsa_signal_value_t;

/* Opaque handles: one 64-bit word each, passed by value.  */
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_region_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;

/* hsa_status_t values.  */
#define HSA_STATUS_SUCCESS 0x0
#define HSA_STATUS_INFO_BREAK 0x1
#define HSA_STATUS_ERROR 0x1000
#define HSA_STATUS_ERROR_INVALID_ARGUMENT 0x1001
#define HSA_STATUS_ERROR_OUT_OF_RESOURCES 0x1008
#define HSA_STATUS_ERROR_NOT_INITIALIZED 0x100B
#define HSA_STATUS_ERROR_INVALID_CODE_OBJECT 0x1010
#define HSA_STATUS_ERROR_INVALID_SYMBOL_NAME 0x1013

/* hsa_device_type_t.  */
#define HSA_DEVICE_TYPE_CPU 0
#define HSA_DEVICE_TYPE_GPU 1

/* hsa_agent_info_t (HSA_AMD_* from hsa_ext_amd.h).  */
#define HSA_AGENT_INFO_NAME 0		/* char[64].  */
#define HSA_AGENT_INFO_VENDOR_NAME 1	/* char[64].  */
#define HSA_AGENT_INFO_QUEUE_MAX_SIZE 14	/* uint32_t.  */
#define HSA_AGENT_INFO_DEVICE 17	/* hsa_device_type_t.  */
#define HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT 0xA002	/* uint32_t.  */
#define HSA_AMD_AGENT_INFO_UUID 0xA011	/* char[21]: "GPU-" and 16 hex.  */

/* hsa_system_info_t (HSA_AMD_* from hsa.h's AMD extension list).  */
#define HSA_SYSTEM_INFO_VERSION_MAJOR 0	/* uint16_t.  */
#define HSA_SYSTEM_INFO_VERSION_MINOR 1	/* uint16_t.  */
#define HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED 0x201	/* bool.  */
#define HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT 0x202	/* bool.  */

/* hsa_isa_info_t.  */
#define HSA_ISA_INFO_NAME_LENGTH 0	/* uint32_t, without the NUL.  */
#define HSA_ISA_INFO_NAME 1		/* char[NAME_LENGTH].  */

/* Regions.  */
#define HSA_REGION_SEGMENT_GLOBAL 0
#define HSA_REGION_INFO_SEGMENT 0	/* hsa_region_segment_t.  */
#define HSA_REGION_INFO_GLOBAL_FLAGS 1	/* uint32_t of the flags below.  */
#define HSA_REGION_INFO_SIZE 2		/* size_t.  */
#define HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED 5	/* bool.  */
#define HSA_REGION_GLOBAL_FLAG_KERNARG 1
#define HSA_REGION_GLOBAL_FLAG_FINE_GRAINED 2
#define HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED 4

/* Executables.  */
#define HSA_PROFILE_BASE 0
#define HSA_PROFILE_FULL 1
#define HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT 0
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE 9	/* uint32_t.  */
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE 11 /* u32.  */
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE 13	/* u32.  */
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE 14 /* u32.  */
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS 21	/* uint64_t.  */
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT 22	/* uint64_t.  */

/* Queues.  */
#define HSA_QUEUE_TYPE_MULTI 0
#define HSA_QUEUE_TYPE_SINGLE 1

/* Signals.  */
#define HSA_SIGNAL_CONDITION_EQ 0
#define HSA_SIGNAL_CONDITION_LT 2
#define HSA_WAIT_STATE_BLOCKED 0
#define HSA_WAIT_STATE_ACTIVE 1

/* AQL packets: header bit positions and values.  */
#define HSA_PACKET_TYPE_INVALID 1
#define HSA_PACKET_TYPE_KERNEL_DISPATCH 2
#define HSA_PACKET_HEADER_TYPE 0
#define HSA_PACKET_HEADER_BARRIER 8
#define HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE 9
#define HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE 11
#define HSA_FENCE_SCOPE_SYSTEM 2
#define HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS 0

/* A user-mode queue as the runtime hands it out (40 bytes on LP64 little
   endian: base_address at 8, doorbell at 16, size at 24, id at 32).  */
typedef struct hsa_queue_s
{
  hsa_queue_type32_t type;
  uint32_t features;
  void *base_address;		/* SIZE packets of 64 bytes.  */
  hsa_signal_t doorbell_signal;
  uint32_t size;		/* Packets; a power of two.  */
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

/* The 64-byte AQL kernel-dispatch packet.  */
typedef struct hsa_kernel_dispatch_packet_s
{
  uint16_t header;
  uint16_t setup;		/* Dimensions in bits 0-1.  */
  uint16_t workgroup_size_x;
  uint16_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x;		/* Work-items, not work-groups.  */
  uint32_t grid_size_y;
  uint32_t grid_size_z;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  void *kernarg_address;
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_kernel_dispatch_packet_t;

_Static_assert (sizeof (hsa_queue_t) == 40, "hsa_queue_t layout");
_Static_assert (sizeof (hsa_kernel_dispatch_packet_t) == 64,
		"AQL packet layout");
_Static_assert (offsetof (hsa_kernel_dispatch_packet_t, kernel_object)
		== 32, "AQL packet layout");
_Static_assert (offsetof (hsa_kernel_dispatch_packet_t, completion_signal)
		== 56, "AQL packet layout");

/* hsa_amd_memory_async_copy_rect (hsa_ext_amd.h, "provisional"): a
   pitched pointer (base, pitch and slice in bytes, each 4-byte aligned),
   offsets and range (x in bytes, y in rows, z in slices), and the
   direction.  */
typedef struct hsa_pitched_ptr_s
{
  void *base;
  size_t pitch;
  size_t slice;
} hsa_pitched_ptr_t;

typedef struct hsa_dim3_s
{
  uint32_t x, y, z;
} hsa_dim3_t;

#define hsaHostToDevice 1
#define hsaDeviceToHost 2

/* Shared virtual memory attributes (hsa_ext_amd.h).  */
typedef struct hsa_amd_svm_attribute_pair_s
{
  uint64_t attribute;		/* HSA_AMD_SVM_ATTRIB_*.  */
  uint64_t value;
} hsa_amd_svm_attribute_pair_t;

#define HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG 0
#define HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED 1
/* Set: the agent in VALUE may access the range.  */
#define HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE 0x200
#define HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE 0x201
#define HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS 0x202
/* Get: VALUE names an agent; ATTRIBUTE comes back as one of the three
   above.  */
#define HSA_AMD_SVM_ATTRIB_ACCESS_QUERY 0x203

/* hsa_amd_pointer_info's answer (hsa_ext_amd.h; 56 bytes on LP64, SIZE
   set by the caller).  */
typedef struct hsa_amd_pointer_info_s
{
  uint32_t size;
  hsa_amd_pointer_type_t type;
  void *agentBaseAddress;
  void *hostBaseAddress;
  size_t sizeInBytes;
  void *userData;
  hsa_agent_t agentOwner;
  uint32_t global_flags;
} hsa_amd_pointer_info_t;

#define HSA_EXT_POINTER_TYPE_UNKNOWN 0

_Static_assert (sizeof (hsa_pitched_ptr_t) == 24, "hsa_pitched_ptr_t");
_Static_assert (sizeof (hsa_amd_pointer_info_t) == 56
		&& offsetof (hsa_amd_pointer_info_t, sizeInBytes) == 24
		&& offsetof (hsa_amd_pointer_info_t, agentOwner) == 40,
		"hsa_amd_pointer_info_t layout");

/* The table of runtime entry points, one member per line of
   hsa-calls.def.  Optional members may be NULL.  */
struct ok_hsa_api
{
#define OK_HSA_FN(name, ret, required, params) ret (*name) params;
#include "hsa-calls.def"
#undef OK_HSA_FN
};

#endif /* OFFLOADKIT_HSA_API_H */
