/* Splitting a large PTX module into modules that NVIDIA's ptxas compiles
   within bounded memory.

   ptxas -c's time and memory grow much faster than a module's number of
   functions: GCC's libgomp test for-5.c is one module of some 930
   function definitions that takes ptxas 35 s and 7 GB at -O3 (-O1 too),
   while its eighths (about 116 definitions each) take 1 to 3 s and at
   most 150 MB, and quarters of the larger half already 5 to 9 s and 500
   to 650 MB.  So the program's module, when it has more definitions than
   a chunk holds, is compiled as several modules, which nvlink links like
   any others: each gets the module's preamble and every declaration,
   the definitions of its share of the functions, extern declarations of
   the rest, and the first also the variables' definitions (the others
   extern declarations of them).  A function or variable without
   .visible (static) that another chunk may name is made .visible.

   The module is parsed as ptx-parse.h says, without .file lines (a part
   would lose them); one it cannot parse, or with a static name that
   another module of the link defines as a global one (it would be
   defined twice once made .visible), stays whole: splitting is only ever
   a saving.  */

#ifndef OFFLOADKIT_PTX_SPLIT_H
#define OFFLOADKIT_PTX_SPLIT_H

#include <stddef.h>

/* The most function definitions a chunk holds.  */
#define MKO_PTX_CHUNK_DEFS 96

/* Split MODULE (a NUL-terminated PTX text) into chunks of at most
   MAX_DEFS function definitions each.  OTHERS (NOTHERS NUL-terminated
   texts) are the link's other modules.  Return the number of chunks,
   their malloc'd texts in *CHUNKS (malloc'd); or 0, with *CHUNKS NULL,
   when MODULE stays whole (it has at most MAX_DEFS definitions, or
   cannot be split safely: see above).  */
size_t mko_ptx_split (const char *module, char *const *others,
		      size_t nothers, size_t max_defs, char ***chunks);

#endif /* OFFLOADKIT_PTX_SPLIT_H */
