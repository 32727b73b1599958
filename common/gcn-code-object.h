/* Reading what the GCN plugin needs from an AMD GPU code object (the ELF
   file GCC's amdgcn accel compiler links), with libelf.

   GCC's device objects carry two tables in host-table order: the section
   .gnu.offload_funcs holds one 8-byte entry-point address per offloaded
   function, .gnu.offload_vars one (address, size) pair of 8-byte words per
   variable.  In a linked code object the addresses are filled in by
   dynamic relocations (R_AMDGPU_RELATIVE64, or R_AMDGPU_ABS64 against a
   symbol); a size has bit 63 set for a "declare target link" variable.
   Each kernel has a 64-byte AMDHSA kernel descriptor, symbol NAME.kd,
   whose kernel_code_entry_byte_offset leads to the entry point; a function
   table entry is matched to the kernel whose entry point it is, which
   gives its name without needing the (local, strippable) entry symbol.  */

#ifndef OFFLOADKIT_GCN_CODE_OBJECT_H
#define OFFLOADKIT_GCN_CODE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "offload-desc.h"

/* ELF e_machine of AMD GPU code objects.  */
#define OK_EM_AMDGPU 224u
/* e_flags bits 7:0 name the GPU (EF_AMDGPU_MACH).  */
#define OK_EF_AMDGPU_MACH_MASK 0xffu
#define OK_EF_AMDGPU_MACH_GFX803 0x2au
#define OK_EF_AMDGPU_MACH_GFX900 0x2cu
#define OK_EF_AMDGPU_MACH_GFX906 0x2fu
#define OK_EF_AMDGPU_MACH_GFX908 0x30u
/* Not built by GCC 12, but the GCN plugin matches an image's machine to
   an agent's ISA, and ROCm agents may be these.  */
#define OK_EF_AMDGPU_MACH_GFX90A 0x3fu
#define OK_EF_AMDGPU_MACH_GFX1030 0x36u

/* Bit 63 of a variable-table size: a "declare target link" variable, whose
   device copy is a pointer.  */
#define OK_GCN_VAR_LINK_BIT ((uint64_t) 1 << 63)

struct ok_gcn_kernel
{
  char *name;			/* Without the ".kd".  */
  uint64_t kd_addr;		/* Virtual address of the descriptor.  */
  uint64_t entry;		/* Virtual address of the entry point.  */
  struct ok_kernel_info info;
};

struct ok_gcn_var
{
  char *name;			/* The symbol at the variable's address.  */
  uint64_t addr;
  uint64_t size;		/* Table size, link bit cleared.  */
  int link;			/* "declare target link".  */
};

struct ok_gcn_code_object
{
  uint32_t mach;		/* e_flags & OK_EF_AMDGPU_MACH_MASK.  */
  uint32_t arch;		/* 0x803, 0x900, ...; 0 when unknown.  */
  uint32_t e_flags;
  /* Every kernel of the object (the offloaded functions and the
     toolchain's own, such as _init_array), in symbol-table order.  */
  struct ok_gcn_kernel *kernels;
  size_t num_kernels;
  /* The offloaded functions in host-table order: indices into KERNELS.  */
  size_t *funcs;
  size_t num_funcs;
  /* The variables in host-table order.  */
  struct ok_gcn_var *vars;
  size_t num_vars;
  /* Address of .gnu.offload_vars (0 when absent), and of the global
     symbol ".offload_var_table" (GCC's mkoffload adds that label at the
     table's start for its plugin; ours does too), when there is one.  */
  uint64_t var_table_addr;
  int has_var_table_sym;
  uint64_t var_table_sym;
};

/* The gfx number (0x906 for gfx906) of EF_AMDGPU_MACH value MACH, or 0
   (LLVM's AMDGPUUsage).  Inline, so that the GCN plugin, which does not
   link this file's libelf reader, shares the table.  */
static inline uint32_t
ok_gcn_arch_of_mach (uint32_t mach)
{
  switch (mach)
    {
    case OK_EF_AMDGPU_MACH_GFX803: return 0x803;
    case OK_EF_AMDGPU_MACH_GFX900: return 0x900;
    case OK_EF_AMDGPU_MACH_GFX906: return 0x906;
    case OK_EF_AMDGPU_MACH_GFX908: return 0x908;
    case OK_EF_AMDGPU_MACH_GFX90A: return 0x90a;
    case OK_EF_AMDGPU_MACH_GFX1030: return 0x1030;
    default: return 0;
    }
}

/* Read the code object BUF[0, SIZE), named NAME in messages, into *CO.
   Return 0, or -1 after reporting one error (ok_error): not ELF, not a
   64-bit little-endian AMD GPU object, truncated, tables of a bad size, a
   table entry that is no kernel or no symbol, a kernel descriptor out of
   bounds...  Never reads outside BUF.  */
int ok_gcn_read_code_object (const char *name, const unsigned char *buf,
			     size_t size, struct ok_gcn_code_object *co);

/* The same for the file PATH.  */
int ok_gcn_read_code_object_file (const char *path,
				  struct ok_gcn_code_object *co);

void ok_gcn_code_object_free (struct ok_gcn_code_object *co);

#endif /* OFFLOADKIT_GCN_CODE_OBJECT_H */
