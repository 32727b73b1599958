/* wrapper-runtime.c alone, as offloadkit's build compiles it to the
   assembler text that mkoffload embeds in every wrapper (Makefrag.am):
   after the descriptor declarations and the C library's headers, with
   the tables of each link left to the link.  */

#define _GNU_SOURCE 1

#include "offload-desc.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrapper-runtime.c"
