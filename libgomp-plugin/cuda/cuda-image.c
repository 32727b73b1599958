/* Offload images on CUDA devices.

   An offloadkit image may carry, for nvptx, PTX (NUL-separated modules to
   JIT-link) and ahead-of-time cubins for some architectures.  A cubin for
   exactly the device's compute capability is best; one for the same major
   and a lower minor also runs (the driver guarantees binary compatibility
   within a major version, never across); else the PTX is JIT-linked for
   the device.  Everything is checked before the driver sees it, since a
   driver handed a damaged image may crash instead of failing, and the
   messages say what was expected and what was found: a cubin by the
   core's ok_cubin_check (its ELF, architecture, functions and variables),
   PTX here.

   Images built by GCC's own mkoffload have only PTX; they are JIT-linked
   the same way (cuda_open_gcc).

   A function's table entry is the address of our kernel record, which is
   what run receives back.

   What the device code of GCC 13 to 16 expects of the loader is decided
   by what each module has, not by the libgomp that loaded the plugin: the
   map of `declare target indirect' functions (cuda-indirect.c), the
   reverse-offload table and request block (cuda-revoff.c), and its
   constructors, run last, and destructors, run first at unload
   (cuda_run_cdtors).  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin-check.h"
#include "cuda-internal.h"
#include "desc-check.h"
#include "gcc-nvptx-image.h"

/* Room for the JIT linker's logs.  */
#define CUDA_JIT_LOG 16384

/* A double in GCC's nvptx runtime: seconds per clock tick, by which its
   omp_get_wtime scales the clock; the loader sets it for the device.  */
#define CUDA_CLOCKTICK_VAR "__nvptx_clocktick"

/* Checks.  */

/* Check PTX module CODE (LEN characters, then a NUL), number I of N:
   it must say which PTX version it is and be for the device's architecture
   or an older one.  *SM gets its target.  */
static bool
cuda_ptx_check (const struct cuda_device *dev, const char *code, size_t len,
		unsigned i, unsigned n, int *sm, char *err, size_t errlen)
{
  if (len == 0)
    {
      snprintf (err, errlen, "PTX module %u of %u is empty", i + 1, n);
      return false;
    }
  if (strstr (code, ".version") == NULL)
    {
      snprintf (err, errlen, "PTX module %u of %u has no .version directive",
		i + 1, n);
      return false;
    }
  const char *t = strstr (code, ".target");
  if (t == NULL)
    {
      snprintf (err, errlen, "PTX module %u of %u has no .target directive",
		i + 1, n);
      return false;
    }
  const char *p = t + strlen (".target");
  while (*p == ' ' || *p == '\t')
    p++;
  if (strncmp (p, "sm_", 3) != 0 || p[3] < '0' || p[3] > '9')
    {
      size_t shown = strcspn (t, "\n");
      snprintf (err, errlen, "PTX module %u of %u has '%.*s', expected"
		" '.target sm_NN'", i + 1, n, (int) (shown > 40 ? 40 : shown),
		t);
      return false;
    }
  long v = strtol (p + 3, NULL, 10);
  if (v > 10000)
    v = 10000;
  *sm = (int) v;
  if (*sm > dev->sm)
    {
      snprintf (err, errlen, "PTX for sm_%d, device %d is sm_%d (module %u"
		" of %u)", *sm, dev->base.ord, dev->sm, i + 1, n);
      return false;
    }
  return true;
}

/* Split PTX image T into its modules (in the layout of GCC's image) and
   check each; *MODS is malloced.  */
static bool
cuda_ptx_split (const struct cuda_device *dev, const struct ok_tgt_desc *t,
		struct ok_gcc_ptx_obj **mods, unsigned *nmods, char *err,
		size_t errlen)
{
  const char *start = (const char *) t->image_start;
  const char *end = (const char *) t->image_end;
  if (start == NULL || start == end)
    {
      snprintf (err, errlen, "the PTX image is empty");
      return false;
    }
  unsigned n = 0;
  for (const char *p = start; p < end; n++)
    {
      const char *nul = memchr (p, '\0', (size_t) (end - p));
      if (nul == NULL)
	{
	  snprintf (err, errlen, "PTX module %u is not NUL-terminated inside"
		    " the image (%zu bytes left at its end)", n + 1,
		    (size_t) (end - p));
	  return false;
	}
      p = nul + 1;
    }
  struct ok_gcc_ptx_obj *m = calloc (n, sizeof *m);
  if (m == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return false;
    }
  const char *p = start;
  for (unsigned i = 0; i < n; i++)
    {
      size_t len = strlen (p);
      int sm;
      if (!cuda_ptx_check (dev, p, len, i, n, &sm, err, errlen))
	{
	  free (m);
	  return false;
	}
      m[i].code = p;
      m[i].size = len + 1;
      p += len + 1;
    }
  *mods = m;
  *nmods = n;
  return true;
}

