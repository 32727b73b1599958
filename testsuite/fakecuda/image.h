/* The fake libcuda's reading of images, which stands for compiling them:
   PTX text (ptx.c), cubins read with libelf (cubin.c), and the images of
   several inputs that its JIT linker makes (image.c).  What an image
   defines, kernels and variables, goes into a struct fk_image.

   The readers check what the driver would refuse (a `.target' or a cubin
   architecture the device cannot run, unbalanced braces, a PTX text
   without `.version', an ELF file for another machine) and say why in
   ERR, as the JIT's error log would.  They keep no state: the device's
   architecture (DEVICE_SM, major * 10 + minor) comes in as an argument,
   and none of them locks.  */

#ifndef OFFLOADKIT_FAKECUDA_IMAGE_H
#define OFFLOADKIT_FAKECUDA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda-types.h"

/* A kernel.  */
struct fk_func
{
  char *name;
  struct fk_module *module;	/* Set when a module is made of it.  */
  int regs;
  int max_threads;
  int nparams;
  size_t param_size[16];
};

/* A variable.  */
struct fk_global
{
  char *name;
  size_t size;
  unsigned char *init;		/* SIZE bytes or NULL (zero).  */
  uintptr_t addr;		/* Device copy once loaded.  */
};

/* What an image defines.  */
struct fk_image
{
  struct fk_func *funcs;
  int nfuncs;
  struct fk_global *globals;
  int nglobals;
  int target_sm;		/* Highest .target or cubin arch seen.  */
};

/* One input of the JIT linker: FK_JIT_INPUT_PTX or FK_JIT_INPUT_CUBIN.  */
struct fk_input
{
  int type;
  size_t size;
  unsigned char *data;
};

#pragma GCC visibility push(hidden)

/* Free what IMG holds and empty it.  */
void fk_image_free (struct fk_image *img);

/* A new kernel or variable NAME (LEN bytes) of IMG; NULL if IMG defines
   it already (the first definition wins) or when out of memory.  */
struct fk_func *fk_add_func (struct fk_image *img, const char *name,
			     size_t len);
struct fk_global *fk_add_global (struct fk_image *img, const char *name,
				 size_t len, size_t size);

/* The address the fake's linker gives symbol NAME in an initialiser
   (`.u64 table[] = { f, g }'): made up from the name, the same in every
   module, never 0; fakecuda_symbol_address gives it to tests.  */
uint64_t fk_symbol_address (const char *name);

/* What cuDriverGetVersion says (FAKECUDA_DRIVER_VERSION): 1000 * major +
   10 * minor.  The PTX JIT refuses PTX of an ISA version newer than the
   driver's CUDA release (fk_ptx_isa_max) with
   CUDA_ERROR_UNSUPPORTED_PTX_VERSION.  */
extern int fk_driver_version;
int fk_ptx_isa_max (int driver);

/* Read PTX TEXT[0, LEN) into IMG.  */
CUresult fk_parse_ptx (const char *text, size_t len, int device_sm,
		       struct fk_image *img, char *err, size_t errlen);

/* Read the cubin IMAGE[0, SIZE) into IMG.  */
CUresult fk_parse_cubin (const unsigned char *image, size_t size,
			 int device_sm, struct fk_image *img, char *err,
			 size_t errlen);

/* The size of the ELF image at IMAGE, from its headers; 0 if it does not
   look like one.  */
size_t fk_elf_size (const unsigned char *image);

/* Read one JIT input of TYPE into IMG.  */
CUresult fk_parse_input (int type, const unsigned char *data, size_t size,
			 int device_sm, struct fk_image *img, char *err,
			 size_t errlen);

/* Read what cuModuleLoadData gets (a cubin, a linked image, or
   NUL-terminated PTX text) into IMG; *KIND says which ("cubin", "linked",
   "ptx").  */
CUresult fk_parse_module_image (const void *image, int device_sm,
				struct fk_image *img, const char **kind,
				char *err, size_t errlen);

/* The linked image of the N inputs IN (malloc'd, *SIZE bytes), as
   cuLinkComplete returns it; NULL when out of memory.  */
unsigned char *fk_linked_image (const struct fk_input *in, int n,
				size_t *size);

#pragma GCC visibility pop

#endif
