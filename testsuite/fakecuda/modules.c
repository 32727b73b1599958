/* The fake libcuda: modules made of images (their globals in device
   memory), their kernels and variables.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

/* Free module M with the device copies of its globals.  */
static void
fk_module_free (struct fk_module *m)
{
  for (int i = 0; i < m->img.nglobals; i++)
    if (m->img.globals[i].addr != 0)
      fk_block_free (m->img.globals[i].addr, FK_GLOBAL);
  fk_image_free (&m->img);
  fake_handle_free (&fk_handles, FK_H_MODULE, m);
}

/* Make a module of IMG (taken over) in the current context: allocate and
   initialise its globals.  */
static CUresult
fk_module_new (struct fk_image *img, const char *kind, CUmodule *out)
{
  struct fk_module *m = fake_handle_new (&fk_handles, FK_H_MODULE,
					 sizeof *m);
  if (m == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m->ctx = fk_current ();
  m->img = *img;
  memset (img, 0, sizeof *img);
  for (int i = 0; i < m->img.nfuncs; i++)
    m->img.funcs[i].module = m;
  char line[900];
  int len = snprintf (line, sizeof line, "module load %p %s kernels=",
		      (void *) m, kind);
  for (int i = 0; i < m->img.nfuncs && len < (int) sizeof line; i++)
    len += snprintf (line + len, sizeof line - (size_t) len, "%s%s",
		     i ? "," : "", m->img.funcs[i].name);
  if (len < (int) sizeof line)
    len += snprintf (line + len, sizeof line - (size_t) len, " globals=");
  for (int i = 0; i < m->img.nglobals; i++)
    {
      struct fk_global *g = &m->img.globals[i];
      void *p = fk_block_new (g->size, FK_GLOBAL, m->ctx);
      if (p == NULL)
	{
	  fk_module_free (m);
	  return CUDA_ERROR_OUT_OF_MEMORY;
	}
      if (g->init != NULL)
	memcpy (p, g->init, g->size);
      else
	memset (p, 0, g->size);
      g->addr = (uintptr_t) p;
      if (len < (int) sizeof line)
	len += snprintf (line + len, sizeof line - (size_t) len, "%s%s:%zu",
			 i ? "," : "", g->name, g->size);
    }
  fk_log ("%s", line);
  *out = m;
  return CUDA_SUCCESS;
}

/* Copy TEXT into the JIT error log buffer that the NOPTS options OPTS
   with their values VALS give, if they give one.  */
static void
fk_jit_error_log (unsigned nopts, CUjit_option *opts, void **vals,
		  const char *text)
{
  char *eb = NULL;
  size_t es = 0;
  size_t *eso = NULL;
  for (unsigned i = 0; i < nopts && opts != NULL && vals != NULL; i++)
    if (opts[i] == FK_JIT_ERROR_LOG_BUFFER)
      eb = vals[i];
    else if (opts[i] == FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      {
	es = (size_t) (uintptr_t) vals[i];
	eso = (size_t *) &vals[i];
      }
  fk_put_log (eb, es, eso, text);
}

static CUresult
fk_module_load (int sym, CUmodule *module, const void *image,
		unsigned nopts, CUjit_option *opts, void **vals)
{
  if (module == NULL || image == NULL)
    {
      fk_bad (sym, "NULL %s", module == NULL ? "module pointer" : "image");
      return CUDA_ERROR_INVALID_VALUE;
    }
  struct fk_image img = { 0 };
  char err[512] = "";
  const char *kind = "?";
  CUresult r = fk_parse_module_image (image, fk_sm, &img, &kind, err,
				      sizeof err);
  if (r != CUDA_SUCCESS)
    {
      fk_log ("module load failed: %d: %s", r, err);
      fk_jit_error_log (nopts, opts, vals, err);
      fk_image_free (&img);
      return r;
    }
  return fk_module_new (&img, kind, module);
}

CUresult
cuModuleLoadData (CUmodule *module, const void *image)
{
  ENTER (cuModuleLoadData);
  NEED_CTX (cuModuleLoadData);
  RETURN (fk_module_load (FK_cuModuleLoadData, module, image, 0, NULL, NULL));
}

CUresult
cuModuleLoadDataEx (CUmodule *module, const void *image, unsigned int nopts,
		    CUjit_option *opts, void **vals)
{
  CUresult e = fk_enter (FK_cuModuleLoadDataEx);
  if (e != CUDA_SUCCESS)
    {
      fk_jit_error_log (nopts, opts, vals,
			"fake ptxas: injected failure of cuModuleLoadDataEx");
      return e;
    }
  NEED_CTX (cuModuleLoadDataEx);
  RETURN (fk_module_load (FK_cuModuleLoadDataEx, module, image, nopts, opts,
			  vals));
}

/* cuModuleLoad (CUDA driver API): load the module in file FNAME (a cubin
   or PTX, as cuModuleLoadData takes them) into the current context.  A
   file that cannot be read is CUDA_ERROR_FILE_NOT_FOUND.  */
CUresult
cuModuleLoad (CUmodule *module, const char *fname)
{
  ENTER (cuModuleLoad);
  NEED_CTX (cuModuleLoad);
  if (module == NULL || fname == NULL)
    {
      fk_bad (FK_cuModuleLoad, "NULL %s", module == NULL ? "module pointer"
	      : "file name");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  FILE *f = fopen (fname, "rb");
  char *image = NULL;
  size_t len = 0;
  if (f != NULL)
    {
      /* Read it all, NUL-terminated as PTX text must be.  */
      size_t cap = 0, got;
      do
	{
	  if (len + 4096 + 1 > cap)
	    {
	      cap = (len + 4096 + 1) * 2;
	      char *n = realloc (image, cap);
	      if (n == NULL)
		{
		  free (image);
		  fclose (f);
		  RETURN (CUDA_ERROR_OUT_OF_MEMORY);
		}
	      image = n;
	    }
	  got = fread (image + len, 1, 4096, f);
	  len += got;
	}
      while (got > 0);
      bool bad = ferror (f) != 0;
      fclose (f);
      if (bad)
	{
	  free (image);
	  image = NULL;
	}
      else
	image[len] = '\0';
    }
  if (image == NULL)
    {
      fk_log ("module load from %s: cannot read it", fname);
      RETURN (CUDA_ERROR_FILE_NOT_FOUND);
    }
  CUresult r = fk_module_load (FK_cuModuleLoad, module, image, 0, NULL, NULL);
  free (image);
  RETURN (r);
}

static struct fk_module *
fk_module_find (CUmodule m)
{
  return fake_handle_get (&fk_handles, FK_H_MODULE, m);
}

int
fk_modules_drop (struct fk_ctx *ctx)
{
  int n = 0;
  for (;;)
    {
      struct fk_module *m, *found = NULL;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_MODULE, m)
	if (m->ctx == ctx)
	  found = m;
      if (found == NULL)
	return n;
      fk_log ("module unload %p (context destroyed)", (void *) found);
      fk_module_free (found);
      n++;
    }
}

CUresult
cuModuleUnload (CUmodule module)
{
  ENTER (cuModuleUnload);
  NEED_INIT (cuModuleUnload);
  if (fk_module_find (module) == NULL)
    {
      fk_bad (FK_cuModuleUnload, "%p is not a loaded module", (void *) module);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  fk_log ("module unload %p", (void *) module);
  fk_module_free (module);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuModuleGetFunction (CUfunction *fn, CUmodule module, const char *name)
{
  ENTER (cuModuleGetFunction);
  NEED_INIT (cuModuleGetFunction);
  struct fk_module *m = fk_module_find (module);
  if (fn == NULL || name == NULL || m == NULL)
    {
      fk_bad (FK_cuModuleGetFunction, "%s", m == NULL ? "not a loaded module"
	      : "NULL argument");
      RETURN (m == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  for (int i = 0; i < m->img.nfuncs; i++)
    if (strcmp (m->img.funcs[i].name, name) == 0)
      {
	*fn = &m->img.funcs[i];
	RETURN (CUDA_SUCCESS);
      }
  RETURN (CUDA_ERROR_NOT_FOUND);
}

CUresult
cuModuleGetGlobal_v2 (CUdeviceptr *dptr, size_t *bytes, CUmodule module,
		      const char *name)
{
  ENTER (cuModuleGetGlobal_v2);
  NEED_INIT (cuModuleGetGlobal_v2);
  struct fk_module *m = fk_module_find (module);
  if (name == NULL || m == NULL)
    {
      fk_bad (FK_cuModuleGetGlobal_v2, "%s", m == NULL
	      ? "not a loaded module" : "NULL name");
      RETURN (m == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  for (int i = 0; i < m->img.nglobals; i++)
    if (strcmp (m->img.globals[i].name, name) == 0)
      {
	if (dptr != NULL)
	  *dptr = m->img.globals[i].addr;
	if (bytes != NULL)
	  *bytes = m->img.globals[i].size;
	RETURN (CUDA_SUCCESS);
      }
  RETURN (CUDA_ERROR_NOT_FOUND);
}

/* The most threads a block of F may have: its .maxntid, and what the
   registers of a block allow (as the driver reports it).  */
int
fk_func_max_threads (const struct fk_func *f)
{
  int by_regs = f->regs > 0 ? (65536 / f->regs) & ~31 : 1024;
  int m = f->max_threads < by_regs ? f->max_threads : by_regs;
  return m < 1024 ? m : 1024;
}

/* The live function FN, or NULL.  */
static struct fk_func *
fk_func_find (CUfunction fn)
{
  struct fk_module *m;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_MODULE, m)
    if (fn >= m->img.funcs && fn < m->img.funcs + m->img.nfuncs)
      return fn;
  return NULL;
}

struct fk_func *
fk_func_arg (int sym, CUfunction fn)
{
  struct fk_func *f = fk_func_find (fn);
  if (f == NULL)
    fk_bad (sym, "%p is not a live function", (void *) fn);
  return f;
}

CUresult
cuFuncGetAttribute (int *value, int attr, CUfunction fn)
{
  ENTER (cuFuncGetAttribute);
  NEED_INIT (cuFuncGetAttribute);
  struct fk_func *f = fk_func_arg (FK_cuFuncGetAttribute, fn);
  if (f == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (value == NULL || attr < 0 || attr >= FK_FUNC_MAX)
    {
      fk_bad (FK_cuFuncGetAttribute, "attribute %d", attr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  switch (attr)
    {
    case FK_FUNC_MAX_THREADS_PER_BLOCK: *value = fk_func_max_threads (f);
      break;
    case FK_FUNC_NUM_REGS: *value = f->regs; break;
    case FK_FUNC_PTX_VERSION:
    case FK_FUNC_BINARY_VERSION: *value = fk_sm; break;
    default: *value = 0; break;
    }
  RETURN (CUDA_SUCCESS);
}
