/* Checking a GCN code object before the HSA runtime sees it.  The runtime
   trusts what it loads: a truncated or corrupt image can crash it.  So the
   code object is checked by the ELF reader every part of offloadkit uses
   (common/elf-reader.h): the ELF header, the program and section header
   tables and every section and segment with contents lie inside the
   image.  */

#include <stdio.h>
#include <string.h>

#include "elf-reader.h"
#include "gcn-arch.h"
#include "hsa-internal.h"

bool
gcn_elf_check (const unsigned char *image, size_t size, unsigned *mach,
	       char *err, size_t errlen)
{
  struct ok_elf elf;
  if (!ok_elf_open (&elf, image, size, "code object", NULL, err, errlen)
      || !ok_elf_check_kind (&elf, OK_EM_AMDGPU, "EM_AMDGPU", ET_NONE, err,
			     errlen)
      || !ok_elf_check_layout (&elf, false, err, errlen))
    return false;
  if (elf.eh.e_phnum == 0)
    {
      snprintf (err, errlen, "code object has no loadable segments (not a"
		" linked GCN executable)");
      return false;
    }
  *mach = elf.eh.e_flags & OK_EF_AMDGPU_MACH_MASK;
  return true;
}

bool
gcn_elf_section_size (const unsigned char *image, size_t size,
		      const char *name, uint64_t *section_size)
{
  struct ok_elf elf;
  char err[8];
  if (!ok_elf_open (&elf, image, size, "code object", NULL, err, sizeof err))
    return false;
  Elf64_Shdr sh;
  for (unsigned i = 0; ok_elf_section (&elf, i, &sh); i++)
    {
      const char *nm = ok_elf_section_name (&elf, &sh);
      if (nm != NULL && strcmp (nm, name) == 0)
	{
	  *section_size = sh.sh_size;
	  return true;
	}
    }
  return false;
}
