/* Shared state of the HSA backend (ok_backend_hsa), which drives AMD GCN
   GPUs through ROCm's HSA runtime, split by concern:

     hsa-lib.c     loading the runtime, finding GPU agents, error texts
     hsa-device.c  agents, regions, the queue, the backend itself
     hsa-elf.c     checking code objects before the runtime sees them
     hsa-image.c   choosing and loading images (ours and GCC's)
     hsa-tables.c  an image's tables for reverse offload and indirect
                   functions
     hsa-memory.c  allocations from the data region (the core pools
                   them) and copies
     hsa-managed.c managed memory and what the device can access
     hsa-launch.c  geometry, kernel arguments, dispatch and waiting
     hsa-openacc.c OpenACC: launch dimensions, async queues, properties

   The backend's own names begin with gcn_ (its devices are GCN GPUs),
   apart from the runtime's hsa_; ok_hsa is the runtime's table of entry
   points.  The core (plugin-core.h) owns the device's identity, its
   images, pool and asynchronous completions, and the error contract:
   every function that can fail has already reported (ok_dev_error) when
   it returns false or NULL.  */

#ifndef OFFLOADKIT_HSA_INTERNAL_H
#define OFFLOADKIT_HSA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gcn-arch.h"
#include "hsa-api.h"
#include "env.h"
#include "host-queue.h"
#include "plugin-core.h"
#include "scratch.h"

/* ---- hsa-lib.c ---- */

/* The runtime's entry points; valid once ok_hsa_load has succeeded.  */
extern struct ok_hsa_api ok_hsa;

/* The GPU agents found, in the runtime's order.  */
#define HSA_MAX_AGENTS 64
extern hsa_agent_t ok_hsa_agents[HSA_MAX_AGENTS];

/* Load and initialise the runtime (OFFLOADKIT_HSA_LIBRARY or
   libhsa-runtime64.so.1) and return the number of GPU agents; 0,
   silently, without a runtime, a kernel driver (/dev/kfd) or a GPU.  */
int ok_hsa_load (void);

#define OK_HSA_ERRLEN 200

/* The backend's describe_result hook.  */
void gcn_describe_result (int code, const char **name, const char **text);

/* "HSA_STATUS_ERROR_OUT_OF_RESOURCES (text)" when the runtime can name S,
   else "HSA status 0x1008"; written to BUF, which is returned.  */
static inline const char *
ok_hsa_status (hsa_status_t s, char *buf, size_t len)
{
  return ok_result_text (&ok_backend_hsa, s, buf, len);
}

/* ---- hsa-device.c ---- */

/* A block of kernel arguments in the kernarg region together with the
   completion signal of the dispatch that uses it: both are needed for
   every launch and costly to create, so they are kept for reuse.  The
   block is as large as the larger layout (struct gcn_kernargs_v3); ABI
   says which layout's print entries are known to be clear (2 or 3).  */
struct gcn_slot
{
  struct gcn_slot *next;
  void *args;			/* Host-visible (kernarg region).  */
  hsa_signal_t signal;
  int abi;
};

struct gcn_kernel;

/* A dispatch: the kernel, and what it holds until it has finished.  */
struct gcn_job
{
  struct ok_job base;		/* First: the core's part.  */
  const struct gcn_kernel *kernel;
  struct gcn_slot *slot;
  /* The memory the device runtime uses while the kernel runs: team
     arenas (kernel-argument ABI 2), or team arenas and then the stacks of
     every thread (ABI 3: GCC 13+'s "ephemeral memories").  */
  struct ok_scratch_block *arena;
};

struct gcn_image;
struct ok_mem_pool;

/* A managed memory heap: mapped host pages made shared virtual
   memory.  */
struct gcn_heap
{
  void *base;
  size_t size;
};

struct gcn_device
{
  struct ok_device base;	/* First: the core's part.  */
  hsa_agent_t agent;		/* ok_hsa_agents[BASE.LOCAL].  */
  char isa_name[96];		/* "amdgcn-amd-amdhsa--gfx906:xnack-".  */
  char gfx[24];			/* "gfx906".  */
  uint32_t arch;		/* 0x906, as ok_tgt_desc.arch.  */
  uint32_t cu_count;

  hsa_region_t kernarg_region;	/* Host-visible, for kernel arguments.  */
  hsa_region_t data_region;	/* Coarse-grained device memory.  */
  hsa_queue_t *queue;

  /* What the queue's error callback saw when a kernel faulted (the
     device is then broken and the queue unusable).  */
  hsa_status_t queue_error;

