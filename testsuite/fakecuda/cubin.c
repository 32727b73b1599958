/* The fake libcuda's cubin reader: ELF64 read with libelf, EM_CUDA, the
   architecture in e_flags (refused unless the device runs it), kernels
   and variables from the symbol table.  See image.h.  */

#define _GNU_SOURCE
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

#define FK_EM_CUDA 190
#define FK_STO_CUDA_ENTRY 0x10

size_t
fk_elf_size (const unsigned char *image)
{
  if (memcmp (image, ELFMAG, SELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64)
    return 0;
  Elf64_Ehdr eh;
  memcpy (&eh, image, sizeof eh);
  if (eh.e_shentsize != sizeof (Elf64_Shdr) || eh.e_shoff > (1u << 30))
    return 0;
  size_t end = eh.e_shoff + (size_t) eh.e_shnum * sizeof (Elf64_Shdr);
  if (eh.e_phnum > 0 && eh.e_phoff < (1u << 30)
      && eh.e_phoff + (size_t) eh.e_phnum * eh.e_phentsize > end)
    end = eh.e_phoff + (size_t) eh.e_phnum * eh.e_phentsize;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh;
      memcpy (&sh, image + eh.e_shoff + i * sizeof sh, sizeof sh);
      /* Sections that are memory on the device, not bytes of the image:
	 SHT_NOBITS and NVIDIA's reservations of global (0x70000007),
	 local (0x70000009), shared (0x7000000a) and reserved shared
	 (0x70000015) memory, as cuobjdump names them.  */
      if (sh.sh_type == 0x70000007u || sh.sh_type == 0x70000009u
	  || sh.sh_type == 0x7000000au || sh.sh_type == 0x70000015u)
	continue;
      if (sh.sh_type != SHT_NOBITS && sh.sh_offset < (1u << 30)
	  && sh.sh_size < (1u << 30) && sh.sh_offset + sh.sh_size > end)
	end = sh.sh_offset + sh.sh_size;
    }
  return end;
}

/* The SM architecture a cubin's e_flags give.  CUDA 13's ptxas writes ELF
   ABI version 8 with the architecture in bits 8-15 (sm_90: 0x6005a04);
   earlier cubins (ABI version 7 and below) have it in bits 0-7 and the
   virtual architecture in bits 16-23 (sm_80: 0x500550).  */
static int
fk_cubin_sm (unsigned abiversion, unsigned long flags)
{
  if (abiversion >= 8)
    return (int) ((flags >> 8) & 0xff);
  return (int) (flags & 0xff);
}

/* Whether code for SM runs on a DEVICE_SM device: same major, minor not
   newer.  */
static bool
fk_sm_runs (int sm, int device_sm)
{
  return sm / 10 == device_sm / 10 && sm % 10 <= device_sm % 10;
}

/* NVIDIA's kernel information (.nv.info.KERNEL, SHT_CUDA_INFO): records
   of one byte of format, one of attribute, then for EIFMT_HVAL two bytes
   of value, for EIFMT_SVAL two bytes of size and that many of data (as
   NVIDIA's cuobjdump -elf decodes them).  EIATTR_KPARAM_INFO's data
   describes one parameter: 32 bits of index, 16 of ordinal, 16 of offset
   and 32 whose top 14 bits are its size.  */
#define FK_EIFMT_NVAL 1
#define FK_EIFMT_HVAL 3
#define FK_EIFMT_SVAL 4
#define FK_EIATTR_KPARAM_INFO 0x17

/* F's parameters from the kernel information DATA[0, SIZE) of a real
   cubin; false when it has none.  */
static bool
fk_kparams (struct fk_func *f, const unsigned char *data, size_t size)
{
  int n = 0;
  size_t p = 0;
  while (p + 2 <= size)
    {
      unsigned fmt = data[p], attr = data[p + 1];
      p += 2;
      if (fmt == FK_EIFMT_NVAL)
	continue;
      if (p + 2 > size)
	break;
      size_t len = data[p] | (size_t) data[p + 1] << 8;
      p += 2;
      if (fmt == FK_EIFMT_HVAL)
	continue;
      if (fmt != FK_EIFMT_SVAL || p + len > size)
	break;
      if (attr == FK_EIATTR_KPARAM_INFO && len >= 12)
	{
	  unsigned ordinal = data[p + 4] | (unsigned) data[p + 5] << 8;
	  uint32_t packed;
	  memcpy (&packed, data + p + 8, 4);
	  if (ordinal < 16)
	    {
	      f->param_size[ordinal] = packed >> 18;
	      if ((int) ordinal + 1 > n)
		n = (int) ordinal + 1;
	    }
	}
      p += len;
    }
  if (n > 0)
    f->nparams = n;
  return n > 0;
}

/* The data of section NAME of ELF, or NULL.  */
static Elf_Data *
fk_section_data (Elf *elf, size_t shstrndx, const char *name)
{
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      const char *n;
      if (gelf_getshdr (scn, &sh) != NULL
	  && (n = elf_strptr (elf, shstrndx, sh.sh_name)) != NULL
	  && strcmp (n, name) == 0)
	return elf_getdata (scn, NULL);
    }
  return NULL;
}

