/* The OpenACC launch dimensions of an amdgcn link (gcn-oacc-dims.c).  */

#ifndef OFFLOADKIT_GCN_OACC_DIMS_H
#define OFFLOADKIT_GCN_OACC_DIMS_H

#include "mkoffload.h"
#include "offload-desc.h"

/* The launch dimensions of CTX's functions from the ";; OPENACC-DIMS:"
   lines of the accel compiler's assembler ASM_FILE, in function-table
   order, in *DIMS (malloc'd; NULL when no function has any: an OpenMP
   program's functions have none).  Return 0, or -1 after reporting one
   error.  */
int mko_gcn_read_dims (struct mko_ctx *ctx, const char *asm_file,
		       struct ok_oacc_dims **dims);

#endif /* OFFLOADKIT_GCN_OACC_DIMS_H */
