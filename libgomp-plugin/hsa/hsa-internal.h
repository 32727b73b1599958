/* Shared state of the HSA backend (ok_backend_hsa), which drives AMD GCN
   GPUs through ROCm's HSA runtime, split by concern:

     hsa-lib.c     loading the runtime, finding GPU agents, error texts
     hsa-device.c  agents, regions, the queue, the backend itself
     hsa-elf.c     checking code objects before the runtime sees them
     hsa-image.c   choosing and loading images (ours and GCC's)
     hsa-memory.c  allocation (through mem-pool.h) and copies
     hsa-launch.c  geometry, kernel arguments, dispatch, run, async_run

   Every function that can fail has already reported through
   GOMP_PLUGIN_error when it returns false or NULL.  */

#ifndef OFFLOADKIT_HSA_INTERNAL_H
#define OFFLOADKIT_HSA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hsa-api.h"
#include "completion.h"
#include "device-pool.h"
#include "image-list.h"
#include "env.h"
#include "mem-pool.h"
#include "plugin-core.h"

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

/* "HSA_STATUS_ERROR_OUT_OF_RESOURCES (text)" when the runtime can name S,
   else "HSA status 0x1008"; written to BUF, which is returned.  */
const char *ok_hsa_status (hsa_status_t s, char *buf, size_t len);

/* ---- hsa-device.c ---- */

/* A block of kernel arguments in the kernarg region together with the
   completion signal of the dispatch that uses it: both are needed for
   every launch and costly to create, so they are kept for reuse.  */
struct hsa_slot
{
  struct hsa_slot *next;
  struct gcn_kernargs *args;	/* Host-visible (kernarg region).  */
  hsa_signal_t signal;
};

/* A team arena (TEAMS * 64 KiB of device memory), kept for reuse.  */
struct hsa_arena
{
  struct hsa_arena *next;
  void *ptr;
  size_t size;
};

struct hsa_kernel;

/* A dispatch that async_run started, waited for by the completion
   thread.  */
struct hsa_job
{
  struct ok_completion_job link;	/* First: the queue's part.  */
  const struct hsa_kernel *kernel;
  struct hsa_slot *slot;
  struct hsa_arena *arena;
  unsigned grid[3], block[3];
  uint64_t start;
};

struct hsa_image;

struct hsa_device
{
  int local;			/* Index in ok_hsa_agents.  */
  int ord;			/* libgomp's number, for messages.  */
  hsa_agent_t agent;
  char isa_name[96];		/* "amdgcn-amd-amdhsa--gfx906:xnack-".  */
  char gfx[24];			/* "gfx906".  */
  uint32_t arch;		/* 0x906, as ok_tgt_desc.arch.  */
  uint32_t cu_count;
  char label[160];		/* "device 0 (gfx906)".  */

  hsa_region_t kernarg_region;	/* Host-visible, for kernel arguments.  */
  hsa_region_t data_region;	/* Coarse-grained device memory.  */
  hsa_queue_t *queue;

  /* The queue's error callback saw a failure (a kernel faulted): the
     queue is unusable.  */
  hsa_status_t queue_error;
  bool broken;

  struct ok_mem_pool *pool;

  pthread_mutex_t slot_lock;	/* Guards FREE_SLOTS and FREE_ARENAS.  */
  struct hsa_slot *free_slots;
  struct hsa_arena *free_arenas;

  struct ok_image_list images;	/* Of struct hsa_image.  */

  /* The completion thread of asynchronous launches, started lazily.  */
  struct ok_completion async;
};

static inline bool
hsa_is_broken (const struct hsa_device *dev)
{
  return __atomic_load_n (&dev->broken, __ATOMIC_RELAXED);
}

