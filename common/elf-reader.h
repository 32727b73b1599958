/* One reader of ELF files for mkoffload and the plugins: the objects and
   cubins NVIDIA's ptxas and nvlink write, the cubins the CUDA backend
   hands the driver, the GCN code objects the HSA backend hands the
   runtime, the host objects mkoffload is given.  Whatever reads one of
   them checks it here first, so that every reader agrees on what a
   well-formed file is: a file refused (or taken) by one is refused (or
   taken) by all.

   The file is read in place, never written, at any alignment (structures
   are copied out), and nothing points outside it once ok_elf_check_layout
   has passed: the header tables and every section and segment with
   contents in the file lie inside it, symbol and string tables are what
   their headers say, notes are whole.  No libelf: the plugins must not
   depend on it, and the checks are the point.

   Facts, from the ELF specification (gABI) and what NVIDIA's tools write
   (ptxas and nvlink of CUDA 11.8, 12.4 and 13.0, and the names NVIDIA's
   cuobjdump gives), cross-checked by the testsuite against the objects and
   cubins of the toolkits it finds:

   - Sections that occupy no bytes of the file: SHT_NOBITS, and NVIDIA's
     memory reservations, processor-specific types whose size is memory on
     the device, not bytes in the file: SHT_CUDA_GLOBAL (.nv.global,
     uninitialised device globals, in ptxas' relocatable objects of every
     version; nvlink's cubins have SHT_NOBITS instead), SHT_CUDA_SHARED
     (.nv.shared.*, .nv_debug.shared in ptxas' objects), SHT_CUDA_LOCAL
     (.nv.local.*) and SHT_CUDA_RESERVED_SHARED, which nvlink makes of
     SHT_NOBITS input sections.  Their sh_offset may point anywhere, past
     the end of the file included.  Every other NVIDIA type has contents
     (.nv.info, .nv.constantN: a constant bank's initial bytes, zeros
     included).
   - CUDA's e_flags, by EI_ABIVERSION: 7 (OSABI 0x33, CUDA up to 12.x)
     has the SM in bits 0-7 and the PTX target's in bits 16-23, 0x400 for
     64-bit addresses and 0x800 for an "a" variant (sm_90a); 8 (OSABI 0x41,
     CUDA 13) has the SM in bits 8-15.
   - Symbols: in ptxas' relocatable objects a variable is of type 13
     (STT_LOPROC), in nvlink's cubins STT_OBJECT; kernels and device
     functions are STT_FUNC in both.  nvlink drops device functions that
     nothing references, never kernels or variables.
   - NVIDIA's notes (owner "NVIDIA Corp", from CUDA 13): .note.nv.cuinfo,
     type 1000, a descriptor of four 16-bit words: its version (2), the
     SM of the PTX the code was made from (30 for GCC 12's sm_30 PTX,
     whatever the SM of the code), the toolkit's version (130 for 13.0)
     and 0; .note.nv.tkinfo, type 2000, the tools and their options.
   - nvlink of CUDA 11.8 takes an input named *.o for a host object that
     embeds device code, and links nothing from a relocatable cubin so
     named (an empty cubin, and no error); *.cubin inputs work with every
     version.  */

#ifndef OFFLOADKIT_ELF_READER_H
#define OFFLOADKIT_ELF_READER_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NVIDIA's CUDA ELF.  */
#define OK_EM_CUDA 190u
#define OK_ELFOSABI_CUDA_V1 0x33u
#define OK_ELFOSABI_CUDA_V2 0x41u
#define OK_ELFABIVERSION_CUDA_V1 7u
#define OK_ELFABIVERSION_CUDA_V2 8u
/* e_flags of ABI version 7.  */
#define OK_EF_CUDA_SM 0xffu
#define OK_EF_CUDA_TEXMODE_UNIFIED 0x100u
#define OK_EF_CUDA_64BIT_ADDRESS 0x400u
#define OK_EF_CUDA_ACCELERATORS_V1 0x800u
#define OK_EF_CUDA_VIRTUAL_SM 0xff0000u
#define OK_EF_CUDA_VIRTUAL_SM_SHIFT 16
/* e_flags of ABI version 8.  */
#define OK_EF_CUDA_SM_MASK 0xff00u
#define OK_EF_CUDA_SM_SHIFT 8

/* NVIDIA's section types (the names are cuobjdump's, SHT_ added).  */
#define OK_SHT_CUDA_INFO 0x70000000u
#define OK_SHT_CUDA_CALLGRAPH 0x70000001u
#define OK_SHT_CUDA_PROTOTYPE 0x70000002u
#define OK_SHT_CUDA_RESOLVED_RELA 0x70000003u
#define OK_SHT_CUDA_METADATA 0x70000004u
#define OK_SHT_CUDA_CONSTANT 0x70000006u
#define OK_SHT_CUDA_GLOBAL 0x70000007u
#define OK_SHT_CUDA_GLOBAL_INIT 0x70000008u
#define OK_SHT_CUDA_LOCAL 0x70000009u
#define OK_SHT_CUDA_SHARED 0x7000000au
#define OK_SHT_CUDA_RELOCINFO 0x7000000bu
#define OK_SHT_CUDA_RESERVED_SHARED 0x70000015u
#define OK_SHT_CUDA_CONSTANT_B0 0x70000064u

/* NVIDIA's notes.  */
#define OK_NOTE_NVIDIA_OWNER "NVIDIA Corp"
#define OK_NT_CUDA_CUINFO 1000u
#define OK_NT_CUDA_TKINFO 2000u

/* An ELF file being read: BUF[0, SIZE), called NAME in messages (a quoted
   path, "cubin for sm_90", "code object").  */
