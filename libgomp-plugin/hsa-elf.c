/* Checking a GCN code object before the HSA runtime sees it.  The runtime
   trusts what it loads: a truncated or corrupt image can crash it.  So the
   ELF header, the program and section header tables and every section
   with contents must lie inside the image.  Read with explicit
   little-endian loads (no <elf.h> structures, no alignment assumptions:
   the image may sit anywhere in the host binary).  */

#include <stdio.h>
#include <string.h>

#include "hsa-internal.h"

#define EM_AMDGPU_ 224		/* e_machine of AMDGPU code objects.  */
#define EF_AMDGPU_MACH_MASK 0xffu
#define SHT_NOBITS_ 8

static uint64_t
rd (const unsigned char *p, unsigned n)
{
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
}

/* [OFF, OFF + LEN) inside an image of SIZE bytes, without overflow.  */
static bool
inside (uint64_t off, uint64_t len, size_t size)
{
  return off <= size && len <= size - off;
}

/* A table of NUM headers of ENTSIZE bytes (at least MINSIZE, ELF64's)
   at offset OFF lies within the SIZE bytes of the code object.  */
static bool
headers_inside (const char *what, uint64_t off, unsigned entsize,
		unsigned minsize, unsigned num, size_t size, char *err,
		size_t errlen)
{
  if (num > 0
      && (entsize < minsize || !inside (off, (uint64_t) entsize * num, size)))
    {
      snprintf (err, errlen, "code object's %s headers (%u at offset"
		" %llu) lie outside its %zu bytes: truncated or corrupt",
		what, num, (unsigned long long) off, size);
      return false;
    }
  return true;
}

bool
hsa_elf_check (const unsigned char *image, size_t size, unsigned *mach,
	       char *err, size_t errlen)
{
  if (image == NULL || size < 64)
    {
      snprintf (err, errlen, "code object of %zu bytes is truncated (an ELF"
		" header alone is 64)", size);
      return false;
    }
  if (memcmp (image, "\177ELF", 4) != 0)
    {
      snprintf (err, errlen, "code object is not an ELF file");
      return false;
    }
  if (image[4] != 2 || image[5] != 1)
    {
      snprintf (err, errlen, "code object is not little-endian ELF64 (class"
		" %u, data %u)", image[4], image[5]);
      return false;
    }
  unsigned machine = (unsigned) rd (image + 18, 2);
  if (machine != EM_AMDGPU_)
    {
      snprintf (err, errlen, "code object is for ELF machine %u, not"
		" AMDGPU (%u)", machine, EM_AMDGPU_);
      return false;
    }
  uint64_t phoff = rd (image + 32, 8), shoff = rd (image + 40, 8);
  unsigned flags = (unsigned) rd (image + 48, 4);
  unsigned phentsize = (unsigned) rd (image + 54, 2);
  unsigned phnum = (unsigned) rd (image + 56, 2);
  unsigned shentsize = (unsigned) rd (image + 58, 2);
  unsigned shnum = (unsigned) rd (image + 60, 2);
  unsigned shstrndx = (unsigned) rd (image + 62, 2);
  /* e_shnum 0 with a table: extended numbering, the count in section 0's
     header, which a loader reads; no GCN code object needs it.  */
  if (shnum == 0 && shoff != 0)
    {
      snprintf (err, errlen, "code object has a section header table at"
		" offset %llu but an e_shnum of 0 (extended section numbering"
		" is not supported)", (unsigned long long) shoff);
      return false;
    }
  if (shstrndx != 0 && shstrndx >= shnum)
    {
      snprintf (err, errlen, "code object's section name table is section"
		" %u of its %u: truncated or corrupt", shstrndx, shnum);
      return false;
    }
  if (!headers_inside ("program", phoff, phentsize, 56, phnum, size, err,
		       errlen)
      || !headers_inside ("section", shoff, shentsize, 64, shnum, size, err,
			  errlen))
    return false;
  for (unsigned i = 0; i < phnum; i++)
    {
      const unsigned char *ph = image + phoff + (uint64_t) i * phentsize;
      uint64_t off = rd (ph + 8, 8), filesz = rd (ph + 32, 8);
      if (!inside (off, filesz, size))
	{
	  snprintf (err, errlen, "code object's segment %u (offset %llu, %llu"
		    " bytes) lies outside its %zu bytes: truncated or corrupt",
		    i, (unsigned long long) off, (unsigned long long) filesz,
		    size);
	  return false;
	}
    }
  for (unsigned i = 0; i < shnum; i++)
    {
      const unsigned char *sh = image + shoff + (uint64_t) i * shentsize;
      unsigned type = (unsigned) rd (sh + 4, 4);
      uint64_t off = rd (sh + 24, 8), len = rd (sh + 32, 8);
      if (type != SHT_NOBITS_ && type != 0 && !inside (off, len, size))
	{
	  snprintf (err, errlen, "code object's section %u (offset %llu, %llu"
		    " bytes) lies outside its %zu bytes: truncated or corrupt",
		    i, (unsigned long long) off, (unsigned long long) len,
		    size);
	  return false;
	}
    }
  if (phnum == 0)
    {
      snprintf (err, errlen, "code object has no loadable segments (not a"
		" linked GCN executable)");
      return false;
    }
  *mach = flags & EF_AMDGPU_MACH_MASK;
  return true;
}

/* EF_AMDGPU_MACH_AMDGCN_* values (LLVM's AMDGPUUsage; GCC 12 knows the
   first four).  */
uint32_t
hsa_mach_arch (unsigned mach)
{
  switch (mach)
    {
    case 0x2a: return 0x803;	/* fiji.  */
    case 0x2c: return 0x900;
    case 0x2f: return 0x906;
    case 0x30: return 0x908;
    case 0x3f: return 0x90a;
    case 0x36: return 0x1030;
    default: return 0;
    }
}