/* The cubin of LD's image best for DEV, or NULL.  */
static const struct ok_tgt_desc *
cuda_pick_cubin (const struct cuda_device *dev,
		 const struct ok_image_load *ld)
{
  const struct ok_tgt_desc *best = NULL;
  const struct ok_tgt_desc *t;
  for (unsigned i = 0;
       (t = ok_desc_target (ld->desc, ld->device_type, i)) != NULL; i++)
    {
      if (t->image_format != OK_IMAGE_CUBIN)
	continue;
      int arch = (int) t->arch;
      if (arch == dev->sm)
	return t;
      if (arch / 10 == dev->cc_major && arch < dev->sm
	  && (best == NULL || arch > (int) best->arch))
	best = t;
    }
  return best;
}

/* "device 0 is sm_90; the image has cubins for sm_80, sm_100 and no
   PTX".  */
static void
cuda_no_image_error (const struct cuda_device *dev,
		     const struct ok_image_load *ld, char *err, size_t errlen)
{
  char archs[256] = "";
  size_t used = 0;
  unsigned ncubins = 0;
  const struct ok_tgt_desc *t;
  for (unsigned i = 0;
       (t = ok_desc_target (ld->desc, ld->device_type, i)) != NULL; i++)
    if (t->image_format == OK_IMAGE_CUBIN && used < sizeof archs)
      {
	used += (size_t) snprintf (archs + used, sizeof archs - used,
				   "%ssm_%u", ncubins ? ", " : "",
				   (unsigned) t->arch);
	ncubins++;
      }
  if (ncubins == 0)
    snprintf (err, errlen, "device %d is sm_%d; the image has no cubin and"
	      " no PTX", dev->base.ord, dev->sm);
  else
    snprintf (err, errlen, "device %d is sm_%d; the image has cubin%s for %s"
	      " and no PTX", dev->base.ord, dev->sm, ncubins == 1 ? "" : "s",
	      archs);
}

/* Loading.  */

/* Remove trailing newlines from a log for a message.  */
static const char *
cuda_log (char *log)
{
  size_t n = strlen (log);
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\r'))
    log[--n] = '\0';
  return n > 0 ? log : "(empty)";
}

/* JIT-link MODS into *MODULE for the current context's device.  Each
   module's SIZE is its text's length and NUL.  */
static bool
cuda_jit_link (struct cuda_device *dev, const struct ok_gcc_ptx_obj *mods,
	       unsigned n, CUmodule *module)
{
  /* On the heap: the calling thread's stack may be small.  */
  char *info = calloc (2, CUDA_JIT_LOG);
  if (info == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  char *elog = info + CUDA_JIT_LOG;
  bool ok = false;
  CUjit_option opts[] = {
    CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    CU_JIT_LOG_VERBOSE
  };
  void *vals[] = {
    info, (void *) (uintptr_t) CUDA_JIT_LOG,
    elog, (void *) (uintptr_t) CUDA_JIT_LOG,
    (void *) (uintptr_t) 1
  };
  CUlinkState link;
  CUresult r = ok_cuda.cuLinkCreate (sizeof opts / sizeof opts[0], opts, vals,
				     &link);
  if (r != CUDA_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot start the JIT linker", "cuLinkCreate", r);
      goto out;
    }
  for (unsigned i = 0; i < n; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "ptx-module-%u", i + 1);
      /* The driver does not write the data; its prototype lacks const.  */
      r = ok_cuda.cuLinkAddData (link, CU_JIT_INPUT_PTX, (void *) mods[i].code,
				 mods[i].size, name, 0, NULL, NULL);
      if (r != CUDA_SUCCESS)
	{
	  char err[OK_CUDA_ERRLEN];
	  ok_dev_error (&dev->base, "cannot JIT-compile PTX module %u of %u for"
			  " sm_%d: cuLinkAddData: %s; JIT log: %s", i + 1, n,
			  dev->sm, ok_cuda_result (r, err, sizeof err),
			  cuda_log (elog));
	  ok_cuda.cuLinkDestroy (link);
	  goto out;
	}
    }
  void *cubin = NULL;
  size_t cubin_size = 0;
  r = ok_cuda.cuLinkComplete (link, &cubin, &cubin_size);
  if (r != CUDA_SUCCESS)
    {
      char err[OK_CUDA_ERRLEN];
      ok_dev_error (&dev->base, "cannot JIT-link %u PTX module%s for sm_%d:"
		      " cuLinkComplete: %s; JIT log: %s", n, n == 1 ? "" : "s",
		      dev->sm, ok_cuda_result (r, err, sizeof err),
		      cuda_log (elog));
      ok_cuda.cuLinkDestroy (link);
      goto out;
    }
  OK_DEBUG ("%s: JIT-linked %u PTX module%s into %zu bytes; log: %s",
	    dev->base.label, n, n == 1 ? "" : "s", cubin_size, cuda_log (info));
  /* The linked cubin belongs to the link state: load it first.  */
  r = ok_cuda.cuModuleLoadData (module, cubin);
  ok_cuda.cuLinkDestroy (link);
  if (r != CUDA_SUCCESS)
    ok_dev_call_error (&dev->base, "cannot load the JIT-linked module",
		     "cuModuleLoadData", r);
  else
    ok = true;
 out:
  free (info);
  return ok;
}

