/* libgomp-plugin-gcn.so.1: the plugin libgomp loads for
   -foffload=amdgcn-amdhsa programs.  Only its identity and its backends
   are here; the core (core/) implements the entry points.  */

#include "plugin-core.h"

const struct ok_plugin ok_plugin = {
  .name = "gcn",
  .device_type = OK_GOMP_DEVICE_GCN,
  .caps = OK_GOMP_CAP_OPENMP_400,
  .gcc_dev_version = OK_GCC_DEV_VERSION_GCN,
  .gcc_dev_version_13 = OK_GCC_DEV_VERSION_GCN_13,
  .acc_device_api = 4,		/* acc_device_api_other */
  /* GCC's GOMP_OFFLOAD_free, when hsa_memory_free refuses (hsa_error).  */
  .gcc_inner_free_words = "GCN fatal error: Could not free device memory\n"
    "Runtime message: HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested"
    " allocation is not valid.\n",
  /* Devices are numbered in this order: GCN GPUs through the HSA runtime
     (none without /dev/kfd, the runtime or a GPU), then emulated ones
     (OFFLOADKIT_EMULATE).  */
  .backends = (const struct ok_backend *const[]) {
    &ok_backend_hsa, &ok_backend_emulated, NULL
  },
};
