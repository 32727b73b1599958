/* A fault-injecting stand-in for NVIDIA's libcuda.so.1, for tests only.

   It exports the CUDA driver functions offloadkit's CUDA backend calls,
   and those GCC's own nvptx plugin (GCC 12 to 16) resolves, so that
   either plugin runs over it (offloadkit.cuda/gcc-plugin-fake.exp),
   under their real symbol names and C ABI (checked against CUDA 13's
   cuda.h; declared here on purpose, not taken from the plugin's
   cuda-api.h, so that a wrong constant or symbol name there shows up as a
   test failure).  It tests the backend's logic, not a GPU:

   - device memory is host memory: cuMemAlloc_v2 returns the address of a
     host block, so copies really move bytes; every device address is
     checked against a registry of live blocks (module globals included),
     and a copy that leaves its block or uses a freed one fails with
     CUDA_ERROR_INVALID_VALUE and is logged as an error;
   - images are parsed, not compiled: PTX for `.version', `.target sm_NN',
     balanced braces, `.entry' kernels (parameters, .maxntid, .maxnreg)
     and `.global'/`.const' variables (size, simple initialisers); cubins
     (ELF, read with libelf) for EM_CUDA, the architecture in e_flags and
     their STT_FUNC (kernels: those marked as entries when any is) and
     STT_OBJECT symbols (variables, initialised from their section);
   - kernels are recorded, never run, and complete at once (unless the
     test closes the "gate", see fakecuda_gate); but a test can make the
     next launch of a kernel ask for a reverse-offload region as GCC's
     device code does (fakecuda_rev_request): it then runs until the
     host has served the request;
   - symbols in the initialisers of 64-bit PTX globals (GCC's tables of
     functions) get addresses made up from their names
     (fakecuda_symbol_address);
   - contexts are checked: work needs a current context, retained (a
     primary context) or not yet destroyed (one of cuCtxCreate_v2's,
     whose cuCtxDestroy_v2 frees everything made in it: memory, modules,
     streams, events, link states); memory is counted per device,
     whatever its context;
   - everything created is counted, so that a test can see leaks.

   Environment (read at the first call):
     FAKECUDA_DEVICES=N  devices (default 1; 0: cuInit fails with
                         CUDA_ERROR_NO_DEVICE)
     FAKECUDA_SM=NN      compute capability major*10+minor (default 90)
     FAKECUDA_SMS=N      multiprocessors per device (default 4)
     FAKECUDA_DRIVER_VERSION=V  what cuDriverGetVersion says, 1000 *
                         major + 10 * minor (default 13000); the PTX JIT
                         refuses PTX newer than that release's
     FAKECUDA_PAGEABLE=MASK  devices that reach the host's pageable
                         memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS
                         1): bit D for device D (default 0: none, as a
                         discrete GPU without HMM)
     FAKECUDA_MEM=BYTES  memory per device (default 8 GiB); allocations
                         beyond it fail with CUDA_ERROR_OUT_OF_MEMORY
     FAKECUDA_FAIL=SYM[@N][=ERR],...  make the Nth call (1-based; all
                         calls without @N) of exported symbol SYM (or
                         SYM_v2, unless the fake also exports SYM itself,
                         as it does cuLinkCreate, cuLinkAddData and
                         cuDeviceGetUuid: then that one only) return ERR
                         (a number; default: a fitting error, see
                         fk_default_error).  SYM kernel_fault
                         makes the Nth kernel launched fault on the device:
                         the launch succeeds, waiting for its stream
                         returns ERR (CUDA_ERROR_LAUNCH_FAILED) from then on
     FAKECUDA_LOG=FILE   append one line per event (launch, copy,
                         allocation, module load, injected failure, bad
                         call)
     FAKECUDA_CALLS=FILE at unload or exit, append to FILE one line "SYM N"
                         for each exported driver function SYM called (N
                         times, N > 0), whatever the calls returned
     FAKECUDA_CHECK_LEAKS=1  at unload or exit, print "fakecuda: leaked
                         ..." on stderr and _exit (97) if anything created
                         is still alive.

   Tests that load the library themselves also get the fakecuda_*
   functions of control.c (failure injection at run time, launch records,
   counters).  One mutex guards everything.

   This header is what the fake's files share; each file has one area:
     core.c      configuration, the entry of every call, error names, the
                 library's start and end
     devices.c   devices and contexts (primary and created)
     memory.c    device and page-locked memory, copies
     ptx.c, cubin.c, image.c  reading images (image.h)
     modules.c   modules, kernels, variables
     link.c      the JIT linker
     streams.c   streams and the host functions queued on them (and
                 the asynchronous copies behind pending work, memory.c)
     events.c    events
     launch.c    kernel launches, reverse-offload requests
     control.c   the fakecuda_* functions for tests  */

