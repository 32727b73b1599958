/* Shared state of the CUDA backend (ok_backend_cuda), split by concern:

     cuda-lib.c     loading libcuda.so.1, error texts, settings
     cuda-device.c  devices, primary contexts, the stream pool, the backend
     cuda-image.c   choosing, checking and loading images
     cuda-indirect.c  the map of `declare target indirect' functions
     cuda-revoff.c  reverse offload: the table, the request block, and
                    serving requests while a kernel runs
     cuda-memory.c  driver allocations (the core pools them), staging
                    and copies
     cuda-launch.c  launch geometry, soft stacks, starting and waiting
     cuda-openacc.c OpenACC: queues, launches, properties, CUDA handles

   The core (plugin-core.h) owns the device's identity, its images, pool
   and asynchronous completions, and the error contract: every function
   that can fail has already reported (ok_dev_error) when it returns false
   or NULL.  */

#ifndef OFFLOADKIT_CUDA_INTERNAL_H
#define OFFLOADKIT_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda-api.h"
#include "completion.h"
#include "env.h"
#include "plugin-core.h"
#include "scratch.h"

struct ok_gcc_nvptx_data;

/* ---- cuda-lib.c ---- */

/* The driver's entry points; valid once ok_cuda_load has succeeded.  */
extern struct ok_cuda_api ok_cuda;

/* Load the driver (OFFLOADKIT_CUDA_LIBRARY or libcuda.so.1), initialise
   it and return its number of devices; 0, silently, without a driver or a
   device, 0 after a reported error for a broken one.  Once only.  */
int ok_cuda_load (void);

/* Room for ok_cuda_result's text.  */
#define OK_CUDA_ERRLEN 160

/* The backend's describe_result and teardown_quiet hooks.  */
void cuda_describe_result (int code, const char **name, const char **text);
bool cuda_teardown_quiet (int code);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or "CUDA error 2" when the
   driver cannot name R; written to BUF, which is returned.  */
static inline const char *
ok_cuda_result (CUresult r, char *buf, size_t len)
{
  return ok_result_text (&ok_backend_cuda, r, buf, len);
}

/* ---- cuda-device.c ---- */

/* Soft-stack bytes per warp that GCC's nvptx code expects (-msoft-stack).  */
#define CUDA_STACK_PER_WARP ((size_t) 128 * 1024)

/* Host threads that may copy through pinned staging at once, per device;
   more wait for a slot.  */
#define CUDA_STAGING_SLOTS 4

/* A page-locked buffer with its own stream, for small copies.  */
struct cuda_staging
{
  pthread_mutex_t lock;
  void *buf;			/* NULL until first used.  */
  CUstream stream;
  bool unusable;		/* No buffer or stream to be had: copy
				   directly.  */
};

struct cuda_kernel;

/* A launch: the kernel, and what it holds until it has finished.  */
struct cuda_job
{
  struct ok_job base;		/* First: the core's part.  */
  const struct cuda_kernel *kernel;
  CUstream stream;
  struct ok_scratch_block *stack;	/* Soft stacks.  */
};

struct cuda_image;

struct cuda_device
{
  struct ok_device base;	/* First: the core's part.  */
  CUdevice handle;		/* The driver's device BASE.LOCAL.  */
  CUcontext ctx;		/* The retained primary context.  */
  bool pushed;			/* Finalisation pushed CTX.  */

  /* Properties, for launch decisions and messages.  */
  char name[128];
  int cc_major, cc_minor;
  int sm;			/* cc_major * 10 + cc_minor: 90 for sm_90.  */
  int num_sms;
  int regs_per_sm;
  int max_threads_per_block;
  int max_threads_per_sm;
  int clock_khz;
  size_t total_mem;

  size_t staging_max;		/* Copies up to this many bytes are staged.  */
  struct cuda_staging staging[CUDA_STAGING_SLOTS];

