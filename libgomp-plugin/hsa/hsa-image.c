/* Images of the HSA backend: choosing the code object whose architecture
   matches the agent, checking it, loading it into an executable, and
   finding its kernels and variables.  Both offloadkit's descriptors and
   the own gcn formats of GCC 12 to 16 (gcc-gcn-image.h) are loaded here;
   each image records the kernel-argument layout its device code reads.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desc-check.h"
#include "gcc-gcn-image.h"
#include "hsa-internal.h"

/* Longest kernel or variable name accepted from GCC-format data, which
   carries no sizes to check against.  */
#define NAME_MAX_LEN 4096

static void
gcn_image_free (struct gcn_device *dev, struct gcn_image *img)
{
  if (img->has_exe)
    ok_dev_teardown_ok (&dev->base, ok_hsa.hsa_executable_destroy (img->exe),
		     "destroy an executable", "hsa_executable_destroy");
  if (img->has_reader)
    ok_dev_teardown_ok (&dev->base, ok_hsa.hsa_code_object_reader_destroy (img->reader),
		     "destroy a code object reader",
		     "hsa_code_object_reader_destroy");
  if (img->heap != NULL)
    gcn_region_free (dev, img->heap, "the device heap");
  if (img->ind_map != NULL)
    gcn_region_free (dev, img->ind_map, "the indirect-function map");
  for (size_t i = 0; i < img->num_kernels; i++)
    free (img->kernels[i].name);
  free (img->kernels);
  free (img->vars);
  free (img->gcc_fns);
  free (img);
}

static bool
gcn_symbol (struct gcn_device *dev, struct gcn_image *img, const char *name,
	    hsa_executable_symbol_t *sym)
{
  return ok_hsa.hsa_executable_get_symbol_by_name (img->exe, name,
						   &dev->agent, sym)
	 == HSA_STATUS_SUCCESS;
}

int
gcn_variable (struct gcn_device *dev, struct gcn_image *img,
	      const char *name, uint64_t *addr, uint32_t *size)
{
  hsa_executable_symbol_t sym;
  if (!gcn_symbol (dev, img, name, &sym))
    return 0;
  hsa_status_t s = ok_hsa.hsa_executable_symbol_get_info
    (sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, addr);
  if (s == HSA_STATUS_SUCCESS)
    s = ok_hsa.hsa_executable_symbol_get_info
      (sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, size);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[160];
      snprintf (what, sizeof what, "cannot locate variable '%.100s'", name);
      ok_dev_call_error (&dev->base, what, "hsa_executable_symbol_get_info", s);
      return -1;
    }
  return 1;
}

/* The device's offload variable table: NVARS (address, size) pairs of
   64-bit words at the global label .offload_var_table, in host-table
   order, relocated by the runtime's loader (GCC's .gnu.offload_vars; a
   size word carries the link bit).  Both image formats have the label,
   and only the table reaches every variable: the runtime does not load
   the local symbols of `static' variables (code object v3 and later), so
   they cannot be looked up by name.  WHAT names the image in messages.
   A malloc'd array, or NULL (reported).  */
static struct gcc_gcn_var *
gcn_var_table (struct gcn_device *dev, struct gcn_image *img, size_t nvars,
	       const char *what)
{
  size_t bytes = nvars * sizeof (struct gcc_gcn_var);
  uint64_t addr = 0;
  uint32_t size = 0;
  int found = gcn_variable (dev, img, GCC_GCN_VAR_TABLE, &addr, &size);
  if (found < 0)
    return NULL;
  if (found == 0)
    {
      ok_dev_error (&dev->base, "%s: expected the table of its %zu offload"
		     " variables (%zu bytes) at the global symbol %s, found"
		     " no global symbol of that name", what, nvars, bytes,
		     GCC_GCN_VAR_TABLE);
      return NULL;
    }
  /* The mkoffloads define the label without a size (0): then only the
     host's count tells.  */
  if (addr == 0 || (size != 0 && size < bytes))
    {
      ok_dev_error (&dev->base, "%s: expected the table of its %zu offload"
		     " variables at %s, which need %zu bytes; found %u bytes"
		     " at %#llx", what, nvars, GCC_GCN_VAR_TABLE, bytes,
		     (unsigned) size, (unsigned long long) addr);
      return NULL;
    }
  struct gcc_gcn_var *vars = malloc (bytes ? bytes : 1);
  if (vars == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return NULL;
    }
  if (!gcn_dev2host (&dev->base, vars, (void *) (uintptr_t) addr, bytes))
    {
      free (vars);
      return NULL;
    }
  return vars;
}