#ifndef OFFLOADKIT_FAKECUDA_FAKE_CUDA_H
#define OFFLOADKIT_FAKECUDA_FAKE_CUDA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../fakes/fake-common.h"
#include "cuda-types.h"
#include "image.h"

/* Exported symbols, for call counting and failure injection.  */
#define FK_SYMBOLS(X) \
  X (cuInit) X (cuDriverGetVersion) X (cuGetErrorName) X (cuGetErrorString) \
  X (cuDeviceGetCount) X (cuDeviceGet) X (cuDeviceGetName) \
  X (cuDeviceGetAttribute) X (cuDeviceTotalMem_v2) \
  X (cuDevicePrimaryCtxRetain) X (cuDevicePrimaryCtxRelease_v2) \
  X (cuCtxSetCurrent) X (cuCtxGetCurrent) X (cuCtxPushCurrent_v2) \
  X (cuCtxPopCurrent_v2) X (cuCtxSynchronize) \
  X (cuCtxCreate_v2) X (cuCtxDestroy_v2) X (cuCtxGetDevice) \
  X (cuCtxSetLimit) \
  X (cuMemAlloc_v2) X (cuMemFree_v2) X (cuMemHostAlloc) \
  X (cuMemAllocHost_v2) X (cuMemFreeHost) X (cuMemGetInfo_v2) \
  X (cuMemcpyHtoD_v2) X (cuMemcpyDtoH_v2) X (cuMemcpyDtoD_v2) \
  X (cuMemcpyHtoDAsync_v2) X (cuMemcpyDtoHAsync_v2) \
  X (cuMemcpyDtoDAsync_v2) X (cuMemsetD8Async) \
  X (cuMemcpy) X (cuMemsetD8_v2) X (cuMemGetAddressRange_v2) \
  X (cuMemHostGetDevicePointer_v2) \
  X (cuModuleLoadData) X (cuModuleLoadDataEx) X (cuModuleUnload) \
  X (cuModuleLoad) \
  X (cuModuleGetFunction) X (cuModuleGetGlobal_v2) X (cuFuncGetAttribute) \
  X (cuLinkCreate_v2) X (cuLinkAddData_v2) X (cuLinkComplete) \
  X (cuLinkDestroy) X (cuLinkCreate) X (cuLinkAddData) \
  X (cuLaunchKernel) X (cuOccupancyMaxPotentialBlockSize) \
  X (cuStreamCreate) X (cuStreamDestroy_v2) X (cuStreamSynchronize) \
  X (cuStreamQuery) X (cuStreamWaitEvent) X (cuStreamAddCallback) \
  X (cuLaunchHostFunc) \
  X (cuEventCreate) X (cuEventRecord) X (cuEventSynchronize) \
  X (cuEventQuery) X (cuEventElapsedTime) X (cuEventElapsedTime_v2) \
  X (cuEventDestroy_v2) \
  X (cuMemcpy2D_v2) X (cuMemcpy2DUnaligned_v2) X (cuMemcpy3D_v2) \
  X (cuMemAllocManaged) \
  X (cuPointerGetAttribute) X (cuDeviceGetUuid_v2) X (cuDeviceGetUuid) \
  X (kernel_fault)

