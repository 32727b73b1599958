/* Sanity checks of the host objects given to mkoffload, so that a damaged
   or foreign input gets one clear message from us instead of an obscure
   failure deep inside the accel compiler.  */

#ifndef OFFLOADKIT_ELF_CHECK_H
#define OFFLOADKIT_ELF_CHECK_H

/* Check that ARG names a readable, well-formed 64-bit little-endian
   x86_64 ELF relocatable object, or an ar archive of such objects.  ARG
   may also have lto-wrapper's "ARCHIVE@OFFSET" form (an archive member
   starting at byte OFFSET).  Return 0, or -1 after reporting one error:
   "cannot open 'X': ...", "'X' is not an ELF object", "'X' is truncated",
   ...  */
int ok_elf_check_input (const char *arg);

#endif /* OFFLOADKIT_ELF_CHECK_H */
