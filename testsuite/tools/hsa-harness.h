/* Unit tests of the HSA backend of libgomp-plugin-gcn.so.1, over the fake
   HSA runtime (testsuite/fakehsa), without libgomp or a GPU.

   Usage: hsa-harness PLUGIN.so FAKE-HSA.so OURS.so
	    [GCCS.so|- [IND.so [IND16.so]]]

   OURS.so and GCCS.so are shared libraries with OpenMP target regions,
   built by offloadkit.gcn/gcn.exp from image.c through our gcn mkoffload
   (for the two GPUs of HSA_HARNESS_AGENTS, gfx906 and gfx900 by default:
   two real code objects from Debian's amdgcn accel compiler) and through
   GCC's own (the first GPU, GCC's image format); IND.so from ind.c
   through ours (the first GPU), with two indirect functions, and
   IND16.so from the same with GCC 16's __gomp_indirect_addr_hmap.  The
   device code is that of the GCC named by HSA_HARNESS_GCC, and the
   checks expect its kernel-argument layout, decided per image.  This
   program defines GOMP_offload_register_ver, which their constructors
   call when they are dlopened (it is linked with -rdynamic), and so gets
   their real descriptors; it plays libgomp's part for the plugin through
   tools/gomp-standin.c, with OFFLOADKIT_HSA_LIBRARY pointing at the fake.
   The fake records what the plugin asked the runtime to do (dispatch
   packets with their kernarg bytes, allocations, executables, queues,
   signals), which the checks read through its fakehsa_* functions.
   Prints one "PASS: name", "FAIL: name" or "UNSUPPORTED: name" line per
   check (offloadkit.gcn/gcn.exp turns them into DejaGnu results) and exits
   with 1 if any check failed.

   main (hsa-harness.c) walks a table of areas, each in a file of its own
   but the start and end of the main process's session:
     hsa-harness-devices.c   device counts and silence without a kernel
			     driver, without a runtime, without GPU agents;
			     HSA agents before emulated devices; the image
			     choice by ISA (the two agents, an ISA no image
			     has, one no GCC can build for)
     hsa-harness-errors.c    each runtime call failed in turn along a whole
			     session (one clear error from the plugin or a
			     documented work-around, no crash, nothing
			     leaked); a faulting kernel (the queue's error
			     callback)
     hsa-harness-output.c    device printf's buffer (a new kernel-argument
			     block, an overflow) and the exit word (exit,
			     abort, a signal)
     hsa-harness-selftest.c  the fake itself: it must refuse what the
			     runtime refuses, or "no invalid runtime call"
			     proves nothing
     hsa-harness-load.c      the descriptors and their loads: the address
			     table (kernels, variable addresses and sizes, a
			     `static' variable and a `link' one, which only
			     the code object's variable table leads to,
			     __gomp_device_num); images in GCC's own format
     hsa-harness-bad-images.c  refused images (truncated, corrupt ELF,
			     wrong machine, wrong descriptor magic, version,
			     device type or image format, variable size
			     mismatch, no or a too small .offload_var_table,
			     missing kernel)
     hsa-harness-run.c       copies; dispatch packets (kernel object, grid,
			     work-group, segment sizes, kernarg contents) for
			     several teams/threads settings; async_run
			     completions; several host threads on two devices
     hsa-harness-abi3.c      GCC 13+'s device code: kernel arguments of
			     device version 3 (default and GCN_* sizes),
			     played on any GCC's by flagging our images;
			     GCC 13's and 14's image formats, the map of
			     indirect functions, reverse offload
     hsa-harness-openacc.c   OpenACC: the plugin offers it; launch
			     dimensions (static, libgomp's, GCC's defaults),
			     geometry and kernel arguments; async queues
			     (their HSA queues and threads, order,
			     serialize, callbacks, copies); properties;
			     profiling events; a faulting queued kernel
   The last area finalises the devices, which must wait for a running
   kernel and leave nothing behind.

   What the device computes is not checked: kernels do not run.  Checks
   that need a fresh plugin run in forked children.  */

#ifndef OFFLOADKIT_HSA_HARNESS_H
#define OFFLOADKIT_HSA_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desc-check.h"
#include "gomp-abi.h"
#include "gomp-standin.h"
#include "harness-common.h"
#include "offload-desc.h"

/* -rdynamic exports the program's globals: these stay out of the dynamic
   symbol table, where the plugin could bind to them.  */
#pragma GCC visibility push(hidden)

extern const char *plugin_path;

/* The fake's agents on the main process's devices 0 and 1 (and so the
   GPUs the test libraries are built for): HSA_HARNESS_AGENTS, gfx906 and
   gfx900 by default (GCC 16's Debian package links neither, and gcn.exp
   then names gfx90a and gfx908), with their arch numbers (0x906) and as
   FAKEHSA_AGENTS lists them; OTHER_AGENT, one they have no code object
   for.  GCC_MAJOR: the GCC that built the test libraries
   (HSA_HARNESS_GCC, 12 by default), whose device code they hold.  */
extern char agent_name[2][16];
extern uint32_t agent_arch[2];
extern char agent_list[40];
extern char other_agent[16];
extern int gcc_major;

/* Where the output buffer (device printf, the exit word, GCC 13+'s
   reverse-offload requests) is in the kernel arguments that device code
   reads: GCC 12's (struct kernargs of its plugin-gcn.c, device version
   2), GCC 13 and later's (struct kernargs_abi of libgomp-gcn.h, device
   version 3).  */
#define V2_OUTPUT 40
#define V3_OUTPUT 56

