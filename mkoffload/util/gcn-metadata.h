/* The AMDGPU code-object metadata note (NT_AMDGPU_METADATA, a MessagePack
   map: "amdhsa.kernels" is an array of one map per kernel, with keys such
   as ".symbol", ".kernarg_segment_size", ".sgpr_count").  Read only for
   what a kernel descriptor of code object v3 does not carry: the kernarg
   size, which LLVM 13's assembler leaves 0 there.  */

#ifndef OFFLOADKIT_GCN_METADATA_H
#define OFFLOADKIT_GCN_METADATA_H

#include <stddef.h>
#include <stdint.h>

/* Note type and owner of the metadata note.  */
#define OK_NT_AMDGPU_METADATA 32u
#define OK_AMDGPU_NOTE_OWNER "AMDGPU"

/* Called for each unsigned-integer entry KEY = VALUE of the kernel map
   whose ".symbol" is SYMBOL (not NUL-terminated: SYMLEN and KEYLEN
   bytes).  */
typedef void (*ok_gcn_metadata_fn) (const char *symbol, size_t symlen,
				    const char *key, size_t keylen,
				    uint64_t value, void *arg);

/* Scan the note contents DESC[0, LEN).  Return 0, or -1 when they are not
   well-formed MessagePack (truncated, nested too deep); never reads
   outside DESC.  Kernel maps without a ".symbol" string are skipped.  */
int ok_gcn_metadata_scan (const unsigned char *desc, size_t len,
			  ok_gcn_metadata_fn fn, void *arg);

#endif /* OFFLOADKIT_GCN_METADATA_H */
