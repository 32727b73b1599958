/* A fault-injecting stand-in for NVIDIA's libcuda.so.1, for tests only.

   It exports the CUDA driver functions offloadkit's CUDA backend calls,
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
     test closes the "gate", see fakecuda_gate);
   - contexts are checked: work needs a current, retained context;
   - everything created is counted, so that a test can see leaks.

   Environment (read at the first call):
     FAKECUDA_DEVICES=N  devices (default 1; 0: cuInit fails with
                         CUDA_ERROR_NO_DEVICE)
     FAKECUDA_SM=NN      compute capability major*10+minor (default 90)
     FAKECUDA_SMS=N      multiprocessors per device (default 4)
     FAKECUDA_MEM=BYTES  memory per device (default 8 GiB); allocations
                         beyond it fail with CUDA_ERROR_OUT_OF_MEMORY
     FAKECUDA_FAIL=SYM[@N][=ERR],...  make the Nth call (1-based; all
                         calls without @N) of exported symbol SYM (or
                         SYM_v2) return ERR (a number; default: a fitting
                         error, see fk_default_error)
     FAKECUDA_LOG=FILE   append one line per event (launch, copy,
                         allocation, module load, injected failure, bad
                         call)
     FAKECUDA_CHECK_LEAKS=1  at unload or exit, print "fakecuda: leaked
                         ..." on stderr and _exit (97) if anything created
                         is still alive.

   Tests that load the library themselves also get the fakecuda_*
   functions at the end of this file (failure injection at run time,
   launch records, counters).  One mutex guards everything.  */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../fakes/fake-common.h"

/* ------------------------------------------------------------------ */
/* Our own declarations of the driver API's types and constants (values
   from cuda.h).  */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fk_ctx *CUcontext;
typedef struct fk_module *CUmodule;
typedef struct fk_func *CUfunction;
typedef struct fk_stream *CUstream;
typedef struct fk_event *CUevent;
typedef struct fk_link *CUlinkState;
typedef int CUjit_option;
typedef int CUjitInputType;
typedef void (*CUhostFn) (void *);
typedef void (*CUstreamCallback) (CUstream, CUresult, void *);

