/* The target data of an nvptx offload image built by GCC 12's own
   mkoffload (device version OK_GCC_DEV_VERSION_NVPTX), our declaration of
   its layout.  Programs linked without offloadkit's mkoffload register
   this, and the CUDA backend can load it (load_gcc_image): it has the PTX
   to JIT-link, the kernel names and the variable names, in host-table
   order, but no copy of the host table and so no variable sizes.  */

#ifndef OFFLOADKIT_GCC_NVPTX_IMAGE_H
#define OFFLOADKIT_GCC_NVPTX_IMAGE_H

#include <stddef.h>

/* One PTX module; SIZE counts its terminating NUL.  */
struct ok_gcc_ptx_obj
{
  const char *code;
  size_t size;
};

/* One kernel: its PTX name and the launch dimensions GCC computed for
   OpenACC (unused for OpenMP).  */
struct ok_gcc_fn_launch
{
  const char *fn;
  unsigned short dim[3];
};

struct ok_gcc_nvptx_data
{
  const struct ok_gcc_ptx_obj *ptx_objs;
  unsigned ptx_num;
  const char *const *var_names;
  unsigned var_num;
  const struct ok_gcc_fn_launch *fn_descs;
  unsigned fn_num;
};

#endif /* OFFLOADKIT_GCC_NVPTX_IMAGE_H */
