/* Our declaration of the target data GCC's own gcn mkoffload emits, so
   that images built with plain GCC 12 to 16 run on offloadkit's gcn
   plugin.  Facts from each version's gcc/config/gcn/mkoffload.cc and
   libgomp/plugin/plugin-gcn.c (struct gcn_image_desc):

   - GCC 12: device version 2 (GOMP_VERSION_GCN), struct gcc_gcn_image;
   - GCC 13: device version 3, the same structure.  libgomp 13+ reads the
     "requires" word mkoffload puts before it and gives the plugin what
     follows, so the plugin sees the same layout;
   - GCC 14 to 16: device version 3, library version 3 (GOMP_VERSION),
     struct gcc_gcn_image_ind: ind_func_count before the variable count.
     GCC's plugin reads that field when the image's library version is 3
     or more (GOMP_VERSION_SUPPORTS_INDIRECT_FUNCS), and so do we.

   Device version 3 also means GCC 13's kernel arguments (hsa-internal.h,
   struct gcn_kernargs_v3).

   Unlike offloadkit's descriptor it carries no variable names: the code
   object itself holds a table ".offload_var_table" of (address, size)
   pairs of 64-bit words, one per variable, in host-table order (and,
   from GCC 13, ".offload_func_table" of the functions' device addresses,
   from 14 ".offload_ind_func_table" of the indirect functions').  Kernels
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

/* GCC 12 and 13.  */
struct gcc_gcn_image
{
  struct gcc_gcn_code *code;
  unsigned kernel_count;
  struct gcc_gcn_kernel *kernels;
  unsigned global_variable_count;
};

/* GCC 14 and newer (library version 3 or more).  */
struct gcc_gcn_image_ind
{
  struct gcc_gcn_code *code;
  unsigned kernel_count;
  struct gcc_gcn_kernel *kernels;
  unsigned ind_func_count;
  unsigned global_variable_count;
};

/* The library version from which the layout is struct gcc_gcn_image_ind
   (GOMP_VERSION_SUPPORTS_INDIRECT_FUNCS of GCC 14's gomp-constants.h).  */
#define GCC_GCN_LIB_IND_FUNCS 3

/* The code object's variable table entry.  */
struct gcc_gcn_var
{
  uint64_t addr;
  uint64_t size;
};

/* Global labels at the start of the code object's tables.  GCC's
   mkoffload adds them to the device assembler; offloadkit's assembles
   them into an object linked first.  */
#define GCC_GCN_VAR_TABLE ".offload_var_table"
#define GCC_GCN_FUNC_TABLE ".offload_func_table"
#define GCC_GCN_IND_FUNC_TABLE ".offload_ind_func_table"
/* The section of the indirect functions' table: its size gives their
   number in offloadkit's images, whose descriptor has no count.  */
#define GCC_GCN_IND_FUNC_SECTION ".gnu.offload_ind_funcs"
/* The device variables that point at the map of indirect functions are
   core/indirect-map.h's.  */

#endif /* OFFLOADKIT_GCC_GCN_IMAGE_H */
