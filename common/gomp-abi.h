/* The libgomp offload-plugin ABI of GCC 12 to 16 (GOMP_VERSION 1 to 3), as
   offloadkit uses it.  These are our own declarations of an external interface: the
   values are fixed by libgomp, which dlopens our plugins and calls the
   GOMP_OFFLOAD_* entry points, and by the wrapper objects that call
   GOMP_offload_register_ver at start-up.  */

#ifndef OFFLOADKIT_GOMP_ABI_H
#define OFFLOADKIT_GOMP_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offload-desc.h"

/* libgomp refuses a plugin whose GOMP_OFFLOAD_version differs from its
   own GOMP_VERSION: 1 in GCC 12 (the version the wrapper objects register
   with), 2 in GCC 13, 3 in GCC 14 to 16.  The plugins answer with the
   version of the libgomp that loaded them (core/libgomp-abi.c).  */
#define OK_GOMP_VERSION 1
#define OK_GOMP_VERSION_MAX 3
#define OK_GOMP_VERSION_OF_GCC(gcc) ((gcc) <= 12 ? 1 : (gcc) == 13 ? 2 : 3)

/* What the offloading of GCC (the major version, 12 to 16) has, named
   once, as GCC names GOMP_VERSION_SUPPORTS_INDIRECT_FUNCS: code asks for
   a capability, never compares version numbers.  Facts from each
   version's libgomp (target.c, libgomp-plugin.h, plugin/) and GCC (the
   mkoffload.cc of config/nvptx and config/gcn);
   testsuite/tools/gcc-caps-check.c checks the table.  */
/* 13: OpenMP's requires directive reaches the plugins (the mask before
   the target data, GOMP_OFFLOAD_get_num_devices' argument), the device's
   ICVs are a block (__gomp_additional_icvs, not __gomp_device_num), and
   reverse offload (GOMP_PLUGIN_target_rev, load_image's REV_FN_TABLE,
   device functions in the function table).  */
#define OK_GCC_HAS_REQUIRES(gcc) ((gcc) >= 13)
#define OK_GCC_HAS_ICV_BLOCK(gcc) ((gcc) >= 13)
#define OK_GCC_HAS_REVERSE_OFFLOAD(gcc) ((gcc) >= 13)
/* 13 only: GOMP_PLUGIN_target_rev copies through two callbacks of the
   plugin's; 14 and newer through its dev2host and host2dev.  */
#define OK_GCC_TARGET_REV_CALLBACKS(gcc) ((gcc) == 13)
/* 14: indirect functions (GOMP_VERSION_SUPPORTS_INDIRECT_FUNCS: the
   6-word host table, load_image's HOST_IND_FN_TABLE).  */
#define OK_GCC_HAS_INDIRECT_FUNCS(gcc) ((gcc) >= 14)
/* 15: unified shared memory.  A plugin whose devices all meet a
   program's `requires unified_shared_memory' or `requires self_maps'
   (GOMP_OFFLOAD_get_num_devices counts them) gets the
   GOMP_OFFLOAD_CAP_SHARED_MEM capability from libgomp, which then maps
   nothing: regions get the host's addresses (GCC 16's target.c
   gomp_target_init and GOMP_target_ext, the same in GCC 15.3's; GCC
   15's plugins accept both requirements, GCC 13's and 14's neither).
   omp_target_is_accessible answers from the capability in 15 and asks
   the plugin's is_accessible_ptr from 16.  */
#define OK_GCC_HAS_USM(gcc) ((gcc) >= 15)
/* 12 only: an OpenACC launch gets each argument's device address in host
   memory, where later libgomps pass a device block they mapped.  */
#define OK_GCC_ACC_ARGS_ON_HOST(gcc) ((gcc) <= 12)
/* GCC's drivers, for mkoffload: from 13 the accel compiler reads the
   requires mask from GCC_OFFLOAD_OMP_REQUIRES_FILE and the GCN device
   runtime takes version 3's kernel arguments; from 14 the host link's
   libraries come as -l_GCC_NAME; from 15 the host code's exception
   handling is compiled with -mfake-exceptions.  */
#define OK_GCC_HAS_REQUIRES_FILE(gcc) ((gcc) >= 13)
#define OK_GCC_GCN_KERNARGS_V3(gcc) ((gcc) >= 13)
#define OK_GCC_PASSES_LIBRARIES(gcc) ((gcc) >= 14)
#define OK_GCC_FAKE_EXCEPTIONS(gcc) ((gcc) >= 15)

/* The version word passed to GOMP_offload_register_ver packs the libgomp
   version in the high half and a device-specific version in the low half.  */
#define OK_GOMP_VERSION_PACK(lib, dev) (((unsigned) (lib) << 16) | (unsigned) (dev))
#define OK_GOMP_VERSION_LIB(v) (((unsigned) (v) >> 16) & 0xffffu)
#define OK_GOMP_VERSION_DEV(v) ((unsigned) (v) & 0xffffu)

/* Device versions GCC's own mkoffloads put in that low half: nvptx 1 in
   GCC 12 to 16; gcn 2 in GCC 12, 3 from GCC 13.  */
#define OK_GCC_DEV_VERSION_NVPTX 1
#define OK_GCC_DEV_VERSION_GCN 2
#define OK_GCC_DEV_VERSION_GCN_13 3

/* The "requires" mask libgomp 13+ passes to GOMP_OFFLOAD_get_num_devices
   (GOMP_REQUIRES_* of gomp-constants.h; libgomp clears TARGET_USED).  */
#define OK_GOMP_REQUIRES_UNIFIED_ADDRESS 0x10u
#define OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY 0x20u
#define OK_GOMP_REQUIRES_REVERSE_OFFLOAD 0x80u
#define OK_GOMP_REQUIRES_TARGET_USED 0x200u
#define OK_GOMP_REQUIRES_SELF_MAPS 0x400u

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

/* The extra, trailing entry of GOMP_OFFLOAD_load_image.  libgomp 12: the
   on-device int that libgomp sets to the device's number.  libgomp 13+:
   the device's struct gomp_offload_icvs (device_num, default_device,
   nteams, teams_thread_limit: four ints), which libgomp fills; an entry
   of any other size is fatal there, {0, 0} means "none".  */
#define OK_GOMP_DEVICE_NUM_VAR "__gomp_device_num"
#define OK_GOMP_ICVS_VAR "__gomp_additional_icvs"
#define OK_GOMP_ICVS_SIZE 16

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