enum
{
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice_attribute values the fake answers specially.  */
enum
{
  FK_ATTR_MAX_THREADS_PER_BLOCK = 1,
  FK_ATTR_MAX_BLOCK_DIM_X = 2,
  FK_ATTR_MAX_BLOCK_DIM_Y = 3,
  FK_ATTR_MAX_BLOCK_DIM_Z = 4,
  FK_ATTR_MAX_GRID_DIM_X = 5,
  FK_ATTR_MAX_GRID_DIM_Y = 6,
  FK_ATTR_MAX_GRID_DIM_Z = 7,
  FK_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  FK_ATTR_TOTAL_CONSTANT_MEMORY = 9,
  FK_ATTR_WARP_SIZE = 10,
  FK_ATTR_MAX_PITCH = 11,
  FK_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  FK_ATTR_CLOCK_RATE = 13,
  FK_ATTR_MULTIPROCESSOR_COUNT = 16,
  FK_ATTR_CAN_MAP_HOST_MEMORY = 19,
  FK_ATTR_CONCURRENT_KERNELS = 31,
  FK_ATTR_PCI_BUS_ID = 33,
  FK_ATTR_MEMORY_CLOCK_RATE = 36,
  FK_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
  FK_ATTR_L2_CACHE_SIZE = 38,
  FK_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  FK_ATTR_ASYNC_ENGINE_COUNT = 40,
  FK_ATTR_UNIFIED_ADDRESSING = 41,
  FK_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  FK_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  FK_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  FK_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  FK_ATTR_MANAGED_MEMORY = 83,
  FK_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  FK_ATTR_MAX = 148		/* CU_DEVICE_ATTRIBUTE_MAX in CUDA 13.  */
};

/* CUfunction_attribute.  */
enum
{
  FK_FUNC_MAX_THREADS_PER_BLOCK = 0,
  FK_FUNC_SHARED_SIZE_BYTES = 1,
  FK_FUNC_CONST_SIZE_BYTES = 2,
  FK_FUNC_LOCAL_SIZE_BYTES = 3,
  FK_FUNC_NUM_REGS = 4,
  FK_FUNC_PTX_VERSION = 5,
  FK_FUNC_BINARY_VERSION = 6,
  FK_FUNC_MAX = 16
};

/* CUjit_option values with a meaning here, and CUjitInputType.  */
enum
{
  FK_JIT_INFO_LOG_BUFFER = 3,
  FK_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  FK_JIT_ERROR_LOG_BUFFER = 5,
  FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  FK_JIT_NUM_OPTIONS = 35,
  FK_JIT_INPUT_CUBIN = 0,
  FK_JIT_INPUT_PTX = 1
};

#define FK_STREAM_NON_BLOCKING 0x1u
#define FK_STREAM_LEGACY ((CUstream) 0x1)
#define FK_STREAM_PER_THREAD ((CUstream) 0x2)
#define FK_EVENT_DISABLE_TIMING 0x2u
#define FK_LAUNCH_PARAM_BUFFER_POINTER ((void *) 0x01)
#define FK_LAUNCH_PARAM_BUFFER_SIZE ((void *) 0x02)
#define FK_EM_CUDA 190
#define FK_STO_CUDA_ENTRY 0x10

/* Exported symbols, for call counting and failure injection.  */
#define FK_SYMBOLS(X) \
  X (cuInit) X (cuDriverGetVersion) X (cuGetErrorName) X (cuGetErrorString) \
  X (cuDeviceGetCount) X (cuDeviceGet) X (cuDeviceGetName) \
  X (cuDeviceGetAttribute) X (cuDeviceTotalMem_v2) \
  X (cuDevicePrimaryCtxRetain) X (cuDevicePrimaryCtxRelease_v2) \
  X (cuCtxSetCurrent) X (cuCtxGetCurrent) X (cuCtxPushCurrent_v2) \
  X (cuCtxPopCurrent_v2) X (cuCtxSynchronize) \
  X (cuMemAlloc_v2) X (cuMemFree_v2) X (cuMemHostAlloc) \
  X (cuMemAllocHost_v2) X (cuMemFreeHost) X (cuMemGetInfo_v2) \
  X (cuMemcpyHtoD_v2) X (cuMemcpyDtoH_v2) X (cuMemcpyDtoD_v2) \
  X (cuMemcpyHtoDAsync_v2) X (cuMemcpyDtoHAsync_v2) \
  X (cuMemcpyDtoDAsync_v2) \
  X (cuModuleLoadData) X (cuModuleLoadDataEx) X (cuModuleUnload) \
  X (cuModuleGetFunction) X (cuModuleGetGlobal_v2) X (cuFuncGetAttribute) \
  X (cuLinkCreate_v2) X (cuLinkAddData_v2) X (cuLinkComplete) \
  X (cuLinkDestroy) X (cuLaunchKernel) \
  X (cuStreamCreate) X (cuStreamDestroy_v2) X (cuStreamSynchronize) \
  X (cuStreamQuery) X (cuStreamWaitEvent) X (cuStreamAddCallback) \
  X (cuLaunchHostFunc) \
  X (cuEventCreate) X (cuEventRecord) X (cuEventSynchronize) \
  X (cuEventQuery) X (cuEventElapsedTime) X (cuEventElapsedTime_v2) \
  X (cuEventDestroy_v2)

enum fk_sym_id
{
#define FK_ENUM(s) FK_##s,
  FK_SYMBOLS (FK_ENUM)
#undef FK_ENUM
  FK_NSYMS
};

static const char *const fk_sym_names[FK_NSYMS] = {
#define FK_NAME(s) #s,
  FK_SYMBOLS (FK_NAME)
#undef FK_NAME
};

/* ------------------------------------------------------------------ */
/* State.  */

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_cond = PTHREAD_COND_INITIALIZER;

#define FK_MAX_DEVICES 16
#define FK_MAGIC_CTX 0x66637478u

static bool fk_configured;	/* Environment read.  */
static bool fk_initialised;	/* cuInit succeeded.  */
static int fk_num_devices = 1;
static int fk_sm = 90;
static int fk_sms = 4;
static size_t fk_mem_total = (size_t) 8 << 30;

struct fk_ctx
{
  unsigned magic;
  int device;
  long refs;			/* Primary retains minus releases.  */
  size_t mem_used;
};
static struct fk_ctx fk_ctxs[FK_MAX_DEVICES];

/* The calling thread's context stack; the current context is the top.  */
#define FK_CTX_STACK 16
static __thread struct fk_ctx *fk_ctx_stack[FK_CTX_STACK];
static __thread int fk_ctx_depth;
/* Set while a host function enqueued on a stream runs: CUDA forbids
   driver calls there.  */
static __thread bool fk_in_callback;

/* Calls counted (in all, and since the failure spec was set), failures
   to inject, the log, and invalid calls seen (the plugin's bugs or
   deliberate test misuse).  */
static long fk_calls_since_spec[FK_NSYMS];
static long fk_calls_total[FK_NSYMS];
static void fk_configure (void);
static struct fake_state fk_fs = {
  .tag = "fakecuda", .fail_var = "FAKECUDA_FAIL",
  .sym_names = fk_sym_names, .nsyms = FK_NSYMS,
  .calls_total = fk_calls_total, .calls_since_spec = fk_calls_since_spec,
  .max_fails = 32, .item_max = 128, .v2_alias = true, .log_fd = -1,
  .lock = &fk_lock, .configure = fk_configure,
};

/* Live handles, by kind.  */
enum fk_handle_kind { FK_H_STREAM, FK_H_EVENT, FK_H_MODULE, FK_H_LINK };
static struct fake_handles fk_handles;

/* Device memory: cuMemAlloc blocks, page-locked host blocks, module
   globals; each block owned by its context.  */
enum fk_block_kind { FK_MEM, FK_HOST, FK_GLOBAL };
static struct fake_blocks fk_blocks;

/* The "gate": while closed, launches stay pending (synchronisation waits,
   queries answer CUDA_ERROR_NOT_READY).  Opening it completes them all and
   starts a new generation.  */
static bool fk_gate_closed;
static unsigned long fk_gate_gen;

struct fk_stream
{
  struct fk_ctx *ctx;
  unsigned flags;
  bool busy;			/* Pending work of generation BUSY_GEN.  */
  unsigned long busy_gen;
  long callbacks;		/* Host functions queued, not yet run.  */
};

struct fk_event
{
  struct fk_ctx *ctx;
  unsigned flags;
  bool recorded;
  bool busy;
  unsigned long busy_gen;
  struct timespec when;
};

/* What an image defines.  */
struct fk_func
{
  char *name;
  struct fk_module *module;
  int regs;
  int max_threads;
  int nparams;
  size_t param_size[16];
};
struct fk_global
{
  char *name;
  size_t size;
  unsigned char *init;		/* SIZE bytes or NULL (zero).  */
  uintptr_t addr;		/* Device copy once loaded.  */
};
struct fk_image
{
  struct fk_func *funcs;
  int nfuncs;
  struct fk_global *globals;
  int nglobals;
  int target_sm;		/* Highest .target or cubin arch seen.  */
};

struct fk_module
{
  struct fk_ctx *ctx;
  struct fk_image img;
};

/* A link in progress: its inputs, kept as they will go into the linked
   image, and the log buffers given to cuLinkCreate_v2.  */
struct fk_link_input
{
  int type;
  size_t size;
  unsigned char *data;
};
struct fk_link
{
  struct fk_ctx *ctx;
  char *error_log;
  size_t error_log_size;
  size_t *error_log_size_out;
  char *info_log;
  size_t info_log_size;
  size_t *info_log_size_out;
  struct fk_link_input *inputs;
  int ninputs;
  unsigned char *linked;
};

/* Launch records.  */
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
static struct fk_launch *fk_launches;
static size_t fk_nlaunches, fk_launches_cap;

/* Host functions queued on streams, run in order by one thread.  */
struct fk_callback
{
  CUhostFn host_fn;
  CUstreamCallback stream_fn;
  CUstream stream;
  void *data;
  bool gated;
  unsigned long gen;
  struct fk_callback *next;
};
static struct fk_callback *fk_cb_head, **fk_cb_tail = &fk_cb_head;
static bool fk_cb_thread_started, fk_cb_quit;
static pthread_t fk_cb_thread;

/* The linked images cuLinkComplete produces begin with this.  */
static const char fk_linked_magic[16] = "FAKECUDA-LINKED";

/* ------------------------------------------------------------------ */
/* Logging and errors.  Called with FK_LOCK held.  */

#define fk_log(...) fake_log (&fk_fs, __VA_ARGS__)
/* The plugin (or a test) made a call the real driver would refuse.  */
#define fk_bad(...) fake_bad (&fk_fs, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Configuration.  */

static long
fk_env_long (const char *name, long dflt, long min, long max)
{
  const char *s = getenv (name);
  if (s == NULL || *s == '\0')
    return dflt;
  char *end;
  errno = 0;
  long v = strtol (s, &end, 0);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    {
      fprintf (stderr, "fakecuda: bad %s=%s\n", name, s);
      return dflt;
    }
  return v;
}

static void
fk_configure (void)
{
  if (fk_configured)
    return;
  fk_configured = true;
  fk_num_devices = (int) fk_env_long ("FAKECUDA_DEVICES", 1, 0,
				      FK_MAX_DEVICES);
  fk_sm = (int) fk_env_long ("FAKECUDA_SM", 90, 10, 255);
  fk_sms = (int) fk_env_long ("FAKECUDA_SMS", 4, 1, 1024);
  fk_mem_total = (size_t) fk_env_long ("FAKECUDA_MEM", (long) fk_mem_total,
				       0, LONG_MAX);
  fake_open_log (&fk_fs, "FAKECUDA_LOG");
  fake_parse_fail (&fk_fs, getenv ("FAKECUDA_FAIL"));
  for (int d = 0; d < FK_MAX_DEVICES; d++)
    {
      fk_ctxs[d].magic = FK_MAGIC_CTX;
      fk_ctxs[d].device = d;
    }
}

/* The error a failing SYM returns when FAKECUDA_FAIL names none.  */
static int
fk_default_error (int sym)
{
  switch (sym)
    {
    case FK_cuMemAlloc_v2:
    case FK_cuMemHostAlloc:
    case FK_cuMemAllocHost_v2:
      return CUDA_ERROR_OUT_OF_MEMORY;
    case FK_cuLinkAddData_v2:
    case FK_cuLinkComplete:
    case FK_cuModuleLoadData:
    case FK_cuModuleLoadDataEx:
      return CUDA_ERROR_INVALID_PTX;
    case FK_cuLaunchKernel:
    case FK_cuStreamSynchronize:
    case FK_cuCtxSynchronize:
    case FK_cuEventSynchronize:
    case FK_cuStreamQuery:
    case FK_cuEventQuery:
      return CUDA_ERROR_LAUNCH_FAILED;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
}

/* Entry of every exported function: count the call, refuse calls from
   host functions, and inject a failure if one is armed.  Takes FK_LOCK;
   returns with it held when the result is CUDA_SUCCESS, released
   otherwise.  */
static CUresult
fk_enter (int sym)
{
  pthread_mutex_lock (&fk_lock);
  fk_configure ();
  long n;
  const struct fake_fail *f = fake_count_call (&fk_fs, sym, &n);
  if (fk_in_callback)
    {
      fk_bad (sym, "driver call from inside a stream host function");
      pthread_mutex_unlock (&fk_lock);
      return CUDA_ERROR_NOT_PERMITTED;
    }
  if (f != NULL)
    {
      int err = f->err >= 0 ? f->err : fk_default_error (sym);
      fk_log ("fail %s call %ld -> %d", fk_sym_names[sym], n, err);
      pthread_mutex_unlock (&fk_lock);
      return err;
    }
  return CUDA_SUCCESS;
}

#define ENTER(sym) \
  do { CUresult r_ = fk_enter (FK_##sym); \
       if (r_ != CUDA_SUCCESS) return r_; } while (0)
#define RETURN(r) do { CUresult r2_ = (r); pthread_mutex_unlock (&fk_lock); \
		       return r2_; } while (0)

/* After ENTER: the driver is initialised.  */
#define NEED_INIT(sym) \
  do { if (!fk_initialised) \
	 { fk_bad (FK_##sym, "cuInit has not succeeded"); \
	   RETURN (CUDA_ERROR_NOT_INITIALIZED); } } while (0)

static struct fk_ctx *
fk_current (void)
{
  return fk_ctx_depth > 0 ? fk_ctx_stack[fk_ctx_depth - 1] : NULL;
}

/* After ENTER: a retained context is current on this thread.  */
#define NEED_CTX(sym) \
  do { NEED_INIT (sym); \
       struct fk_ctx *c_ = fk_current (); \
       if (c_ == NULL || c_->refs <= 0) \
	 { fk_bad (FK_##sym, c_ == NULL ? "no current context" \
		   : "current context was released"); \
	   RETURN (CUDA_ERROR_INVALID_CONTEXT); } } while (0)

static bool
fk_valid_ctx (struct fk_ctx *c)
{
  return c >= fk_ctxs && c < fk_ctxs + FK_MAX_DEVICES
	 && c->magic == FK_MAGIC_CTX
	 && c->device < fk_num_devices;
}

/* ------------------------------------------------------------------ */
/* Device blocks.  */

/* Whether [ADDR, ADDR + N) lies inside one live device block (memory or a
   module's global; pinned host memory does not count).  */
static bool
fk_device_range (uintptr_t addr, size_t n)
{
  const struct fake_block *b = fake_block_find (&fk_blocks, addr);
  if (b == NULL || b->kind == FK_HOST)
    return false;
  return n <= b->size && addr - b->base <= b->size - n;
}

/* A new block of KIND in context CTX, whose memory it counts unless it
   is page-locked host memory.  */
static void *
fk_block_new (size_t size, enum fk_block_kind kind, struct fk_ctx *ctx)
{
  void *p = fake_block_new (&fk_blocks, size, 256, kind, ctx);
  if (p != NULL && ctx != NULL && kind != FK_HOST)
    ctx->mem_used += size;
  return p;
}

/* Free the block starting exactly at ADDR of KIND; false if there is
   none.  */
static bool
fk_block_free (uintptr_t addr, enum fk_block_kind kind)
{
  struct fake_block b;
  if (!fake_block_free (&fk_blocks, addr, kind, &b))
    return false;
  struct fk_ctx *ctx = b.owner;
  if (ctx != NULL && kind != FK_HOST)
    ctx->mem_used -= b.size;
  return true;
}

/* ------------------------------------------------------------------ */
/* Errors.  */

static const struct { int code; const char *name, *text; } fk_errors[] = {
  { 0, "CUDA_SUCCESS", "no error" },
  { 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
  { 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
  { 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
  { 4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
  { 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
  { 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
  { 200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
  { 201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
  { 209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
    "no kernel image is available for execution on the device" },
  { 218, "CUDA_ERROR_INVALID_PTX",
    "a PTX JIT compilation failed" },
  { 400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
  { 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
  { 600, "CUDA_ERROR_NOT_READY", "device not ready" },
  { 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
    "an illegal memory access was encountered" },
  { 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
    "too many resources requested for launch" },
  { 719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
  { 800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
  { 801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
  { 999, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

/* cuGetErrorName and cuGetErrorString: the name or the TEXT of ERROR in
   *STR; an unknown ERROR is refused with *STR set to NULL.  */
static CUresult
fk_error_describe (CUresult error, bool text, const char **str)
{
  if (str == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *str = NULL;
  for (size_t i = 0; i < sizeof fk_errors / sizeof fk_errors[0]; i++)
    if (fk_errors[i].code == error)
      {
	*str = text ? fk_errors[i].text : fk_errors[i].name;
	return CUDA_SUCCESS;
      }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult
cuGetErrorName (CUresult error, const char **str)
{
  ENTER (cuGetErrorName);
  RETURN (fk_error_describe (error, false, str));
}

CUresult
cuGetErrorString (CUresult error, const char **str)
{
  ENTER (cuGetErrorString);
  RETURN (fk_error_describe (error, true, str));
}

/* ------------------------------------------------------------------ */
/* Initialisation and devices.  */

CUresult
cuInit (unsigned int flags)
{
  ENTER (cuInit);
  if (flags != 0)
    {
      fk_bad (FK_cuInit, "flags %u, must be 0", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  if (fk_num_devices == 0)
    RETURN (CUDA_ERROR_NO_DEVICE);
  fk_initialised = true;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDriverGetVersion (int *version)
{
  ENTER (cuDriverGetVersion);
  if (version == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *version = 13000;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceGetCount (int *count)
{
  ENTER (cuDeviceGetCount);
  NEED_INIT (cuDeviceGetCount);
  if (count == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *count = fk_num_devices;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceGet (CUdevice *dev, int ordinal)
{
  ENTER (cuDeviceGet);
  NEED_INIT (cuDeviceGet);
  if (dev == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  if (ordinal < 0 || ordinal >= fk_num_devices)
    {
      fk_bad (FK_cuDeviceGet, "no device %d", ordinal);
      RETURN (CUDA_ERROR_INVALID_DEVICE);
    }
  *dev = ordinal;
  RETURN (CUDA_SUCCESS);
}

#define NEED_DEVICE(sym, d) \
  do { if ((d) < 0 || (d) >= fk_num_devices) \
	 { fk_bad (FK_##sym, "no device %d", (d)); \
	   RETURN (CUDA_ERROR_INVALID_DEVICE); } } while (0)

CUresult
cuDeviceGetName (char *name, int len, CUdevice dev)
{
  ENTER (cuDeviceGetName);
  NEED_INIT (cuDeviceGetName);
  NEED_DEVICE (cuDeviceGetName, dev);
  if (name == NULL || len <= 0)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  snprintf (name, (size_t) len, "FakeCUDA Device %d", dev);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceGetAttribute (int *value, int attr, CUdevice dev)
{
  ENTER (cuDeviceGetAttribute);
  NEED_INIT (cuDeviceGetAttribute);
  NEED_DEVICE (cuDeviceGetAttribute, dev);
  if (value == NULL || attr <= 0 || attr >= FK_ATTR_MAX)
    {
      fk_bad (FK_cuDeviceGetAttribute, "attribute %d", attr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  int v = 0;
  switch (attr)
    {
    case FK_ATTR_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_X: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_Y: v = 1024; break;
    case FK_ATTR_MAX_BLOCK_DIM_Z: v = 64; break;
    case FK_ATTR_MAX_GRID_DIM_X: v = 2147483647; break;
    case FK_ATTR_MAX_GRID_DIM_Y: v = 65535; break;
    case FK_ATTR_MAX_GRID_DIM_Z: v = 65535; break;
    case FK_ATTR_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case FK_ATTR_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case FK_ATTR_WARP_SIZE: v = 32; break;
    case FK_ATTR_MAX_PITCH: v = 2147483647; break;
    case FK_ATTR_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case FK_ATTR_CLOCK_RATE: v = 1500000; break;
    case FK_ATTR_MULTIPROCESSOR_COUNT: v = fk_sms; break;
    case FK_ATTR_CAN_MAP_HOST_MEMORY: v = 1; break;
    case FK_ATTR_CONCURRENT_KERNELS: v = 1; break;
    case FK_ATTR_PCI_BUS_ID: v = dev + 1; break;
    case FK_ATTR_MEMORY_CLOCK_RATE: v = 2600000; break;
    case FK_ATTR_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case FK_ATTR_L2_CACHE_SIZE: v = 50 << 20; break;
    case FK_ATTR_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case FK_ATTR_ASYNC_ENGINE_COUNT: v = 2; break;
    case FK_ATTR_UNIFIED_ADDRESSING: v = 1; break;
    case FK_ATTR_COMPUTE_CAPABILITY_MAJOR: v = fk_sm / 10; break;
    case FK_ATTR_COMPUTE_CAPABILITY_MINOR: v = fk_sm % 10; break;
    case FK_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 233472; break;
    case FK_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR: v = 65536; break;
    case FK_ATTR_MANAGED_MEMORY: v = 1; break;
    case FK_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
    default: v = 0; break;
    }
  *value = v;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDeviceTotalMem_v2 (size_t *bytes, CUdevice dev)
{
  ENTER (cuDeviceTotalMem_v2);
  NEED_INIT (cuDeviceTotalMem_v2);
  NEED_DEVICE (cuDeviceTotalMem_v2, dev);
  if (bytes == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *bytes = fk_mem_total;
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Contexts.  */

CUresult
cuDevicePrimaryCtxRetain (CUcontext *pctx, CUdevice dev)
{
  ENTER (cuDevicePrimaryCtxRetain);
  NEED_INIT (cuDevicePrimaryCtxRetain);
  NEED_DEVICE (cuDevicePrimaryCtxRetain, dev);
  if (pctx == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  fk_ctxs[dev].refs++;
  *pctx = &fk_ctxs[dev];
  fk_log ("context retain device %d -> %ld", dev, fk_ctxs[dev].refs);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuDevicePrimaryCtxRelease_v2 (CUdevice dev)
{
  ENTER (cuDevicePrimaryCtxRelease_v2);
  NEED_INIT (cuDevicePrimaryCtxRelease_v2);
  NEED_DEVICE (cuDevicePrimaryCtxRelease_v2, dev);
  if (fk_ctxs[dev].refs <= 0)
    {
      fk_bad (FK_cuDevicePrimaryCtxRelease_v2,
	      "device %d's primary context is not retained", dev);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  fk_ctxs[dev].refs--;
  fk_log ("context release device %d -> %ld", dev, fk_ctxs[dev].refs);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxSetCurrent (CUcontext ctx)
{
  ENTER (cuCtxSetCurrent);
  NEED_INIT (cuCtxSetCurrent);
  if (ctx != NULL && !fk_valid_ctx (ctx))
    {
      fk_bad (FK_cuCtxSetCurrent, "%p is not a context", (void *) ctx);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  if (fk_ctx_depth == 0)
    {
      if (ctx != NULL)
	fk_ctx_stack[fk_ctx_depth++] = ctx;
    }
  else if (ctx == NULL)
    fk_ctx_depth--;
  else
    fk_ctx_stack[fk_ctx_depth - 1] = ctx;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxGetCurrent (CUcontext *pctx)
{
  ENTER (cuCtxGetCurrent);
  NEED_INIT (cuCtxGetCurrent);
  if (pctx == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *pctx = fk_current ();
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxPushCurrent_v2 (CUcontext ctx)
{
  ENTER (cuCtxPushCurrent_v2);
  NEED_INIT (cuCtxPushCurrent_v2);
  if (!fk_valid_ctx (ctx))
    {
      fk_bad (FK_cuCtxPushCurrent_v2, "%p is not a context", (void *) ctx);
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  if (fk_ctx_depth == FK_CTX_STACK)
    {
      fk_bad (FK_cuCtxPushCurrent_v2, "context stack deeper than %d",
	      FK_CTX_STACK);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_ctx_stack[fk_ctx_depth++] = ctx;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuCtxPopCurrent_v2 (CUcontext *pctx)
{
  ENTER (cuCtxPopCurrent_v2);
  NEED_INIT (cuCtxPopCurrent_v2);
  if (fk_ctx_depth == 0)
    {
      fk_bad (FK_cuCtxPopCurrent_v2, "no current context to pop");
      RETURN (CUDA_ERROR_INVALID_CONTEXT);
    }
  CUcontext c = fk_ctx_stack[--fk_ctx_depth];
  if (pctx != NULL)
    *pctx = c;
  RETURN (CUDA_SUCCESS);
}

/* Whether STREAM has work of the current, still closed gate generation.  */
static bool
fk_stream_pending (struct fk_stream *s)
{
  return s != NULL && s->busy && fk_gate_closed && s->busy_gen == fk_gate_gen;
}

CUresult
cuCtxSynchronize (void)
{
  ENTER (cuCtxSynchronize);
  NEED_CTX (cuCtxSynchronize);
  struct fk_ctx *c = fk_current ();
  for (;;)
    {
      bool pending = false;
      struct fk_stream *s;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
	if (s->ctx == c && (fk_stream_pending (s) || s->callbacks > 0))
	  pending = true;
      if (!pending)
	break;
      pthread_cond_wait (&fk_cond, &fk_lock);
    }
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Memory.  */

CUresult
cuMemAlloc_v2 (CUdeviceptr *dptr, size_t size)
{
  ENTER (cuMemAlloc_v2);
  NEED_CTX (cuMemAlloc_v2);
  if (dptr == NULL || size == 0)
    {
      fk_bad (FK_cuMemAlloc_v2, "%s", dptr == NULL ? "NULL result pointer"
	      : "size 0");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_ctx *c = fk_current ();
  if (size > fk_mem_total || c->mem_used > fk_mem_total - size)
    {
      fk_log ("alloc mem %zu bytes: out of memory (%zu of %zu used)", size,
	      c->mem_used, fk_mem_total);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  void *p = fk_block_new (size, FK_MEM, c);
  if (p == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  *dptr = (CUdeviceptr) (uintptr_t) p;
  fk_log ("alloc mem %p %zu", p, size);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuMemFree_v2 (CUdeviceptr dptr)
{
  ENTER (cuMemFree_v2);
  NEED_INIT (cuMemFree_v2);
  if (!fk_block_free ((uintptr_t) dptr, FK_MEM))
    {
      fk_bad (FK_cuMemFree_v2, "%#llx is not a live cuMemAlloc block", dptr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_log ("free mem %#llx", dptr);
  RETURN (CUDA_SUCCESS);
}

static CUresult
fk_host_alloc (int sym, void **pp, size_t size)
{
  if (pp == NULL || size == 0)
    {
      fk_bad (sym, "%s", pp == NULL ? "NULL result pointer" : "size 0");
      return CUDA_ERROR_INVALID_VALUE;
    }
  void *p = fk_block_new (size, FK_HOST, fk_current ());
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pp = p;
  fk_log ("alloc host %p %zu", p, size);
  return CUDA_SUCCESS;
}

CUresult
cuMemHostAlloc (void **pp, size_t size, unsigned int flags)
{
  ENTER (cuMemHostAlloc);
  NEED_CTX (cuMemHostAlloc);
  if (flags & ~7u)
    {
      fk_bad (FK_cuMemHostAlloc, "flags %#x", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  RETURN (fk_host_alloc (FK_cuMemHostAlloc, pp, size));
}

CUresult
cuMemAllocHost_v2 (void **pp, size_t size)
{
  ENTER (cuMemAllocHost_v2);
  NEED_CTX (cuMemAllocHost_v2);
  RETURN (fk_host_alloc (FK_cuMemAllocHost_v2, pp, size));
}

CUresult
cuMemFreeHost (void *p)
{
  ENTER (cuMemFreeHost);
  NEED_INIT (cuMemFreeHost);
  if (!fk_block_free ((uintptr_t) p, FK_HOST))
    {
      fk_bad (FK_cuMemFreeHost, "%p is not live page-locked memory", p);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  fk_log ("free host %p", p);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuMemGetInfo_v2 (size_t *free_bytes, size_t *total)
{
  ENTER (cuMemGetInfo_v2);
  NEED_CTX (cuMemGetInfo_v2);
  if (free_bytes == NULL || total == NULL)
    RETURN (CUDA_ERROR_INVALID_VALUE);
  *total = fk_mem_total;
  *free_bytes = fk_mem_total - fk_current ()->mem_used;
  RETURN (CUDA_SUCCESS);
}

/* Whether STREAM is usable for work in the current context.  */
static bool
fk_stream_ok (int sym, CUstream s)
{
  if (s == NULL || s == FK_STREAM_LEGACY || s == FK_STREAM_PER_THREAD)
    return true;
  struct fk_stream *p = fake_handle_get (&fk_handles, FK_H_STREAM, s);
  if (p == NULL)
    {
      fk_bad (sym, "%p is not a live stream", (void *) s);
      return false;
    }
  if (p->ctx != fk_current ())
    {
      fk_bad (sym, "stream %p belongs to device %d's context, current"
	      " is device %d's", (void *) s, p->ctx->device,
	      fk_current ()->device);
      return false;
    }
  return true;
}

/* One copy.  DIR: "HtoD", "DtoH" or "DtoD".  Checks the device side(s)
   and moves the bytes.  */
static CUresult
fk_copy (int sym, const char *dir, void *dst, const void *src, size_t n,
	 bool async, CUstream stream)
{
  if (async && !fk_stream_ok (sym, stream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (n == 0)
    return CUDA_SUCCESS;
  bool dst_dev = dir[3] == 'D', src_dev = dir[0] == 'D';
  if ((dst_dev && !fk_device_range ((uintptr_t) dst, n))
      || (src_dev && !fk_device_range ((uintptr_t) src, n)))
    {
      fk_bad (sym, "copy %s of %zu bytes from %p to %p: %s", dir, n, src,
	      dst, "not inside one live device allocation");
      return CUDA_ERROR_INVALID_VALUE;
    }
  if ((!dst_dev && dst == NULL) || (!src_dev && src == NULL))
    {
      fk_bad (sym, "copy %s of %zu bytes: NULL host pointer", dir, n);
      return CUDA_ERROR_INVALID_VALUE;
    }
  memmove (dst, src, n);
  fk_log ("copy %s %zu%s", dir, n, async ? " async" : "");
  return CUDA_SUCCESS;
}

CUresult
cuMemcpyHtoD_v2 (CUdeviceptr dst, const void *src, size_t n)
{
  ENTER (cuMemcpyHtoD_v2);
  NEED_CTX (cuMemcpyHtoD_v2);
  RETURN (fk_copy (FK_cuMemcpyHtoD_v2, "HtoD", (void *) (uintptr_t) dst, src,
		   n, false, NULL));
}

CUresult
cuMemcpyDtoH_v2 (void *dst, CUdeviceptr src, size_t n)
{
  ENTER (cuMemcpyDtoH_v2);
  NEED_CTX (cuMemcpyDtoH_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoH_v2, "DtoH", dst,
		   (const void *) (uintptr_t) src, n, false, NULL));
}

CUresult
cuMemcpyDtoD_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  ENTER (cuMemcpyDtoD_v2);
  NEED_CTX (cuMemcpyDtoD_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoD_v2, "DtoD", (void *) (uintptr_t) dst,
		   (const void *) (uintptr_t) src, n, false, NULL));
}

CUresult
cuMemcpyHtoDAsync_v2 (CUdeviceptr dst, const void *src, size_t n,
		      CUstream s)
{
  ENTER (cuMemcpyHtoDAsync_v2);
  NEED_CTX (cuMemcpyHtoDAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyHtoDAsync_v2, "HtoD", (void *) (uintptr_t) dst,
		   src, n, true, s));
}

CUresult
cuMemcpyDtoHAsync_v2 (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  ENTER (cuMemcpyDtoHAsync_v2);
  NEED_CTX (cuMemcpyDtoHAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoHAsync_v2, "DtoH", dst,
		   (const void *) (uintptr_t) src, n, true, s));
}

CUresult
cuMemcpyDtoDAsync_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n,
		      CUstream s)
{
  ENTER (cuMemcpyDtoDAsync_v2);
  NEED_CTX (cuMemcpyDtoDAsync_v2);
  RETURN (fk_copy (FK_cuMemcpyDtoDAsync_v2, "DtoD", (void *) (uintptr_t) dst,
		   (const void *) (uintptr_t) src, n, true, s));
}

/* ------------------------------------------------------------------ */
/* Images: parsing.  */

static void
fk_image_free (struct fk_image *img)
{
  for (int i = 0; i < img->nfuncs; i++)
    free (img->funcs[i].name);
  for (int i = 0; i < img->nglobals; i++)
    {
      free (img->globals[i].name);
      free (img->globals[i].init);
    }
  free (img->funcs);
  free (img->globals);
  memset (img, 0, sizeof *img);
}

static struct fk_func *
fk_add_func (struct fk_image *img, const char *name, size_t len)
{
  for (int i = 0; i < img->nfuncs; i++)
    if (strlen (img->funcs[i].name) == len
	&& memcmp (img->funcs[i].name, name, len) == 0)
      return NULL;		/* A second definition; the first wins.  */
  struct fk_func *nf = realloc (img->funcs, (size_t) (img->nfuncs + 1)
				* sizeof *nf);
  if (nf == NULL)
    return NULL;
  img->funcs = nf;
  struct fk_func *f = &nf[img->nfuncs++];
  memset (f, 0, sizeof *f);
  f->name = strndup (name, len);
  f->regs = 32;
  f->max_threads = 1024;
  return f;
}

static struct fk_global *
fk_add_global (struct fk_image *img, const char *name, size_t len,
	       size_t size)
{
  for (int i = 0; i < img->nglobals; i++)
    if (strlen (img->globals[i].name) == len
	&& memcmp (img->globals[i].name, name, len) == 0)
      return NULL;
  struct fk_global *ng = realloc (img->globals, (size_t) (img->nglobals + 1)
				  * sizeof *ng);
  if (ng == NULL)
    return NULL;
  img->globals = ng;
  struct fk_global *g = &ng[img->nglobals++];
  memset (g, 0, sizeof *g);
  g->name = strndup (name, len);
  g->size = size;
  return g;
}

/* A PTX token: a word (directive, identifier, number) or one punctuation
   character.  */
struct fk_tok
{
  const char *s;
  size_t len;
  int line;
};

static bool
fk_word_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	 || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%'
	 || c == '.';
}

/* Split TEXT[0, LEN) into tokens, without comments and strings.  */
static struct fk_tok *
fk_tokenize (const char *text, size_t len, size_t *ntok)
{
  size_t cap = 256, n = 0;
  struct fk_tok *t = malloc (cap * sizeof *t);
  int line = 1;
  size_t i = 0;
  while (t != NULL && i < len)
    {
      char c = text[i];
      if (c == '\n')
	{
	  line++;
	  i++;
	  continue;
	}
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
	{
	  i++;
	  continue;
	}
      if (c == '/' && i + 1 < len && text[i + 1] == '/')
	{
	  while (i < len && text[i] != '\n')
	    i++;
	  continue;
	}
      if (c == '/' && i + 1 < len && text[i + 1] == '*')
	{
	  i += 2;
	  while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/'))
	    line += text[i++] == '\n';
	  i += 2;
	  continue;
	}
      if (c == '"')
	{
	  i++;
	  while (i < len && text[i] != '"' && text[i] != '\n')
	    i += text[i] == '\\' ? 2 : 1;
	  i++;
	  continue;
	}
      if (n == cap)
	{
	  cap *= 2;
	  struct fk_tok *nt = realloc (t, cap * sizeof *t);
	  if (nt == NULL)
	    {
	      free (t);
	      return NULL;
	    }
	  t = nt;
	}
      size_t start = i;
      if (fk_word_char (c))
	while (i < len && fk_word_char (text[i]))
	  i++;
      else
	i++;
      t[n++] = (struct fk_tok) { text + start, i - start, line };
    }
  *ntok = n;
  return t;
}

static bool
fk_tok_is (const struct fk_tok *t, const char *s)
{
  return t->len == strlen (s) && memcmp (t->s, s, t->len) == 0;
}

/* Bytes of a PTX fundamental type directive, 0 if T is none.  */
static size_t
fk_type_size (const struct fk_tok *t)
{
  static const struct { const char *n; size_t s; } types[] = {
    { ".u8", 1 }, { ".s8", 1 }, { ".b8", 1 }, { ".pred", 1 },
    { ".u16", 2 }, { ".s16", 2 }, { ".b16", 2 }, { ".f16", 2 },
    { ".u32", 4 }, { ".s32", 4 }, { ".b32", 4 }, { ".f32", 4 },
    { ".u64", 8 }, { ".s64", 8 }, { ".b64", 8 }, { ".f64", 8 },
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (fk_tok_is (t, types[i].n))
      return types[i].s;
  return 0;
}

static unsigned long long
fk_tok_ull (const struct fk_tok *t, bool *ok)
{
  char buf[64];
  if (t->len == 0 || t->len >= sizeof buf)
    {
      *ok = false;
      return 0;
    }
  memcpy (buf, t->s, t->len);
  buf[t->len] = '\0';
  char *end;
  errno = 0;
  unsigned long long v = strtoull (buf, &end, 0);
  *ok = errno == 0 && *end == '\0';
  return v;
}

/* Store the initialiser tokens T[0, N) of a global of elements of ESIZE
   bytes (float if IS_FLOAT) into G->init, as far as they are plain
   numbers.  */
static void
fk_parse_init (struct fk_global *g, const struct fk_tok *t, size_t n,
	       size_t esize, bool is_float)
{
  if (g->size == 0 || esize == 0)
    return;
  g->init = calloc (1, g->size);
  if (g->init == NULL)
    return;
  size_t off = 0;
  bool neg = false;
  for (size_t i = 0; i < n && off + esize <= g->size; i++)
    {
      if (fk_tok_is (&t[i], "{") || fk_tok_is (&t[i], "}")
	  || fk_tok_is (&t[i], ","))
	continue;
      if (fk_tok_is (&t[i], "-"))
	{
	  neg = true;
	  continue;
	}
      char buf[64];
      if (t[i].len >= sizeof buf)
	return;
      memcpy (buf, t[i].s, t[i].len);
      buf[t[i].len] = '\0';
      unsigned long long bits;
      char *end;
      if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D'
			      || buf[1] == 'f' || buf[1] == 'F'))
	{
	  /* PTX's exact float forms: 0dHHHHHHHHHHHHHHHH, 0fHHHHHHHH.  */
	  bits = strtoull (buf + 2, &end, 16);
	  if (*end != '\0')
	    return;
	}
      else if (is_float || strpbrk (buf, ".eE") != NULL)
	{
	  double d = strtod (buf, &end);
	  if (*end != '\0')
	    return;
	  if (neg)
	    d = -d;
	  if (esize == 4)
	    {
	      float f = (float) d;
	      uint32_t u;
	      memcpy (&u, &f, 4);
	      bits = u;
	    }
	  else
	    memcpy (&bits, &d, 8);
	  neg = false;
	}
      else
	{
	  errno = 0;
	  bits = strtoull (buf, &end, 0);
	  if (*end != '\0' || errno != 0)
	    return;	/* A symbol or generic(): leave the rest zero.  */
	  if (neg)
	    bits = -bits;
	  neg = false;
	}
      memcpy (g->init + off, &bits, esize);	/* Little-endian host.  */
      off += esize;
    }
}

/* Parse PTX TEXT[0, LEN) into IMG.  On error, return the CUresult and
   describe it in ERR ("fake ptxas: ...").  */
static CUresult
fk_parse_ptx (const char *text, size_t len, struct fk_image *img, char *err,
	      size_t errlen)
{
  size_t n;
  struct fk_tok *t = fk_tokenize (text, len, &n);
  if (t == NULL)
    {
      snprintf (err, errlen, "fake ptxas: out of memory");
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  CUresult res = CUDA_SUCCESS;
  bool version = false;
  int depth = 0;
  size_t i = 0;
  while (i < n && res == CUDA_SUCCESS)
    {
      /* Line directives without a terminating ';'.  */
      if (fk_tok_is (&t[i], ".version"))
	{
	  version = true;
	  i += 2;
	  continue;
	}
      if (fk_tok_is (&t[i], ".address_size"))
	{
	  i += 2;
	  continue;
	}
      if (fk_tok_is (&t[i], ".target"))
	{
	  i++;
	  for (; i < n; i++)
	    {
	      if (t[i].len > 3 && memcmp (t[i].s, "sm_", 3) == 0)
		{
		  int sm = atoi (t[i].s + 3);
		  if (sm > img->target_sm)
		    img->target_sm = sm;
		  if (sm > fk_sm)
		    {
		      snprintf (err, errlen, "fake ptxas: line %d: .target"
				" sm_%d is newer than the device (sm_%d)",
				t[i].line, sm, fk_sm);
		      res = CUDA_ERROR_INVALID_PTX;
		    }
		}
	      if (i + 1 < n && fk_tok_is (&t[i + 1], ","))
		i++;
	      else
		{
		  i++;
		  break;
		}
	    }
	  continue;
	}
      if (fk_tok_is (&t[i], ".file") || fk_tok_is (&t[i], ".loc"))
	{
	  /* Debug directives: a few numbers on one line.  */
	  int line = t[i].line;
	  i++;
	  while (i < n && t[i].line == line)
	    i++;
	  continue;
	}
      if (fk_tok_is (&t[i], "}"))
	{
	  snprintf (err, errlen, "fake ptxas: line %d: unbalanced '}'",
		    t[i].line);
	  res = CUDA_ERROR_INVALID_PTX;
	  break;
	}
      if (fk_tok_is (&t[i], "{"))
	{
	  /* A bare block at file scope: skip it.  */
	  depth = 0;
	  for (; i < n; i++)
	    if (fk_tok_is (&t[i], "{"))
	      depth++;
	    else if (fk_tok_is (&t[i], "}") && --depth == 0)
	      break;
	  if (depth != 0)
	    {
	      snprintf (err, errlen, "fake ptxas: unbalanced braces: '{' not"
			" closed at the end of the module");
	      res = CUDA_ERROR_INVALID_PTX;
	    }
	  i++;
	  continue;
	}

      /* One statement: up to ';' or, for a function or section, its
	 body.  */
      size_t s = i;
      bool is_func = false, is_entry = false, is_extern = false;
      bool is_var = false, is_section = false;
      while (i < n && !fk_tok_is (&t[i], ";"))
	{
	  if (fk_tok_is (&t[i], ".entry"))
	    is_func = is_entry = true;
	  else if (fk_tok_is (&t[i], ".func"))
	    is_func = true;
	  else if (fk_tok_is (&t[i], ".extern"))
	    is_extern = true;
	  else if (fk_tok_is (&t[i], ".section"))
	    is_section = true;
	  else if ((fk_tok_is (&t[i], ".global")
		    || fk_tok_is (&t[i], ".const")) && !is_func)
	    is_var = true;
	  if (fk_tok_is (&t[i], "{") && (is_func || is_section))
	    break;
	  if (fk_tok_is (&t[i], "{"))
	    {
	      /* An initialiser: skip to its end.  */
	      int d = 0;
	      for (; i < n; i++)
		if (fk_tok_is (&t[i], "{"))
		  d++;
		else if (fk_tok_is (&t[i], "}") && --d == 0)
		  break;
	      if (d != 0)
		break;
	    }
	  i++;
	}
      size_t e = i;		/* T[e] is ';' or '{' (or the end).  */
      if (i >= n)
	{
	  if (is_func || is_section || e > s)
	    {
	      snprintf (err, errlen, "fake ptxas: line %d: statement not"
			" terminated (unbalanced braces?)",
			t[n > 0 ? n - 1 : 0].line);
	      res = CUDA_ERROR_INVALID_PTX;
	    }
	  break;
	}
      if (fk_tok_is (&t[i], "{"))
	{
	  /* Skip the body.  */
	  int d = 0;
	  for (; i < n; i++)
	    if (fk_tok_is (&t[i], "{"))
	      d++;
	    else if (fk_tok_is (&t[i], "}") && --d == 0)
	      break;
	  if (d != 0)
	    {
	      snprintf (err, errlen, "fake ptxas: unbalanced braces: body of"
			" the statement at line %d not closed", t[s].line);
	      res = CUDA_ERROR_INVALID_PTX;
	      break;
	    }
	}
      i++;

      if (is_entry && !is_extern)
	{
	  size_t k = s;
	  while (k < e && !fk_tok_is (&t[k], ".entry"))
	    k++;
	  if (k + 1 >= e)
	    continue;
	  struct fk_func *f = fk_add_func (img, t[k + 1].s, t[k + 1].len);
	  if (f == NULL)
	    continue;
	  k += 2;
	  if (k < e && fk_tok_is (&t[k], "("))
	    {
	      for (; k < e && !fk_tok_is (&t[k], ")"); k++)
		if (fk_tok_is (&t[k], ".param") && f->nparams < 16)
		  {
		    size_t sz = 0, count = 1;
		    for (size_t m = k + 1; m < e && !fk_tok_is (&t[m], ",")
			 && !fk_tok_is (&t[m], ")"); m++)
		      {
			if (sz == 0)
			  sz = fk_type_size (&t[m]);
			if (fk_tok_is (&t[m], "[") && m + 1 < e)
			  {
			    bool ok;
			    unsigned long long c = fk_tok_ull (&t[m + 1], &ok);
			    if (ok)
			      count *= c;
			  }
		      }
		    f->param_size[f->nparams++] = sz * count;
		  }
	    }
	  for (; k < e; k++)
	    {
	      bool ok;
	      if (fk_tok_is (&t[k], ".maxnreg") && k + 1 < e)
		{
		  unsigned long long v = fk_tok_ull (&t[k + 1], &ok);
		  if (ok)
		    f->regs = (int) v;
		}
	      else if ((fk_tok_is (&t[k], ".maxntid")
			|| fk_tok_is (&t[k], ".reqntid")) && k + 1 < e)
		{
		  unsigned long long p = 1;
		  for (size_t m = k + 1; m < e; m += 2)
		    {
		      unsigned long long v = fk_tok_ull (&t[m], &ok);
		      if (!ok)
			break;
		      p *= v;
		      if (m + 1 >= e || !fk_tok_is (&t[m + 1], ","))
			break;
		    }
		  f->max_threads = (int) p;
		}
	    }
	}
      else if (is_var && !is_extern && !is_func)
	{
	  size_t esize = 0, k = s;
	  bool is_float = false;
	  for (; k < e; k++)
	    if ((esize = fk_type_size (&t[k])) != 0)
	      {
		is_float = t[k].s[1] == 'f';
		break;
	      }
	  if (esize == 0 || k + 1 >= e)
	    continue;
	  const struct fk_tok *name = &t[k + 1];
	  size_t count = 1, m = k + 2;
	  bool open = false;
	  while (m < e && fk_tok_is (&t[m], "["))
	    {
	      bool ok;
	      unsigned long long c = fk_tok_ull (&t[m + 1], &ok);
	      if (ok && m + 2 < e && fk_tok_is (&t[m + 2], "]"))
		{
		  count *= c;
		  m += 3;
		}
	      else
		{
		  open = true;	/* [] sized by the initialiser.  */
		  m += 2;
		}
	    }
	  size_t init_start = m;
	  if (open)
	    {
	      size_t vals = 0;
	      for (size_t q = m; q < e; q++)
		if (!fk_tok_is (&t[q], "{") && !fk_tok_is (&t[q], "}")
		    && !fk_tok_is (&t[q], ",") && !fk_tok_is (&t[q], "=")
		    && !fk_tok_is (&t[q], "-"))
		  vals++;
	      count = vals;
	    }
	  struct fk_global *g = fk_add_global (img, name->s, name->len,
					       esize * count);
	  if (g != NULL && init_start < e && fk_tok_is (&t[init_start], "="))
	    fk_parse_init (g, &t[init_start + 1], e - init_start - 1, esize,
			   is_float);
	}
    }
  if (res == CUDA_SUCCESS && !version)
    {
      snprintf (err, errlen, "fake ptxas: no .version directive: not PTX");
      res = CUDA_ERROR_INVALID_PTX;
    }
  free (t);
  return res;
}

/* The size of the ELF image at IMAGE, from its headers; 0 if it does not
   look like one.  */
static size_t
fk_elf_size (const unsigned char *image)
{
  if (memcmp (image, ELFMAG, SELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64)
    return 0;
  Elf64_Ehdr eh;
  memcpy (&eh, image, sizeof eh);
  if (eh.e_shentsize != sizeof (Elf64_Shdr) || eh.e_shoff > (1u << 30))
    return 0;
  size_t end = eh.e_shoff + (size_t) eh.e_shnum * sizeof (Elf64_Shdr);
  if (eh.e_phnum > 0 && eh.e_phoff < (1u << 30)
      && eh.e_phoff + (size_t) eh.e_phnum * eh.e_phentsize > end)
    end = eh.e_phoff + (size_t) eh.e_phnum * eh.e_phentsize;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh;
      memcpy (&sh, image + eh.e_shoff + i * sizeof sh, sizeof sh);
      if (sh.sh_type != SHT_NOBITS && sh.sh_offset < (1u << 30)
	  && sh.sh_size < (1u << 30) && sh.sh_offset + sh.sh_size > end)
	end = sh.sh_offset + sh.sh_size;
    }
  return end;
}

/* The SM architecture a cubin's e_flags give.  CUDA 13's ptxas writes ELF
   ABI version 8 with the architecture in bits 8-15 (sm_90: 0x6005a04);
   earlier cubins (ABI version 7 and below) have it in bits 0-7 and the
   virtual architecture in bits 16-23 (sm_80: 0x500550).  */
static int
fk_cubin_sm (unsigned abiversion, unsigned long flags)
{
  if (abiversion >= 8)
    return (int) ((flags >> 8) & 0xff);
  return (int) (flags & 0xff);
}

/* Whether code for SM runs on the device: same major, minor not newer.  */
static bool
fk_sm_runs (int sm)
{
  return sm / 10 == fk_sm / 10 && sm % 10 <= fk_sm % 10;
}

static CUresult
fk_parse_cubin (const unsigned char *image, size_t size,
		struct fk_image *img, char *err, size_t errlen)
{
  if (size < sizeof (Elf64_Ehdr) || memcmp (image, ELFMAG, SELFMAG) != 0
      || image[EI_CLASS] != ELFCLASS64)
    {
      snprintf (err, errlen, "fake cubin loader: not an ELF64 image");
      return CUDA_ERROR_INVALID_IMAGE;
    }
  /* libelf may want to write; give it a copy.  */
  char *copy = malloc (size);
  if (copy == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy (copy, image, size);
  elf_version (EV_CURRENT);
  Elf *elf = elf_memory (copy, size);
  CUresult res = CUDA_SUCCESS;
  GElf_Ehdr eh;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF
      || gelf_getehdr (elf, &eh) == NULL)
    {
      snprintf (err, errlen, "fake cubin loader: corrupt ELF: %s",
		elf_errmsg (-1));
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  if (eh.e_machine != FK_EM_CUDA)
    {
      snprintf (err, errlen, "fake cubin loader: e_machine %u, not EM_CUDA",
		eh.e_machine);
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  int sm = fk_cubin_sm (eh.e_ident[EI_ABIVERSION], eh.e_flags);
  if (sm > img->target_sm)
    img->target_sm = sm;
  if (!fk_sm_runs (sm))
    {
      snprintf (err, errlen, "fake cubin loader: cubin for sm_%d cannot run"
		" on sm_%d", sm, fk_sm);
      res = CUDA_ERROR_NO_BINARY_FOR_GPU;
      goto out;
    }
  size_t shstrndx;
  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    {
      snprintf (err, errlen, "fake cubin loader: corrupt ELF: %s",
		elf_errmsg (-1));
      res = CUDA_ERROR_INVALID_IMAGE;
      goto out;
    }
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
	continue;
      Elf_Data *data = elf_getdata (scn, NULL);
      if (data == NULL || sh.sh_entsize == 0)
	{
	  snprintf (err, errlen, "fake cubin loader: corrupt symbol table");
	  res = CUDA_ERROR_INVALID_IMAGE;
	  goto out;
	}
      size_t nsyms = sh.sh_size / sh.sh_entsize;
      /* Real cubins mark kernels (entry points) with STO_CUDA_ENTRY in
	 st_other; their other functions are not launchable.  Without any
	 mark, every function counts.  */
      bool marked = false;
      for (size_t k = 0; k < nsyms; k++)
	{
	  GElf_Sym sym;
	  if (gelf_getsym (data, (int) k, &sym) != NULL
	      && GELF_ST_TYPE (sym.st_info) == STT_FUNC
	      && (sym.st_other & FK_STO_CUDA_ENTRY))
	    marked = true;
	}
      for (size_t k = 0; k < nsyms; k++)
	{
	  GElf_Sym sym;
	  if (gelf_getsym (data, (int) k, &sym) == NULL
	      || sym.st_shndx == SHN_UNDEF)
	    continue;
	  const char *name = elf_strptr (elf, sh.sh_link, sym.st_name);
	  if (name == NULL || *name == '\0')
	    continue;
	  int type = GELF_ST_TYPE (sym.st_info);
	  if (type == STT_FUNC
	      && (!marked || (sym.st_other & FK_STO_CUDA_ENTRY)))
	    {
	      /* Kernel parameters are not recorded in a form we read; assume
		 GCC's three 64-bit ones.  */
	      struct fk_func *f = fk_add_func (img, name, strlen (name));
	      if (f != NULL)
		{
		  f->nparams = 3;
		  f->param_size[0] = f->param_size[1] = f->param_size[2] = 8;
		}
	    }
	  else if (type == STT_OBJECT)
	    {
	      struct fk_global *g = fk_add_global (img, name, strlen (name),
						   sym.st_size);
	      Elf_Scn *ds = elf_getscn (elf, sym.st_shndx);
	      GElf_Shdr dsh;
	      Elf_Data *dd;
	      if (g != NULL && g->size > 0 && ds != NULL
		  && gelf_getshdr (ds, &dsh) != NULL
		  && dsh.sh_type == SHT_PROGBITS
		  && (dd = elf_getdata (ds, NULL)) != NULL
		  && sym.st_value <= dd->d_size
		  && g->size <= dd->d_size - sym.st_value
		  && (g->init = malloc (g->size)) != NULL)
		memcpy (g->init, (char *) dd->d_buf + sym.st_value, g->size);
	    }
	}
    }
 out:
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  return res;
}

/* Parse one input of type TYPE (PTX text or cubin).  */
static CUresult
fk_parse_input (int type, const unsigned char *data, size_t size,
		struct fk_image *img, char *err, size_t errlen)
{
  if (type == FK_JIT_INPUT_CUBIN)
    return fk_parse_cubin (data, size, img, err, errlen);
  size_t len = strnlen ((const char *) data, size);
  return fk_parse_ptx ((const char *) data, len, img, err, errlen);
}

/* Parse what cuModuleLoadData gets: a cubin, a linked image of ours, or
   NUL-terminated PTX text.  */
static CUresult
fk_parse_module_image (const void *image, struct fk_image *img,
		       const char **kind, char *err, size_t errlen)
{
  const unsigned char *p = image;
  if (memcmp (p, ELFMAG, SELFMAG) == 0)
    {
      *kind = "cubin";
      size_t size = fk_elf_size (p);
      if (size == 0)
	{
	  snprintf (err, errlen, "fake cubin loader: corrupt ELF header");
	  return CUDA_ERROR_INVALID_IMAGE;
	}
      return fk_parse_cubin (p, size, img, err, errlen);
    }
  if (memcmp (p, fk_linked_magic, sizeof fk_linked_magic) == 0)
    {
      *kind = "linked";
      uint32_t count;
      memcpy (&count, p + 16, 4);
      size_t off = 24;
      for (uint32_t i = 0; i < count; i++)
	{
	  uint32_t type;
	  uint64_t size;
	  memcpy (&type, p + off, 4);
	  memcpy (&size, p + off + 8, 8);
	  off += 16;
	  CUresult r = fk_parse_input ((int) type, p + off, size, img, err,
				       errlen);
	  if (r != CUDA_SUCCESS)
	    return r;
	  off += size;
	}
      return CUDA_SUCCESS;
    }
  *kind = "ptx";
  return fk_parse_ptx ((const char *) p, strlen ((const char *) p), img, err,
		       errlen);
}

/* Copy a log text into a JIT log buffer and report its length back.  */
static void
fk_put_log (char *buf, size_t size, size_t *size_out, const char *text)
{
  if (buf == NULL || size == 0)
    return;
  snprintf (buf, size, "%s", text);
  if (size_out != NULL)
    *size_out = strlen (buf) + 1;
}

/* ------------------------------------------------------------------ */
/* Modules.  */

/* Free module M with the device copies of its globals.  */
static void
fk_module_free (struct fk_module *m)
{
  for (int i = 0; i < m->img.nglobals; i++)
    if (m->img.globals[i].addr != 0)
      fk_block_free (m->img.globals[i].addr, FK_GLOBAL);
  fk_image_free (&m->img);
  free (m);
}

/* Make a module of IMG (taken over) in the current context: allocate and
   initialise its globals.  */
static CUresult
fk_module_new (struct fk_image *img, const char *kind, CUmodule *out)
{
  struct fk_module *m = calloc (1, sizeof *m);
  if (m == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m->ctx = fk_current ();
  m->img = *img;
  memset (img, 0, sizeof *img);
  for (int i = 0; i < m->img.nfuncs; i++)
    m->img.funcs[i].module = m;
  char line[900];
  int len = snprintf (line, sizeof line, "module load %p %s kernels=",
		      (void *) m, kind);
  for (int i = 0; i < m->img.nfuncs && len < (int) sizeof line; i++)
    len += snprintf (line + len, sizeof line - (size_t) len, "%s%s",
		     i ? "," : "", m->img.funcs[i].name);
  if (len < (int) sizeof line)
    len += snprintf (line + len, sizeof line - (size_t) len, " globals=");
  for (int i = 0; i < m->img.nglobals; i++)
    {
      struct fk_global *g = &m->img.globals[i];
      void *p = fk_block_new (g->size, FK_GLOBAL, m->ctx);
      if (p == NULL)
	{
	  fk_module_free (m);
	  return CUDA_ERROR_OUT_OF_MEMORY;
	}
      if (g->init != NULL)
	memcpy (p, g->init, g->size);
      else
	memset (p, 0, g->size);
      g->addr = (uintptr_t) p;
      if (len < (int) sizeof line)
	len += snprintf (line + len, sizeof line - (size_t) len, "%s%s:%zu",
			 i ? "," : "", g->name, g->size);
    }
  if (!fake_handle_add (&fk_handles, FK_H_MODULE, m))
    {
      fk_module_free (m);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  fk_log ("%s", line);
  *out = m;
  return CUDA_SUCCESS;
}

static CUresult
fk_module_load (int sym, CUmodule *module, const void *image,
		unsigned nopts, CUjit_option *opts, void **vals)
{
  if (module == NULL || image == NULL)
    {
      fk_bad (sym, "NULL %s", module == NULL ? "module pointer" : "image");
      return CUDA_ERROR_INVALID_VALUE;
    }
  struct fk_image img = { 0 };
  char err[512] = "";
  const char *kind = "?";
  CUresult r = fk_parse_module_image (image, &img, &kind, err, sizeof err);
  if (r != CUDA_SUCCESS)
    {
      fk_log ("module load failed: %d: %s", r, err);
      char *eb = NULL;
      size_t es = 0;
      size_t *eso = NULL;
      for (unsigned i = 0; i < nopts && opts != NULL && vals != NULL; i++)
	if (opts[i] == FK_JIT_ERROR_LOG_BUFFER)
	  eb = vals[i];
	else if (opts[i] == FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
	  {
	    es = (size_t) (uintptr_t) vals[i];
	    eso = (size_t *) &vals[i];
	  }
      fk_put_log (eb, es, eso, err);
      fk_image_free (&img);
      return r;
    }
  return fk_module_new (&img, kind, module);
}

CUresult
cuModuleLoadData (CUmodule *module, const void *image)
{
  ENTER (cuModuleLoadData);
  NEED_CTX (cuModuleLoadData);
  RETURN (fk_module_load (FK_cuModuleLoadData, module, image, 0, NULL, NULL));
}

CUresult
cuModuleLoadDataEx (CUmodule *module, const void *image, unsigned int nopts,
		    CUjit_option *opts, void **vals)
{
  CUresult e = fk_enter (FK_cuModuleLoadDataEx);
  if (e != CUDA_SUCCESS)
    {
      for (unsigned i = 0; i < nopts && opts != NULL && vals != NULL; i++)
	if (opts[i] == FK_JIT_ERROR_LOG_BUFFER)
	  for (unsigned j = 0; j < nopts; j++)
	    if (opts[j] == FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
	      fk_put_log (vals[i], (size_t) (uintptr_t) vals[j],
			  (size_t *) &vals[j],
			  "fake ptxas: injected failure of"
			  " cuModuleLoadDataEx");
      return e;
    }
  NEED_CTX (cuModuleLoadDataEx);
  RETURN (fk_module_load (FK_cuModuleLoadDataEx, module, image, nopts, opts,
			  vals));
}

static struct fk_module *
fk_module_find (CUmodule m)
{
  return fake_handle_get (&fk_handles, FK_H_MODULE, m);
}

CUresult
cuModuleUnload (CUmodule module)
{
  ENTER (cuModuleUnload);
  NEED_INIT (cuModuleUnload);
  if (!fake_handle_remove (&fk_handles, FK_H_MODULE, module))
    {
      fk_bad (FK_cuModuleUnload, "%p is not a loaded module", (void *) module);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  fk_log ("module unload %p", (void *) module);
  fk_module_free (module);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuModuleGetFunction (CUfunction *fn, CUmodule module, const char *name)
{
  ENTER (cuModuleGetFunction);
  NEED_INIT (cuModuleGetFunction);
  struct fk_module *m = fk_module_find (module);
  if (fn == NULL || name == NULL || m == NULL)
    {
      fk_bad (FK_cuModuleGetFunction, "%s", m == NULL ? "not a loaded module"
	      : "NULL argument");
      RETURN (m == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  for (int i = 0; i < m->img.nfuncs; i++)
    if (strcmp (m->img.funcs[i].name, name) == 0)
      {
	*fn = &m->img.funcs[i];
	RETURN (CUDA_SUCCESS);
      }
  RETURN (CUDA_ERROR_NOT_FOUND);
}

CUresult
cuModuleGetGlobal_v2 (CUdeviceptr *dptr, size_t *bytes, CUmodule module,
		      const char *name)
{
  ENTER (cuModuleGetGlobal_v2);
  NEED_INIT (cuModuleGetGlobal_v2);
  struct fk_module *m = fk_module_find (module);
  if (name == NULL || m == NULL)
    {
      fk_bad (FK_cuModuleGetGlobal_v2, "%s", m == NULL
	      ? "not a loaded module" : "NULL name");
      RETURN (m == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  for (int i = 0; i < m->img.nglobals; i++)
    if (strcmp (m->img.globals[i].name, name) == 0)
      {
	if (dptr != NULL)
	  *dptr = m->img.globals[i].addr;
	if (bytes != NULL)
	  *bytes = m->img.globals[i].size;
	RETURN (CUDA_SUCCESS);
      }
  RETURN (CUDA_ERROR_NOT_FOUND);
}

/* The most threads a block of F may have: its .maxntid, and what the
   registers of a block allow (as the driver reports it).  */
static int
fk_func_max_threads (const struct fk_func *f)
{
  int by_regs = f->regs > 0 ? (65536 / f->regs) & ~31 : 1024;
  int m = f->max_threads < by_regs ? f->max_threads : by_regs;
  return m < 1024 ? m : 1024;
}

/* The live function FN, or NULL.  */
static struct fk_func *
fk_func_find (CUfunction fn)
{
  struct fk_module *m;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_MODULE, m)
    if (fn >= m->img.funcs && fn < m->img.funcs + m->img.nfuncs)
      return fn;
  return NULL;
}

/* The function argument FN of SYM; NULL, reported as an invalid call,
   when it is not a function of a loaded module.  */
static struct fk_func *
fk_func_arg (int sym, CUfunction fn)
{
  struct fk_func *f = fk_func_find (fn);
  if (f == NULL)
    fk_bad (sym, "%p is not a live function", (void *) fn);
  return f;
}

CUresult
cuFuncGetAttribute (int *value, int attr, CUfunction fn)
{
  ENTER (cuFuncGetAttribute);
  NEED_INIT (cuFuncGetAttribute);
  struct fk_func *f = fk_func_arg (FK_cuFuncGetAttribute, fn);
  if (f == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (value == NULL || attr < 0 || attr >= FK_FUNC_MAX)
    {
      fk_bad (FK_cuFuncGetAttribute, "attribute %d", attr);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  switch (attr)
    {
    case FK_FUNC_MAX_THREADS_PER_BLOCK: *value = fk_func_max_threads (f);
      break;
    case FK_FUNC_NUM_REGS: *value = f->regs; break;
    case FK_FUNC_PTX_VERSION:
    case FK_FUNC_BINARY_VERSION: *value = fk_sm; break;
    default: *value = 0; break;
    }
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* The JIT linker.  */

static struct fk_link *
fk_link_find (CUlinkState s)
{
  return fake_handle_get (&fk_handles, FK_H_LINK, s);
}

CUresult
cuLinkCreate_v2 (unsigned int nopts, CUjit_option *opts, void **vals,
		 CUlinkState *out)
{
  ENTER (cuLinkCreate_v2);
  NEED_CTX (cuLinkCreate_v2);
  if (out == NULL || (nopts > 0 && (opts == NULL || vals == NULL)))
    {
      fk_bad (FK_cuLinkCreate_v2, "NULL argument");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_link *l = calloc (1, sizeof *l);
  if (l == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  for (unsigned i = 0; i < nopts; i++)
    {
      if (opts[i] < 0 || opts[i] >= FK_JIT_NUM_OPTIONS)
	{
	  fk_bad (FK_cuLinkCreate_v2, "JIT option %d", opts[i]);
	  free (l);
	  RETURN (CUDA_ERROR_INVALID_VALUE);
	}
      switch (opts[i])
	{
	case FK_JIT_ERROR_LOG_BUFFER:
	  l->error_log = vals[i];
	  break;
	case FK_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
	  l->error_log_size = (size_t) (uintptr_t) vals[i];
	  l->error_log_size_out = (size_t *) &vals[i];
	  break;
	case FK_JIT_INFO_LOG_BUFFER:
	  l->info_log = vals[i];
	  break;
	case FK_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
	  l->info_log_size = (size_t) (uintptr_t) vals[i];
	  l->info_log_size_out = (size_t *) &vals[i];
	  break;
	default:
	  break;
	}
    }
  l->ctx = fk_current ();
  if (!fake_handle_add (&fk_handles, FK_H_LINK, l))
    {
      free (l);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  *out = l;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuLinkAddData_v2 (CUlinkState state, CUjitInputType type, void *data,
		  size_t size, const char *name, unsigned int nopts,
		  CUjit_option *opts, void **vals)
{
  (void) nopts;
  (void) opts;
  (void) vals;
  CUresult e = fk_enter (FK_cuLinkAddData_v2);
  if (e != CUDA_SUCCESS)
    {
      pthread_mutex_lock (&fk_lock);
      struct fk_link *l = fk_link_find (state);
      if (l != NULL)
	fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out,
		    "fake ptxas: injected failure of cuLinkAddData_v2");
      pthread_mutex_unlock (&fk_lock);
      return e;
    }
  NEED_CTX (cuLinkAddData_v2);
  struct fk_link *l = fk_link_find (state);
  if (l == NULL)
    {
      fk_bad (FK_cuLinkAddData_v2, "%p is not a live link state",
	      (void *) state);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  if (data == NULL || size == 0
      || (type != FK_JIT_INPUT_PTX && type != FK_JIT_INPUT_CUBIN))
    {
      fk_bad (FK_cuLinkAddData_v2, "input %s: %s", name ? name : "(unnamed)",
	      data == NULL || size == 0 ? "no data"
	      : "input type not supported by the fake");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  /* Compile (check) at once, as the driver does.  */
  struct fk_image img = { 0 };
  char err[512] = "";
  CUresult r = fk_parse_input (type, data, size, &img, err, sizeof err);
  fk_image_free (&img);
  if (r != CUDA_SUCCESS)
    {
      char msg[700];
      snprintf (msg, sizeof msg, "%s (input %s)", err, name ? name : "?");
      fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out, msg);
      fk_log ("link add failed: %d: %s", r, msg);
      RETURN (r);
    }
  struct fk_link_input *ni = realloc (l->inputs, (size_t) (l->ninputs + 1)
				      * sizeof *ni);
  if (ni == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  l->inputs = ni;
  unsigned char *copy = malloc (size + 1);
  if (copy == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  memcpy (copy, data, size);
  copy[size] = '\0';
  ni[l->ninputs++] = (struct fk_link_input) { type, size + 1, copy };
  RETURN (CUDA_SUCCESS);
}

CUresult
cuLinkComplete (CUlinkState state, void **cubin, size_t *size)
{
  CUresult e = fk_enter (FK_cuLinkComplete);
  if (e != CUDA_SUCCESS)
    {
      pthread_mutex_lock (&fk_lock);
      struct fk_link *l = fk_link_find (state);
      if (l != NULL)
	fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out,
		    "fake ptxas: injected failure of cuLinkComplete");
      pthread_mutex_unlock (&fk_lock);
      return e;
    }
  NEED_CTX (cuLinkComplete);
  struct fk_link *l = fk_link_find (state);
  if (l == NULL || cubin == NULL || size == NULL)
    {
      fk_bad (FK_cuLinkComplete, "%s", l == NULL ? "not a live link state"
	      : "NULL result pointer");
      RETURN (l == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  if (l->ninputs == 0)
    {
      fk_put_log (l->error_log, l->error_log_size, l->error_log_size_out,
		  "fake nvlink: no input to link");
      fk_bad (FK_cuLinkComplete, "no inputs");
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  size_t total = 24;
  for (int i = 0; i < l->ninputs; i++)
    total += 16 + l->inputs[i].size;
  free (l->linked);
  l->linked = calloc (1, total);
  if (l->linked == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  memcpy (l->linked, fk_linked_magic, 16);
  uint32_t count = (uint32_t) l->ninputs;
  memcpy (l->linked + 16, &count, 4);
  size_t off = 24;
  for (int i = 0; i < l->ninputs; i++)
    {
      uint32_t type = (uint32_t) l->inputs[i].type;
      uint64_t sz = l->inputs[i].size;
      memcpy (l->linked + off, &type, 4);
      memcpy (l->linked + off + 8, &sz, 8);
      memcpy (l->linked + off + 16, l->inputs[i].data, sz);
      off += 16 + sz;
    }
  char info[128];
  snprintf (info, sizeof info, "fake nvlink info: linked %d input%s for"
	    " sm_%d", l->ninputs, l->ninputs == 1 ? "" : "s", fk_sm);
  fk_put_log (l->info_log, l->info_log_size, l->info_log_size_out, info);
  *cubin = l->linked;
  *size = total;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuLinkDestroy (CUlinkState state)
{
  ENTER (cuLinkDestroy);
  NEED_INIT (cuLinkDestroy);
  if (!fake_handle_remove (&fk_handles, FK_H_LINK, state))
    {
      fk_bad (FK_cuLinkDestroy, "%p is not a live link state", (void *) state);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  for (int i = 0; i < state->ninputs; i++)
    free (state->inputs[i].data);
  free (state->inputs);
  /* Poison what cuLinkComplete returned: it dies with the state.  */
  if (state->linked != NULL)
    memset (state->linked, 0xdd, 16);
  free (state->linked);
  free (state);
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Streams, events and host functions.  */

static struct fk_stream *
fk_stream_find (CUstream s)
{
  return fake_handle_get (&fk_handles, FK_H_STREAM, s);
}

CUresult
cuStreamCreate (CUstream *out, unsigned int flags)
{
  ENTER (cuStreamCreate);
  NEED_CTX (cuStreamCreate);
  if (out == NULL || (flags & ~FK_STREAM_NON_BLOCKING))
    {
      fk_bad (FK_cuStreamCreate, "bad arguments (flags %#x)", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_stream *s = calloc (1, sizeof *s);
  if (s == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  s->ctx = fk_current ();
  s->flags = flags;
  if (!fake_handle_add (&fk_handles, FK_H_STREAM, s))
    {
      free (s);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  *out = s;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuStreamDestroy_v2 (CUstream stream)
{
  ENTER (cuStreamDestroy_v2);
  NEED_INIT (cuStreamDestroy_v2);
  if (fk_stream_find (stream) == NULL)
    {
      fk_bad (FK_cuStreamDestroy_v2, "%p is not a live stream",
	      (void *) stream);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  /* Host functions still queued: the driver would run them first; so do
     we (they cannot use the stream).  */
  while (stream->callbacks > 0)
    pthread_cond_wait (&fk_cond, &fk_lock);
  fake_handle_remove (&fk_handles, FK_H_STREAM, stream);
  free (stream);
  RETURN (CUDA_SUCCESS);
}

/* Check the stream argument of a synchronisation or query: NULL and the
   special handles are fine.  */
#define NEED_STREAM(sym, s) \
  do { if ((s) != NULL && (s) != FK_STREAM_LEGACY \
	   && (s) != FK_STREAM_PER_THREAD && fk_stream_find (s) == NULL) \
	 { fk_bad (FK_##sym, "%p is not a live stream", (void *) (s)); \
	   RETURN (CUDA_ERROR_INVALID_HANDLE); } } while (0)

static bool
fk_is_real_stream (CUstream s)
{
  return s != NULL && s != FK_STREAM_LEGACY && s != FK_STREAM_PER_THREAD;
}

CUresult
cuStreamSynchronize (CUstream stream)
{
  ENTER (cuStreamSynchronize);
  NEED_INIT (cuStreamSynchronize);
  NEED_STREAM (cuStreamSynchronize, stream);
  if (fk_is_real_stream (stream))
    while (fk_stream_find (stream) != NULL
	   && (fk_stream_pending (stream) || stream->callbacks > 0))
      pthread_cond_wait (&fk_cond, &fk_lock);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuStreamQuery (CUstream stream)
{
  ENTER (cuStreamQuery);
  NEED_INIT (cuStreamQuery);
  NEED_STREAM (cuStreamQuery, stream);
  if (fk_is_real_stream (stream)
      && (fk_stream_pending (stream) || stream->callbacks > 0))
    RETURN (CUDA_ERROR_NOT_READY);
  RETURN (CUDA_SUCCESS);
}

static struct fk_event *
fk_event_find (CUevent e)
{
  return fake_handle_get (&fk_handles, FK_H_EVENT, e);
}

/* The event argument EV of SYM; NULL, reported as an invalid call, when
   it is not a live event.  */
static struct fk_event *
fk_event_arg (int sym, CUevent ev)
{
  struct fk_event *e = fk_event_find (ev);
  if (e == NULL)
    fk_bad (sym, "%p is not a live event", (void *) ev);
  return e;
}

static bool
fk_event_pending (struct fk_event *e)
{
  return e->busy && fk_gate_closed && e->busy_gen == fk_gate_gen;
}

CUresult
cuStreamWaitEvent (CUstream stream, CUevent event, unsigned int flags)
{
  ENTER (cuStreamWaitEvent);
  NEED_CTX (cuStreamWaitEvent);
  NEED_STREAM (cuStreamWaitEvent, stream);
  struct fk_event *e = fk_event_find (event);
  if (e == NULL || flags > 1)
    {
      fk_bad (FK_cuStreamWaitEvent, "%s", e == NULL ? "not a live event"
	      : "bad flags");
      RETURN (e == NULL ? CUDA_ERROR_INVALID_HANDLE
	      : CUDA_ERROR_INVALID_VALUE);
    }
  if (fk_is_real_stream (stream) && fk_event_pending (e))
    {
      stream->busy = true;
      stream->busy_gen = fk_gate_gen;
    }
  RETURN (CUDA_SUCCESS);
}

CUresult
cuEventCreate (CUevent *out, unsigned int flags)
{
  ENTER (cuEventCreate);
  NEED_CTX (cuEventCreate);
  if (out == NULL || (flags & ~7u))
    {
      fk_bad (FK_cuEventCreate, "bad arguments (flags %#x)", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  struct fk_event *e = calloc (1, sizeof *e);
  if (e == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  e->ctx = fk_current ();
  e->flags = flags;
  if (!fake_handle_add (&fk_handles, FK_H_EVENT, e))
    {
      free (e);
      RETURN (CUDA_ERROR_OUT_OF_MEMORY);
    }
  *out = e;
  RETURN (CUDA_SUCCESS);
}

CUresult
cuEventRecord (CUevent event, CUstream stream)
{
  ENTER (cuEventRecord);
  NEED_INIT (cuEventRecord);
  NEED_STREAM (cuEventRecord, stream);
  struct fk_event *e = fk_event_arg (FK_cuEventRecord, event);
  if (e == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  e->recorded = true;
  e->busy = fk_is_real_stream (stream) && fk_stream_pending (stream);
  e->busy_gen = fk_gate_gen;
  clock_gettime (CLOCK_MONOTONIC, &e->when);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuEventSynchronize (CUevent event)
{
  ENTER (cuEventSynchronize);
  NEED_INIT (cuEventSynchronize);
  struct fk_event *e = fk_event_arg (FK_cuEventSynchronize, event);
  if (e == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  while (fk_event_find (event) != NULL && fk_event_pending (e))
    pthread_cond_wait (&fk_cond, &fk_lock);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuEventQuery (CUevent event)
{
  ENTER (cuEventQuery);
  NEED_INIT (cuEventQuery);
  struct fk_event *e = fk_event_arg (FK_cuEventQuery, event);
  if (e == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  RETURN (fk_event_pending (e) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS);
}

static CUresult
fk_elapsed (int sym, float *ms, CUevent start, CUevent end)
{
  struct fk_event *a = fk_event_find (start), *b = fk_event_find (end);
  if (ms == NULL || a == NULL || b == NULL)
    {
      fk_bad (sym, "%s", ms == NULL ? "NULL result" : "not a live event");
      return ms == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    }
  if (!a->recorded || !b->recorded
      || ((a->flags | b->flags) & FK_EVENT_DISABLE_TIMING))
    {
      fk_bad (sym, "events not recorded, or without timing");
      return CUDA_ERROR_INVALID_HANDLE;
    }
  if (fk_event_pending (a) || fk_event_pending (b))
    return CUDA_ERROR_NOT_READY;
  *ms = (float) ((double) (b->when.tv_sec - a->when.tv_sec) * 1e3
		 + (double) (b->when.tv_nsec - a->when.tv_nsec) / 1e6);
  return CUDA_SUCCESS;
}

CUresult
cuEventElapsedTime (float *ms, CUevent start, CUevent end)
{
  ENTER (cuEventElapsedTime);
  NEED_INIT (cuEventElapsedTime);
  RETURN (fk_elapsed (FK_cuEventElapsedTime, ms, start, end));
}

CUresult
cuEventElapsedTime_v2 (float *ms, CUevent start, CUevent end)
{
  ENTER (cuEventElapsedTime_v2);
  NEED_INIT (cuEventElapsedTime_v2);
  RETURN (fk_elapsed (FK_cuEventElapsedTime_v2, ms, start, end));
}

CUresult
cuEventDestroy_v2 (CUevent event)
{
  ENTER (cuEventDestroy_v2);
  NEED_INIT (cuEventDestroy_v2);
  if (!fake_handle_remove (&fk_handles, FK_H_EVENT, event))
    {
      fk_bad (FK_cuEventDestroy_v2, "%p is not a live event", (void *) event);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  free (event);
  RETURN (CUDA_SUCCESS);
}

/* The driver's callback thread: runs queued host functions in order, each
   once the work before it on its stream is done.  */
static void *
fk_callback_thread (void *arg)
{
  (void) arg;
  pthread_mutex_lock (&fk_lock);
  for (;;)
    {
      while (!fk_cb_quit && (fk_cb_head == NULL
			     || (fk_cb_head->gated && fk_gate_closed
				 && fk_cb_head->gen == fk_gate_gen)))
	pthread_cond_wait (&fk_cond, &fk_lock);
      if (fk_cb_head == NULL)
	break;			/* Quitting with nothing left.  */
      struct fk_callback *cb = fk_cb_head;
      if (cb->gated && fk_gate_closed && cb->gen == fk_gate_gen)
	break;			/* Quitting: drop gated work.  */
      fk_cb_head = cb->next;
      if (fk_cb_head == NULL)
	fk_cb_tail = &fk_cb_head;
      pthread_mutex_unlock (&fk_lock);
      fk_in_callback = true;
      if (cb->host_fn != NULL)
	cb->host_fn (cb->data);
      else
	cb->stream_fn (cb->stream, CUDA_SUCCESS, cb->data);
      fk_in_callback = false;
      pthread_mutex_lock (&fk_lock);
      if (fk_is_real_stream (cb->stream))
	{
	  struct fk_stream *s = fk_stream_find (cb->stream);
	  if (s != NULL)
	    s->callbacks--;
	}
      free (cb);
      pthread_cond_broadcast (&fk_cond);
    }
  pthread_mutex_unlock (&fk_lock);
  return NULL;
}

static CUresult
fk_queue_callback (int sym, CUstream stream, CUhostFn hfn,
		   CUstreamCallback sfn, void *data)
{
  if ((hfn == NULL && sfn == NULL) || !fk_stream_ok (sym, stream))
    {
      fk_bad (sym, "no function or bad stream");
      return CUDA_ERROR_INVALID_VALUE;
    }
  struct fk_callback *cb = calloc (1, sizeof *cb);
  if (cb == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  cb->host_fn = hfn;
  cb->stream_fn = sfn;
  cb->stream = stream;
  cb->data = data;
  cb->gated = fk_is_real_stream (stream) && fk_stream_pending (stream);
  cb->gen = fk_gate_gen;
  if (!fk_cb_thread_started)
    {
      if (pthread_create (&fk_cb_thread, NULL, fk_callback_thread, NULL) != 0)
	{
	  free (cb);
	  return CUDA_ERROR_OUT_OF_MEMORY;
	}
      fk_cb_thread_started = true;
    }
  if (fk_is_real_stream (stream))
    stream->callbacks++;
  *fk_cb_tail = cb;
  fk_cb_tail = &cb->next;
  pthread_cond_broadcast (&fk_cond);
  return CUDA_SUCCESS;
}

CUresult
cuLaunchHostFunc (CUstream stream, CUhostFn fn, void *data)
{
  ENTER (cuLaunchHostFunc);
  NEED_CTX (cuLaunchHostFunc);
  RETURN (fk_queue_callback (FK_cuLaunchHostFunc, stream, fn, NULL, data));
}

CUresult
cuStreamAddCallback (CUstream stream, CUstreamCallback fn, void *data,
		     unsigned int flags)
{
  ENTER (cuStreamAddCallback);
  NEED_CTX (cuStreamAddCallback);
  if (flags != 0)
    {
      fk_bad (FK_cuStreamAddCallback, "flags %u, must be 0", flags);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  RETURN (fk_queue_callback (FK_cuStreamAddCallback, stream, NULL, fn, data));
}

/* ------------------------------------------------------------------ */
/* Launches.  */

CUresult
cuLaunchKernel (CUfunction fn, unsigned int gx, unsigned int gy,
		unsigned int gz, unsigned int bx, unsigned int by,
		unsigned int bz, unsigned int shmem, CUstream stream,
		void **params, void **extra)
{
  ENTER (cuLaunchKernel);
  NEED_CTX (cuLaunchKernel);
  struct fk_func *f = fk_func_arg (FK_cuLaunchKernel, fn);
  if (f == NULL)
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (f->module->ctx != fk_current ())
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s belongs to device %d's context,"
	      " current is device %d's", f->name, f->module->ctx->device,
	      fk_current ()->device);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  if (!fk_stream_ok (FK_cuLaunchKernel, stream))
    RETURN (CUDA_ERROR_INVALID_HANDLE);
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0
      || bx > 1024 || by > 1024 || bz > 64 || gy > 65535 || gz > 65535
      || gx > 2147483647u || shmem > 49152)
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: bad grid %ux%ux%u / block"
	      " %ux%ux%u / shared %u", f->name, gx, gy, gz, bx, by, bz, shmem);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }
  if ((unsigned long) bx * by * bz > (unsigned long) fk_func_max_threads (f))
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: block %ux%ux%u exceeds its %d"
	      " threads (%d registers each)", f->name, bx, by, bz,
	      fk_func_max_threads (f), f->regs);
      RETURN (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    }

  /* The parameter values.  */
  unsigned long long vals[4] = { 0, 0, 0, 0 };
  if (params != NULL)
    {
      for (int i = 0; i < f->nparams && i < 4; i++)
	if (f->param_size[i] > 0 && f->param_size[i] <= 8)
	  {
	    if (params[i] == NULL)
	      {
		fk_bad (FK_cuLaunchKernel, "kernel %s: parameter %d missing",
			f->name, i);
		RETURN (CUDA_ERROR_INVALID_VALUE);
	      }
	    memcpy (&vals[i], params[i], f->param_size[i]);
	  }
    }
  else if (extra != NULL)
    {
      const unsigned char *buf = NULL;
      size_t bufsize = 0;
      for (int i = 0; extra[i] != NULL; i += 2)
	if (extra[i] == FK_LAUNCH_PARAM_BUFFER_POINTER)
	  buf = extra[i + 1];
	else if (extra[i] == FK_LAUNCH_PARAM_BUFFER_SIZE)
	  bufsize = *(size_t *) extra[i + 1];
      size_t off = 0;
      for (int i = 0; buf != NULL && i < f->nparams && i < 4; i++)
	{
	  size_t sz = f->param_size[i];
	  if (sz == 0 || sz > 8)
	    break;
	  off = (off + sz - 1) & ~(sz - 1);
	  if (off + sz > bufsize)
	    {
	      fk_bad (FK_cuLaunchKernel, "kernel %s: parameter buffer of %zu"
		      " bytes too small", f->name, bufsize);
	      RETURN (CUDA_ERROR_INVALID_VALUE);
	    }
	  memcpy (&vals[i], buf + off, sz);
	  off += sz;
	}
    }
  else if (f->nparams > 0)
    {
      fk_bad (FK_cuLaunchKernel, "kernel %s: no parameters given, it takes"
	      " %d", f->name, f->nparams);
      RETURN (CUDA_ERROR_INVALID_VALUE);
    }

  /* GCC's OpenMP entry kernels take (tgt_vars, soft-stack base, per-warp
     stack size), with one stack per warp of the launch: the stacks must be
     live device memory, large enough.  */
  if (f->nparams == 3 && f->param_size[0] == 8 && f->param_size[1] == 8
      && f->param_size[2] == 8)
    {
      if (vals[0] != 0 && !fk_device_range ((uintptr_t) vals[0], 1))
	{
	  fk_bad (FK_cuLaunchKernel, "kernel %s: tgt_vars %#llx is not device"
		  " memory", f->name, vals[0]);
	  RETURN (CUDA_ERROR_INVALID_VALUE);
	}
      unsigned long long need = (unsigned long long) gx * by * vals[2];
      if (vals[1] == 0 || vals[2] == 0
	  || !fk_device_range ((uintptr_t) vals[1], need))
	{
	  fk_bad (FK_cuLaunchKernel, "kernel %s: soft stacks at %#llx do not"
		  " hold %u x %u warps of %llu bytes", f->name, vals[1], gx,
		  by, vals[2]);
	  RETURN (CUDA_ERROR_INVALID_VALUE);
	}
    }

  if (!fake_table_room (&fk_launches, &fk_launches_cap, fk_nlaunches,
			sizeof *fk_launches, 64))
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  struct fk_launch *l = &fk_launches[fk_nlaunches++];
  memset (l, 0, sizeof *l);
  snprintf (l->name, sizeof l->name, "%s", f->name);
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
  l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
  l->shmem = shmem;
  l->stream = (uintptr_t) stream;
  l->stream_flags = fk_is_real_stream (stream) ? stream->flags : 0;
  l->nparams = f->nparams;
  memcpy (l->params, vals, sizeof vals);
  l->device = fk_current ()->device;
  if (fk_is_real_stream (stream) && fk_gate_closed)
    {
      stream->busy = true;
      stream->busy_gen = fk_gate_gen;
    }
  fk_log ("launch %s grid %u,%u,%u block %u,%u,%u shmem %u stream %p"
	  " params %#llx,%#llx,%#llx", f->name, gx, gy, gz, bx, by, bz, shmem,
	  (void *) stream, vals[0], vals[1], vals[2]);
  RETURN (CUDA_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* For tests that load this library themselves.  */

/* Replace the failures to inject (FAKECUDA_FAIL syntax; NULL or "" for
   none) and start counting calls again.  0 if SPEC is bad.  */
int
fakecuda_fail (const char *spec)
{
  return fake_control_fail (&fk_fs, spec);
}

/* Close (CLOSED != 0) or open the gate.  While it is closed, launches stay
   pending: stream and event synchronisation wait, queries say
   CUDA_ERROR_NOT_READY, host functions queued behind them wait.  */
void
fakecuda_gate (int closed)
{
  pthread_mutex_lock (&fk_lock);
  if (!closed && fk_gate_closed)
    fk_gate_gen++;
  fk_gate_closed = closed != 0;
  pthread_cond_broadcast (&fk_cond);
  pthread_mutex_unlock (&fk_lock);
}

/* Calls of exported symbol SYM so far (-1: no such symbol).  */
long
fakecuda_calls (const char *sym)
{
  return fake_control_calls (&fk_fs, sym);
}

/* How many objects of KIND are alive: "mem" (cuMemAlloc blocks), "host"
   (page-locked host blocks), "module", "stream", "event", "link",
   "context" (primary context retains not released); "mem_bytes" their
   bytes.  -1 for an unknown kind.  */
long
fakecuda_outstanding (const char *kind)
{
  long n = -1;
  pthread_mutex_lock (&fk_lock);
  if (strcmp (kind, "mem") == 0)
    n = fake_block_count (&fk_blocks, FK_MEM);
  else if (strcmp (kind, "host") == 0)
    n = fake_block_count (&fk_blocks, FK_HOST);
  else if (strcmp (kind, "module") == 0)
    n = fake_handle_count (&fk_handles, FK_H_MODULE);
  else if (strcmp (kind, "stream") == 0)
    n = fake_handle_count (&fk_handles, FK_H_STREAM);
  else if (strcmp (kind, "event") == 0)
    n = fake_handle_count (&fk_handles, FK_H_EVENT);
  else if (strcmp (kind, "link") == 0)
    n = fake_handle_count (&fk_handles, FK_H_LINK);
  else if (strcmp (kind, "context") == 0)
    {
      n = 0;
      for (int d = 0; d < FK_MAX_DEVICES; d++)
	n += fk_ctxs[d].refs;
    }
  else if (strcmp (kind, "mem_bytes") == 0)
    {
      n = 0;
      for (size_t i = 0; i < fk_blocks.n; i++)
	if (fk_blocks.live[i].kind == FK_MEM)
	  n += (long) fk_blocks.live[i].size;
    }
  pthread_mutex_unlock (&fk_lock);
  return n;
}

/* Launches recorded so far.  */
int
fakecuda_launch_count (void)
{
  pthread_mutex_lock (&fk_lock);
  int n = (int) fk_nlaunches;
  pthread_mutex_unlock (&fk_lock);
  return n;
}

/* Launch I (0-based): kernel name, grid, block, dynamic shared memory,
   stream (0 for the legacy default stream) and its creation flags, device,
   and the first three parameter values.  0 if there is no launch I.  Any
   result pointer may be NULL.  */
int
fakecuda_launch_info (int i, char *name, size_t name_len, unsigned grid[3],
		      unsigned block[3], unsigned *shmem, uintptr_t *stream,
		      unsigned *stream_flags, int *device,
		      unsigned long long params[3])
{
  pthread_mutex_lock (&fk_lock);
  if (i < 0 || (size_t) i >= fk_nlaunches)
    {
      pthread_mutex_unlock (&fk_lock);
      return 0;
    }
  struct fk_launch *l = &fk_launches[i];
  if (name != NULL && name_len > 0)
    snprintf (name, name_len, "%s", l->name);
  if (grid != NULL)
    memcpy (grid, l->grid, sizeof l->grid);
  if (block != NULL)
    memcpy (block, l->block, sizeof l->block);
  if (shmem != NULL)
    *shmem = l->shmem;
  if (stream != NULL)
    *stream = l->stream;
  if (stream_flags != NULL)
    *stream_flags = l->stream_flags;
  if (device != NULL)
    *device = l->device;
  if (params != NULL)
    memcpy (params, l->params, 3 * sizeof *params);
  pthread_mutex_unlock (&fk_lock);
  return 1;
}

/* Invalid calls seen so far, and the last one described.  */
long
fakecuda_bad_calls (const char **last)
{
  return fake_control_bad_calls (&fk_fs, last);
}

/* The device address and size of global NAME in the most recently loaded
   live module that has one; 0 if none.  */
int
fakecuda_global (const char *name, uintptr_t *addr, size_t *size)
{
  int found = 0;
  pthread_mutex_lock (&fk_lock);
  struct fk_module *m;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_MODULE, m)
    for (int i = 0; i < m->img.nglobals && !found; i++)
      if (strcmp (m->img.globals[i].name, name) == 0)
	{
	  if (addr != NULL)
	    *addr = m->img.globals[i].addr;
	  if (size != NULL)
	    *size = m->img.globals[i].size;
	  found = 1;
	}
  pthread_mutex_unlock (&fk_lock);
  return found;
}

/* fork: keep the lock consistent, and in the child, forget the callback
   thread, which does not exist there (nor does the work it had).  */
static void
fk_atfork_prepare (void)
{
  pthread_mutex_lock (&fk_lock);
}

static void
fk_atfork_parent (void)
{
  pthread_mutex_unlock (&fk_lock);
}

static void
fk_atfork_child (void)
{
  fk_cb_thread_started = false;
  fk_cb_head = NULL;
  fk_cb_tail = &fk_cb_head;
  struct fk_stream *s;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
    s->callbacks = 0;
  pthread_mutex_unlock (&fk_lock);
}

__attribute__ ((constructor)) static void
fk_init (void)
{
  pthread_atfork (fk_atfork_prepare, fk_atfork_parent, fk_atfork_child);
}

/* At unload or exit: stop the callback thread (its code is about to go
   away) and, if asked, fail when anything is still alive.  */
__attribute__ ((destructor)) static void
fk_fini (void)
{
  pthread_mutex_lock (&fk_lock);
  bool join = fk_cb_thread_started;
  fk_cb_quit = true;
  fk_gate_closed = false;
  fk_gate_gen++;
  pthread_cond_broadcast (&fk_cond);
  pthread_mutex_unlock (&fk_lock);
  if (join)
    pthread_join (fk_cb_thread, NULL);

  /* Our own tables (what they point to, if anything, is the caller's
     leak).  */
  pthread_mutex_lock (&fk_lock);
  free (fk_launches);
  fk_launches = NULL;
  fk_nlaunches = fk_launches_cap = 0;
  fake_tables_release (&fk_handles, &fk_blocks);
  pthread_mutex_unlock (&fk_lock);

  static const char *const kinds[] = { "mem", "host", "module", "stream",
				       "event", "link", "context" };
  fake_check_leaks ("fakecuda", "FAKECUDA_CHECK_LEAKS", kinds,
		    sizeof kinds / sizeof kinds[0], fakecuda_outstanding);
}