  pthread_mutex_t stream_lock;	/* Guards the free streams.  */
  CUstream *free_streams;
  size_t num_free_streams, max_free_streams;
  /* The stream given back last, taken and filled without the lock
     (atomic): launches one after another use it again and again.  */
  CUstream spare_stream;
  size_t streams_out;		/* Taken and not given back; atomic.  */

  struct ok_scratch stacks;	/* Soft stacks of launches.  */

  /* OpenACC queues alive (cuda-openacc.c): while there are any,
     synchronous copies go through the legacy default stream, which waits
     for the queues' blocking streams, as GCC's plugin's copies do.  */
  unsigned long acc_queues;
  /* Device memory freed where the driver may not be called (a host
     function on a stream, which runs libgomp's OpenACC callbacks): freed
     by the next call from elsewhere (cuda_deferred_frees).  */
  pthread_mutex_t deferred_lock;
  struct cuda_deferred_free *deferred;
};

/* The CUDA device whose core half is D.  */
static inline struct cuda_device *
cuda_dev (struct ok_device *d)
{
  return (struct cuda_device *) d;
}

/* Make DEV's context current on the calling thread.  */
bool cuda_enter (struct cuda_device *dev);

/* For a launch: DEV's context is current on the calling thread as far
   as the plugin knows (*KNOWN: without asking the driver), or is made
   so (cuda_enter).  GCC's plugin never asks before a launch.  */
bool cuda_enter_launch (struct cuda_device *dev, bool *known);

/* cuLaunchKernel of FN on STREAM, no dynamic shared memory.  When the
   context was KNOWN rather than asked for and the driver refuses the
   launch for want of it (the program switched contexts on the thread
   since), the context is made current and the kernel launched again.
   *REPORTED: the result was reported already (the context could not be
   made current).  */
CUresult cuda_launch_kernel (struct cuda_device *dev, bool known,
			     CUfunction fn, const unsigned grid[3],
			     const unsigned block[3], CUstream stream,
			     void **params, bool *reported);

/* A non-blocking stream of DEV's pool (created when none is free), and
   back.  Called with DEV's context current.  */
bool cuda_stream_take (struct cuda_device *dev, CUstream *stream);
void cuda_stream_give (struct cuda_device *dev, CUstream stream);

/* ---- cuda-image.c ---- */

/* A kernel of a loaded image: what the address table gives libgomp for a
   function, and what run receives back.  */
struct cuda_kernel
{
  char *name;
  CUfunction fn;
  int regs_per_thread;
  int max_threads_per_block;
  /* The geometry of a launch without num_teams or thread_limit (most
     of them), worked out once (cuda_kernel_default_bounds).  */
  unsigned default_teams, default_warps;
  struct cuda_image *image;	/* The image it belongs to.  */
  /* The OpenACC launch dimensions (gang, worker, vector) the compiler
     fixed for it, 0 where it left them to run time (all 0 for OpenMP
     regions).  */
  unsigned short oacc_dims[3];
};

struct cuda_rev_block;

struct cuda_image
{
  CUmodule module;
  /* Where its names come from: the target of offloadkit's descriptor it
     was loaded from (with the OpenACC dimensions the compiler fixed, or
     NULL), or GCC's target data.  */
  const struct ok_tgt_desc *tgt;
  const struct ok_oacc_dims *oacc;
  const struct ok_gcc_nvptx_data *gcc;
  /* How many `declare target indirect' functions its descriptor says it
     has, -1 when it does not say (cuda_indirect_load).  */
  long ind_expect;
  size_t num_kernels;		/* Those filled in (names to free).  */
  struct cuda_kernel *kernels;
  /* Device memory holding the map of the image's `declare target
     indirect' functions (cuda-indirect.c), or 0.  */
  CUdeviceptr ind_map;
  /* Where the image's device code asks for reverse-offload regions
     (cuda-revoff.c), or NULL when it cannot.  */
  struct cuda_rev_block *rev;
};

/* The image hooks (cuda-image.c).  */
extern const struct ok_image_ops cuda_image_ops;

