/* The fake libcuda's images: what they define, the JIT inputs, and the
   linked images its JIT linker makes of them.  See image.h.  */

#define _GNU_SOURCE
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* A linked image: this magic, the number of inputs (4 bytes, then 4 of
   padding), then each input's type (4 bytes, 4 of padding), size (8
   bytes) and data.  */
static const char fk_linked_magic[16] = "FAKECUDA-LINKED";

uint64_t
fk_symbol_address (const char *name)
{
  /* FNV-1a, in a range of user addresses, 16-byte aligned.  */
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    h = (h ^ *p) * 0x100000001b3ull;
  return 0x7f0000000000ull | (h & 0xfffffffff0ull);
}

void
fk_image_free (struct fk_image *img)
{
  for (int i = 0; i < img->nfuncs; i++)
    free (img->funcs[i].name);
  for (int i = 0; i < img->nglobals; i++)
    {
      free (img->globals[i].name);
      free (img->globals[i].init);
    }
  free (img->funcs);
  free (img->globals);
  memset (img, 0, sizeof *img);
}

struct fk_func *
fk_add_func (struct fk_image *img, const char *name, size_t len)
{
  for (int i = 0; i < img->nfuncs; i++)
    if (strlen (img->funcs[i].name) == len
	&& memcmp (img->funcs[i].name, name, len) == 0)
      return NULL;		/* A second definition; the first wins.  */
  struct fk_func *nf = realloc (img->funcs, (size_t) (img->nfuncs + 1)
				* sizeof *nf);
  if (nf == NULL)
    return NULL;
  img->funcs = nf;
  struct fk_func *f = &nf[img->nfuncs++];
  memset (f, 0, sizeof *f);
  f->name = strndup (name, len);
  f->regs = 32;
  f->max_threads = 1024;
  return f;
}

struct fk_global *
fk_add_global (struct fk_image *img, const char *name, size_t len,
	       size_t size)
{
  for (int i = 0; i < img->nglobals; i++)
    if (strlen (img->globals[i].name) == len
	&& memcmp (img->globals[i].name, name, len) == 0)
      return NULL;
  struct fk_global *ng = realloc (img->globals, (size_t) (img->nglobals + 1)
				  * sizeof *ng);
  if (ng == NULL)
    return NULL;
  img->globals = ng;
  struct fk_global *g = &ng[img->nglobals++];
  memset (g, 0, sizeof *g);
  g->name = strndup (name, len);
  g->size = size;
  return g;
}

CUresult
fk_parse_input (int type, const unsigned char *data, size_t size,
		int device_sm, struct fk_image *img, char *err, size_t errlen)
{
  if (type == FK_JIT_INPUT_CUBIN)
    return fk_parse_cubin (data, size, device_sm, img, err, errlen);
  size_t len = strnlen ((const char *) data, size);
  return fk_parse_ptx ((const char *) data, len, device_sm, img, err,
		       errlen);
}

CUresult
fk_parse_module_image (const void *image, int device_sm,
		       struct fk_image *img, const char **kind, char *err,
		       size_t errlen)
{
  const unsigned char *p = image;
  if (memcmp (p, ELFMAG, SELFMAG) == 0)
    {
      *kind = "cubin";
      size_t size = fk_elf_size (p);
      if (size == 0)
	{
	  snprintf (err, errlen, "fake cubin loader: corrupt ELF header");
	  return CUDA_ERROR_INVALID_IMAGE;
	}
      return fk_parse_cubin (p, size, device_sm, img, err, errlen);
    }
  if (memcmp (p, fk_linked_magic, sizeof fk_linked_magic) == 0)
    {
      *kind = "linked";
      uint32_t count;
      memcpy (&count, p + 16, 4);
      size_t off = 24;
      for (uint32_t i = 0; i < count; i++)
	{
	  uint32_t type;
	  uint64_t size;
	  memcpy (&type, p + off, 4);
	  memcpy (&size, p + off + 8, 8);
	  off += 16;
	  CUresult r = fk_parse_input ((int) type, p + off, size, device_sm,
				       img, err, errlen);
	  if (r != CUDA_SUCCESS)
	    return r;
	  off += size;
	}
      return CUDA_SUCCESS;
    }
  *kind = "ptx";
  return fk_parse_ptx ((const char *) p, strlen ((const char *) p),
		       device_sm, img, err, errlen);
}


unsigned char *
fk_linked_image (const struct fk_input *in, int n, size_t *size)
{
  size_t total = 24;
  for (int i = 0; i < n; i++)
    total += 16 + in[i].size;
  unsigned char *linked = calloc (1, total);
  if (linked == NULL)
    return NULL;
  memcpy (linked, fk_linked_magic, 16);
  uint32_t count = (uint32_t) n;
  memcpy (linked + 16, &count, 4);
  size_t off = 24;
  for (int i = 0; i < n; i++)
    {
      uint32_t type = (uint32_t) in[i].type;
      uint64_t sz = in[i].size;
      memcpy (linked + off, &type, 4);
      memcpy (linked + off + 8, &sz, 8);
      memcpy (linked + off + 16, in[i].data, sz);
      off += 16 + sz;
    }
  *size = total;
  return linked;
}