static void
cuda_image_free (struct cuda_image *img)
{
  for (size_t i = 0; i < img->num_kernels; i++)
    free (img->kernels[i].name);
  free (img->kernels);
  free (img);
}

/* Fill kernel K of IMG, function I of its image, from its NAME.  */
static bool
cuda_kernel_init (struct cuda_device *dev, struct cuda_image *img,
		  struct cuda_kernel *k, size_t i, const char *name)
{
  if (name == NULL)
    {
      ok_dev_error (&dev->base, "cannot load offload image: function %zu"
		    " has no name in the descriptor", i + 1);
      return false;
    }
  k->name = strdup (name);
  if (k->name == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  CUresult r = ok_cuda.cuModuleGetFunction (&k->fn, img->module, name);
  const char *call = "cuModuleGetFunction";
  if (r == CUDA_SUCCESS)
    {
      call = "cuFuncGetAttribute";
      r = ok_cuda.cuFuncGetAttribute (&k->regs_per_thread,
				      CU_FUNC_ATTRIBUTE_NUM_REGS, k->fn);
    }
  if (r == CUDA_SUCCESS)
    r = ok_cuda.cuFuncGetAttribute (&k->max_threads_per_block,
				    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
				    k->fn);
  if (r != CUDA_SUCCESS)
    {
      char what[256];
      snprintf (what, sizeof what, "cannot load offload image: kernel"
		" '%s'", name);
      ok_dev_call_error (&dev->base, what, call, r);
      return false;
    }
  OK_DEBUG ("%s: kernel '%s': %d registers per thread, %d threads per"
	    " block at most", dev->base.label, k->name, k->regs_per_thread,
	    k->max_threads_per_block);
  k->image = img;
  cuda_kernel_default_bounds (dev, k);
  return true;
}

bool
cuda_module_global (struct cuda_device *dev, CUmodule module,
		    const char *name, CUdeviceptr *p, size_t *bytes,
		    bool *found)
{
  CUresult r = ok_cuda.cuModuleGetGlobal (p, bytes, module, name);
  *found = r == CUDA_SUCCESS;
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_FOUND)
    return true;
  char what[128];
  snprintf (what, sizeof what, "cannot load offload image: variable '%s'",
	    name);
  ok_dev_call_error (&dev->base, what, "cuModuleGetGlobal", r);
  return false;
}

/* Look up variable NAME; *ENTRY gets its device range.  */
static bool
cuda_global (struct cuda_device *dev, CUmodule module, const char *name,
	     struct ok_addr_pair *entry)
{
  CUdeviceptr p = 0;
  size_t bytes = 0;
  CUresult r = ok_cuda.cuModuleGetGlobal (&p, &bytes, module, name);
  if (r != CUDA_SUCCESS)
    {
      char what[256];
      snprintf (what, sizeof what, "cannot load offload image: variable"
		" '%s'", name);
      ok_dev_call_error (&dev->base, what, "cuModuleGetGlobal", r);
      return false;
    }
  entry->start = (uintptr_t) p;
  entry->end = (uintptr_t) p + bytes;
  return true;
}