/* Table entry VAR as an address-table pair: a link variable is a pointer
   on the device (its size word still gives the host object's size).  */
static void
gcn_var_pair (const struct gcc_gcn_var *var, struct ok_addr_pair *pair)
{
  bool link = (var->size & OK_GOMP_LINK_BIT) != 0;
  uint64_t size = link ? sizeof (void *) : var->size;
  pair->start = (uintptr_t) var->addr;
  pair->end = (uintptr_t) (var->addr + size);
}

/* Fill K from kernel symbol NAME.kd: 1 when done, 0 when the symbol is
   missing (reported only when REQUIRED), -1 after a reported error.  */
static int
gcn_kernel_init (struct gcn_device *dev, struct gcn_image *img,
		 struct gcn_kernel *k, const char *name, uint32_t vgprs,
		 bool required)
{
  size_t n = strlen (name);
  char *kd = malloc (n + 4);
  k->name = strdup (name);
  if (kd == NULL || k->name == NULL)
    {
      free (kd);
      ok_dev_error (&dev->base, "out of memory loading an image");
      return -1;
    }
  memcpy (kd, name, n);
  memcpy (kd + n, ".kd", 4);
  hsa_executable_symbol_t sym;
  bool found = gcn_symbol (dev, img, kd, &sym);
  free (kd);
  if (!found)
    {
      if (required)
	{
	  ok_dev_error (&dev->base, "the code object lacks kernel '%s' (no symbol"
			 " %s.kd)", name, name);
	  return -1;
	}
      return 0;
    }
  static const struct { int attr; const char *what; } attrs[] = {
    { HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "object" },
    { HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, "kernarg size" },
    { HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, "group size" },
    { HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
      "private size" },
  };
  void *dst[] = { &k->object, &k->kernarg_size, &k->group_size,
		  &k->private_size };
  for (int i = 0; i < 4; i++)
    {
      hsa_status_t s = ok_hsa.hsa_executable_symbol_get_info (sym,
							       attrs[i].attr,
							       dst[i]);
      if (s != HSA_STATUS_SUCCESS)
	{
	  char what[160];
	  snprintf (what, sizeof what, "cannot read the %s of kernel"
		    " '%.100s'", attrs[i].what, name);
	  ok_dev_call_error (&dev->base, what, "hsa_executable_symbol_get_info", s);
	  return -1;
	}
    }
  /* GCC's OpenMP kernels take one pointer; the device runtime reads the
     rest of the kernel-argument block implicitly.  */
  if (k->kernarg_size > GCN_KERNARGS_SIZE)
    {
      ok_dev_error (&dev->base, "kernel '%s' wants %u bytes of kernel arguments;"
		     " expected at most %zu (GCC's OpenMP kernels take one"
		     " pointer and the device runtime's block)", name,
		     (unsigned) k->kernarg_size, GCN_KERNARGS_SIZE);
      return -1;
    }
  k->vgprs = vgprs;
  k->image = img;
  return 1;
}

/* Fill K for the device function NAME of IMG, which is no kernel:
   false after a report.  */
