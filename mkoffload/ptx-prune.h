/* Leaving out of what ptxas compiles the functions that no kernel can
   call.

   The modules of a link hold every function of each library member that
   the nvptx linker took, and it took a member for any of its names that
   another member used: a program with one target region gets libgomp's
   tasking, its hash tables and the like, which it never calls.  ptxas
   compiled all of them, once per architecture (hello-offload.c: 96
   function definitions, 53 of them unreachable).  So before
   ahead-of-time compilation, each function definition that nothing
   reachable names is removed: the reachable ones are the kernels, every
   function that a variable's initialiser, a marker comment
   ("//:FUNC_MAP ...") or any other text outside function bodies names,
   and every function that the body of a reachable one names.  A name is
   any identifier token, so a function whose address is taken counts as
   called.  nvlink leaves unreached functions out of the linked cubin in
   any case: what this saves is ptxas' time.  The PTX embedded for JIT
   compilation stays whole.

   A module that cannot be parsed (ptx-parse.h) is left whole, and all of
   its text counts as reachable.  */

#ifndef OFFLOADKIT_PTX_PRUNE_H
#define OFFLOADKIT_PTX_PRUNE_H

#include <stddef.h>

/* Prune MODULES, the N NUL-terminated PTX texts of one link.  Store in
   *PRUNED (malloc'd, N entries) each module's new text (malloc'd), or
   NULL where nothing of it is removed, and in *NDEFS the number of
   function definitions in all.  Return the number removed.  */
size_t mko_ptx_prune (char *const *modules, size_t n, char ***pruned,
		      size_t *ndefs);

#endif /* OFFLOADKIT_PTX_PRUNE_H */
