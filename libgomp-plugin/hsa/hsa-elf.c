/* Checking a GCN code object before the HSA runtime sees it.  The runtime
   trusts what it loads: a truncated or corrupt image can crash it.  So the
   ELF header, the program and section header tables and every section
   with contents must lie inside the image (ok_elf_image_check, shared with
   the CUDA backend's cubins).  */

#include <stdio.h>

#include "elf-image.h"
#include "gcn-arch.h"
#include "hsa-internal.h"

bool
gcn_elf_check (const unsigned char *image, size_t size, unsigned *mach,
	       char *err, size_t errlen)
{
  Elf64_Ehdr eh;
  if (!ok_elf_image_check (image, size, "code object", OK_EM_AMDGPU,
			   "EM_AMDGPU", &eh, err, errlen))
    return false;
  if (eh.e_phnum == 0)
    {
      snprintf (err, errlen, "code object has no loadable segments (not a"
		" linked GCN executable)");
      return false;
    }
  *mach = eh.e_flags & OK_EF_AMDGPU_MACH_MASK;
  return true;
}
