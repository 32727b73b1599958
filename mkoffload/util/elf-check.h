/* Sanity checks of the host objects given to mkoffload, so that a damaged
   or foreign input gets one clear message from us instead of an obscure
   failure deep inside the accel compiler; and of the ELF files the tools
   mkoffload runs produce, so that a bad one is not embedded (or cached)
   to fail later, far from its cause.  */

#ifndef OFFLOADKIT_ELF_CHECK_H
#define OFFLOADKIT_ELF_CHECK_H

/* Only <elf.h> here, not libelf's headers, so that the users of
   ok_elf_check_input need no libelf flags: struct Elf is libelf's Elf,
   and Elf64_Ehdr is its GElf_Ehdr.  */
#include <elf.h>
#include <stddef.h>
#include <sys/stat.h>

struct Elf;

/* Check that ARG names a readable, well-formed 64-bit little-endian
   x86_64 ELF relocatable object, or an ar archive of such objects, in a
   regular file (ok_open_regular: a FIFO is never opened).  ARG may also
   have lto-wrapper's "ARCHIVE@OFFSET" form (an archive member starting
   at byte OFFSET).  Return 0 with the status of the file (the archive's
   for a member) in *ST, or -1 after reporting one error: "cannot open
   'X': ...", "cannot read 'X': it is a FIFO, not a regular file", "'X' is
   not an ELF object", "'X' is truncated", ...  */
int ok_elf_check_input (const char *arg, struct stat *st);

/* The checks every ELF reader here starts with (the GCN code-object
   reader too), in two steps around the caller's own checks of e_type
   and e_machine.

   Check that BUF[0, SIZE), reported as NAME, starts like a 64-bit
   little-endian ELF object with a complete header, then open it with
   libelf (elf_version called already).  CLASS_NOTE, when not NULL, is
   added to the message for a wrong class or byte order.  Return the
   handle, for elf_end, with the header in *EH; or NULL after reporting
   one error ("'X' is not an ELF object", "'X' is truncated", ...).  */
struct Elf *ok_elf_memory (const char *name, const unsigned char *buf,
			   size_t size, const char *class_note,
			   Elf64_Ehdr *eh);

/* Check that ELF, opened by ok_elf_memory from SIZE bytes with header
   EH, has a section header table (extended numbering included) and
   sections that all lie inside those bytes.  Return 0 with the number of
   sections in *SHNUM, or -1 after reporting one error.  */
int ok_elf_check_sections (const char *name, struct Elf *elf,
			   const Elf64_Ehdr *eh, size_t size,
			   size_t *shnum);

/* What is wrong with BUF[0, SIZE), reported as NAME, as a 64-bit
   little-endian ELF file for machine MACHINE, of type TYPE, whose
   sections all lie inside it and whose symbol tables define a function
   of each of the NFUNCTIONS names FUNCTIONS: a malloc'd description
   ("'X' is empty", "'X' is truncated (...)", "'X' defines no function
   'F'"...), or NULL when nothing is.  Reports nothing.  */
char *ok_elf_image_problem (const char *name, const unsigned char *buf,
			    size_t size, unsigned machine, unsigned type,
			    const char *const *functions, size_t nfunctions);

/* The same for the file PATH ("'X' does not exist" when it is
   missing).  */
char *ok_elf_file_problem (const char *path, unsigned machine,
			   unsigned type, const char *const *functions,
			   size_t nfunctions);

#endif /* OFFLOADKIT_ELF_CHECK_H */
