/* Validation of registered offload data before a plugin reads it.  */

#ifndef OFFLOADKIT_DESC_CHECK_H
#define OFFLOADKIT_DESC_CHECK_H

#include <stddef.h>

#include "offload-desc.h"

/* The oldest descriptor version the plugins read: programs linked by an
   earlier mkoffload keep working.  */
#define OK_DESC_VERSION_MIN 2u

/* struct ok_tgt_desc as descriptors of version 2 lay it out: without
   oacc_dims, so their targets array has a shorter stride.  */
struct ok_tgt_desc_v2
{
  uint32_t device_type;
  uint32_t image_format;
  uint32_t arch;
  uint32_t flags;
  const unsigned char *image_start;
  const unsigned char *image_end;
  uint32_t num_funcs;
  uint32_t num_vars;
  const char *const *func_names;
  const char *const *var_names;
  const struct ok_kernel_info *kernel_info;
};

_Static_assert (offsetof (struct ok_tgt_desc, oacc_dims)
		== sizeof (struct ok_tgt_desc_v2),
		"version 3 only appends oacc_dims");

/* Target descriptor T (0 .. num_targets - 1) of DESC, whatever DESC's
   version: every reader of the targets array goes through this (or
   ok_desc_target), never desc->targets[T], whose stride is version 3's.
   For a version 2 descriptor the result points at the shorter entry:
   every field but oacc_dims may be read from it; read that one with
   ok_desc_oacc_dims.  */
static inline const struct ok_tgt_desc *
ok_desc_target_at (const struct ok_openmp_target *desc, uint32_t t)
{
  size_t stride = desc->desc_version < 3 ? sizeof (struct ok_tgt_desc_v2)
					 : sizeof (struct ok_tgt_desc);
  return (const struct ok_tgt_desc *) (const void *)
	 ((const char *) desc->targets + (size_t) t * stride);
}

/* The OpenACC launch dimensions of TGT (from ok_desc_target or
   ok_desc_target_at of DESC): its oacc_dims, NUM_FUNCS entries in the
   order of its function names, or NULL when it has none (OpenMP images,
   and every image of a version 2 descriptor).  Backends that launch
   OpenACC regions read them only through this.  */
static inline const struct ok_oacc_dims *
ok_desc_oacc_dims (const struct ok_openmp_target *desc,
		   const struct ok_tgt_desc *tgt)
{
  return desc->desc_version < 3 ? NULL : tgt->oacc_dims;
}

/* Check that VERSION and TARGET_DATA, as given to GOMP_OFFLOAD_load_image,
   are an offloadkit descriptor for DEVICE_TYPE whose tables are
   consistent.  Return the descriptor, or NULL with a message in ERR (what
   was expected and what was found).  The library version packed in
   VERSION may be any libgomp's (up to OK_GOMP_VERSION_MAX): from 2,
   libgomp hands the plugin the data after the "requires" word, so the
   descriptor's layout is the same.  */
const struct ok_openmp_target *ok_desc_check (unsigned version,
					      const void *target_data,
					      int device_type,
					      char *err, size_t errlen);
/* The same, accepting library versions up to MAX_LIB only (the running
   libgomp's).  */
const struct ok_openmp_target *ok_desc_check_lib (unsigned version,
						  const void *target_data,
						  int device_type,
						  unsigned max_lib,
						  char *err, size_t errlen);

/* Return the I-th target descriptor of DESC for DEVICE_TYPE (counting only
   those of that type), or NULL when there are no more.  As with
   ok_desc_target_at, read its oacc_dims only with ok_desc_oacc_dims.  */
const struct ok_tgt_desc *ok_desc_target (const struct ok_openmp_target *desc,
					  int device_type, unsigned i);

#endif