static bool
gcn_device_fn_init (struct gcn_device *dev, struct gcn_image *img,
		    struct gcn_kernel *k, const char *name)
{
  k->name = strdup (name);
  if (k->name == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  k->device_fn = true;
  k->image = img;
  OK_DEBUG ("%s: %s is a device function (of an ancestor region), not a"
	    " kernel", dev->base.label, name);
  return true;
}

/* Fill K for function NAME of IMG, a GCC-format image, from the kernel
   symbol NAME.kd.  GCC 13+'s mkoffload lists the function table as it
   is, with the ancestor regions' device functions, which have no kernel
   descriptor and no register counts (it finds none in the kernels'
   metadata for them); GCC's plugin only fails when one is launched.
   Such a function becomes a device function; any other without its
   NAME.kd is an error.  1 when done, -1 after a report.  */
static int
gcn_gcc_function_init (struct gcn_device *dev, struct gcn_image *img,
		       struct gcn_kernel *k, const struct gcc_gcn_kernel *kd)
{
  uint32_t vgprs = kd->vgpr_count > 0 ? (uint32_t) kd->vgpr_count : 0;
  bool maybe_fn = img->abi >= 3 && kd->sgpr_count == 0
		  && kd->vgpr_count == 0;
  int found = gcn_kernel_init (dev, img, k, kd->name, vgprs, !maybe_fn);
  if (found != 0)
    return found;
  free (k->name);
  k->name = NULL;
  return gcn_device_fn_init (dev, img, k, kd->name) ? 1 : -1;
}

/* Check IMAGE and load it into a new frozen executable for DEV with a
   device heap: everything but the kernels and variables.  */
static struct gcn_image *
gcn_exec_load (struct gcn_device *dev, const unsigned char *image,
	       size_t size)
{
  char err[256];
  unsigned mach = 0;
  if (!gcn_elf_check (image, size, &mach, err, sizeof err))
    {
      ok_dev_error (&dev->base, "cannot load offload image: %s", err);
      return NULL;
    }
  uint32_t arch = ok_gcn_arch_of_mach (mach);
  if (arch != 0 && dev->arch != 0 && !ok_gcn_arch_runs_on (arch, dev->arch))
    {
      ok_dev_error (&dev->base, "cannot load offload image: its code object is for"
		     " %s, the agent's ISA is %s", ok_gcn_arch_name (arch),
		     dev->isa_name);
      return NULL;
    }

  struct gcn_image *img = calloc (1, sizeof *img);
  if (img == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return NULL;
    }
  hsa_status_t s = ok_hsa.hsa_code_object_reader_create_from_memory
    (image, size, &img->reader);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot read the code object",
		      "hsa_code_object_reader_create_from_memory", s);
      goto fail;
    }
  img->has_reader = true;
  s = ok_hsa.hsa_executable_create_alt (HSA_PROFILE_FULL,
					HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
					"", &img->exe);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot create an executable",
		      "hsa_executable_create_alt", s);
      goto fail;
    }
  img->has_exe = true;
  s = ok_hsa.hsa_executable_load_agent_code_object (img->exe, dev->agent,
						    img->reader, "", NULL);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot load the code object",
		      "hsa_executable_load_agent_code_object", s);
      goto fail;
    }
  s = ok_hsa.hsa_executable_freeze (img->exe, "");
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot freeze the executable",
		      "hsa_executable_freeze", s);
      goto fail;
    }

  /* The device newlib's malloc carves from this: a 64-bit size, then the
     data.  */
  int64_t heap_size = (int64_t) ok_env_size ("OFFLOADKIT_GCN_HEAP_SIZE",
					     GCN_HEAP_DEFAULT);
  if (heap_size < 4096)
    heap_size = 4096;
  img->heap = gcn_region_alloc (dev, (size_t) heap_size + sizeof (int64_t),
			     "the device heap");
  if (img->heap == NULL)
    goto fail;
  if (!gcn_host2dev (&dev->base, img->heap, &heap_size, sizeof heap_size))
    goto fail;
  return img;

 fail:
  gcn_image_free (dev, img);
  return NULL;
}

/* "gfx906" for architecture ARCH in BUF, "gfx%x" for one we do not
   know.  */
static const char *
gcn_arch_text (uint32_t arch, char *buf, size_t len)
{
  const char *name = ok_gcn_arch_name (arch);
  if (name != NULL)
    return name;
  snprintf (buf, len, "gfx%x", (unsigned) arch);
  return buf;
}