/* "offloadkit-gcn: device 0 (gfx906): " and the formatted text.  */
void hsa_dev_error (const struct hsa_device *dev, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
/* "...: WHAT: CALL: HSA_STATUS_X (text)".  */
void hsa_call_error (const struct hsa_device *dev, const char *what,
		     const char *call, hsa_status_t s);
/* Teardown: true when S is success or not worth reporting (the device is
   broken); else report "cannot WHAT" and return false.  */
bool hsa_teardown_ok (const struct hsa_device *dev, hsa_status_t s,
		      const char *what, const char *call);

/* ---- hsa-elf.c ---- */

/* Check that IMAGE[0, SIZE) is a well-formed little-endian ELF64 AMDGPU
   code object whose headers and sections lie inside it; store its
   EF_AMDGPU_MACH field in *MACH.  Else write why to ERR and return
   false.  */
bool hsa_elf_check (const unsigned char *image, size_t size,
		    unsigned *mach, char *err, size_t errlen);
/* The gfx number (0x906) of an EF_AMDGPU_MACH value, 0 if unknown
   (ok_gcn_arch_of_mach).  */
uint32_t hsa_mach_arch (unsigned mach);

/* ---- hsa-image.c ---- */

/* A kernel of a loaded image: what the address table gives libgomp for a
   function, and what run receives back.  */
struct hsa_kernel
{
  char *name;
  uint64_t object;		/* Kernel descriptor address.  */
  uint32_t kernarg_size;
  uint32_t group_size;
  uint32_t private_size;
  uint32_t vgprs;		/* 0 when unknown.  */
  struct hsa_image *image;
};

struct hsa_image
{
  struct ok_image_node node;	/* First: the device's list.  */
  hsa_executable_t exe;
  bool has_exe;
  hsa_code_object_reader_t reader;
  bool has_reader;
  void *heap;			/* Device heap of the newlib malloc.  */
  size_t num_kernels;
  struct hsa_kernel *kernels;
  struct hsa_kernel *fini;	/* _fini_array, run at unload; or NULL.  */
};

bool hsa_load_image (void *dev, const struct ok_image_req *req,
		     void **image);
int hsa_load_gcc_image (void *dev, unsigned version, const void *target_data,
			struct ok_addr_pair **table, void **image);
bool hsa_unload_image (void *dev, void *image);
bool hsa_unload_all (struct hsa_device *dev);

/* ---- hsa-memory.c ---- */

bool hsa_memory_init (struct hsa_device *dev);
bool hsa_memory_fini (struct hsa_device *dev);
/* Device memory straight from the data region (not pooled).  */
void *hsa_raw_alloc (struct hsa_device *dev, size_t size, const char *what);
bool hsa_raw_free (struct hsa_device *dev, void *ptr, const char *what);

void *hsa_alloc (void *dev, size_t size);
bool hsa_free (void *dev, void *ptr);
bool hsa_host2dev (void *dev, void *dst, const void *src, size_t n);
bool hsa_dev2host (void *dev, void *dst, const void *src, size_t n);
bool hsa_dev2dev (void *dev, void *dst, const void *src, size_t n);

/* ---- hsa-launch.c ---- */

/* The kernel arguments GCC 12's GCN device runtime expects: the explicit
   argument (the target variables' block) followed by pointers the device
   libgomp and newlib read at fixed offsets, then the buffer through which
   device printf and exit reach the host.  Our declaration of that
   layout.  */
#define GCN_PRINT_ENTRIES 1024
struct gcn_print_entry
{
  int written;			/* Set by the device when complete.  */
  char msg[128];
  int type;			/* 0 int, 1 double, 2 text + newline, 3 text.  */
  union
  {
    int64_t ivalue;
    double dvalue;
    char text[128];
  } u;
};

struct gcn_kernargs
{
  int64_t tgt_vars;		/* The one explicit argument.  */
  int64_t unused;
  int64_t out_ptr;		/* &output below.  */
  int64_t heap_ptr;		/* struct { int64_t size; char data[]; }.  */
  int64_t arena_ptr;		/* Teams * GCN_TEAM_ARENA bytes.  */
  struct
  {
    int return_value;		/* 0xcafe0000 unless exit was called.  */
    unsigned int next_output;
    struct gcn_print_entry queue[GCN_PRINT_ENTRIES];
    unsigned int consumed;
  } output;
};

/* Each team's slice of the arena (TEAM_ARENA_SIZE of GCC 12's device
   libgomp).  */
#define GCN_TEAM_ARENA ((size_t) 64 * 1024)
/* The default size of each image's device heap (GCC's default too).  */
#define GCN_HEAP_DEFAULT ((size_t) 100 * 1024 * 1024)

bool hsa_run (void *dev, void *fn, void *tgt_vars,
	      const struct ok_launch *launch);
bool hsa_async_run (void *dev, void *fn, void *tgt_vars,
		    const struct ok_launch *launch, void *async_data);
/* Run KERNEL once with no arguments on one wavefront (constructors and
   destructors of an image).  */
bool hsa_run_ctor (struct hsa_device *dev, const struct hsa_kernel *kernel);
/* Set up DEV->async, the queue of the completion thread (which is
   stopped with ok_completion_fini).  */
void hsa_async_init (struct hsa_device *dev);
/* Free the cached slots and arenas; false if freeing one failed.  */
bool hsa_launch_fini (struct hsa_device *dev);

#endif /* OFFLOADKIT_HSA_INTERNAL_H */
