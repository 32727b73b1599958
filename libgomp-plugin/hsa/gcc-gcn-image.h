/* Our declaration of the target data GCC 12's own gcn mkoffload emits
   (device version 2, GOMP_VERSION_GCN), so that images built with plain
   GCC run on offloadkit's gcn plugin.  Facts from GCC 12's
   gcc/config/gcn/mkoffload.cc and libgomp/plugin/plugin-gcn.c.

   Unlike offloadkit's descriptor it carries no variable names: the code
   object itself holds a table ".offload_var_table" of (address, size)
   pairs of 64-bit words, one per variable, in host-table order.  Kernels
   are found by their names plus ".kd"; "_init_array" and "_fini_array"
   are the image's constructors and destructors, run by the plugin and not
   reported to libgomp.  */

#ifndef OFFLOADKIT_GCC_GCN_IMAGE_H
#define OFFLOADKIT_GCC_GCN_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct gcc_gcn_code
{
  size_t size;
  void *image;
};

struct gcc_gcn_kernel
{
  const char *name;
  int oacc_dims[3];		/* OpenACC only.  */
  int sgpr_count;
  int vgpr_count;
};

struct gcc_gcn_image
{
  struct gcc_gcn_code *code;
  unsigned kernel_count;
  struct gcc_gcn_kernel *kernels;
  unsigned global_variable_count;
};

/* The code object's variable table entry.  */
struct gcc_gcn_var
{
  uint64_t addr;
  uint64_t size;
};

#define GCC_GCN_VAR_TABLE ".offload_var_table"

#endif /* OFFLOADKIT_GCC_GCN_IMAGE_H */
