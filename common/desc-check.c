/* Validation of registered offload data; see desc-check.h.  */

#include <stdio.h>

#include "desc-check.h"
#include "gomp-abi.h"

const struct ok_tgt_desc *
ok_desc_target (const struct ok_openmp_target *desc, int device_type,
		unsigned i)
{
  for (uint32_t t = 0; t < desc->num_targets; t++)
    {
      const struct ok_tgt_desc *tgt = ok_desc_target_at (desc, t);
      if (tgt->device_type == (uint32_t) device_type && i-- == 0)
	return tgt;
    }
  return NULL;
}

/* Whether the OpenACC dimensions of TGT, image T of DESC, have only
   known flags; else say so in ERR.  */
static bool
oacc_dims_ok (const struct ok_openmp_target *desc,
	      const struct ok_tgt_desc *tgt, uint32_t t, char *err,
	      size_t errlen)
{
  const struct ok_oacc_dims *dims = ok_desc_oacc_dims (desc, tgt);
  if (dims == NULL)
    return true;
  for (uint32_t f = 0; f < tgt->num_funcs; f++)
    if ((dims[f].flags & ~OK_OACC_FN) != 0)
      {
	snprintf (err, errlen, "offload image %u: the OpenACC dimensions of"
		  " function %u of %u have flags %#x, expected 0 or"
		  " OK_OACC_FN (0x1) (from a newer offloadkit?)",
		  (unsigned) t, (unsigned) f + 1, (unsigned) tgt->num_funcs,
		  (unsigned) dims[f].flags);
	return false;
      }
  return true;
}

const struct ok_openmp_target *
ok_desc_check (unsigned version, const void *target_data, int device_type,
	       char *err, size_t errlen)
{
  return ok_desc_check_lib (version, target_data, device_type,
			    OK_GOMP_VERSION_MAX, err, errlen);
}

const struct ok_openmp_target *
ok_desc_check_lib (unsigned version, const void *target_data,
		   int device_type, unsigned max_lib, char *err,
		   size_t errlen)
{
  const struct ok_openmp_target *desc = target_data;
  unsigned lib = OK_GOMP_VERSION_LIB (version);
  unsigned dev = OK_GOMP_VERSION_DEV (version);

  if (lib > max_lib)
    {
      snprintf (err, errlen, "offload data needs libgomp version %u,"
		" the running libgomp implements version %u", lib, max_lib);
      return NULL;
    }
  if (dev != OK_DEV_VERSION)
    {
      snprintf (err, errlen, "offload data of device version %u is not"
		" offloadkit's (expected device version %u)", dev,
		OK_DEV_VERSION);
      return NULL;
    }
  if (desc == NULL)
    {
      snprintf (err, errlen, "no offload descriptor given");
      return NULL;
    }
  if (desc->magic != OK_DESC_MAGIC)
    {
      snprintf (err, errlen, "offload descriptor has magic %#x,"
		" expected %#x", (unsigned) desc->magic, OK_DESC_MAGIC);
      return NULL;
    }
  if (desc->desc_version < OK_DESC_VERSION_MIN
      || desc->desc_version > OK_DESC_VERSION)
    {
      snprintf (err, errlen, "offload descriptor has version %u,"
		" expected %u to %u", (unsigned) desc->desc_version,
		OK_DESC_VERSION_MIN, OK_DESC_VERSION);
      return NULL;
    }
  if (desc->dev_version != OK_DEV_VERSION)
    {
      snprintf (err, errlen, "offload descriptor has device version %u,"
		" expected %u", (unsigned) desc->dev_version, OK_DEV_VERSION);
      return NULL;
    }
  if (desc->flags != 0)
    {
      snprintf (err, errlen, "offload descriptor has flags %#x, expected 0"
		" (from a newer offloadkit?)", (unsigned) desc->flags);
      return NULL;
    }
  if (desc->num_targets > 0 && desc->targets == NULL)
    {
      snprintf (err, errlen, "offload descriptor has %u images but no"
		" image table", (unsigned) desc->num_targets);
      return NULL;
    }
  if (desc->host.funcs_end < desc->host.funcs
      || desc->host.vars_end < desc->host.vars
      || (desc->host.vars_end - desc->host.vars) % 2 != 0)
    {
      snprintf (err, errlen, "offload descriptor has a malformed host table");
      return NULL;
    }

  size_t nfuncs = (size_t) (desc->host.funcs_end - desc->host.funcs);
  size_t nvars = (size_t) (desc->host.vars_end - desc->host.vars) / 2;
  unsigned matching = 0;
  for (uint32_t t = 0; t < desc->num_targets; t++)
    {
      const struct ok_tgt_desc *tgt = ok_desc_target_at (desc, t);
      if (tgt->device_type != (uint32_t) device_type)
	continue;
      matching++;
      if (tgt->num_funcs != nfuncs || tgt->num_vars != nvars)
	{
	  snprintf (err, errlen, "offload image %u has %u functions and %u"
		    " variables, the host table %zu and %zu", (unsigned) t,
		    (unsigned) tgt->num_funcs, (unsigned) tgt->num_vars,
		    nfuncs, nvars);
	  return NULL;
	}
      uint32_t known = tgt->image_format == OK_IMAGE_GCN
		       ? OK_TGT_GCN_KERNARGS_V3 : 0;
      if ((tgt->flags & ~known) != 0)
	{
	  snprintf (err, errlen, "offload image %u has flags %#x, expected 0"
		    "%s (from a newer offloadkit?)", (unsigned) t,
		    (unsigned) tgt->flags,
		    known ? " or OK_TGT_GCN_KERNARGS_V3 (0x1)" : "");
	  return NULL;
	}
      if ((tgt->num_funcs > 0 && tgt->func_names == NULL)
	  || (tgt->num_vars > 0 && tgt->var_names == NULL))
	{
	  snprintf (err, errlen, "offload image %u lacks its function or"
		    " variable name table", (unsigned) t);
	  return NULL;
	}
      for (uint64_t i = 0; i < (uint64_t) tgt->num_funcs + tgt->num_vars; i++)
	{
	  bool is_func = i < tgt->num_funcs;
	  uint32_t k = (uint32_t) (is_func ? i : i - tgt->num_funcs);
	  const char *name = is_func ? tgt->func_names[k] : tgt->var_names[k];
	  if (name == NULL || name[0] == '\0')
	    {
	      snprintf (err, errlen, "offload image %u: %s %u of %u has no"
			" name, expected a symbol name", (unsigned) t,
			is_func ? "function" : "variable", (unsigned) k + 1,
			(unsigned) (is_func ? tgt->num_funcs : tgt->num_vars));
	      return NULL;
	    }
	}
      if (!oacc_dims_ok (desc, tgt, t, err, errlen))
	return NULL;
      if (tgt->image_end < tgt->image_start)
	{
	  snprintf (err, errlen, "offload image %u has a negative size",
		    (unsigned) t);
	  return NULL;
	}
    }
  if (matching == 0)
    {
      /* Name what the descriptor does hold, e.g. "8, 8" for two gcn
	 images.  */
      char found[64] = "";
      size_t used = 0;
      for (uint32_t t = 0; t < desc->num_targets && used < sizeof found; t++)
	used += (size_t) snprintf (found + used, sizeof found - used,
				   "%s%u", t ? ", " : "",
				   (unsigned) ok_desc_target_at (desc, t)
				   ->device_type);
      snprintf (err, errlen, "offload descriptor has no image for device"
		" type %d (found device type%s: %s)", device_type,
		desc->num_targets == 1 ? "" : "s",
		desc->num_targets ? found : "none");
      return NULL;
    }
  return desc;
}