  /* Managed memory (hsa-managed.c): the pool carved from the heaps,
     made at the first request, and the heaps mapped, for their
     unmapping; MANAGED_LOCK guards both.  */
  pthread_mutex_t managed_lock;
  struct ok_mem_pool *managed;
  struct gcn_heap *heaps;
  size_t nheaps, heaps_cap;

  pthread_mutex_t slot_lock;	/* Guards FREE_SLOTS.  */
  struct gcn_slot *free_slots;
  /* Launches' team arenas and stacks (struct gcn_job's ARENA).  */
  struct ok_scratch arenas;
};

/* The GCN device whose core half is D.  */
static inline struct gcn_device *
gcn_dev (struct ok_device *d)
{
  return (struct gcn_device *) d;
}

/* The error callback of DEV's HSA queues (DATA is DEV): a kernel
   faulted.  */
void gcn_queue_callback (hsa_status_t status, hsa_queue_t *queue,
			 void *data);

/* ---- hsa-elf.c ---- */

/* Check that IMAGE[0, SIZE) is a well-formed little-endian ELF64 AMDGPU
   code object whose headers and sections lie inside it; store its
   EF_AMDGPU_MACH field in *MACH.  Else write why to ERR and return
   false.  */
bool gcn_elf_check (const unsigned char *image, size_t size,
		    unsigned *mach, char *err, size_t errlen);
/* The size of section NAME of IMAGE[0, SIZE), which gcn_elf_check
   accepted, in *SECTION_SIZE; false when it has no such section.  */
bool gcn_elf_section_size (const unsigned char *image, size_t size,
			   const char *name, uint64_t *section_size);

/* ---- hsa-image.c ---- */

/* A kernel of a loaded image: what the address table gives libgomp for a
   function, and what run receives back.  Or, with DEVICE_FN, an ordinary
   device function in the image's function table: the `nohost' clone of
   an ancestor region (GCC 13+), there only for reverse offload; it has
   no kernel descriptor and cannot be launched.  */
struct gcn_kernel
{
  char *name;
  bool device_fn;
  uint64_t object;		/* Kernel descriptor address.  */
  uint32_t kernarg_size;
  uint32_t group_size;
  uint32_t private_size;
  uint32_t vgprs;		/* 0 when unknown.  */
  /* The OpenACC launch dimensions the compiler fixed (gang, worker,
     vector; 0: left to run time), as the image records them.  */
  uint32_t oacc_dims[3];
  struct gcn_image *image;
};

struct gcn_image
{
  hsa_executable_t exe;
  bool has_exe;
  hsa_code_object_reader_t reader;
  bool has_reader;
  void *heap;			/* Device heap of the newlib malloc.  */
  /* The kernel-argument layout its device code reads: 2 (GCC 12's) or 3
     (GCC 13+'s device version 3).  */
  int abi;
  /* The map of `declare target indirect' functions written to the
     device for it, freed with it; or NULL.  */
  void *ind_map;
  size_t num_kernels;		/* Those filled in (names to free).  */
  struct gcn_kernel *kernels;
  struct gcn_kernel *fini;	/* _fini_array, run at unload; or NULL.  */
  /* While loading.  Where the functions come from: the target of
     offloadkit's descriptor, with the OpenACC dimensions our mkoffload
     recorded (or NULL); or, in GCC's format, the target data's kernels
     of the table's functions (GCC_FNS) and of the constructors and
     destructors (each NULL when absent).  */
  const struct ok_tgt_desc *tgt;
  const struct ok_oacc_dims *oacc;
  const struct gcc_gcn_kernel **gcc_fns;
  const struct gcc_gcn_kernel *gcc_init, *gcc_fini;
  /* The device's table of the variables (gcn_var_table), or NULL.  */
  struct gcc_gcn_var *vars;
  /* How many `declare target indirect' functions the image has, and how
     many its device table holds (gcn_map_indirect).  */
  size_t ind_count, ind_in_table;
};

/* Whether agents reach SVM ranges without being named in them, and so
   all of the host's memory (HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT;
   hsa-managed.c).  */
bool gcn_svm_by_default (void);

/* The image hooks (hsa-image.c).  */
extern const struct ok_image_ops gcn_image_ops;
/* Address and size of IMG's global variable NAME: 1, or 0 when the
   runtime has no such symbol (not reported), or -1 when it cannot say
   (reported).  */
int gcn_variable (struct gcn_device *dev, struct gcn_image *img,
		  const char *name, uint64_t *addr, uint32_t *size);