/* Whether our image TD's device code reads version 3's kernel arguments
   (mkoffload flagged it OK_TGT_GCN_KERNARGS_V3).  */
bool tgt_is_v3 (const struct ok_tgt_desc *td);
/* V3_OUTPUT or V2_OUTPUT.  */
unsigned output_offset (bool v3);

/* The fake's own queries (fakehsa_*).  */
extern int (*f_dispatch_count) (void);
extern int (*f_dispatch_info) (int, void *, int *, char *, size_t, void *,
			       size_t);
extern int (*f_symbol) (const char *, int, uintptr_t *, uint64_t *, int *,
			uint64_t *);
extern int (*f_block) (uintptr_t, uintptr_t *, size_t *);
extern int (*f_svm) (uintptr_t, uintptr_t *, size_t *, uint64_t *,
		     unsigned *);

/* ---- The descriptors (hsa-harness-load.c).  */

/* What a test library registered.  */
struct reg
{
  unsigned version;
  const void *host_table;
  int type;
  const void *target_data;
};

/* Ours, with NFUNCS functions and NVARS variables, and GCC's (NULL if it
   was not built).  */
extern const struct reg *ours, *gccs;
/* IND.so's and IND16.so's (hsa-harness-abi3.c), or NULL.  */
extern const struct reg *inds, *inds16;
extern const struct ok_openmp_target *our_desc;
extern size_t nfuncs, nvars;

/* Set OUR_DESC, NFUNCS and NVARS from OURS; whether it looks right.  */
bool describe_ours (void);

/* The target descriptor of D for gfxARCH, or NULL.  */
const struct ok_tgt_desc *target_for (const struct ok_openmp_target *d,
				      uint32_t arch);

/* Load D (registered as ours) on DEV; the table or NULL.  */
struct ok_addr_pair *load (int dev, const struct ok_openmp_target *d);

/* A load that must fail with one error containing the NULL-terminated
   needles after DATA, leaving nothing behind in the runtime.  */
void bad_load (const char *name, int dev, const void *data, ...);

/* Our image's table on device 0 (gfx906) and 1 (gfx900), once loaded.  */
extern struct ok_addr_pair *tab0, *tab1;

/* ---- Dispatches (hsa-harness-run.c).  */

/* The AQL kernel-dispatch packet (64 bytes; our own declaration, as the
   fake's, from hsa.h).  */
struct packet
{
  uint16_t header, setup;
  uint16_t wg[3], reserved0;
  uint32_t grid[3];
  uint32_t private_size, group_size;
  uint64_t kernel_object;
  uint64_t kernarg_address;
  uint64_t reserved2;
  uint64_t completion_signal;
};

struct dispatch
{
  struct packet p;
  int agent;
  char kernel[128];
  uint64_t kargs[8];
  int nkargs;
};

/* Dispatch I's record; false if there is none.  */
bool get_dispatch (int i, struct dispatch *d);

/* Run function FN of a loaded image on DEV; the dispatch it made (the
   last one, after any others the run made).  */
bool run_one (int dev, void *fn, void *tgt_vars, void **args,
	      struct dispatch *d);

/* Whether dispatch D has the kernel arguments of device version 3 for
   TV, TEAMS teams of THREADS wavefronts with ARENA bytes per team and
   STACK per thread, and the LDS size GROUP.  */
bool v3_args_are (const struct dispatch *d, void *tv, unsigned teams,
		  unsigned threads, size_t arena, size_t stack,
		  uint32_t group);
/* The LDS a dispatch of TEAMS teams of a kernel needing OWN bytes gets
   for device version 3's code with the default settings: 64 KiB shared
   out between the teams each of the fake's 60 compute units runs.  */
uint32_t v3_lds (unsigned teams, uint32_t own);

/* ---- The areas, in the order main walks them.  */

bool have_no_kfd (void);		/* hsa-harness-devices.c */
bool open_plugin_only (void);
void child_system_runtime (void);
void child_zero_silent (void);
void child_init_fails (void);
void child_two_and_emulated (void);
void child_no_matching_isa (void);
void child_unbuildable_isa (void);
void child_generic_advice (void);
void test_failures (void);		/* hsa-harness-errors.c */
void child_kernel_fault (void);
void child_print_buffer (void);		/* hsa-harness-output.c */
void child_fake_selftest (void);	/* hsa-harness-selftest.c */
void test_load (void);			/* hsa-harness-load.c */
void test_bad_images (void);		/* hsa-harness-bad-images.c */
void child_generic_images (void);
void child_generic_not_member (void);
void test_gcc_image (void);		/* hsa-harness-load.c */
void child_libgomp14 (void);		/* hsa-harness-load.c */
void child_requires_ua (void);
void child_usm_svm (void);		/* hsa-harness-usm.c */
void child_usm_no_svm (void);
void child_usm_libgomp14 (void);
void child_requires_ua_emulated (void);
void test_memory (void);		/* hsa-harness-run.c */
void test_entries (void);		/* hsa-harness-entries.c */
void child_managed (void);
void test_interop (void);		/* hsa-harness-interop.c */
void test_launch (void);
void test_async (void);
void test_exit_values (void);		/* hsa-harness-output.c */
void test_threads (void);		/* hsa-harness-run.c */
void child_kernargs_v3 (void);		/* hsa-harness-abi3.c */
void child_kernargs_v3_env (void);
void child_gcc_v3_images (void);
void child_indirect (void);
void child_reverse_offload_13 (void);
void child_reverse_offload_14 (void);
void child_rev_device_fns (void);
void child_openacc (void);		/* hsa-harness-openacc.c */
void child_openacc_12 (void);

#pragma GCC visibility pop

#endif