/* ---- cuda-indirect.c ---- */

/* Write the map of IMG's `declare target indirect' functions in the form
   its device code reads, from HOST_FNS (libgomp's host table of them, in
   the order of the device's; NULL when the program has none).  EXPECT is
   how many the image says it has (GCC's format), or -1 when it does not
   say.  Called with DEV's context current.  */
bool cuda_indirect_load (struct cuda_device *dev, struct cuda_image *img,
			 const uint64_t *host_fns, long expect);
/* Free IMG's map, if any (teardown: see ok_dev_teardown_ok).  */
bool cuda_indirect_unload (struct cuda_device *dev, struct cuda_image *img);

/* ---- cuda-revoff.c ---- */

/* For a program that requires reverse offload (libgomp 13+ asks), read
   IMG's table of reverse-offload functions (NUM_FUNCS of
   them, in host-table order) into *REV_FNS (GOMP_PLUGIN_malloc'd; NULL
   when no function can be asked for), and give its device code a request
   block.  Called with DEV's context current.  */
bool cuda_rev_load (struct cuda_device *dev, struct cuda_image *img,
		    size_t num_funcs, uint64_t **rev_fns);
/* Free IMG's request block, if any.  */
bool cuda_rev_unload (struct cuda_device *dev, struct cuda_image *img);
/* Wait until the kernel on STREAM, of IMG (which has a request block), has
   finished, serving the reverse-offload regions it asks for meanwhile.
   *R gets the stream's final result (cuStreamQuery's); false after a
   reported failure to serve a request, the kernel still waiting.  */
bool cuda_rev_wait (struct cuda_device *dev, struct cuda_image *img,
		    CUstream stream, CUresult *r);

/* ---- cuda-memory.c ---- */

/* Set up and tear down DEV's staging buffers.  */
bool cuda_memory_init (struct cuda_device *dev);
bool cuda_memory_fini (struct cuda_device *dev);

/* SIZE bytes of device memory (WHAT they are for, in messages; may be
   NULL), with the context current.  */
void *cuda_mem_alloc (struct cuda_device *dev, size_t size, const char *what);

/* Driver allocations, which the core's pool is built over.  */
void *cuda_raw_alloc (struct ok_device *dev, size_t size);
bool cuda_raw_free (struct ok_device *dev, void *ptr);
bool cuda_host2dev (struct ok_device *dev, void *dst, const void *src,
		    size_t n);
bool cuda_dev2host (struct ok_device *dev, void *dst, const void *src,
		    size_t n);
bool cuda_memset (struct ok_device *dev, void *ptr, int val, size_t n);
bool cuda_dev2dev (struct ok_device *dev, void *dst, const void *src,
		   size_t n);
/* The entry points of libgomp 14 to 16 (backend.h says what each
   promises).  */
int cuda_copy_rect (struct ok_device *dev, const struct ok_rect *rect);
char *cuda_get_uid (struct ok_device *dev);
void *cuda_managed_alloc (struct ok_device *dev, size_t size);
bool cuda_managed_free (struct ok_device *dev, void *ptr);
int cuda_is_accessible (struct ok_device *dev, const void *ptr, size_t size);
bool cuda_page_locked_alloc (struct ok_device *dev, void **ptr, size_t size);
bool cuda_page_locked_free (struct ok_device *dev, void *ptr);

/* ---- cuda-interop.c ---- */

/* libgomp 15's interop objects (backend.h says what each promises).  */
extern const int cuda_interop_frs[];
bool cuda_interop_init (struct ok_device *dev, struct ok_interop *obj,
			int fr, bool targetsync);
bool cuda_interop_sync (struct ok_device *dev, struct ok_interop *obj,
			bool destroy);
void cuda_interop_property (struct ok_device *dev,
			    const struct ok_interop *obj, enum ok_ipr prop,
			    struct ok_interop_value *val);

/* Free what was freed inside host functions on streams, now that the
   calling thread may call the driver (with DEV's context current); false
   after reporting a free that failed (the rest are freed all the same).  */