/* ---- hsa-tables.c ---- */

/* The device addresses of IMG's NFUNCS functions, in host-table order
   (its .offload_func_table), for reverse offload: a GOMP_PLUGIN_malloc'd
   array in *REV_FNS, or NULL when the image has no such table (GCC 12's
   device code).  False after a report.  */
bool gcn_rev_fns (struct gcn_device *dev, struct gcn_image *img,
		  size_t nfuncs, uint64_t **rev_fns);
/* Give IMG's device code the map from HOST_IND_FNS (libgomp's host
   addresses of its COUNT `declare target indirect' functions) to their
   device addresses (its .offload_ind_func_table, which holds IN_TABLE of
   them: gcn_ind_count).  False after a report.  */
bool gcn_map_indirect (struct gcn_device *dev, struct gcn_image *img,
		       const uint64_t *host_ind_fns, size_t count,
		       size_t in_table);
/* The number of indirect functions of code object IMAGE[0, SIZE) (which
   gcn_elf_check accepted): its table's section size says it.  */
size_t gcn_ind_count (const unsigned char *image, size_t size);

/* ---- hsa-memory.c ---- */

/* Device memory straight from the data region, WHAT in messages.  */
void *gcn_region_alloc (struct gcn_device *dev, size_t size,
			const char *what);
bool gcn_region_free (struct gcn_device *dev, void *ptr, const char *what);

/* The same for the core's pool.  */
void *gcn_raw_alloc (struct ok_device *dev, size_t size);
bool gcn_raw_free (struct ok_device *dev, void *ptr);
bool gcn_host2dev (struct ok_device *dev, void *dst, const void *src,
		   size_t n);
bool gcn_dev2host (struct ok_device *dev, void *dst, const void *src,
		   size_t n);
bool gcn_dev2dev (struct ok_device *dev, void *dst, const void *src,
		  size_t n);
/* libgomp 15 and 16's entry points (backend.h says what each
   promises).  */
bool gcn_memset (struct ok_device *dev, void *ptr, int val, size_t n);
int gcn_copy_rect (struct ok_device *dev, const struct ok_rect *rect);
char *gcn_get_uid (struct ok_device *dev);

/* ---- hsa-managed.c ---- */

/* Set up and free DEV's managed memory; false if unmapping failed.  */
void gcn_managed_init (struct gcn_device *dev);
bool gcn_managed_fini (struct gcn_device *dev);
/* libgomp 16's entry points (backend.h says what each promises).  */
void *gcn_managed_alloc (struct ok_device *dev, size_t size);
bool gcn_managed_free (struct ok_device *dev, void *ptr);
int gcn_is_accessible (struct ok_device *dev, const void *ptr, size_t size);

/* ---- hsa-interop.c ---- */

/* libgomp 15's interop objects (backend.h says what each promises).  */
extern const int gcn_interop_frs[];
bool gcn_interop_init (struct ok_device *dev, struct ok_interop *obj, int fr,
		       bool targetsync);
bool gcn_interop_sync (struct ok_device *dev, struct ok_interop *obj,
		       bool destroy);
void gcn_interop_property (struct ok_device *dev,
			   const struct ok_interop *obj, enum ok_ipr prop,
			   struct ok_interop_value *val);

/* ---- hsa-launch.c ---- */

/* The kernel arguments GCN device runtimes expect: the explicit argument
   (the target variables' block) followed by pointers the device libgomp
   and newlib read at fixed offsets, then, in the same block, the buffer
   through which device printf, exit and (GCC 13+) reverse-offload
   requests reach the host.  Our declaration of those layouts: GCC 12's
   plugin-gcn.c struct kernargs (ABI 2), GCC 13+'s
   libgomp/config/gcn/libgomp-gcn.h struct kernargs_abi and struct output
   (ABI 3, the same in 13 to 16).  */
#define GCN_PRINT_ENTRIES 1024
struct gcn_print_entry
{
  int written;			/* Set by the device when complete.  */
  char msg[128];
  /* 0 int, 1 double, 2 text + newline, 3 text; 4 (GCC 13+) a
     reverse-offload request in VALUE_U64 (GCC 13's config/gcn/target.c
     GOMP_target_ext): function, mapnum, addresses, sizes, kinds (device
     addresses), device number; the device waits for WRITTEN to be
     cleared.  */
  int type;
  union
  {
    int64_t ivalue;
    double dvalue;
    char text[128];
    uint64_t value_u64[16];
  } u;
};

