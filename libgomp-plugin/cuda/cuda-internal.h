/* Shared state of the CUDA backend (ok_backend_cuda), split by concern:

     cuda-lib.c     loading libcuda.so.1, error texts, settings
     cuda-device.c  devices, primary contexts, the stream pool, the backend
     cuda-image.c   choosing, checking and loading images
     cuda-memory.c  allocation (through mem-pool.h) and copies
     cuda-launch.c  launch geometry, soft stacks, run and async_run

   Every function that can fail has already reported through
   GOMP_PLUGIN_error when it returns false or NULL.  */

#ifndef OFFLOADKIT_CUDA_INTERNAL_H
#define OFFLOADKIT_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda-api.h"
#include "completion.h"
#include "device-pool.h"
#include "image-list.h"
#include "env.h"
#include "mem-pool.h"
#include "plugin-core.h"

/* ---- cuda-lib.c ---- */

/* The driver's entry points; valid once ok_cuda_load has succeeded.  */
extern struct ok_cuda_api ok_cuda;

/* Load the driver (OFFLOADKIT_CUDA_LIBRARY or libcuda.so.1), initialise
   it and return its number of devices; 0, silently, without a driver or a
   device, 0 after a reported error for a broken one.  Once only.  */
int ok_cuda_load (void);

/* Room for ok_cuda_result's text.  */
#define OK_CUDA_ERRLEN 160

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or "CUDA error 2" when the
   driver cannot name R; written to BUF, which is returned.  */
const char *ok_cuda_result (CUresult r, char *buf, size_t len);

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

/* A block of soft stacks, kept for reuse when a kernel is done with it.  */
struct cuda_stack
{
  struct cuda_stack *next;
  CUdeviceptr ptr;
  size_t size;
};

struct cuda_kernel;

/* A launch that async_run started, waited for by the completion thread.  */
struct cuda_job
{
  struct ok_completion_job link;	/* First: the queue's part.  */
  const struct cuda_kernel *kernel;
  CUstream stream;
  struct cuda_stack *stack;
  unsigned grid[3], block[3];
  uint64_t start;
};

struct cuda_image;

struct cuda_device
{
  int local;			/* The driver's ordinal.  */
  int ord;			/* libgomp's number, for messages.  */
  CUdevice handle;
  CUcontext ctx;		/* The retained primary context.  */

  /* Properties, for launch decisions and messages.  */
  char name[128];
  int cc_major, cc_minor;
  int sm;			/* cc_major * 10 + cc_minor: 90 for sm_90.  */
  int num_sms;
  int regs_per_sm;
  int max_threads_per_block;
  int clock_khz;
  size_t total_mem;
  char label[192];		/* "device 0 (NVIDIA H200, sm_90)".  */

  /* A fatal error happened (a kernel failed): the context is unusable, so
     teardown does not report the errors that follow.  */
  bool broken;

  struct ok_mem_pool *pool;
  size_t staging_max;		/* Copies up to this many bytes are staged.  */
  struct cuda_staging staging[CUDA_STAGING_SLOTS];

  pthread_mutex_t stream_lock;	/* Guards the free streams.  */
  CUstream *free_streams;
  size_t num_free_streams, max_free_streams;
  size_t streams_out;		/* Taken and not given back.  */

  pthread_mutex_t stack_lock;	/* Guards the free stacks.  */
  struct cuda_stack *free_stacks;

  struct ok_image_list images;	/* Of struct cuda_image.  */

  /* The completion thread of asynchronous launches, started lazily.  */
  struct ok_completion async;
};

/* After a kernel fault the context is gone and every later call fails;
   at exit the driver may have shut down before libgomp finalises us.
   Teardown reports a failure R only when neither is the case.  */
static inline bool
cuda_teardown_reportable (const struct cuda_device *dev, CUresult r)
{
  return (!__atomic_load_n (&dev->broken, __ATOMIC_RELAXED)
	  && r != CUDA_ERROR_DEINITIALIZED);
}

static inline void
cuda_mark_broken (struct cuda_device *dev)
{
  __atomic_store_n (&dev->broken, true, __ATOMIC_RELAXED);
}

/* Report a failure on DEV: "offloadkit-nvptx: device 0 (NAME, sm_90): "
   followed by the formatted text.  */
void cuda_dev_error (const struct cuda_device *dev, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Report that CALL failed with R while DEV was doing WHAT:
   "...: WHAT: CALL: CUDA_ERROR_X (text)".  */
void cuda_call_error (const struct cuda_device *dev, const char *what,
		      const char *call, CUresult r);

/* The result R of CALL, made while tearing down WHAT of DEV: true when
   it succeeded or its failure is not worth reporting
   (cuda_teardown_reportable); else report "cannot WHAT" and return
   false.  */
bool cuda_teardown_ok (const struct cuda_device *dev, CUresult r,
		       const char *what, const char *call);

/* Make DEV's context current on the calling thread.  */
bool cuda_enter (struct cuda_device *dev);

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
};

struct cuda_image
{
  struct ok_image_node node;	/* First: the device's list.  */
  CUmodule module;
  size_t num_kernels;
  struct cuda_kernel *kernels;
};

bool cuda_load_image (void *dev, const struct ok_image_req *req,
		      void **image);
int cuda_load_gcc_image (void *dev, unsigned version, const void *target_data,
			 struct ok_addr_pair **table, void **image);
bool cuda_unload_image (void *dev, void *image);
/* Unload every image still loaded (fini_device); false if one failed.  */
bool cuda_unload_all (struct cuda_device *dev);

/* ---- cuda-memory.c ---- */

/* Set up and tear down DEV's pool and staging buffers.  */
bool cuda_memory_init (struct cuda_device *dev);
bool cuda_memory_fini (struct cuda_device *dev);

void *cuda_alloc (void *dev, size_t size);
bool cuda_free (void *dev, void *ptr);
bool cuda_host2dev (void *dev, void *dst, const void *src, size_t n);
bool cuda_dev2host (void *dev, void *dst, const void *src, size_t n);
bool cuda_dev2dev (void *dev, void *dst, const void *src, size_t n);

/* ---- cuda-launch.c ---- */

bool cuda_run (void *dev, void *fn, void *tgt_vars,
	       const struct ok_launch *launch);
bool cuda_async_run (void *dev, void *fn, void *tgt_vars,
		     const struct ok_launch *launch, void *async_data);
/* Set up DEV->async, the queue of the completion thread (which is
   stopped with ok_completion_fini).  */
void cuda_async_init (struct cuda_device *dev);
/* Free the cached soft stacks; false if freeing one failed.  */
bool cuda_stacks_free (struct cuda_device *dev);

#endif /* OFFLOADKIT_CUDA_INTERNAL_H */