/* The -march advice for an agent of DEV's architecture that no image
   suits, in BUF: its own name (fiji for gfx803) and its generic target,
   with the GCC versions that build for each; "" when no GCC does.  */
static const char *
gcn_march_advice (const struct gcn_device *dev, char *buf, size_t len)
{
  const struct ok_gcn_proc *own = ok_gcn_proc_by_arch (dev->arch);
  const struct ok_gcn_proc *gen
    = own && own->generic_mach ? ok_gcn_proc_by_mach (own->generic_mach)
      : NULL;
  size_t used = 0;
  buf[0] = '\0';
  const struct ok_gcn_proc *opts[2] = { own, gen };
  for (int i = 0; i < 2; i++)
    if (opts[i] != NULL && opts[i]->min_gcc != 0 && used < len)
      {
	char versions[32];
	if (opts[i]->max_gcc != OK_GCN_GCC_STILL)
	  snprintf (versions, sizeof versions, "GCC %d to %d",
		    opts[i]->min_gcc, opts[i]->max_gcc);
	else
	  snprintf (versions, sizeof versions, "GCC %d and newer",
		    opts[i]->min_gcc);
	used += (size_t) snprintf (buf + used, len - used,
				   "%s-foffload-options=amdgcn-amdhsa=-march=%s"
				   " (%s)", used ? " or " : "",
				   opts[i]->name, versions);
      }
  return buf;
}

/* Pick DESC's code object for DEV's architecture: the one for it, else
   one for the generic target that covers it (GCC 15+'s gfx9-generic
   runs on gfx900 to gfx90c but gfx908 and gfx90a, for instance).  */
static const struct ok_tgt_desc *
gcn_choose (struct gcn_device *dev, const struct ok_image_load *ld)
{
  char archs[200] = "";
  size_t used = 0;
  const struct ok_tgt_desc *t, *generic = NULL;
  uint32_t generic_arch = ok_gcn_generic_arch (dev->arch);
  for (unsigned i = 0; (t = ok_desc_target (ld->desc, ld->device_type, i));
       i++)
    {
      if (t->image_format == OK_IMAGE_GCN && t->arch == dev->arch)
	return t;
      if (t->image_format == OK_IMAGE_GCN && generic_arch != 0
	  && t->arch == generic_arch && generic == NULL)
	generic = t;
      char name[32];
      if (used < sizeof archs)
	used += (size_t) snprintf (archs + used, sizeof archs - used,
				   "%s%s", used ? ", " : "",
				   t->image_format == OK_IMAGE_GCN
				   ? gcn_arch_text (t->arch, name, sizeof name)
				   : "another format");
    }
  if (generic != NULL)
    return generic;
  char advice[256];
  if (*gcn_march_advice (dev, advice, sizeof advice))
    ok_dev_error (&dev->base, "no offload image for the agent's ISA %s (the"
		   " program has images for %s); rebuild with %s",
		   dev->isa_name, archs[0] ? archs : "no GCN architecture",
		   advice);
  else
    ok_dev_error (&dev->base, "no offload image for the agent's ISA %s (the"
		   " program has images for %s); no GCC (12 to 16) generates"
		   " code for %s", dev->isa_name,
		   archs[0] ? archs : "no GCN architecture", dev->gfx);
  return NULL;
}

/* The rest of opening IMG, loaded from code object IMAGE of SIZE bytes
   with NVARS variables (WHAT names the image in messages): read its
   variable table and count its indirect functions; set LD's handle.  */
static bool
gcn_open_tables (struct gcn_device *dev, struct gcn_image *img,
		 struct ok_image_load *ld, const unsigned char *image,
		 size_t size, size_t nvars, const char *what)
{
  if (nvars > 0
      && (img->vars = gcn_var_table (dev, img, nvars, what)) == NULL)
    {
      gcn_image_free (dev, img);
      return false;
    }
  img->ind_in_table = gcn_ind_count (image, size);
  ld->image = img;
  return true;
}