struct gcn_output
{
  int return_value;		/* 0xcafe0000 unless exit was called.  */
  unsigned int next_output;
  struct gcn_print_entry queue[GCN_PRINT_ENTRIES];
  unsigned int consumed;
};

struct gcn_kernargs_v2
{
  int64_t tgt_vars;		/* The one explicit argument.  */
  int64_t unused;
  int64_t out_ptr;		/* &output below.  */
  int64_t heap_ptr;		/* struct { int64_t size; char data[]; }.  */
  int64_t arena_ptr;		/* Teams * GCN_TEAM_ARENA bytes.  */
  struct gcn_output output;
};

struct gcn_kernargs_v3
{
  int64_t tgt_vars;
  int64_t unused;
  int64_t out_ptr;		/* Offset 16: &output below.  */
  int64_t heap_ptr;		/* Offset 24.  */
  int64_t arena_ptr;		/* Offset 32: teams * ARENA_SIZE_PER_TEAM.  */
  int64_t stack_ptr;		/* Offset 40: teams * threads * STACK_SIZE.  */
  int32_t arena_size_per_team;	/* Offset 48.  */
  int32_t stack_size_per_thread; /* Offset 52.  */
  struct gcn_output output;
};

/* Bytes of a kernel-argument block (the larger layout).  */
#define GCN_KERNARGS_SIZE sizeof (struct gcn_kernargs_v3)

/* Each team's slice of the arena (TEAM_ARENA_SIZE of GCC 12's device
   libgomp; DEFAULT_TEAM_ARENA_SIZE of GCC 13+'s, which GCN_TEAM_ARENA_SIZE
   changes), and each thread's stack under ABI 3 (DEFAULT_GCN_STACK_SIZE,
   changed by GCN_STACK_SIZE).  */
#define GCN_TEAM_ARENA ((size_t) 64 * 1024)
#define GCN_STACK_DEFAULT ((size_t) 32 * 1024)
/* The default size of each image's device heap (GCC's default too).  */
#define GCN_HEAP_DEFAULT ((size_t) 100 * 1024 * 1024)

bool gcn_launch (struct ok_device *dev, void *fn, void *tgt_vars,
		 const struct ok_launch *launch, struct ok_job *job);
bool gcn_finish (struct ok_device *dev, struct ok_job *job);
/* Run KERNEL once with no arguments on one wavefront (constructors and
   destructors of an image).  */
bool gcn_run_ctor (struct gcn_device *dev, const struct gcn_kernel *kernel);
/* Launches made by the calling thread from now on go to QUEUE (an
   OpenACC queue's own HSA queue, on its thread), or to their device's
   queue when NULL.  */
void gcn_launch_on (hsa_queue_t *queue);
/* Set up and free DEV's cached kernel-argument slots and team arenas;
   false if freeing one failed.  */
void gcn_launch_init (struct gcn_device *dev);
bool gcn_launch_fini (struct gcn_device *dev);

/* ---- hsa-openacc.c ---- */

/* The gang and worker counts GCC's gcn plugin launches OpenACC kernel K
   with on DEV when libgomp asks for ASKED (0: the plugin chooses), into
   DIMS (gang, worker, vector).  */
void gcn_acc_dims (const struct gcn_device *dev, const struct gcn_kernel *k,
		   const unsigned asked[OK_ACC_DIMS],
		   unsigned dims[OK_ACC_DIMS]);
/* An OpenACC async queue, as GCC's gcn plugin has it: the core's eager
   host queue (a list of entries, launches, copies, libgomp's callbacks
   and the markers that order two queues, that a thread of its own runs
   in order as they come), launching on an HSA queue of its own.  */
struct gcn_acc_queue
{
  struct ok_hostq base;		/* First: the core's part.  */
  hsa_queue_t *hsa_queue;
};

/* The OpenACC hooks of the backend's own (backend.h says what each
   promises); the core's host queue is the others.  */
bool gcn_acc_queue_init (struct ok_acc_queue *q);
bool gcn_acc_queue_fini (struct ok_acc_queue *q);
bool gcn_acc_exec (struct ok_device *dev, void *fn, void *args,
		   const unsigned dims[OK_ACC_DIMS], struct ok_acc_queue *q);
bool gcn_acc_memory (struct ok_device *dev, bool free, size_t *num);
void gcn_acc_names (struct ok_device *dev, struct ok_acc_names *names);

#endif /* OFFLOADKIT_HSA_INTERNAL_H */
