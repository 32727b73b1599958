/* The check of a cubin before a device loads it; see cubin-check.h.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cubin-check.h"
#include "elf-reader.h"
#include "gomp-abi.h"

bool
ok_cubin_check (const struct ok_openmp_target *desc,
		const struct ok_tgt_desc *tgt, size_t num_funcs,
		size_t num_vars, char *err, size_t errlen)
{
  char name[32];
  snprintf (name, sizeof name, "cubin for sm_%u", (unsigned) tgt->arch);
  struct ok_elf elf;
  size_t size = (size_t) (tgt->image_end - tgt->image_start);
  if (!ok_elf_open (&elf, tgt->image_start, size, name, NULL, err, errlen)
      || !ok_elf_check_kind (&elf, OK_EM_CUDA, "EM_CUDA", ET_EXEC, err,
			     errlen)
      || !ok_elf_check_layout (&elf, true, err, errlen))
    return false;
  unsigned sm = ok_elf_cuda_sm (&elf);
  if (sm != tgt->arch)
    {
      if (sm == 0)
	snprintf (err, errlen, "%s has CUDA ELF ABI version %u, not one"
		  " offloadkit reads (%u or %u), so its architecture is"
		  " unknown", name, (unsigned) elf.eh.e_ident[EI_ABIVERSION],
		  OK_ELFABIVERSION_CUDA_V1, OK_ELFABIVERSION_CUDA_V2);
      else
	snprintf (err, errlen, "%s is for sm_%u by its ELF header (e_flags"
		  " %#x)", name, sm, (unsigned) elf.eh.e_flags);
      return false;
    }
  if (!ok_elf_check_defined (&elf, tgt->func_names, num_funcs, STT_FUNC,
			     NULL, "function", err, errlen))
    return false;
  uint64_t *sizes = calloc (num_vars ? num_vars : 1, sizeof *sizes);
  if (sizes == NULL)
    {
      snprintf (err, errlen, "out of memory checking the %s", name);
      return false;
    }
  for (size_t i = 0; i < num_vars; i++)
    {
      uintptr_t word = (uintptr_t) desc->host.vars[2 * i + 1];
      sizes[i] = (word & OK_GOMP_LINK_BIT) ? sizeof (void *)
	: (uint64_t) (word & ~OK_GOMP_LINK_BIT);
    }
  bool ok = ok_elf_check_defined (&elf, tgt->var_names, num_vars,
				  STT_OBJECT, sizes, "variable", err,
				  errlen);
  free (sizes);
  return ok;
}
