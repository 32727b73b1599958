/* The target data of an nvptx offload image built by GCC's own mkoffload
   (device version OK_GCC_DEV_VERSION_NVPTX in GCC 12 to 16), our
   declaration of its layout.  From GCC 13 mkoffload puts the "requires"
   mask in front, which libgomp strips before the plugin sees the data;
   from GCC 14 (library version 3) IND_FN_NUM follows.  Programs linked without offloadkit's mkoffload register
   this, and the CUDA backend can load it (open_gcc): it has the PTX
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
  /* Library version 3 (GCC 14+) only: the number of `declare target
     indirect' functions.  Not there in older images.  */
  unsigned ind_fn_num;
};

#endif /* OFFLOADKIT_GCC_NVPTX_IMAGE_H */
