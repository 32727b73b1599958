/* Validation of registered offload data before a plugin reads it.  */

#ifndef OFFLOADKIT_DESC_CHECK_H
#define OFFLOADKIT_DESC_CHECK_H

#include <stddef.h>

#include "offload-desc.h"

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
   those of that type), or NULL when there are no more.  */
const struct ok_tgt_desc *ok_desc_target (const struct ok_openmp_target *desc,
					  int device_type, unsigned i);

#endif