static bool
gcn_open (struct ok_device *d, struct ok_image_load *ld)
{
  struct gcn_device *dev = gcn_dev (d);
  const struct ok_tgt_desc *tgt = gcn_choose (dev, ld);
  if (tgt == NULL)
    return false;
  size_t image_size = (size_t) (tgt->image_end - tgt->image_start);
  struct gcn_image *img = gcn_exec_load (dev, tgt->image_start, image_size);
  if (img == NULL)
    return false;
  /* Our mkoffload says which GCC's device runtime the image has.  */
  img->abi = (tgt->flags & OK_TGT_GCN_KERNARGS_V3) ? 3 : 2;
  img->tgt = tgt;
  /* OpenACC's static launch dimensions, as our mkoffload recorded them
     (descriptor version 3).  */
  img->oacc = ok_desc_oacc_dims (ld->desc, tgt);
  /* With two spare slots for the constructors and destructors.  */
  img->kernels = calloc (ld->num_funcs + 2, sizeof *img->kernels);
  if (img->kernels == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      gcn_image_free (dev, img);
      return false;
    }
  if (!gcn_open_tables (dev, img, ld, tgt->image_start, image_size,
			ld->num_vars, "cannot load offload image"))
    return false;
  /* Our descriptor has no count of the indirect functions: the device's
     table has as many entries as the host's.  */
  img->ind_count = img->ind_in_table;
  snprintf (ld->what, sizeof ld->what, "code object %s", dev->gfx);
  return true;
}

/* LD's target data in the layout of GCC 14+ (the count of indirect
   functions 0 in older ones), copied to *BUF.  The core routes device
   versions 2 and 3 only here.  */
static const struct gcc_gcn_image_ind *
gcn_gcc_desc (const struct ok_image_load *ld, struct gcc_gcn_image_ind *buf)
{
  if (OK_GOMP_VERSION_LIB (ld->gcc_version) >= GCC_GCN_LIB_IND_FUNCS)
    memcpy (buf, ld->gcc_data, sizeof *buf);
  else
    {
      const struct gcc_gcn_image *old = ld->gcc_data;
      struct gcc_gcn_image_ind copy = {
	.code = old->code, .kernel_count = old->kernel_count,
	.kernels = old->kernels, .ind_func_count = 0,
	.global_variable_count = old->global_variable_count
      };
      *buf = copy;
    }
  return buf;
}

static bool
gcn_open_gcc (struct ok_device *d, struct ok_image_load *ld)
{
  struct gcn_device *dev = gcn_dev (d);
  const void *target_data = ld->gcc_data;
  struct gcc_gcn_image_ind desc_buf;
  const struct gcc_gcn_image_ind *desc = gcn_gcc_desc (ld, &desc_buf);
  if (desc->code == NULL || desc->code->image == NULL
      || desc->code->size == 0 || desc->code->size > ((size_t) 1 << 32))
    {
      ok_dev_error (&dev->base, "GCC-format offload image %p has no code"
		    " object", target_data);
      return false;
    }
  if (desc->kernel_count > 100000 || desc->global_variable_count > 1000000
      || desc->ind_func_count > 1000000
      || (desc->kernel_count > 0 && desc->kernels == NULL))
    {
      ok_dev_error (&dev->base, "GCC-format offload image %p is corrupt (%u"
		    " kernels, %u variables, %u indirect functions)",
		    target_data, desc->kernel_count,
		    desc->global_variable_count, desc->ind_func_count);
      return false;
    }
  for (unsigned i = 0; i < desc->kernel_count; i++)
    if (desc->kernels[i].name == NULL
	|| strnlen (desc->kernels[i].name, NAME_MAX_LEN) == NAME_MAX_LEN)
      {
	ok_dev_error (&dev->base, "GCC-format offload image %p: kernel %u has"
		      " no name", target_data, i);
	return false;
      }

  struct gcn_image *img = gcn_exec_load (dev, desc->code->image,
					 desc->code->size);
  if (img == NULL)
    return false;
  /* Device version 3: GCC 13+'s device runtime and kernel arguments.  */
  img->abi = OK_GOMP_VERSION_DEV (ld->gcc_version) == OK_GCC_DEV_VERSION_GCN
	     ? 2 : 3;
  /* The table's functions are the kernels but the constructors' and
     destructors', which GCC's mkoffload lists among them.  */
  img->gcc_fns = calloc (desc->kernel_count ? desc->kernel_count : 1,
			 sizeof *img->gcc_fns);
  img->kernels = calloc ((size_t) desc->kernel_count + 2,
			 sizeof *img->kernels);
  if (img->gcc_fns == NULL || img->kernels == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      gcn_image_free (dev, img);
      return false;
    }
  size_t nfuncs = 0;
  for (unsigned i = 0; i < desc->kernel_count; i++)
    {
      const struct gcc_gcn_kernel *kd = &desc->kernels[i];
      if (strcmp (kd->name, "_init_array") == 0)
	img->gcc_init = kd;
      else if (strcmp (kd->name, "_fini_array") == 0)
	img->gcc_fini = kd;
      else
	img->gcc_fns[nfuncs++] = kd;
    }
  if (!gcn_open_tables (dev, img, ld, desc->code->image, desc->code->size,
			desc->global_variable_count,
			"cannot load GCC-format offload image"))
    return false;
  img->ind_count = desc->ind_func_count;
  ld->num_funcs = nfuncs;
  ld->num_vars = desc->global_variable_count;
  snprintf (ld->what, sizeof ld->what, "GCC code object %s", dev->gfx);
  return true;
}