struct ok_elf
{
  const unsigned char *buf;
  size_t size;
  const char *name;
  Elf64_Ehdr eh;		/* Copied out of BUF.  */
};

/* Check that BUF[0, SIZE) begins with a whole ELF64 little-endian header
   and fill *ELF; NAME (kept, not copied) names it in messages.  CLASS_NOTE,
   when not NULL, ends the message for another class or byte order
   (" (only x86_64 hosts are supported)").  False with one sentence in
   ERR: "NAME is empty", "NAME is not an ELF file (it begins with ...)",
   "NAME is not a 64-bit little-endian ELF file (class 1, data 1)", "NAME
   is truncated (40 bytes: its ELF header needs 64)".  */
bool ok_elf_open (struct ok_elf *elf, const void *buf, size_t size,
		  const char *name, const char *class_note, char *err,
		  size_t errlen);

/* Check that ELF, opened, is for machine MACHINE (NAME_OF_MACHINE in
   messages: "EM_CUDA") when MACHINE is not EM_NONE, and of type TYPE
   when TYPE is not ET_NONE.  False with "NAME is for ELF machine 62, not
   EM_CUDA (190)" or "NAME has ELF type 1, not 2 (ET_EXEC)" in ERR.  */
bool ok_elf_check_kind (const struct ok_elf *elf, unsigned machine,
			const char *name_of_machine, unsigned type,
			char *err, size_t errlen);

/* Check the layout of ELF, opened: the section and program header tables
   have entries of ELF64's sizes and lie inside the file; every section
   with contents in the file (ok_elf_has_contents) and the file part of
   every segment lie inside it; there is no extended section numbering
   (e_shnum 0 with a table); the section name table is a string table
   (when there is one); symbol tables have entries of ELF64's size and a
   string table as their link; every note of a note section is whole.
   When NEED_SECTIONS, a file without a section header table is refused.
   False with one sentence in ERR naming what is wrong and where ("NAME is
   truncated (5440 bytes: its section 20 would end at byte 6144)").  */
bool ok_elf_check_layout (const struct ok_elf *elf, bool need_sections,
			  char *err, size_t errlen);

/* Whether a section of header SH in ELF has bytes in the file: not
   SHT_NULL, not SHT_NOBITS, not one of NVIDIA's memory reservations in an
   EM_CUDA file.  */
bool ok_elf_has_contents (const struct ok_elf *elf, const Elf64_Shdr *sh);

/* The number of sections of ELF (after ok_elf_check_layout), and section
   I's header (false when there is no section I).  */
unsigned ok_elf_shnum (const struct ok_elf *elf);
bool ok_elf_section (const struct ok_elf *elf, unsigned i, Elf64_Shdr *sh);

/* The NUL-terminated string at OFFSET of string-table section STRTAB of
   ELF, or NULL when there is none there.  ok_elf_section_name: the name
   of the section of header SH.  */
const char *ok_elf_string (const struct ok_elf *elf, unsigned strtab,
			   uint64_t offset);
const char *ok_elf_section_name (const struct ok_elf *elf,
				 const Elf64_Shdr *sh);

/* What ok_elf_find_symbols found of one name: the definition (st_shndx
   not SHN_UNDEF) in a symbol table of ELF, a global or weak one if there
   is one, else a local one.  */
struct ok_elf_symbol
{
  bool found;
  unsigned char type;		/* STT_FUNC, STT_OBJECT, ...  */
  unsigned char bind;		/* STB_GLOBAL, ...  */
  uint16_t shndx;
  uint64_t value;
  uint64_t size;
};

/* Look each of the N names NAMES up among the symbols ELF defines, in one
   pass over its symbol tables, into SYMS[0, N).  False only when memory
   runs out (ERR says so).  */
bool ok_elf_find_symbols (const struct ok_elf *elf, const char *const *names,
			  size_t n, struct ok_elf_symbol *syms, char *err,
			  size_t errlen);

/* A note of ELF: its owner, type and descriptor, inside the file.  */
struct ok_elf_note
{
  const char *owner;		/* NUL-terminated.  */
  uint32_t type;
  const unsigned char *desc;
  size_t desc_size;
};

/* Step through every note of ELF's note sections (after
   ok_elf_check_layout): *CURSOR starts at 0; true with the next note in
   *NOTE, false when there is none.  */
bool ok_elf_next_note (const struct ok_elf *elf, uint64_t *cursor,
		       struct ok_elf_note *note);

/* The SM a CUDA file is for, from its e_flags (sm_90: 90), or 0 when its
   ABI version is not one of those above.  */
unsigned ok_elf_cuda_sm (const struct ok_elf *elf);

/* From a CUDA file's .note.nv.cuinfo: the SM of the PTX it was made
   from and the toolkit's version (130 for CUDA 13.0).  False when it has
   no such note (CUDA before 13).  */
bool ok_elf_cuda_info (const struct ok_elf *elf, unsigned *ptx_sm,
		       unsigned *toolkit);

/* Check that ELF defines each of the N names NAMES as a symbol of type
   TYPE (STT_FUNC, STT_OBJECT) and, when SIZES is not NULL, of SIZES[I]
   bytes; WHAT names them in messages ("function", "variable").  False
   with the first problem in ERR: "NAME defines no function 'f'", "NAME
   defines 'f' as a symbol of type 13, not 2", "NAME has 2048 bytes of
   variable 'g', expected 4096".  */
bool ok_elf_check_defined (const struct ok_elf *elf,
			   const char *const *names, size_t n, unsigned type,
			   const uint64_t *sizes, const char *what, char *err,
			   size_t errlen);

#endif /* OFFLOADKIT_ELF_READER_H */