/* Kernels are the STT_FUNC symbols (those marked as entries when any is),
   with the parameters their kernel information gives (a cubin without
   any, one the tests make, gets GCC's three 64-bit OpenMP ones),
   variables the STT_OBJECT ones, initialised from their section.  */
CUresult
fk_parse_cubin (const unsigned char *image, size_t size, int device_sm,
		struct fk_image *img, char *err, size_t errlen)
{
  if (size < sizeof (Elf64_Ehdr) || memcmp (image, ELFMAG, SELFMAG) != 0
      || image[EI_CLASS] != ELFCLASS64)
    {
      snprintf (err, errlen, "fake cubin loader: not an ELF64 image");
      return CUDA_ERROR_INVALID_IMAGE;
    }
  /* libelf may want to write; give it a copy.  */
  char *copy = malloc (size);
  if (copy == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy (copy, image, size);
  elf_version (EV_CURRENT);
  Elf *elf = elf_memory (copy, size);
  CUresult res = CUDA_SUCCESS;
  GElf_Ehdr eh;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF
      || gelf_getehdr (elf, &eh) == NULL)
    {
      snprintf (err, errlen, "fake cubin loader: corrupt ELF: %s",
		elf_errmsg (-1));
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  if (eh.e_machine != FK_EM_CUDA)
    {
      snprintf (err, errlen, "fake cubin loader: e_machine %u, not EM_CUDA",
		eh.e_machine);
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  int sm = fk_cubin_sm (eh.e_ident[EI_ABIVERSION], eh.e_flags);
  if (sm > img->target_sm)
    img->target_sm = sm;
  if (!fk_sm_runs (sm, device_sm))
    {
      snprintf (err, errlen, "fake cubin loader: cubin for sm_%d cannot run"
		" on sm_%d", sm, device_sm);
      res = CUDA_ERROR_NO_BINARY_FOR_GPU;
      goto out;
    }
  size_t shstrndx;
  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    {
      snprintf (err, errlen, "fake cubin loader: corrupt ELF: %s",
		elf_errmsg (-1));
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
	continue;
      Elf_Data *data = elf_getdata (scn, NULL);
      if (data == NULL || sh.sh_entsize == 0)
	{
	  snprintf (err, errlen, "fake cubin loader: corrupt symbol table");
	  res = CUDA_ERROR_INVALID_IMAGE;
	  goto out;
	}
      size_t nsyms = sh.sh_size / sh.sh_entsize;
      /* Real cubins mark kernels (entry points) with STO_CUDA_ENTRY in
	 st_other; their other functions are not launchable.  Without any
	 mark, every function counts.  */
      bool marked = false;
      for (size_t k = 0; k < nsyms; k++)
	{
	  GElf_Sym sym;
	  if (gelf_getsym (data, (int) k, &sym) != NULL
	      && GELF_ST_TYPE (sym.st_info) == STT_FUNC
	      && (sym.st_other & FK_STO_CUDA_ENTRY))
	    marked = true;
	}
      for (size_t k = 0; k < nsyms; k++)
	{
	  GElf_Sym sym;
	  if (gelf_getsym (data, (int) k, &sym) == NULL
	      || sym.st_shndx == SHN_UNDEF)
	    continue;
	  const char *name = elf_strptr (elf, sh.sh_link, sym.st_name);
	  if (name == NULL || *name == '\0')
	    continue;
	  int type = GELF_ST_TYPE (sym.st_info);
	  if (type == STT_FUNC
	      && (!marked || (sym.st_other & FK_STO_CUDA_ENTRY)))
	    {
	      struct fk_func *f = fk_add_func (img, name, strlen (name));
	      char *info = f ? malloc (strlen (name) + 10) : NULL;
	      Elf_Data *d = NULL;
	      if (info != NULL)
		{
		  sprintf (info, ".nv.info.%s", name);
		  d = fk_section_data (elf, shstrndx, info);
		  free (info);
		}
	      if (f != NULL
		  && !(d != NULL && fk_kparams (f, d->d_buf, d->d_size)))
		{
		  f->nparams = 3;
		  f->param_size[0] = f->param_size[1] = f->param_size[2] = 8;
		}
	    }
	  else if (type == STT_OBJECT)
	    {
	      struct fk_global *g = fk_add_global (img, name, strlen (name),
						   sym.st_size);
	      Elf_Scn *ds = elf_getscn (elf, sym.st_shndx);
	      GElf_Shdr dsh;
	      Elf_Data *dd;
	      if (g != NULL && g->size > 0 && ds != NULL
		  && gelf_getshdr (ds, &dsh) != NULL
		  && dsh.sh_type == SHT_PROGBITS
		  && (dd = elf_getdata (ds, NULL)) != NULL
		  && sym.st_value <= dd->d_size
		  && g->size <= dd->d_size - sym.st_value
		  && (g->init = malloc (g->size)) != NULL)
		memcpy (g->init, (char *) dd->d_buf + sym.st_value, g->size);
	    }
	}
    }
 out:
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  return res;
}