/* The table entry of function I: the address of our kernel record.  */
static bool
gcn_function (struct ok_device *d, struct ok_image_load *ld, size_t i,
	      struct ok_addr_pair *entry)
{
  struct gcn_device *dev = gcn_dev (d);
  struct gcn_image *img = ld->image;
  struct gcn_kernel *k = &img->kernels[i];
  img->num_kernels = i + 1;
  if (img->gcc_fns != NULL)
    {
      const struct gcc_gcn_kernel *kd = img->gcc_fns[i];
      if (gcn_gcc_function_init (dev, img, k, kd) < 0)
	return false;
      for (int j = 0; j < 3; j++)
	k->oacc_dims[j] = kd->oacc_dims[j] > 0 ? (uint32_t) kd->oacc_dims[j]
			  : 0;
    }
  else
    {
      const struct ok_tgt_desc *tgt = img->tgt;
      uint32_t vgprs = tgt->kernel_info ? tgt->kernel_info[i].vgprs : 0;
      bool device_fn = tgt->kernel_info != NULL
		       && (tgt->kernel_info[i].flags & OK_KINFO_DEVICE_FN);
      /* ok_desc_check refused images with a missing or empty name.  */
      if (device_fn
	  ? !gcn_device_fn_init (dev, img, k, tgt->func_names[i])
	  : gcn_kernel_init (dev, img, k, tgt->func_names[i], vgprs,
			     true) <= 0)
	return false;
      if (img->oacc != NULL)
	for (int j = 0; j < 3; j++)
	  k->oacc_dims[j] = img->oacc[i].dim[j];
    }
  entry->start = (uintptr_t) k;
  entry->end = entry->start + 1;
  return true;
}

/* The table entry of variable I, from the device's table of them.  */
static bool
gcn_variable_entry (struct ok_device *d, struct ok_image_load *ld,
		    size_t i, struct ok_addr_pair *entry)
{
  const struct gcn_image *img = ld->image;
  const struct gcc_gcn_var *var = &img->vars[i];
  if (img->gcc_fns == NULL)
    {
      /* The names are only for messages: the table gives the rest.  */
      const char *name = img->tgt->var_names[i];
      struct ok_host_var hv = ok_host_var (ld, i);
      uint64_t dsize = var->size;
      bool dlink = (dsize & OK_GOMP_LINK_BIT) != 0;
      dsize &= ~(uint64_t) OK_GOMP_LINK_BIT;
      /* The device's table of its variables must say what the host's
	 does of the kind of each, and of a link variable's host object;
	 the core checks the sizes of the device copies after.  */
      if (hv.link != dlink || var->addr == 0
	  || (hv.link && dsize != hv.size))
	{
	  ok_dev_error (d, "variable %zu ('%s') is %llu bytes%s at %#llx on"
			" the device and %zu%s on the host", i, name,
			(unsigned long long) dsize, dlink ? " (link)" : "",
			(unsigned long long) var->addr, hv.size,
			hv.link ? " (link)" : "");
	  return false;
	}
    }
  gcn_var_pair (var, entry);
  return true;
}

