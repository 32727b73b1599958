/* The check of a cubin before a device loads it, shared by the CUDA
   backend (the cubin it hands the driver, which reads what the header
   tables point to in place and may crash instead of failing on a damaged
   one) and the emulated nvidia device (every cubin of an image, as a GPU
   of each one's architecture would load it, so that the cubins of a
   program run on no GPU are checked all the same).  */

#ifndef OFFLOADKIT_CUBIN_CHECK_H
#define OFFLOADKIT_CUBIN_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "offload-desc.h"

/* Check the cubin TGT of DESC (image_format OK_IMAGE_CUBIN): a
   well-formed CUDA ELF executable (common/elf-reader.h) for the
   architecture TGT says, sm_ARCH by its e_flags, that defines each of
   the first NUM_FUNCS names of TGT's function table as a function and
   each of the first NUM_VARS of its variable table as a variable of the
   size the host table gives (a pointer for a `declare target link'
   variable): what the plugin will look up once the driver has loaded it.
   False with one sentence in ERR, naming the cubin ("cubin for sm_90 is
   truncated (...)", "cubin for sm_90 defines no function 'main$_omp_fn$0'",
   "cubin for sm_90 has 2048 bytes of variable 'g', expected 4096").  */
bool ok_cubin_check (const struct ok_openmp_target *desc,
		     const struct ok_tgt_desc *tgt, size_t num_funcs,
		     size_t num_vars, char *err, size_t errlen);

#endif /* OFFLOADKIT_CUBIN_CHECK_H */