enum fk_sym_id
{
#define FK_ENUM(s) FK_##s,
  FK_SYMBOLS (FK_ENUM)
#undef FK_ENUM
  FK_NSYMS
};

/* Everything below stays out of the dynamic symbol table: the fake
   exports the driver's functions and its fakecuda_* queries only.  */
#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------ */
/* State, guarded by FK_LOCK (core.c unless said otherwise).  */

/* The names of the exported symbols (by enum fk_sym_id), FK_LOCK and
   FK_COND.  */
FAKE_DECLARE_CORE (fk_sym_names, FK_NSYMS, fk_lock, fk_cond);

#define FK_MAX_DEVICES 16
#define FK_MAGIC_CTX 0x66637478u

extern bool fk_initialised;	/* cuInit succeeded.  */
extern int fk_num_devices;
extern int fk_sm;		/* Compute capability, major * 10 + minor.  */
extern int fk_sms;
extern long fk_pageable;	/* FAKECUDA_PAGEABLE.  */
extern size_t fk_mem_total;

/* A context (devices.c): a device's primary context, in fk_ctxs, or one
   made by cuCtxCreate_v2, in a pool of its own.  */
struct fk_ctx
{
  unsigned magic;
  int device;
  /* A primary context: retains minus releases.  A created one: 1 until
     cuCtxDestroy_v2, then 0.  */
  long refs;
  bool created;			/* Made by cuCtxCreate_v2.  */
  /* In a primary context only: the bytes of device memory in use on its
     device, by all its contexts (see fk_dev_mem).  */
  size_t mem_used;
};
extern struct fk_ctx fk_ctxs[FK_MAX_DEVICES];
/* The contexts that cuCtxCreate_v2 can have alive at once.  */
#define FK_MAX_CREATED 64

/* Set while a host function enqueued on a stream runs: CUDA forbids
   driver calls there (streams.c).  */
extern __thread bool fk_in_callback;

/* Call counts, failures to inject, the log, and invalid calls seen (the
   plugin's bugs or deliberate test misuse).  */
extern struct fake_state fk_fs;

/* Live handles, by kind.  */
enum fk_handle_kind { FK_H_STREAM, FK_H_EVENT, FK_H_MODULE, FK_H_LINK };
extern struct fake_handles fk_handles;

/* Device memory: cuMemAlloc blocks, page-locked host blocks, module
   globals; each block owned by its context.  */
enum fk_block_kind { FK_MEM, FK_HOST, FK_GLOBAL };
extern struct fake_blocks fk_blocks;

/* The "gate" (streams.c): while closed, launches stay pending
   (synchronisation waits, queries answer CUDA_ERROR_NOT_READY).  Opening
   it completes them all and starts a new generation.  */
extern bool fk_gate_closed;
extern unsigned long fk_gate_gen;

struct fk_stream
{
  struct fk_ctx *ctx;
  unsigned flags;
  bool busy;			/* Pending work of generation BUSY_GEN.  */
  unsigned long busy_gen;
  long callbacks;		/* Host functions queued, not yet run.  */
  /* An injected kernel fault (FAKECUDA_FAIL=kernel_fault): what waiting
     for the stream returns from then on; 0 when none.  */
  int fault;
  /* The reverse-offload request of the kernel running on it (launch.c),
     or NULL.  */
  struct fk_rev *rev;
};

/* A reverse-offload region that a kernel asks for while it runs, as
   GOMP_target_ext in GCC's libgomp/config/nvptx/target.c asks: it reads
   its module's __gomp_rev_offload_var, writes the arguments into the
   block that points to (GCC's struct rev_offload, in page-locked host
   memory), then FN, and waits until the host has set FN back to 0.  */
struct fk_rev
{
  char kernel[128];
  uint64_t fn, mapnum, addrs, sizes, kinds;
  int32_t dev_num;
  uintptr_t var;		/* The module's __gomp_rev_offload_var.  */
  uintptr_t block;		/* Where the request went; 0 before.  */
};
/* The request that the next launch of its kernel makes (control.c), and
   how many requests have been served.  */