/* Set the clock tick omp_get_wtime divides by in IMG's module.  */
static bool
cuda_set_clocktick (struct cuda_device *dev, struct cuda_image *img)
{
  CUdeviceptr p = 0;
  size_t bytes = 0;
  CUresult r = ok_cuda.cuModuleGetGlobal (&p, &bytes, img->module,
					  CUDA_CLOCKTICK_VAR);
  if (r == CUDA_SUCCESS && bytes == sizeof (double) && dev->clock_khz > 0)
    {
      double tick = 1e-3 / dev->clock_khz;
      return cuda_host2dev (&dev->base, (void *) (uintptr_t) p, &tick,
			    sizeof tick);
    }
  else if (r == CUDA_SUCCESS)
    OK_DEBUG ("%s: " CUDA_CLOCKTICK_VAR " has %zu bytes; not set",
	      dev->base.label, bytes);
  else if (r != CUDA_ERROR_NOT_FOUND)
    {
      /* omp_get_wtime on the device would answer 0.  */
      ok_dev_call_error (&dev->base, "cannot load offload image: variable '"
			 CUDA_CLOCKTICK_VAR "'", "cuModuleGetGlobal", r);
      return false;
    }
  return true;
}

/* A new image record for N functions, holding MODULE (unloaded on
   failure), with the clock tick set; NULL after a report.  */
static struct cuda_image *
cuda_image_new (struct cuda_device *dev, CUmodule module, size_t n)
{
  struct cuda_image *img = calloc (1, sizeof *img);
  struct cuda_kernel *kernels = calloc (n ? n : 1, sizeof *kernels);
  if (img == NULL || kernels == NULL)
    {
      free (img);
      free (kernels);
      ok_cuda.cuModuleUnload (module);
      ok_dev_error (&dev->base, "out of memory");
      return NULL;
    }
  img->module = module;
  img->kernels = kernels;
  if (!cuda_set_clocktick (dev, img))
    {
      ok_cuda.cuModuleUnload (module);
      cuda_image_free (img);
      return NULL;
    }
  return img;
}

static bool
cuda_open (struct ok_device *d, struct ok_image_load *ld)
{
  struct cuda_device *dev = cuda_dev (d);
  if (!cuda_enter (dev))
    return false;

  char err[512];
  const struct ok_tgt_desc *tgt = cuda_pick_cubin (dev, ld);
  struct ok_gcc_ptx_obj *mods = NULL;
  unsigned nmods = 0;
  if (tgt != NULL)
    {
      if (!ok_cubin_check (ld->desc, tgt, ld->num_funcs, ld->num_vars,
			   err, sizeof err))
	{
	  ok_dev_error (&dev->base, "cannot load offload image: %s", err);
	  return false;
	}
      snprintf (ld->what, sizeof ld->what, "cubin sm_%u",
		(unsigned) tgt->arch);
      OK_DEBUG ("%s: loading the cubin for sm_%u (%zu bytes)",
		dev->base.label, (unsigned) tgt->arch,
		(size_t) (tgt->image_end - tgt->image_start));
    }
  else
    {
      /* The first PTX image that suits; else say why the first did not.  */
      const struct ok_tgt_desc *t;
      bool seen = false;
      for (unsigned i = 0; tgt == NULL
	   && (t = ok_desc_target (ld->desc, ld->device_type, i)) != NULL;
	   i++)
	if (t->image_format == OK_IMAGE_PTX)
	  {
	    char later[512];
	    char *e = seen ? later : err;
	    size_t elen = seen ? sizeof later : sizeof err;
	    if (cuda_ptx_split (dev, t, &mods, &nmods, e, elen))
	      tgt = t;
	    seen = true;
	  }
      if (tgt == NULL)
	{
	  if (!seen)
	    cuda_no_image_error (dev, ld, err, sizeof err);
	  ok_dev_error (&dev->base, "cannot load offload image: %s", err);
	  return false;
	}
      snprintf (ld->what, sizeof ld->what, "PTX JIT-linked for sm_%d",
		dev->sm);
      OK_DEBUG ("%s: no cubin for sm_%d: JIT-linking %u PTX module%s",
		dev->base.label, dev->sm, nmods, nmods == 1 ? "" : "s");
    }

  CUmodule module = NULL;
  if (mods != NULL)
    {
      bool ok = cuda_jit_link (dev, mods, nmods, &module);
      free (mods);
      if (!ok)
	return false;
    }
  else
    {
      CUresult r = ok_cuda.cuModuleLoadData (&module, tgt->image_start);
      if (r != CUDA_SUCCESS)
	{
	  char msg[96];
	  snprintf (msg, sizeof msg, "cannot load the cubin for sm_%u",
		    (unsigned) tgt->arch);
	  ok_dev_call_error (&dev->base, msg, "cuModuleLoadData", r);
	  return false;
	}
    }
  struct cuda_image *img = cuda_image_new (dev, module, ld->num_funcs);
  if (img == NULL)
    return false;
  img->tgt = tgt;
  /* The OpenACC dimensions the compiler fixed for the code this device
     loads (descriptor version 3).  */
  img->oacc = ok_desc_oacc_dims (ld->desc, tgt);
  /* Our descriptor does not count the indirect functions: the device's
     table does.  */
  img->ind_expect = -1;
  ld->image = img;
  return true;
}

