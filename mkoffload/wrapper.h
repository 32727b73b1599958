/* The host-side wrapper object: C source that embeds the device image and
   registers it with libgomp, compiled by the host driver.  */

#ifndef OFFLOADKIT_WRAPPER_H
#define OFFLOADKIT_WRAPPER_H

#include "mkoffload.h"

/* Write the wrapper source for CTX's image to CFILE.  Return 0, or -1
   after reporting one error.  */
int mko_write_wrapper (const struct mko_ctx *ctx, const char *cfile);

/* Compile CFILE into CTX->outname with CTX->collect_gcc.  Return 0, or -1
   after reporting one error.  */
int mko_compile_wrapper (const struct mko_ctx *ctx, const char *cfile);

#endif /* OFFLOADKIT_WRAPPER_H */