bool cuda_deferred_frees (struct cuda_device *dev);

/* Whether DEV has such frees waiting; without its lock (a free deferred
   meanwhile waits for the next place).  */
static inline bool
cuda_deferred_pending (struct cuda_device *dev)
{
  return __atomic_load_n (&dev->deferred, __ATOMIC_RELAXED) != NULL;
}

/* ---- cuda-launch.c ---- */

/* Work out K's DEFAULT_TEAMS and DEFAULT_WARPS on DEV (once its registers
   and thread limit are known).  */
void cuda_kernel_default_bounds (const struct cuda_device *dev,
				 struct cuda_kernel *k);

/* Report that kernel K on DEV failed with R in CALL.  */
void cuda_kernel_error (struct cuda_device *dev, const struct cuda_kernel *k,
			const char *call, CUresult r);

bool cuda_launch (struct ok_device *dev, void *fn, void *tgt_vars,
		  const struct ok_launch *launch, struct ok_job *job);
bool cuda_finish (struct ok_device *dev, struct ok_job *job);
/* Set up DEV's soft stacks (freed with ok_scratch_fini).  */
void cuda_stacks_init (struct cuda_device *dev);
/* Run MODULE's constructors (CTORS) or destructors, when its device code
   has them (GCC 15+), as GCC 15's plugin does.  Failures at unload
   (!CTORS) are teardown failures (ok_dev_teardown_ok).  */
bool cuda_run_cdtors (struct cuda_device *dev, CUmodule module, bool ctors);


/* Look up variable NAME in MODULE into *P and *BYTES; *FOUND says whether
   MODULE has it (a missing variable is no error: the device code of some
   GCC versions has none).  False after an error.  */
bool cuda_module_global (struct cuda_device *dev, CUmodule module,
			 const char *name, CUdeviceptr *p, size_t *bytes,
			 bool *found);

/* ---- cuda-openacc.c ---- */

/* The backend's OpenACC hooks (backend.h says what each promises).  */
struct cuda_acc_queue
{
  struct ok_acc_queue base;	/* First: the core's part.  */
  CUstream stream;
};
bool cuda_acc_queue_init (struct ok_acc_queue *q);
bool cuda_acc_queue_fini (struct ok_acc_queue *q);
int cuda_acc_queue_test (struct ok_acc_queue *q);
bool cuda_acc_queue_wait (struct ok_acc_queue *q);
bool cuda_acc_queue_join (struct ok_acc_queue *first,
			  struct ok_acc_queue *later);
bool cuda_acc_queue_callback (struct ok_acc_queue *q, void (*fn) (void *),
			      void *data);
bool cuda_acc_queue_copy (struct ok_acc_queue *q, enum ok_copy_dir dir,
			  void *dst, const void *src, size_t n);
bool cuda_acc_exec (struct ok_device *dev, void *fn, void *args,
		    const unsigned dims[OK_ACC_DIMS], struct ok_acc_queue *q);
bool cuda_acc_memory (struct ok_device *dev, bool free, size_t *num);
void cuda_acc_names (struct ok_device *dev, struct ok_acc_names *names);
void *cuda_acc_device (struct ok_device *dev);
void *cuda_acc_context (struct ok_device *dev);
void *cuda_acc_stream (struct ok_acc_queue *q);
bool cuda_acc_set_stream (struct ok_acc_queue *q, void *stream);
/* Whether the calling thread runs a host function queued on a stream,
   where CUDA forbids driver calls.  */
bool cuda_in_host_fn (void);
/* Whether DEV has OpenACC queues alive.  */
bool cuda_acc_queues_live (struct cuda_device *dev);

/* The driver's version as OpenACC's acc_get_property says it ("CUDA
   Driver 13.0", GCC's format), or "" when the driver does not say
   (cuda-lib.c).  */
extern char ok_cuda_driver_version[32];

#endif /* OFFLOADKIT_CUDA_INTERNAL_H */
