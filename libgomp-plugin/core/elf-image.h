/* The bounds check of an ELF device image (a cubin, a GCN code object)
   that both GPU backends make before their runtime sees the image: the
   CUDA driver and the HSA runtime read the header tables, and what they
   point to, in place and trust them, so a truncated or corrupt image can
   crash them instead of failing.  */

#ifndef OFFLOADKIT_ELF_IMAGE_H
#define OFFLOADKIT_ELF_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>

/* Check that IMG[0, SIZE) is a 64-bit little-endian ELF file for
   e_machine MACHINE (named MACHINE_NAME, "EM_CUDA", in messages) whose
   program and section header tables, and every segment and section with
   contents in the file, lie inside it; that it does not use extended
   section numbering; and that its section name table is one of its
   sections.  On success copy its ELF header to *EH (IMG need not be
   aligned); else write why to ERR, naming the image NAME ("cubin for
   sm_90", "code object"), and return false.  */
bool ok_elf_image_check (const unsigned char *img, size_t size,
			 const char *name, unsigned machine,
			 const char *machine_name, Elf64_Ehdr *eh, char *err,
			 size_t errlen);

#endif /* OFFLOADKIT_ELF_IMAGE_H */
