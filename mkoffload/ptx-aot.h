/* Ahead-of-time compilation of the nvptx image: the PTX modules of one
   link, compiled by NVIDIA's ptxas and linked by nvlink into one
   executable cubin (CUDA ELF) per GPU architecture, so that a device of
   that architecture needs no JIT compilation at load time.  */

#ifndef OFFLOADKIT_PTX_AOT_H
#define OFFLOADKIT_PTX_AOT_H

#include <stddef.h>
#include <stdint.h>

#include "mkoffload.h"

struct mko_ptx_aot
{
  const char *ptxas;		/* Tools to run (paths).  */
  const char *nvlink;
  const int *archs;		/* sm_NN numbers, NARCHS of them.  */
  size_t narchs;
  char *const *modules;		/* NUL-terminated PTX texts.  */
  /* For each module, whether it is this link's own (the program's, the
     function tables) rather than a member of the accel toolchain's
     libraries.  */
  const unsigned char *own;
  size_t nmodules;
  const char *ptx;		/* The file they come from (messages).  */
  /* The cache directory (cache.h's mko_cache_dir), or NULL for none.  */
  const char *cache_dir;
  /* The size to keep it under (cache.h's mko_cache_limit).  */
  uint64_t cache_limit;
};

/* Compile AOT's modules for each of its architectures, running the ptxas
   jobs concurrently (one per online CPU), and store the name of the
   linked cubin for AOT->archs[I] in CUBINS[I].  Library modules (those
   not AOT->own) are taken from, or stored in, the
   cache directory AOT->cache_dir, when there is one.
   The objects and cubins the tools write, and the cache entries, are
   checked before they are used: a damaged cache entry is removed and
   compiled again; a tool that exits with status 0 but leaves an unusable
   file (missing, empty, cut short, a cubin without one of the program's
   kernels, CTX->func_names) is an error.  Return 0, or -1 after
   reporting one error (ptxas' or nvlink's own messages come before
   it).  */
int mko_ptx_aot (struct mko_ctx *ctx, const struct mko_ptx_aot *aot,
		 const char **cubins);

#endif /* OFFLOADKIT_PTX_AOT_H */