extern struct fk_rev *fk_rev_armed;
extern long fk_rev_served;

struct fk_event
{
  struct fk_ctx *ctx;
  unsigned flags;
  bool recorded;
  bool busy;
  unsigned long busy_gen;
  struct timespec when;
};

struct fk_module
{
  struct fk_ctx *ctx;
  struct fk_image img;
};

/* A link in progress: its inputs, kept as they will go into the linked
   image, and the log buffers given to cuLinkCreate_v2.  */
struct fk_link
{
  struct fk_ctx *ctx;
  char *error_log;
  size_t error_log_size;
  size_t *error_log_size_out;
  char *info_log;
  size_t info_log_size;
  size_t *info_log_size_out;
  struct fk_input *inputs;
  int ninputs;
  unsigned char *linked;
};

/* Launch records (launch.c).  */
struct fk_launch
{
  char name[128];
  unsigned grid[3], block[3];
  unsigned shmem;
  uintptr_t stream;
  unsigned stream_flags;
  int nparams;
  unsigned long long params[4];
  int device;
};
extern struct fake_records fk_launches;

/* ------------------------------------------------------------------ */
/* The entry of every call (core.c).  Called with FK_LOCK held.  */

#define fk_log(...) fake_log (&fk_fs, __VA_ARGS__)
/* The plugin (or a test) made a call the real driver would refuse.  */
#define fk_bad(...) fake_bad (&fk_fs, __VA_ARGS__)

/* Count a call of SYM, refuse it from a host function, inject a failure
   if one is armed.  Takes FK_LOCK; returns with it held when the result
   is CUDA_SUCCESS, released otherwise.  */
CUresult fk_enter (int sym);
/* The error a failing SYM returns when FAKECUDA_FAIL names none.  */
int fk_default_error (int sym);

#define ENTER(sym) \
  do { CUresult r_ = fk_enter (FK_##sym); \
       if (r_ != CUDA_SUCCESS) return r_; } while (0)
#define RETURN(r) do { CUresult r2_ = (r); pthread_mutex_unlock (&fk_lock); \
		       return r2_; } while (0)

/* After the checks: the result VALUE in *OUT, a NULL OUT refused.  */
#define RETURN_VALUE(out, value) \
  do { if ((out) == NULL) RETURN (CUDA_ERROR_INVALID_VALUE); \
       *(out) = (value); RETURN (CUDA_SUCCESS); } while (0)

