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
   gives its name without needing the (local, strippable) entry symbol.
   The exception are the `nohost' functions of GCC 13+'s ancestor regions
   (`target device (ancestor: 1)'), ordinary device functions that the
   table lists for reverse offload: such an entry is named by the
   function symbol that starts at its address, and marked
   OK_KINFO_DEVICE_FN.  */

#ifndef OFFLOADKIT_GCN_CODE_OBJECT_H
#define OFFLOADKIT_GCN_CODE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "gcn-arch.h"
#include "offload-desc.h"

/* Bit 63 of a variable-table size: a "declare target link" variable, whose
   device copy is a pointer.  */
#define OK_GCN_VAR_LINK_BIT ((uint64_t) 1 << 63)

struct ok_gcn_kernel
{
  char *name;			/* Without the ".kd".  */
  uint64_t kd_addr;		/* Virtual address of the descriptor; 0 for
				   a device function.  */
  uint64_t entry;		/* Virtual address of the entry point.  */
  /* A device function (INFO.flags has OK_KINFO_DEVICE_FN, the rest is
     0): no kernel descriptor.  */
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
     toolchain's own, such as _init_array), in symbol-table order, then
     the device functions the function table names (OK_KINFO_DEVICE_FN),
     in table order.  */
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

/* Read the code object BUF[0, SIZE), named NAME in messages, into *CO.
   Return 0, or -1 after reporting one error (ok_error): not ELF, not a
   64-bit little-endian AMD GPU object, truncated, tables of a bad size, a
   function-table entry that is neither a kernel's entry point nor the
   start of a function, a variable-table entry that is no symbol, a
   kernel descriptor out of bounds...  Never reads outside BUF.  */
int ok_gcn_read_code_object (const char *name, const unsigned char *buf,
			     size_t size, struct ok_gcn_code_object *co);

/* The same for the file PATH.  */
int ok_gcn_read_code_object_file (const char *path,
				  struct ok_gcn_code_object *co);

/* The GPU (EF_AMDGPU_MACH) the library PATH, an ar archive of AMD GPU
   objects (a device libgomp.a) or one object, was built for: that of its
   first AMD GPU object.  Return 0 with it in *MACH, or -1 when PATH
   cannot be read or has no such object; reports nothing (the caller
   decides whether that matters).  */
int ok_gcn_library_mach (const char *path, uint32_t *mach);

void ok_gcn_code_object_free (struct ok_gcn_code_object *co);

#endif /* OFFLOADKIT_GCN_CODE_OBJECT_H */