/* Check GCC's target data before reading its contents.  */
static bool
cuda_gcc_check (const struct cuda_device *dev,
		const struct ok_gcc_nvptx_data *data, char *err,
		size_t errlen)
{
  /* Far beyond any real program; larger means garbage.  */
  const unsigned limit = 1u << 24;
  if (data->ptx_num == 0 || data->ptx_objs == NULL || data->ptx_num > limit)
    {
      snprintf (err, errlen, "it has %u PTX modules at %p, expected at least"
		" one", data->ptx_num, (const void *) data->ptx_objs);
      return false;
    }
  if (data->fn_num > limit || data->var_num > limit
      || (data->fn_num > 0 && data->fn_descs == NULL)
      || (data->var_num > 0 && data->var_names == NULL))
    {
      snprintf (err, errlen, "malformed tables: %u functions at %p, %u"
		" variables at %p; expected at most %u of each, each"
		" non-empty table at an address", data->fn_num,
		(const void *) data->fn_descs, data->var_num,
		(const void *) data->var_names, limit);
      return false;
    }
  for (unsigned i = 0; i < data->ptx_num; i++)
    {
      const struct ok_gcc_ptx_obj *o = &data->ptx_objs[i];
      /* The NUL must be the last byte, as GCC's mkoffload makes it (SIZE
	 is sizeof the string): cuda_jit_link hands the driver all SIZE
	 bytes, and only the text up to the NUL is checked.  */
      if (o->code == NULL || o->size == 0
	  || memchr (o->code, '\0', o->size) != o->code + o->size - 1)
	{
	  snprintf (err, errlen, "PTX module %u of %u (%zu bytes at %p) is not"
		    " a NUL-terminated text", i + 1, data->ptx_num, o->size,
		    (const void *) o->code);
	  return false;
	}
      int sm;
      if (!cuda_ptx_check (dev, o->code, o->size - 1, i, data->ptx_num, &sm,
			   err, errlen))
	return false;
    }
  for (unsigned i = 0; i < data->fn_num; i++)
    if (data->fn_descs[i].fn == NULL)
      {
	snprintf (err, errlen, "function %u has no name", i);
	return false;
      }
  for (unsigned i = 0; i < data->var_num; i++)
    if (data->var_names[i] == NULL)
      {
	snprintf (err, errlen, "variable %u has no name", i);
	return false;
      }
  return true;
}

static bool
cuda_open_gcc (struct ok_device *d, struct ok_image_load *ld)
{
  struct cuda_device *dev = cuda_dev (d);
  const struct ok_gcc_nvptx_data *data = ld->gcc_data;
  char err[512];
  if (!cuda_gcc_check (dev, data, err, sizeof err))
    {
      ok_dev_error (d, "cannot load offload image built by GCC's mkoffload:"
		    " %s", err);
      return false;
    }
  if (!cuda_enter (dev))
    return false;
  OK_DEBUG ("%s: GCC-format image: JIT-linking %u PTX module%s",
	    d->label, data->ptx_num, data->ptx_num == 1 ? "" : "s");
  /* cuda_gcc_check has checked the modules and names in place.  */
  CUmodule module = NULL;
  if (!cuda_jit_link (dev, data->ptx_objs, data->ptx_num, &module))
    return false;
  struct cuda_image *img = cuda_image_new (dev, module, data->fn_num);
  if (img == NULL)
    return false;
  img->gcc = data;
  /* IND_FN_NUM is there from library version 3 (GCC 14).  */
  img->ind_expect = (OK_GOMP_VERSION_LIB (ld->gcc_version) >= 3
		     ? data->ind_fn_num : 0);
  ld->image = img;
  ld->num_funcs = data->fn_num;
  ld->num_vars = data->var_num;
  snprintf (ld->what, sizeof ld->what, "GCC PTX JIT-linked for sm_%d",
	    dev->sm);
  return true;
}