/* After ENTER: the driver is initialised.  */
#define NEED_INIT(sym) \
  do { if (!fk_initialised) \
	 { fk_bad (FK_##sym, "cuInit has not succeeded"); \
	   RETURN (CUDA_ERROR_NOT_INITIALIZED); } } while (0)

/* After ENTER: a retained (primary) or live (created) context is
   current on this thread.  */
#define NEED_CTX(sym) \
  do { NEED_INIT (sym); \
       struct fk_ctx *c_ = fk_current (); \
       if (c_ == NULL || c_->refs <= 0) \
	 { fk_bad (FK_##sym, c_ == NULL ? "no current context" \
		   : c_->created ? "current context was destroyed" \
		   : "current context was released"); \
	   RETURN (c_ != NULL && c_->created \
		   ? CUDA_ERROR_CONTEXT_IS_DESTROYED \
		   : CUDA_ERROR_INVALID_CONTEXT); } } while (0)

/* ------------------------------------------------------------------ */
/* What the files give each other.  */

/* devices.c: the calling thread's current context, or NULL.  */
struct fk_ctx *fk_current (void);
/* The bytes of device memory in use on CTX's device (all its contexts
   together).  */
#define fk_dev_mem(ctx) (fk_ctxs[(ctx)->device].mem_used)

/* What cuCtxDestroy_v2 frees with context CTX, by kind, each returning how
   many it freed: memory.c its device and page-locked blocks (module
   globals go with their modules), modules.c its modules, streams.c its
   streams (no work pending), events.c its events, link.c its link
   states.  */
int fk_blocks_drop (struct fk_ctx *ctx);
int fk_modules_drop (struct fk_ctx *ctx);
int fk_streams_drop (struct fk_ctx *ctx);
int fk_events_drop (struct fk_ctx *ctx);
int fk_links_drop (struct fk_ctx *ctx);

/* memory.c: whether [ADDR, ADDR + N) lies inside one live device block
   (memory or a module's global; page-locked host memory does not
   count).  */
bool fk_device_range (uintptr_t addr, size_t n);
/* A new block of KIND in context CTX; NULL when out of memory.  */
void *fk_block_new (size_t size, enum fk_block_kind kind,
		    struct fk_ctx *ctx);
/* Free the block of KIND starting exactly at ADDR; false if there is
   none.  */
bool fk_block_free (uintptr_t addr, enum fk_block_kind kind);

/* streams.c: the live stream S, or NULL.  */
struct fk_stream *fk_stream_find (CUstream s);
/* Whether S is a stream of the fake's (not NULL or a special handle).  */
bool fk_is_real_stream (CUstream s);
/* Whether S is usable for work in the current context; if not, the call
   of SYM is reported as invalid.  */
bool fk_stream_ok (int sym, CUstream s);
/* Whether S has work of the current, still closed gate generation.  */
bool fk_stream_pending (struct fk_stream *s);
/* Whether a blocking stream (not created CU_STREAM_NON_BLOCKING) of the
   current context has work pending or host functions queued: the legacy
   stream's work (synchronous copies, its synchronisation) waits for
   them.  */
bool fk_blocking_pending (void);
/* Queue host function HFN (or stream callback SFN) with DATA on STREAM
   for the fake's callback thread, after the work pending there; the call
   of SYM.  Called with FK_LOCK held.  */
CUresult fk_queue_callback (int sym, CUstream stream, CUhostFn hfn,
			    CUstreamCallback sfn, void *data);
/* At unload: open the gate and end the thread that runs host functions,
   whose code is about to go away.  Takes FK_LOCK.  */
void fk_callbacks_stop (void);
/* In a forked child: forget that thread, which does not exist there (nor
   does the work it had).  Called with FK_LOCK held.  */
void fk_callbacks_forget (void);

/* Check the stream argument of a synchronisation or query: NULL and the
   special handles are fine.  */
#define NEED_STREAM(sym, s) \
  do { if ((s) != NULL && (s) != FK_STREAM_LEGACY \
	   && (s) != FK_STREAM_PER_THREAD && fk_stream_find (s) == NULL) \
	 { fk_bad (FK_##sym, "%p is not a live stream", (void *) (s)); \
	   RETURN (CUDA_ERROR_INVALID_HANDLE); } } while (0)

/* launch.c: let the kernel running on S go on with its reverse-offload
   request: make it, or see whether the host has served it.  True while
   the kernel waits; false when it has no request (any more), or when the
   request went wrong (then S has a fault).  */
bool fk_rev_step (struct fk_stream *s);
/* Forget S's request (the stream goes away), saying WHY in the log.  */
void fk_rev_drop (struct fk_stream *s, const char *why);

/* modules.c: the function argument FN of SYM; NULL, reported as an
   invalid call, when it is not a function of a loaded module.  */
struct fk_func *fk_func_arg (int sym, CUfunction fn);
/* The most threads a block of F may have.  */
int fk_func_max_threads (const struct fk_func *f);

/* link.c: copy TEXT into a JIT log buffer BUF of SIZE bytes and report
   its length in *SIZE_OUT.  */
void fk_put_log (char *buf, size_t size, size_t *size_out, const char *text);

/* devices.c: how many contexts made by cuCtxCreate_v2 are alive.  */
long fk_created_alive (void);

#pragma GCC visibility pop

/* control.c, exported: how many objects of KIND are alive.  */
long fakecuda_outstanding (const char *kind);

#endif
