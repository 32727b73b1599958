/* The libgomp offload-plugin ABI of GCC 12 (GOMP_VERSION 1), as offloadkit
   uses it.  These are our own declarations of an external interface: the
   values are fixed by libgomp, which dlopens our plugins and calls the
   GOMP_OFFLOAD_* entry points, and by the wrapper objects that call
   GOMP_offload_register_ver at start-up.  */

#ifndef OFFLOADKIT_GOMP_ABI_H
#define OFFLOADKIT_GOMP_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offload-desc.h"

/* libgomp refuses a plugin whose GOMP_OFFLOAD_version differs from this.  */
#define OK_GOMP_VERSION 1

/* The version word passed to GOMP_offload_register_ver packs the libgomp
   version in the high half and a device-specific version in the low half.  */
#define OK_GOMP_VERSION_PACK(lib, dev) (((unsigned) (lib) << 16) | (unsigned) (dev))
#define OK_GOMP_VERSION_LIB(v) (((unsigned) (v) >> 16) & 0xffffu)
#define OK_GOMP_VERSION_DEV(v) ((unsigned) (v) & 0xffffu)

/* Device versions GCC 12's own mkoffloads put in that low half.  */
#define OK_GCC_DEV_VERSION_NVPTX 1
#define OK_GCC_DEV_VERSION_GCN 2

/* Device types (the target_type argument of GOMP_offload_register_ver and
   the result of GOMP_OFFLOAD_get_type).  */
#define OK_GOMP_DEVICE_HOST 2
#define OK_GOMP_DEVICE_NVIDIA_PTX 5
#define OK_GOMP_DEVICE_GCN 8

/* GOMP_OFFLOAD_get_caps bits.  */
#define OK_GOMP_CAP_SHARED_MEM (1u << 0)
#define OK_GOMP_CAP_NATIVE_EXEC (1u << 1)
#define OK_GOMP_CAP_OPENMP_400 (1u << 2)
#define OK_GOMP_CAP_OPENACC_200 (1u << 3)

/* The ARGS vector given to GOMP_OFFLOAD_run: a NULL-terminated list of
   words.  Each word holds a device selector in its low 7 bits and an
   identifier in bits 8-15; the value is either in the high bits of the
   same word or, with SUBSEQUENT_PARAM set, in the next word.  */
#define OK_GOMP_TARGET_ARG_DEVICE_MASK ((1 << 7) - 1)
#define OK_GOMP_TARGET_ARG_DEVICE_ALL 0
#define OK_GOMP_TARGET_ARG_SUBSEQUENT_PARAM (1 << 7)
#define OK_GOMP_TARGET_ARG_ID_MASK (((1 << 8) - 1) << 8)
#define OK_GOMP_TARGET_ARG_NUM_TEAMS (1 << 8)
#define OK_GOMP_TARGET_ARG_THREAD_LIMIT (2 << 8)
#define OK_GOMP_TARGET_ARG_VALUE_SHIFT 16

/* In the host variable table each entry is an (address, size) pair; the
   top bit of the size marks an "omp declare target link" variable, whose
   device copy is a pointer that libgomp fills in when the variable is
   mapped.  */
#define OK_GOMP_LINK_BIT ((uintptr_t) 1 << (sizeof (uintptr_t) * 8 - 1))

/* Name of the on-device int that libgomp sets to the device's number;
   returned as an extra, trailing entry of GOMP_OFFLOAD_load_image.  */
#define OK_GOMP_DEVICE_NUM_VAR "__gomp_device_num"

/* One host-to-device mapping returned by GOMP_OFFLOAD_load_image: for a
   function, START is what GOMP_OFFLOAD_run receives and END is START + 1;
   for a variable, [START, END) is its device copy.  */
struct ok_addr_pair
{
  uintptr_t start;
  uintptr_t end;
};

/* Callbacks libgomp exports to its plugins (resolved when libgomp dlopens
   the plugin).  */
extern void *GOMP_PLUGIN_malloc (size_t);
extern void *GOMP_PLUGIN_malloc_cleared (size_t);
extern void *GOMP_PLUGIN_realloc (void *, size_t);
extern void GOMP_PLUGIN_target_task_completion (void *);
extern void GOMP_PLUGIN_debug (int, const char *, ...)
  __attribute__ ((format (printf, 2, 3)));
extern void GOMP_PLUGIN_error (const char *, ...)
  __attribute__ ((format (printf, 1, 2)));
extern void GOMP_PLUGIN_fatal (const char *, ...)
  __attribute__ ((noreturn, format (printf, 1, 2)));

#endif /* OFFLOADKIT_GOMP_ABI_H */
