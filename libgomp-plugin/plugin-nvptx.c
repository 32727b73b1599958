/* libgomp-plugin-nvptx.so.1: the plugin libgomp loads for
   -foffload=nvptx-none programs.  Only its identity and its backends are
   here; the core (core/) implements the entry points.  */

#include "plugin-core.h"

const struct ok_plugin ok_plugin = {
  .name = "nvptx",
  .device_type = OK_GOMP_DEVICE_NVIDIA_PTX,
  .caps = OK_GOMP_CAP_OPENMP_400,
  .gcc_dev_version = OK_GCC_DEV_VERSION_NVPTX,
  .acc_device_api = 1,		/* acc_device_api_cuda */
  /* GCC's nvptx_free.  */
  .gcc_inner_free_words = "invalid device address",
  /* Devices are numbered in this order: CUDA devices (none without a
     driver or a GPU), then emulated ones (OFFLOADKIT_EMULATE).  */
  .backends = (const struct ok_backend *const[]) {
    &ok_backend_cuda, &ok_backend_emulated, NULL
  },
};
