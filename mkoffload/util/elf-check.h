/* Sanity checks of the host objects given to mkoffload, so that a damaged
   or foreign input gets one clear message from us instead of an obscure
   failure deep inside the accel compiler; and of the ELF files the tools
   mkoffload runs produce, so that a bad one is not embedded (or cached)
   to fail later, far from its cause.  All of them through the ELF reader
   the plugins use (common/elf-reader.h), so that what mkoffload embeds
   is what they load.  */

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

/* Check that BUF[0, SIZE), reported as NAME, is a well-formed 64-bit
   little-endian ELF file with a section header table (the ELF reader's
   checks, common/elf-reader.h: headers, every section and segment
   inside the file, symbol tables, notes), then open it with libelf
   (elf_version called already), for readers that go on with libelf
   (the GCN code-object reader).  CLASS_NOTE, when not NULL, is added to
   the message for a wrong class or byte order.  Return the handle, for
   elf_end, with the header in *EH; or NULL after reporting one error
   ("'X' is not an ELF file (...)", "'X' is truncated (...)", ...).  */
struct Elf *ok_elf_memory (const char *name, const unsigned char *buf,
			   size_t size, const char *class_note,
			   Elf64_Ehdr *eh);

/* What a CUDA ELF file that NVIDIA's ptxas or nvlink wrote must be:
   of ELF type TYPE (ET_REL for ptxas' objects, ET_EXEC for nvlink's
   cubins), for SM (sm_90: 90) by its e_flags, defining a function for
   each of the NFUNCTIONS names FUNCTIONS and a variable for each of the
   NVARIABLES names VARIABLES (what the plugin looks up once the driver
   has loaded the cubin).  */
struct ok_cuda_want
{
  unsigned type;
  unsigned sm;
  const char *const *functions;
  size_t nfunctions;
  const char *const *variables;
  size_t nvariables;
};

/* What is wrong with BUF[0, SIZE), reported as 'NAME', as a CUDA ELF
   file that WANT describes: a malloc'd description ("'X' is empty",
   "'X' is truncated (...)", "'X' is for sm_80 by its ELF header (...)",
   "'X' defines no function 'F'"...), or NULL when nothing is.  Reports
   nothing.  */
char *ok_cuda_elf_problem (const char *name, const unsigned char *buf,
			   size_t size, const struct ok_cuda_want *want);

/* The same for the file PATH ("'X' does not exist" when it is
   missing).  */
char *ok_cuda_file_problem (const char *path,
			    const struct ok_cuda_want *want);

#endif /* OFFLOADKIT_ELF_CHECK_H */