static bool
gcn_trailing (struct ok_device *d, struct ok_image_load *ld,
	      const struct ok_trailing_var *var, struct ok_addr_pair *entry)
{
  uint64_t addr = 0;
  uint32_t size = 0;
  int found = gcn_variable (gcn_dev (d), ld->image, var->name, &addr,
			    &size);
  entry->start = found > 0 ? (uintptr_t) addr : 0;
  entry->end = found > 0 ? (uintptr_t) (addr + size) : 0;
  return found >= 0;
}

static bool
gcn_map_indirect_fns (struct ok_device *d, struct ok_image_load *ld,
		      const uint64_t *host_ind_fns)
{
  struct gcn_image *img = ld->image;
  return gcn_map_indirect (gcn_dev (d), img, host_ind_fns, img->ind_count,
			   img->ind_in_table);
}

static bool
gcn_rev_table (struct ok_device *d, struct ok_image_load *ld,
	       uint64_t **rev_fns)
{
  return gcn_rev_fns (gcn_dev (d), ld->image, ld->num_funcs, rev_fns);
}

/* Fill constructor or destructor kernel K of IMG: from GCC's kernel KD in
   GCC's format, else by NAME when the image has it.  1 when there, 0 when
   not, -1 after a report.  */
static int
gcn_cdtor_init (struct gcn_device *dev, struct gcn_image *img,
		struct gcn_kernel *k, const struct gcc_gcn_kernel *kd,
		const char *name)
{
  if (img->gcc_fns == NULL)
    return gcn_kernel_init (dev, img, k, name, 0, false);
  return kd == NULL ? 0 : gcn_gcc_function_init (dev, img, k, kd);
}

/* Constructors and destructors of the device code (C++ globals), when
   the image has them: in the two spare kernel slots.  Run the former,
   keep the latter for close.  */
static bool
gcn_run_ctors (struct ok_device *d, struct ok_image_load *ld)
{
  struct gcn_device *dev = gcn_dev (d);
  struct gcn_image *img = ld->image;
  img->num_kernels = ld->num_funcs + 2;
  struct gcn_kernel *init = &img->kernels[ld->num_funcs];
  struct gcn_kernel *fini = init + 1;
  int has_init = gcn_cdtor_init (dev, img, init, img->gcc_init,
				 "_init_array");
  int has_fini = gcn_cdtor_init (dev, img, fini, img->gcc_fini,
				 "_fini_array");
  if (has_init < 0 || has_fini < 0)
    return false;
  if (has_init > 0 && !gcn_run_ctor (dev, init))
    return false;
  img->fini = has_fini > 0 ? fini : NULL;
  return true;
}

static bool
gcn_close (struct ok_device *d, void *image, bool dtors)
{
  struct gcn_device *dev = gcn_dev (d);
  struct gcn_image *img = image;
  bool ok = true;
  if (dtors && img->fini != NULL && !ok_dev_broken (d))
    ok = gcn_run_ctor (dev, img->fini);
  gcn_image_free (dev, img);
  return ok;
}

const struct ok_image_ops gcn_image_ops = {
  .open = gcn_open,
  .open_gcc = gcn_open_gcc,
  .function = gcn_function,
  .variable = gcn_variable_entry,
  .trailing = gcn_trailing,
  .map_indirect = gcn_map_indirect_fns,
  .rev_table = gcn_rev_table,
  .run_ctors = gcn_run_ctors,
  .close = gcn_close,
};