/* The table entry of function I: the address of our kernel record.  */
static bool
cuda_function (struct ok_device *d, struct ok_image_load *ld, size_t i,
	       struct ok_addr_pair *entry)
{
  struct cuda_device *dev = cuda_dev (d);
  struct cuda_image *img = ld->image;
  struct cuda_kernel *k = &img->kernels[i];
  img->num_kernels = i + 1;
  const char *name = (img->gcc != NULL ? img->gcc->fn_descs[i].fn
		      : img->tgt->func_names[i]);
  if (!cuda_kernel_init (dev, img, k, i, name))
    return false;
  for (int j = 0; j < 3; j++)
    k->oacc_dims[j] = (img->gcc != NULL ? img->gcc->fn_descs[i].dim[j]
		       : img->oacc != NULL ? img->oacc[i].dim[j] : 0);
  entry->start = (uintptr_t) k;
  entry->end = entry->start + 1;
  return true;
}

static bool
cuda_variable (struct ok_device *d, struct ok_image_load *ld, size_t i,
	       struct ok_addr_pair *entry)
{
  const struct cuda_image *img = ld->image;
  /* ok_desc_check and cuda_gcc_check have made sure every name is
     there.  */
  const char *name = (img->gcc != NULL ? img->gcc->var_names[i]
		      : img->tgt->var_names[i]);
  return cuda_global (cuda_dev (d), img->module, name, entry);
}

static bool
cuda_trailing (struct ok_device *d, struct ok_image_load *ld,
	       const struct ok_trailing_var *var, struct ok_addr_pair *entry)
{
  const struct cuda_image *img = ld->image;
  CUdeviceptr p = 0;
  size_t bytes = 0;
  bool found;
  if (!cuda_module_global (cuda_dev (d), img->module, var->name, &p, &bytes,
			   &found))
    return false;
  entry->start = found ? (uintptr_t) p : 0;
  entry->end = found ? (uintptr_t) p + bytes : 0;
  return true;
}

static bool
cuda_map_indirect (struct ok_device *d, struct ok_image_load *ld,
		   const uint64_t *host_ind_fns)
{
  struct cuda_image *img = ld->image;
  return cuda_indirect_load (cuda_dev (d), img, host_ind_fns,
			     img->ind_expect);
}

static bool
cuda_rev_table (struct ok_device *d, struct ok_image_load *ld,
		uint64_t **rev_fns)
{
  return cuda_rev_load (cuda_dev (d), ld->image, ld->num_funcs, rev_fns);
}

static bool
cuda_run_ctors (struct ok_device *d, struct ok_image_load *ld)
{
  const struct cuda_image *img = ld->image;
  return cuda_run_cdtors (cuda_dev (d), img->module, true);
}

static bool
cuda_close (struct ok_device *d, void *handle, bool dtors)
{
  struct cuda_device *dev = cuda_dev (d);
  struct cuda_image *img = handle;
  /* A driver that cannot make the context current cannot unload the
     module either: it goes with the process (reported).  */
  if (!cuda_enter (dev))
    return false;
  /* The destructors may still use the indirect map; a broken device runs
     nothing.  */
  bool ok = (!dtors || ok_dev_broken (d)
	     || cuda_run_cdtors (dev, img->module, false));
  ok &= cuda_indirect_unload (dev, img);
  ok &= cuda_rev_unload (dev, img);
  CUresult r = ok_cuda.cuModuleUnload (img->module);
  cuda_image_free (img);
  return ok_dev_teardown_ok (d, r, "unload an offload image",
			     "cuModuleUnload") && ok;
}

const struct ok_image_ops cuda_image_ops = {
  .open = cuda_open,
  .open_gcc = cuda_open_gcc,
  .function = cuda_function,
  .variable = cuda_variable,
  .trailing = cuda_trailing,
  .map_indirect = cuda_map_indirect,
  .rev_table = cuda_rev_table,
  .run_ctors = cuda_run_ctors,
  .close = cuda_close,
};
