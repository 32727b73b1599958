/* Checking a GCN code object before the HSA runtime sees it.  The runtime
   trusts what it loads: a truncated or corrupt image can crash it.  So the
   ELF header, the program and section header tables and every section
   with contents must lie inside the image (ok_elf_image_check, shared with
   the CUDA backend's cubins).  */

#include <stdio.h>
#include <string.h>

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

/* IMAGE[0, SIZE) passed gcn_elf_check: its section headers and their
   name table lie inside it.  */
bool
gcn_elf_section_size (const unsigned char *image, size_t size,
		      const char *name, uint64_t *section_size)
{
  Elf64_Ehdr eh;
  memcpy (&eh, image, sizeof eh);
  if (eh.e_shoff == 0 || eh.e_shstrndx >= eh.e_shnum)
    return false;
  Elf64_Shdr strtab;
  memcpy (&strtab, image + eh.e_shoff + (size_t) eh.e_shstrndx
	  * eh.e_shentsize, sizeof strtab);
  size_t want = strlen (name) + 1;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh;
      memcpy (&sh, image + eh.e_shoff + (size_t) i * eh.e_shentsize,
	      sizeof sh);
      if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset
	  || sh.sh_name >= strtab.sh_size
	  || strtab.sh_size - sh.sh_name < want)
	continue;
      if (memcmp (image + strtab.sh_offset + sh.sh_name, name, want) == 0)
	{
	  *section_size = sh.sh_size;
	  return true;
	}
    }
  return false;
}
