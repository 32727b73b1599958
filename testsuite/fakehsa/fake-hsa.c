/* A fault-injecting stand-in for the HSA runtime (libhsa-runtime64.so.1),
   for tests only.

   It exports the HSA functions offloadkit's HSA backend may call, under
   their real names and C ABI (declared here from the facts of ROCm's
   hsa.h and hsa_ext_amd.h, never from the plugin's hsa-api.h, so that a
   wrong constant there shows up as a test failure).  It tests the
   backend's logic, not a GPU:

   - agents: one CPU agent and the GPU agents of FAKEHSA_AGENTS; each GPU
     agent has a kernarg region (global, kernarg + fine-grained), a
     coarse-grained global region and a group region, offered both as
     regions and as AMD memory pools;
   - memory is host memory, in a registry of live blocks: frees and copies
     that touch a block must stay inside it;
   - code objects are read with libelf: ELF64, EM_AMDGPU, an e_flags
     machine equal to the agent's, PT_LOAD segments inside the file; the
     segments are "loaded" into a host block; kernels are the 64-byte
     STT_OBJECT symbols NAME.kd (their AMDHSA kernel descriptors give the
     group and private segment sizes; the kernarg size comes, as ROCr
     reports it, from the metadata note's .kernarg_segment_size, else
     from the descriptor), variables the other global STT_OBJECT symbols
     (local ones, `static' variables, are not found by the runtime's
     calls: ROCr does not load them);
   - queues: packets are processed when the doorbell is rung (or when the
     gate opens, see fakehsa_gate): each kernel-dispatch packet is checked
     (header, dimensions, sizes, kernel object, kernarg address) and
     recorded with a copy of its kernarg bytes, never executed; then its
     completion signal is decremented;
   - everything created is counted, so that a test can see leaks.

   Environment (read at the first call):
     FAKEHSA_AGENTS=gfx906,gfx900   GPU agents (default one gfx906; "" or
                         "none": no GPU agent).  An entry may carry ISA
                         features: gfx906:sramecc-:xnack-.
     FAKEHSA_FAIL=SYM[@N][=STATUS],...  make the Nth call (1-based; every
                         call without @N) of SYM return STATUS (a number or
                         an HSA_STATUS_* name; default: a fitting error).
                         SYM kernel_dispatch makes the Nth kernel dispatch
                         fault: the queue's error callback gets STATUS
                         (default HSA_STATUS_ERROR_EXCEPTION) from another
                         thread, the completion signal is never
                         decremented and the queue processes nothing more
     FAKEHSA_LOG=FILE    one line per event (dispatch, allocation, load,
                         injected failure, bad call)
     FAKEHSA_CHECK_LEAKS=1  at unload or exit, print "fakehsa: leaked ..."
                         and _exit (97) if anything created is alive.

   Test programs that dlopen this library also get the fakehsa_*
   functions at the end.  One mutex guards everything.  */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../fakes/fake-common.h"

/* The MessagePack walk of the metadata note is offloadkit's own
   (common/gcn-metadata.c, also mkoffload's): what this fake takes from
   the note, and checks, is its own.  */
#include "gcn-metadata.h"

/* ------------------------------------------------------------------ */
/* Our declarations of the HSA types and constants (values from hsa.h,
   hsa_ext_amd.h and amd_hsa_elf.h).  */

typedef int hsa_status_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_region_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_code_object_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef int64_t hsa_signal_value_t;

/* 40 bytes on a 64-bit host (HSA_LARGE_MODEL).  */
typedef struct
{
  uint32_t type;
  uint32_t features;
  void *base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

/* The AQL kernel-dispatch packet: 64 bytes.  */
typedef struct
{
  uint16_t header;
  uint16_t setup;
  uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  void *kernarg_address;
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} fh_dispatch_packet;

_Static_assert (sizeof (hsa_queue_t) == 40, "hsa_queue_t layout");
_Static_assert (sizeof (fh_dispatch_packet) == 64, "packet layout");

#define HSA_STATUS_SUCCESS 0x0
#define HSA_STATUS_INFO_BREAK 0x1
#define HSA_STATUS_ERROR 0x1000
#define HSA_STATUS_ERROR_INVALID_ARGUMENT 0x1001
#define HSA_STATUS_ERROR_INVALID_QUEUE_CREATION 0x1002
#define HSA_STATUS_ERROR_INVALID_ALLOCATION 0x1003
#define HSA_STATUS_ERROR_INVALID_AGENT 0x1004
#define HSA_STATUS_ERROR_INVALID_REGION 0x1005
#define HSA_STATUS_ERROR_INVALID_SIGNAL 0x1006
#define HSA_STATUS_ERROR_INVALID_QUEUE 0x1007
#define HSA_STATUS_ERROR_OUT_OF_RESOURCES 0x1008
#define HSA_STATUS_ERROR_INVALID_PACKET_FORMAT 0x1009
#define HSA_STATUS_ERROR_RESOURCE_FREE 0x100A
#define HSA_STATUS_ERROR_NOT_INITIALIZED 0x100B
#define HSA_STATUS_ERROR_INVALID_ISA 0x100F
#define HSA_STATUS_ERROR_INVALID_CODE_OBJECT 0x1010
#define HSA_STATUS_ERROR_INVALID_EXECUTABLE 0x1011
#define HSA_STATUS_ERROR_FROZEN_EXECUTABLE 0x1012
#define HSA_STATUS_ERROR_INVALID_SYMBOL_NAME 0x1013
#define HSA_STATUS_ERROR_VARIABLE_UNDEFINED 0x1015
#define HSA_STATUS_ERROR_EXCEPTION 0x1016
#define HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL 0x1019
#define HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER 0x1021
#define HSA_STATUS_ERROR_FATAL 0x1026

#define HSA_DEVICE_TYPE_CPU 0
#define HSA_DEVICE_TYPE_GPU 1

#define HSA_AGENT_INFO_NAME 0
#define HSA_AGENT_INFO_VENDOR_NAME 1
#define HSA_AGENT_INFO_FEATURE 2
#define HSA_AGENT_INFO_PROFILE 4
#define HSA_AGENT_INFO_WAVEFRONT_SIZE 6
#define HSA_AGENT_INFO_WORKGROUP_MAX_DIM 7
#define HSA_AGENT_INFO_WORKGROUP_MAX_SIZE 8
#define HSA_AGENT_INFO_GRID_MAX_DIM 9
#define HSA_AGENT_INFO_GRID_MAX_SIZE 10
#define HSA_AGENT_INFO_QUEUES_MAX 12
#define HSA_AGENT_INFO_QUEUE_MIN_SIZE 13
#define HSA_AGENT_INFO_QUEUE_MAX_SIZE 14
#define HSA_AGENT_INFO_NODE 16
#define HSA_AGENT_INFO_DEVICE 17
#define HSA_AGENT_INFO_ISA 19
#define HSA_AMD_AGENT_INFO_CHIP_ID 0xA000
#define HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT 0xA002
#define HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY 0xA003
#define HSA_AMD_AGENT_INFO_PRODUCT_NAME 0xA009
#define HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU 0xA00A
#define HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU 0xA00B

#define HSA_FEATURE_KERNEL_DISPATCH 1
#define HSA_FEATURE_AGENT_DISPATCH 2

#define HSA_SYSTEM_INFO_VERSION_MAJOR 0
#define HSA_SYSTEM_INFO_VERSION_MINOR 1
#define HSA_SYSTEM_INFO_TIMESTAMP 2
#define HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY 3
#define HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT 4
#define HSA_SYSTEM_INFO_ENDIANNESS 5
#define HSA_SYSTEM_INFO_MACHINE_MODEL 6

#define HSA_ISA_INFO_NAME_LENGTH 0
#define HSA_ISA_INFO_NAME 1

#define HSA_REGION_SEGMENT_GLOBAL 0
#define HSA_REGION_SEGMENT_GROUP 3
#define HSA_REGION_GLOBAL_FLAG_KERNARG 1
#define HSA_REGION_GLOBAL_FLAG_FINE_GRAINED 2
#define HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED 4
#define HSA_REGION_INFO_SEGMENT 0
#define HSA_REGION_INFO_GLOBAL_FLAGS 1
#define HSA_REGION_INFO_SIZE 2
#define HSA_REGION_INFO_ALLOC_MAX_SIZE 4
#define HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED 5
#define HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE 6
#define HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT 7
#define HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL 15
#define HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE 16

#define HSA_SYMBOL_KIND_VARIABLE 0
#define HSA_SYMBOL_KIND_KERNEL 1
#define HSA_EXECUTABLE_SYMBOL_INFO_TYPE 0
#define HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH 1
#define HSA_EXECUTABLE_SYMBOL_INFO_NAME 2
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE 9
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE 11
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT 12
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE 13
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE 14
#define HSA_EXECUTABLE_SYMBOL_INFO_AGENT 20
#define HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS 21
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT 22

#define HSA_PACKET_TYPE_INVALID 1
#define HSA_PACKET_TYPE_KERNEL_DISPATCH 2
#define HSA_PACKET_TYPE_BARRIER_AND 3
#define HSA_PACKET_TYPE_BARRIER_OR 5

#define HSA_SIGNAL_CONDITION_EQ 0
#define HSA_SIGNAL_CONDITION_NE 1
#define HSA_SIGNAL_CONDITION_LT 2
#define HSA_SIGNAL_CONDITION_GTE 3

#define EM_AMDGPU_ 224
#define EF_AMDGPU_MACH_ 0xff

/* ------------------------------------------------------------------ */
/* The exported symbols, for call counts and failure injection.  Only
   those returning hsa_status_t can be made to fail.  */

#define FH_SYMS(X) \
  X (hsa_init) X (hsa_shut_down) X (hsa_status_string) \
  X (hsa_system_get_info) X (hsa_iterate_agents) X (hsa_agent_get_info) \
  X (hsa_agent_iterate_isas) X (hsa_isa_get_info) X (hsa_isa_get_info_alt) \
  X (hsa_agent_iterate_regions) X (hsa_region_get_info) \
  X (hsa_memory_allocate) X (hsa_memory_free) X (hsa_memory_copy) \
  X (hsa_memory_assign_agent) X (hsa_amd_agent_iterate_memory_pools) \
  X (hsa_amd_memory_pool_get_info) X (hsa_amd_memory_pool_allocate) \
  X (hsa_amd_memory_pool_free) X (hsa_amd_agents_allow_access) \
  X (hsa_executable_create) X (hsa_executable_create_alt) \
  X (hsa_code_object_reader_create_from_memory) \
  X (hsa_code_object_reader_destroy) \
  X (hsa_executable_load_agent_code_object) \
  X (hsa_code_object_deserialize) X (hsa_code_object_destroy) \
  X (hsa_executable_load_code_object) \
  X (hsa_executable_global_variable_define) \
  X (hsa_executable_freeze) X (hsa_executable_destroy) \
  X (hsa_executable_get_symbol_by_name) X (hsa_executable_get_symbol) \
  X (hsa_executable_iterate_symbols) X (hsa_executable_symbol_get_info) \
  X (hsa_queue_create) X (hsa_queue_destroy) \
  X (hsa_queue_load_write_index_relaxed) \
  X (hsa_queue_load_write_index_acquire) \
  X (hsa_queue_load_write_index_scacquire) \
  X (hsa_queue_add_write_index_relaxed) \
  X (hsa_queue_add_write_index_release) \
  X (hsa_queue_add_write_index_screlease) \
  X (hsa_queue_add_write_index_acq_rel) \
  X (hsa_queue_add_write_index_scacq_screl) \
  X (hsa_queue_store_write_index_relaxed) \
  X (hsa_queue_store_write_index_release) \
  X (hsa_queue_store_write_index_screlease) \
  X (hsa_queue_load_read_index_relaxed) \
  X (hsa_queue_load_read_index_acquire) \
  X (hsa_queue_load_read_index_scacquire) \
  X (hsa_signal_create) X (hsa_signal_destroy) \
  X (hsa_signal_store_relaxed) X (hsa_signal_store_release) \
  X (hsa_signal_store_screlease) \
  X (hsa_signal_load_relaxed) X (hsa_signal_load_acquire) \
  X (hsa_signal_load_scacquire) \
  X (hsa_signal_subtract_relaxed) X (hsa_signal_subtract_release) \
  X (hsa_signal_wait_relaxed) X (hsa_signal_wait_acquire) \
  X (hsa_signal_wait_scacquire) \
  X (kernel_dispatch)

enum fh_sym
{
#define X(s) FH_##s,
  FH_SYMS (X)
#undef X
  FH_NSYMS
};

static const char *const fh_sym_names[] = {
#define X(s) #s,
  FH_SYMS (X)
#undef X
};

/* ------------------------------------------------------------------ */
/* State.  */

#define FH_MAX_AGENTS 8

enum fh_region_kind { FH_KERNARG, FH_COARSE, FH_GROUP, FH_SYSTEM, FH_NREGIONS };

struct fh_agent;
struct fh_region
{
  struct fh_agent *agent;
  enum fh_region_kind kind;
};

struct fh_agent
{
  bool gpu;
  char name[64];		/* gfx906 */
  char isa[96];			/* amdgcn-amd-amdhsa--gfx906[:features] */
  unsigned mach;		/* EF_AMDGPU_MACH_* */
  struct fh_region regions[FH_NREGIONS];
};

/* "Device" memory: region and pool allocations (owned by their region)
   and loaded code objects (owned by none).  */
enum fh_block_kind { FH_BLOCK_MEM, FH_BLOCK_CODE };

/* Live handles, by kind.  A doorbell is a signal of its queue's, not
   counted with those the plugin creates.  */
enum fh_handle_kind
{
  FH_H_EXEC, FH_H_READER, FH_H_CODE_OBJECT, FH_H_SIGNAL, FH_H_DOORBELL,
  FH_H_QUEUE
};

struct fh_symbol
{
  struct fh_exec *exec;
  struct fh_agent *agent;
  char *name;			/* Kernels: NAME.kd, as in the code object.  */
  bool kernel;
  uintptr_t addr;		/* Variable address / kernel descriptor.  */
  uint64_t size;
  uint32_t group, private_, kernarg;
  /* A local symbol (a `static' variable): recorded only for the tests'
     fakehsa_symbol; the runtime does not load local symbols of code
     object v3, so no HSA call sees it.  */
  bool local;
};

struct fh_exec
{
  bool frozen;
  uintptr_t *code;		/* Loaded code blocks.  */
  int ncode;
  struct fh_symbol **syms;
  int nsyms;
};

/* A code object reader, or a deserialized code object
   (FH_H_CODE_OBJECT).  */
struct fh_reader
{
  unsigned char *bytes;
  size_t size;
};

struct fh_signal
{
  int64_t value;
  struct fh_queue *doorbell_of;
};

struct fh_queue
{
  hsa_queue_t q;		/* Must stay first: the plugin sees this.  */
  struct fh_agent *agent;
  uint64_t write_index, read_index;
  struct fh_signal *doorbell;
  void (*callback) (hsa_status_t, hsa_queue_t *, void *);
  void *cb_data;
  bool faulted;			/* A dispatch faulted: nothing more runs.  */
};

struct fh_dispatch
{
  fh_dispatch_packet pkt;
  int agent;
  char kernel[128];
  unsigned char kernargs[256];
  size_t kernarg_len;
};

static pthread_mutex_t fh_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fh_cond = PTHREAD_COND_INITIALIZER;
static bool fh_configured, fh_initialised_once;
static int fh_init_refs;
static struct fh_agent fh_agents[FH_MAX_AGENTS + 1];
static int fh_nagents;		/* GPU agents; the CPU agent follows them.  */
static long fh_calls_total[FH_NSYMS], fh_calls_since_spec[FH_NSYMS];
/* Call counts, failures to inject (FAKEHSA_FAIL: status numbers or
   names), the log, invalid calls seen.  */
static int fh_status_by_name (const char *name);
static void fh_configure (void);
static struct fake_state fh_fs = {
  .tag = "fakehsa", .fail_var = "FAKEHSA_FAIL",
  .sym_names = fh_sym_names, .nsyms = FH_NSYMS,
  .calls_total = fh_calls_total, .calls_since_spec = fh_calls_since_spec,
  .max_fails = 16, .item_max = 160, .err_by_name = fh_status_by_name,
  .log_fd = -1, .lock = &fh_lock, .configure = fh_configure,
};
static struct fake_blocks fh_blocks;
static struct fake_handles fh_handles;
static struct fh_dispatch *fh_dispatches;
static size_t fh_ndispatches, fh_dispatches_cap;
static bool fh_gate_closed;
static uint64_t fh_next_queue_id = 1;

/* ------------------------------------------------------------------ */
/* Logging, errors, configuration.  */

#define fh_log(...) fake_log (&fh_fs, __VA_ARGS__)
/* The plugin made a call the real runtime would refuse (or that would
   fault on a GPU).  */
#define fh_bad(...) fake_bad (&fh_fs, __VA_ARGS__)

static const struct { int status; const char *name; const char *text; }
fh_statuses[] = {
  { HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS", "success" },
  { HSA_STATUS_INFO_BREAK, "HSA_STATUS_INFO_BREAK", "iteration stopped" },
  { HSA_STATUS_ERROR, "HSA_STATUS_ERROR", "generic error" },
  { HSA_STATUS_ERROR_INVALID_ARGUMENT, "HSA_STATUS_ERROR_INVALID_ARGUMENT",
    "invalid argument" },
  { HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
    "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION", "invalid queue creation" },
  { HSA_STATUS_ERROR_INVALID_ALLOCATION,
    "HSA_STATUS_ERROR_INVALID_ALLOCATION", "invalid allocation" },
  { HSA_STATUS_ERROR_INVALID_AGENT, "HSA_STATUS_ERROR_INVALID_AGENT",
    "invalid agent" },
  { HSA_STATUS_ERROR_INVALID_REGION, "HSA_STATUS_ERROR_INVALID_REGION",
    "invalid region" },
  { HSA_STATUS_ERROR_INVALID_SIGNAL, "HSA_STATUS_ERROR_INVALID_SIGNAL",
    "invalid signal" },
  { HSA_STATUS_ERROR_INVALID_QUEUE, "HSA_STATUS_ERROR_INVALID_QUEUE",
    "invalid queue" },
  { HSA_STATUS_ERROR_OUT_OF_RESOURCES, "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
    "out of resources" },
  { HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT", "invalid packet format" },
  { HSA_STATUS_ERROR_RESOURCE_FREE, "HSA_STATUS_ERROR_RESOURCE_FREE",
    "resource free" },
  { HSA_STATUS_ERROR_NOT_INITIALIZED, "HSA_STATUS_ERROR_NOT_INITIALIZED",
    "not initialized" },
  { HSA_STATUS_ERROR_INVALID_ISA, "HSA_STATUS_ERROR_INVALID_ISA",
    "invalid instruction set architecture" },
  { HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
    "HSA_STATUS_ERROR_INVALID_CODE_OBJECT", "invalid code object" },
  { HSA_STATUS_ERROR_INVALID_EXECUTABLE,
    "HSA_STATUS_ERROR_INVALID_EXECUTABLE", "invalid executable" },
  { HSA_STATUS_ERROR_FROZEN_EXECUTABLE, "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
    "executable is frozen" },
  { HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
    "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME", "no such symbol" },
  { HSA_STATUS_ERROR_VARIABLE_UNDEFINED,
    "HSA_STATUS_ERROR_VARIABLE_UNDEFINED", "variable undefined" },
  { HSA_STATUS_ERROR_EXCEPTION, "HSA_STATUS_ERROR_EXCEPTION",
    "kernel exception" },
  { HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
    "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL", "invalid symbol" },
  { HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
    "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
    "invalid code object reader" },
  { HSA_STATUS_ERROR_FATAL, "HSA_STATUS_ERROR_FATAL", "fatal error" },
};

/* The status named NAME (for FAKEHSA_FAIL), or -1.  */
static int
fh_status_by_name (const char *name)
{
  int st = -1;
  for (size_t i = 0; i < sizeof fh_statuses / sizeof *fh_statuses; i++)
    if (strcmp (fh_statuses[i].name, name) == 0)
      st = fh_statuses[i].status;
  return st;
}

/* The ELF machine number of gfxNAME (LLVM's EF_AMDGPU_MACH_AMDGCN_*);
   0 for one we do not know.  */
static unsigned
fh_mach_of (const char *gfx)
{
  static const struct { const char *name; unsigned mach; } machs[] = {
    { "gfx803", 0x02a }, { "gfx900", 0x02c }, { "gfx906", 0x02f },
    { "gfx908", 0x030 }, { "gfx90a", 0x03f }, { "gfx1030", 0x036 },
  };
  for (size_t i = 0; i < sizeof machs / sizeof *machs; i++)
    if (strcmp (machs[i].name, gfx) == 0)
      return machs[i].mach;
  return 0;
}

static void
fh_agent_setup (struct fh_agent *a, bool gpu)
{
  a->gpu = gpu;
  for (int k = 0; k < FH_NREGIONS; k++)
    {
      a->regions[k].agent = a;
      a->regions[k].kind = (enum fh_region_kind) k;
    }
}

static void
fh_configure (void)
{
  if (fh_configured)
    return;
  fh_configured = true;
  const char *list = getenv ("FAKEHSA_AGENTS");
  if (list == NULL)
    list = "gfx906";
  if (strcmp (list, "none") == 0)
    list = "";
  const char *p = list;
  while (*p != '\0' && fh_nagents < FH_MAX_AGENTS)
    {
      size_t len = strcspn (p, ",");
      char item[64];
      if (len > 0 && len < sizeof item)
	{
	  memcpy (item, p, len);
	  item[len] = '\0';
	  struct fh_agent *a = &fh_agents[fh_nagents++];
	  fh_agent_setup (a, true);
	  char *colon = strchr (item, ':');
	  snprintf (a->isa, sizeof a->isa, "amdgcn-amd-amdhsa--%s", item);
	  if (colon != NULL)
	    *colon = '\0';
	  snprintf (a->name, sizeof a->name, "%s", item);
	  a->mach = fh_mach_of (item);
	  if (a->mach == 0)
	    fprintf (stderr, "fakehsa: unknown agent %s in FAKEHSA_AGENTS\n",
		     item);
	}
      p += len;
      if (*p == ',')
	p++;
    }
  struct fh_agent *cpu = &fh_agents[fh_nagents];
  fh_agent_setup (cpu, false);
  snprintf (cpu->name, sizeof cpu->name, "Fake CPU");
  fake_open_log (&fh_fs, "FAKEHSA_LOG");
  fake_parse_fail (&fh_fs, getenv ("FAKEHSA_FAIL"));
}

/* The status a failing SYM returns when FAKEHSA_FAIL names none.  */
static int
fh_default_status (int sym)
{
  switch (sym)
    {
    case FH_hsa_init:
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    case FH_hsa_memory_allocate:
    case FH_hsa_amd_memory_pool_allocate:
    case FH_hsa_signal_create:
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    case FH_hsa_queue_create:
      return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
    case FH_hsa_code_object_reader_create_from_memory:
    case FH_hsa_executable_load_agent_code_object:
    case FH_hsa_code_object_deserialize:
    case FH_hsa_executable_load_code_object:
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    case FH_hsa_executable_get_symbol_by_name:
    case FH_hsa_executable_get_symbol:
      return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
    case FH_hsa_executable_freeze:
      return HSA_STATUS_ERROR_VARIABLE_UNDEFINED;
    case FH_kernel_dispatch:
      return HSA_STATUS_ERROR_EXCEPTION;
    default:
      return HSA_STATUS_ERROR;
    }
}

/* Entry of every exported function: count the call and inject a failure
   if one is armed.  Takes FH_LOCK; returns with it held on success and
   released otherwise.  */
static hsa_status_t
fh_enter (int sym)
{
  pthread_mutex_lock (&fh_lock);
  fh_configure ();
  long n;
  const struct fake_fail *f = fake_count_call (&fh_fs, sym, &n);
  if (f != NULL)
    {
      int st = f->err >= 0 ? f->err : fh_default_status (sym);
      fh_log ("fail %s call %ld -> 0x%x", fh_sym_names[sym], n, st);
      pthread_mutex_unlock (&fh_lock);
      return st;
    }
  return HSA_STATUS_SUCCESS;
}

/* For the functions that cannot fail: count, lock.  */
static void
fh_enter_void (int sym)
{
  pthread_mutex_lock (&fh_lock);
  fh_configure ();
  /* Nothing can be armed for these.  */
  (void) fake_count_call (&fh_fs, sym, NULL);
}

#define ENTER(sym) \
  do { hsa_status_t r_ = fh_enter (FH_##sym); \
       if (r_ != HSA_STATUS_SUCCESS) return r_; } while (0)
#define RETURN(r) do { hsa_status_t r2_ = (r); \
		       pthread_mutex_unlock (&fh_lock); return r2_; } while (0)
#define BAD(sym, status, ...) \
  do { fh_bad (FH_##sym, __VA_ARGS__); RETURN (status); } while (0)
#define NEED_INIT(sym) \
  do { if (fh_init_refs <= 0) \
	 BAD (sym, HSA_STATUS_ERROR_NOT_INITIALIZED, \
	      "hsa_init has not succeeded"); } while (0)

/* ------------------------------------------------------------------ */
/* Handles.  */

static struct fh_agent *
fh_agent_find (hsa_agent_t a)
{
  for (int i = 0; i <= fh_nagents; i++)
    if (a.handle == (uintptr_t) &fh_agents[i])
      return &fh_agents[i];
  return NULL;
}

static int
fh_agent_index (const struct fh_agent *a)
{
  return (int) (a - fh_agents);
}

static struct fh_region *
fh_region_find (uint64_t h)
{
  for (int i = 0; i <= fh_nagents; i++)
    for (int k = 0; k < FH_NREGIONS; k++)
      if (h == (uintptr_t) &fh_agents[i].regions[k])
	return &fh_agents[i].regions[k];
  return NULL;
}

/* A signal's handle, a queue's doorbell's included; NULL if it is
   neither.  */
static struct fh_signal *
fh_signal_find (hsa_signal_t s)
{
  const void *h = (const void *) (uintptr_t) s.handle;
  struct fh_signal *p = fake_handle_get (&fh_handles, FH_H_SIGNAL, h);
  return p != NULL ? p : fake_handle_get (&fh_handles, FH_H_DOORBELL, h);
}

/* The queue whose hsa_queue_t is Q (its first member).  */
static struct fh_queue *
fh_queue_find (const hsa_queue_t *q)
{
  return fake_handle_get (&fh_handles, FH_H_QUEUE, q);
}

static struct fh_exec *
fh_exec_find (hsa_executable_t e)
{
  return fake_handle_get (&fh_handles, FH_H_EXEC,
			  (const void *) (uintptr_t) e.handle);
}

/* A reader, or (KIND FH_H_CODE_OBJECT) a deserialized code object.  */
static struct fh_reader *
fh_reader_find (uint64_t h, enum fh_handle_kind kind)
{
  return fake_handle_get (&fh_handles, kind, (const void *) (uintptr_t) h);
}

static struct fh_symbol *
fh_symbol_find (hsa_executable_symbol_t s)
{
  struct fh_exec *e;
  FAKE_HANDLES_EACH (&fh_handles, FH_H_EXEC, e)
    for (int i = 0; i < e->nsyms; i++)
      if ((uintptr_t) e->syms[i] == s.handle)
	return e->syms[i];
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Memory blocks.  */

static struct fake_block *
fh_block_find (uintptr_t addr)
{
  return fake_block_find (&fh_blocks, addr);
}

/* A new block of KIND, of region R for FH_BLOCK_MEM.  */
static void *
fh_block_new (size_t size, enum fh_block_kind kind, struct fh_region *r)
{
  void *p = fake_block_new (&fh_blocks, size, 4096, kind, r);
  /* Fresh device memory is not zero on a GPU; make reads of it that the
     plugin did not write visible.  */
  if (p != NULL)
    memset (p, 0xa5, size ? size : 1);
  return p;
}

static bool
fh_block_free (uintptr_t addr, enum fh_block_kind kind)
{
  return fake_block_free (&fh_blocks, addr, kind, NULL);
}

/* ------------------------------------------------------------------ */
/* Initialisation and information.  */

hsa_status_t
hsa_init (void)
{
  ENTER (hsa_init);
  fh_init_refs++;
  fh_initialised_once = true;
  fh_log ("init %d gpu agents", fh_nagents);
  RETURN (HSA_STATUS_SUCCESS);
}

static void fh_reset_tables (void);

hsa_status_t
hsa_shut_down (void)
{
  ENTER (hsa_shut_down);
  NEED_INIT (hsa_shut_down);
  if (--fh_init_refs == 0)
    fh_log ("shut down");
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_status_string (hsa_status_t status, const char **str)
{
  ENTER (hsa_status_string);
  if (str == NULL)
    BAD (hsa_status_string, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL result");
  /* ROCm's strings begin with the status's name.  */
  static char texts[sizeof fh_statuses / sizeof *fh_statuses][128];
  for (size_t i = 0; i < sizeof fh_statuses / sizeof *fh_statuses; i++)
    if (fh_statuses[i].status == status)
      {
	snprintf (texts[i], sizeof texts[i], "%s: %s", fh_statuses[i].name,
		  fh_statuses[i].text);
	*str = texts[i];
	RETURN (HSA_STATUS_SUCCESS);
      }
  RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

hsa_status_t
hsa_system_get_info (int attribute, void *value)
{
  ENTER (hsa_system_get_info);
  NEED_INIT (hsa_system_get_info);
  if (value == NULL)
    BAD (hsa_system_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL value");
  switch (attribute)
    {
    case HSA_SYSTEM_INFO_VERSION_MAJOR:
      *(uint16_t *) value = 1;
      break;
    case HSA_SYSTEM_INFO_VERSION_MINOR:
      *(uint16_t *) value = 1;
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP:
      {
	struct timespec ts;
	clock_gettime (CLOCK_MONOTONIC, &ts);
	*(uint64_t *) value = (uint64_t) ts.tv_sec * 1000000000u
			      + (uint64_t) ts.tv_nsec;
      }
      break;
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
      *(uint64_t *) value = 1000000000u;
      break;
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
      *(uint64_t *) value = UINT64_MAX;
      break;
    case HSA_SYSTEM_INFO_ENDIANNESS:
    case HSA_SYSTEM_INFO_MACHINE_MODEL:
      *(uint32_t *) value = attribute == HSA_SYSTEM_INFO_MACHINE_MODEL;
      break;
    default:
      RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* Iterations call back without the lock, so that callbacks may call in.  */
hsa_status_t
hsa_iterate_agents (hsa_status_t (*cb) (hsa_agent_t, void *), void *data)
{
  ENTER (hsa_iterate_agents);
  NEED_INIT (hsa_iterate_agents);
  if (cb == NULL)
    BAD (hsa_iterate_agents, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL callback");
  int n = fh_nagents;
  pthread_mutex_unlock (&fh_lock);
  /* The CPU agent first, as ROCm lists it.  */
  for (int k = 0; k <= n; k++)
    {
      int i = k == 0 ? n : k - 1;
      hsa_status_t r = cb ((hsa_agent_t) { (uintptr_t) &fh_agents[i] }, data);
      if (r != HSA_STATUS_SUCCESS)
	return r;
    }
  return HSA_STATUS_SUCCESS;
}

static void
fh_put_string (void *value, size_t size, const char *s)
{
  memset (value, 0, size);
  size_t n = strlen (s);
  memcpy (value, s, n < size ? n : size - 1);
}

hsa_status_t
hsa_agent_get_info (hsa_agent_t agent, int attribute, void *value)
{
  ENTER (hsa_agent_get_info);
  NEED_INIT (hsa_agent_get_info);
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL)
    BAD (hsa_agent_get_info, HSA_STATUS_ERROR_INVALID_AGENT,
	 "unknown agent %#llx", (unsigned long long) agent.handle);
  if (value == NULL)
    BAD (hsa_agent_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL value");
  switch (attribute)
    {
    case HSA_AGENT_INFO_NAME:
      fh_put_string (value, 64, a->name);
      break;
    case HSA_AGENT_INFO_VENDOR_NAME:
      fh_put_string (value, 64, a->gpu ? "AMD" : "CPU");
      break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      fh_put_string (value, 64, a->gpu ? "Fake Radeon" : "Fake CPU");
      break;
    case HSA_AGENT_INFO_FEATURE:
      *(uint32_t *) value = a->gpu ? HSA_FEATURE_KERNEL_DISPATCH
				   : HSA_FEATURE_AGENT_DISPATCH;
      break;
    case HSA_AGENT_INFO_PROFILE:
      *(uint32_t *) value = 0;
      break;
    case HSA_AGENT_INFO_DEVICE:
      *(uint32_t *) value = a->gpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
      break;
    case HSA_AGENT_INFO_NODE:
      *(uint32_t *) value = (uint32_t) fh_agent_index (a);
      break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
      *(uint32_t *) value = 64;
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM:
      ((uint16_t *) value)[0] = 1024;
      ((uint16_t *) value)[1] = 1024;
      ((uint16_t *) value)[2] = 1024;
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
      *(uint32_t *) value = 1024;
      break;
    case HSA_AGENT_INFO_GRID_MAX_DIM:
      ((uint32_t *) value)[0] = UINT32_MAX;
      ((uint32_t *) value)[1] = UINT32_MAX;
      ((uint32_t *) value)[2] = UINT32_MAX;
      break;
    case HSA_AGENT_INFO_GRID_MAX_SIZE:
      *(uint32_t *) value = UINT32_MAX;
      break;
    case HSA_AGENT_INFO_QUEUES_MAX:
      *(uint32_t *) value = a->gpu ? 128 : 0;
      break;
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      *(uint32_t *) value = a->gpu ? 64 : 0;
      break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      *(uint32_t *) value = a->gpu ? 131072 : 0;
      break;
    case HSA_AGENT_INFO_ISA:
      ((hsa_isa_t *) value)->handle = a->gpu ? (uintptr_t) a : 0;
      break;
    case HSA_AMD_AGENT_INFO_CHIP_ID:
      *(uint32_t *) value = 0x66a0;
      break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      *(uint32_t *) value = a->gpu ? 60 : 4;
      break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
      *(uint32_t *) value = 1725;
      break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
      *(uint32_t *) value = 40;
      break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
      *(uint32_t *) value = 4;
      break;
    default:
      fh_bad (FH_hsa_agent_get_info, "attribute %#x not implemented",
	      attribute);
      RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* An agent's one ISA has the agent's address as its handle.  */
static struct fh_agent *
fh_isa_find (hsa_isa_t isa)
{
  struct fh_agent *a = fh_agent_find ((hsa_agent_t) { isa.handle });
  return a != NULL && a->gpu ? a : NULL;
}

hsa_status_t
hsa_agent_iterate_isas (hsa_agent_t agent,
			hsa_status_t (*cb) (hsa_isa_t, void *), void *data)
{
  ENTER (hsa_agent_iterate_isas);
  NEED_INIT (hsa_agent_iterate_isas);
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL || cb == NULL)
    BAD (hsa_agent_iterate_isas, a == NULL ? HSA_STATUS_ERROR_INVALID_AGENT
	 : HSA_STATUS_ERROR_INVALID_ARGUMENT, "bad agent or callback");
  pthread_mutex_unlock (&fh_lock);
  if (!a->gpu)
    return HSA_STATUS_SUCCESS;
  return cb ((hsa_isa_t) { (uintptr_t) a }, data);
}

static hsa_status_t
fh_isa_info (int sym, hsa_isa_t isa, int attribute, void *value)
{
  struct fh_agent *a = fh_isa_find (isa);
  if (a == NULL)
    {
      fh_bad (sym, "unknown ISA %#llx", (unsigned long long) isa.handle);
      return HSA_STATUS_ERROR_INVALID_ISA;
    }
  if (value == NULL)
    {
      fh_bad (sym, "NULL value");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  switch (attribute)
    {
    case HSA_ISA_INFO_NAME_LENGTH:
      /* With the terminating NUL, as ROCm counts it.  */
      *(uint32_t *) value = (uint32_t) strlen (a->isa) + 1;
      return HSA_STATUS_SUCCESS;
    case HSA_ISA_INFO_NAME:
      memcpy (value, a->isa, strlen (a->isa) + 1);
      return HSA_STATUS_SUCCESS;
    default:
      fh_bad (sym, "attribute %#x not implemented", attribute);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

hsa_status_t
hsa_isa_get_info_alt (hsa_isa_t isa, int attribute, void *value)
{
  ENTER (hsa_isa_get_info_alt);
  NEED_INIT (hsa_isa_get_info_alt);
  RETURN (fh_isa_info (FH_hsa_isa_get_info_alt, isa, attribute, value));
}

hsa_status_t
hsa_isa_get_info (hsa_isa_t isa, int attribute, uint32_t index, void *value)
{
  ENTER (hsa_isa_get_info);
  NEED_INIT (hsa_isa_get_info);
  if (index != 0)
    BAD (hsa_isa_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "index %u", index);
  RETURN (fh_isa_info (FH_hsa_isa_get_info, isa, attribute, value));
}

/* ------------------------------------------------------------------ */
/* Regions and pools (the same objects under both APIs).  */

/* The regions of agent HANDLE (GPU: kernarg, coarse-grained, group; CPU:
   system memory) into OUT; their number, or -1 for an unknown agent.
   Iterations call back without the lock, so that callbacks may call in.  */
static int
fh_regions_of (int sym, hsa_agent_t agent, bool have_cb, uint64_t *out)
{
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL || !have_cb)
    {
      fh_bad (sym, "bad agent or callback");
      pthread_mutex_unlock (&fh_lock);
      return -1;
    }
  pthread_mutex_unlock (&fh_lock);
  int n = 0;
  for (int k = 0; k < FH_NREGIONS; k++)
    if (a->gpu == (k != FH_SYSTEM))
      out[n++] = (uintptr_t) &a->regions[k];
  return n;
}

hsa_status_t
hsa_agent_iterate_regions (hsa_agent_t agent,
			   hsa_status_t (*cb) (hsa_region_t, void *),
			   void *data)
{
  ENTER (hsa_agent_iterate_regions);
  NEED_INIT (hsa_agent_iterate_regions);
  uint64_t r[FH_NREGIONS];
  int n = fh_regions_of (FH_hsa_agent_iterate_regions, agent, cb != NULL, r);
  if (n < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (int i = 0; i < n; i++)
    {
      hsa_status_t st = cb ((hsa_region_t) { r[i] }, data);
      if (st != HSA_STATUS_SUCCESS)
	return st;
    }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_amd_agent_iterate_memory_pools (hsa_agent_t agent,
				    hsa_status_t (*cb) (hsa_amd_memory_pool_t,
							void *),
				    void *data)
{
  ENTER (hsa_amd_agent_iterate_memory_pools);
  NEED_INIT (hsa_amd_agent_iterate_memory_pools);
  uint64_t r[FH_NREGIONS];
  int n = fh_regions_of (FH_hsa_amd_agent_iterate_memory_pools, agent,
			 cb != NULL, r);
  if (n < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (int i = 0; i < n; i++)
    {
      hsa_status_t st = cb ((hsa_amd_memory_pool_t) { r[i] }, data);
      if (st != HSA_STATUS_SUCCESS)
	return st;
    }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t
fh_region_info (int sym, uint64_t h, int attribute, void *value)
{
  struct fh_region *r = fh_region_find (h);
  if (r == NULL || value == NULL)
    {
      fh_bad (sym, "unknown region %#llx or NULL value",
	      (unsigned long long) h);
      return r == NULL ? HSA_STATUS_ERROR_INVALID_REGION
		       : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  switch (attribute)
    {
    case HSA_REGION_INFO_SEGMENT:
      *(uint32_t *) value = (r->kind == FH_GROUP ? HSA_REGION_SEGMENT_GROUP
			     : HSA_REGION_SEGMENT_GLOBAL);
      break;
    case HSA_REGION_INFO_GLOBAL_FLAGS:
      switch (r->kind)
	{
	case FH_KERNARG:
	case FH_SYSTEM:
	  *(uint32_t *) value = (HSA_REGION_GLOBAL_FLAG_KERNARG
				 | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED);
	  break;
	case FH_COARSE:
	  *(uint32_t *) value = HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED;
	  break;
	default:
	  *(uint32_t *) value = 0;
	}
      break;
    case HSA_REGION_INFO_SIZE:
    case HSA_REGION_INFO_ALLOC_MAX_SIZE:
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
      *(size_t *) value = r->kind == FH_GROUP ? 65536 : (size_t) 16 << 30;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
      *(bool *) value = r->kind != FH_GROUP;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *(size_t *) value = 4096;
      break;
    default:
      fh_bad (sym, "attribute %#x not implemented", attribute);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_region_get_info (hsa_region_t region, int attribute, void *value)
{
  ENTER (hsa_region_get_info);
  NEED_INIT (hsa_region_get_info);
  RETURN (fh_region_info (FH_hsa_region_get_info, region.handle, attribute,
			  value));
}

hsa_status_t
hsa_amd_memory_pool_get_info (hsa_amd_memory_pool_t pool, int attribute,
			      void *value)
{
  ENTER (hsa_amd_memory_pool_get_info);
  NEED_INIT (hsa_amd_memory_pool_get_info);
  RETURN (fh_region_info (FH_hsa_amd_memory_pool_get_info, pool.handle,
			  attribute, value));
}

/* ------------------------------------------------------------------ */
/* Memory.  */

static hsa_status_t
fh_allocate (int sym, uint64_t h, size_t size, void **ptr)
{
  struct fh_region *r = fh_region_find (h);
  if (r == NULL)
    {
      fh_bad (sym, "unknown region %#llx", (unsigned long long) h);
      return HSA_STATUS_ERROR_INVALID_REGION;
    }
  if (ptr == NULL || size == 0)
    {
      fh_bad (sym, "NULL result or size 0");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  if (r->kind == FH_GROUP)
    {
      fh_bad (sym, "the group region does not allow allocation");
      return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
  if (size > ((size_t) 16 << 30))
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  void *p = fh_block_new (size, FH_BLOCK_MEM, r);
  if (p == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  *ptr = p;
  fh_log ("alloc %zu region %d agent %d -> %p", size, (int) r->kind,
	  fh_agent_index (r->agent), p);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_memory_allocate (hsa_region_t region, size_t size, void **ptr)
{
  ENTER (hsa_memory_allocate);
  NEED_INIT (hsa_memory_allocate);
  RETURN (fh_allocate (FH_hsa_memory_allocate, region.handle, size, ptr));
}

hsa_status_t
hsa_amd_memory_pool_allocate (hsa_amd_memory_pool_t pool, size_t size,
			      uint32_t flags, void **ptr)
{
  ENTER (hsa_amd_memory_pool_allocate);
  NEED_INIT (hsa_amd_memory_pool_allocate);
  if (flags != 0)
    BAD (hsa_amd_memory_pool_allocate, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "flags %#x", flags);
  RETURN (fh_allocate (FH_hsa_amd_memory_pool_allocate, pool.handle, size,
		       ptr));
}

static hsa_status_t
fh_free (int sym, void *ptr)
{
  if (ptr == NULL)
    return HSA_STATUS_SUCCESS;
  if (!fh_block_free ((uintptr_t) ptr, FH_BLOCK_MEM))
    {
      fh_bad (sym, "%p is not a live allocation", ptr);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  fh_log ("free %p", ptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_memory_free (void *ptr)
{
  ENTER (hsa_memory_free);
  NEED_INIT (hsa_memory_free);
  RETURN (fh_free (FH_hsa_memory_free, ptr));
}

hsa_status_t
hsa_amd_memory_pool_free (void *ptr)
{
  ENTER (hsa_amd_memory_pool_free);
  NEED_INIT (hsa_amd_memory_pool_free);
  RETURN (fh_free (FH_hsa_amd_memory_pool_free, ptr));
}

hsa_status_t
hsa_amd_agents_allow_access (uint32_t num_agents, const hsa_agent_t *agents,
			     const uint32_t *flags, const void *ptr)
{
  ENTER (hsa_amd_agents_allow_access);
  NEED_INIT (hsa_amd_agents_allow_access);
  (void) flags;
  if (num_agents == 0 || agents == NULL || fh_block_find ((uintptr_t) ptr)
      == NULL)
    BAD (hsa_amd_agents_allow_access, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad agents or pointer %p", ptr);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_memory_assign_agent (void *ptr, hsa_agent_t agent, int access)
{
  ENTER (hsa_memory_assign_agent);
  NEED_INIT (hsa_memory_assign_agent);
  (void) access;
  if (fh_agent_find (agent) == NULL || fh_block_find ((uintptr_t) ptr) == NULL)
    BAD (hsa_memory_assign_agent, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad agent or pointer %p", ptr);
  RETURN (HSA_STATUS_SUCCESS);
}

/* A range that begins in a live block must end in it.  Host memory
   outside any block is fine: the runtime copies to and from it.  */
static bool
fh_range_ok (int sym, const char *what, uintptr_t p, size_t n)
{
  struct fake_block *b = fh_block_find (p);
  if (b == NULL)
    {
      /* Ending inside a block we do not begin in is as wrong.  */
      if (n > 0 && fh_block_find (p + n - 1) != NULL)
	{
	  fh_bad (sym, "%s %#lx+%zu runs into a device block", what,
		  (unsigned long) p, n);
	  return false;
	}
      return true;
    }
  if (p + n > b->base + b->size)
    {
      fh_bad (sym, "%s %#lx+%zu leaves its block %#lx+%zu", what,
	      (unsigned long) p, n, (unsigned long) b->base, b->size);
      return false;
    }
  return true;
}

static long fh_copies;

hsa_status_t
hsa_memory_copy (void *dst, const void *src, size_t size)
{
  ENTER (hsa_memory_copy);
  NEED_INIT (hsa_memory_copy);
  if ((dst == NULL || src == NULL) && size > 0)
    BAD (hsa_memory_copy, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL pointer");
  if (!fh_range_ok (FH_hsa_memory_copy, "dst", (uintptr_t) dst, size)
      || !fh_range_ok (FH_hsa_memory_copy, "src", (uintptr_t) src, size))
    RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
  if (size > 0)
    memmove (dst, src, size);
  fh_copies++;
  fh_log ("copy %p <- %p %zu", dst, src, size);
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Code objects and executables.  */

/* A new, empty executable in *EXEC.  */
static hsa_status_t
fh_exec_new (hsa_executable_t *exec)
{
  struct fh_exec *e = calloc (1, sizeof *e);
  if (e == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  if (!fake_handle_add (&fh_handles, FH_H_EXEC, e))
    {
      free (e);
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
  exec->handle = (uintptr_t) e;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_executable_create (int profile, int state, const char *options,
		       hsa_executable_t *exec)
{
  ENTER (hsa_executable_create);
  NEED_INIT (hsa_executable_create);
  (void) options;
  if (exec == NULL || profile < 0 || profile > 1 || state != 0)
    BAD (hsa_executable_create, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad profile %d, state %d or result", profile, state);
  RETURN (fh_exec_new (exec));
}

hsa_status_t
hsa_executable_create_alt (int profile, int rounding, const char *options,
			   hsa_executable_t *exec)
{
  ENTER (hsa_executable_create_alt);
  NEED_INIT (hsa_executable_create_alt);
  (void) options;
  if (exec == NULL || profile < 0 || profile > 1 || rounding < 0
      || rounding > 2)
    BAD (hsa_executable_create_alt, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "bad profile %d, rounding mode %d or result", profile, rounding);
  RETURN (fh_exec_new (exec));
}

/* A reader of a copy of BYTES, or (KIND FH_H_CODE_OBJECT) a
   deserialized code object, in *HANDLE.  */
static hsa_status_t
fh_reader_new (const void *bytes, size_t size, enum fh_handle_kind kind,
	       uint64_t *handle)
{
  struct fh_reader *r = calloc (1, sizeof *r);
  unsigned char *copy = malloc (size);
  if (r == NULL || copy == NULL || !fake_handle_add (&fh_handles, kind, r))
    {
      free (r);
      free (copy);
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
  memcpy (copy, bytes, size);
  r->bytes = copy;
  r->size = size;
  *handle = (uintptr_t) r;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t
fh_reader_destroy (int sym, uint64_t h, enum fh_handle_kind kind)
{
  struct fh_reader *r = fh_reader_find (h, kind);
  if (r == NULL)
    {
      fh_bad (sym, "unknown code object %#llx", (unsigned long long) h);
      return kind == FH_H_CODE_OBJECT ? HSA_STATUS_ERROR_INVALID_CODE_OBJECT
	     : HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    }
  fake_handle_remove (&fh_handles, kind, r);
  free (r->bytes);
  free (r);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_code_object_reader_create_from_memory (const void *code, size_t size,
					   hsa_code_object_reader_t *reader)
{
  ENTER (hsa_code_object_reader_create_from_memory);
  NEED_INIT (hsa_code_object_reader_create_from_memory);
  if (code == NULL || size == 0 || reader == NULL)
    BAD (hsa_code_object_reader_create_from_memory,
	 HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL code, size 0 or NULL result");
  RETURN (fh_reader_new (code, size, FH_H_READER, &reader->handle));
}

hsa_status_t
hsa_code_object_reader_destroy (hsa_code_object_reader_t reader)
{
  ENTER (hsa_code_object_reader_destroy);
  NEED_INIT (hsa_code_object_reader_destroy);
  RETURN (fh_reader_destroy (FH_hsa_code_object_reader_destroy,
			     reader.handle, FH_H_READER));
}

hsa_status_t
hsa_code_object_deserialize (void *code, size_t size, const char *options,
			     hsa_code_object_t *object)
{
  ENTER (hsa_code_object_deserialize);
  NEED_INIT (hsa_code_object_deserialize);
  (void) options;
  if (code == NULL || size == 0 || object == NULL)
    BAD (hsa_code_object_deserialize, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL code, size 0 or NULL result");
  RETURN (fh_reader_new (code, size, FH_H_CODE_OBJECT, &object->handle));
}

hsa_status_t
hsa_code_object_destroy (hsa_code_object_t object)
{
  ENTER (hsa_code_object_destroy);
  NEED_INIT (hsa_code_object_destroy);
  RETURN (fh_reader_destroy (FH_hsa_code_object_destroy, object.handle,
			     FH_H_CODE_OBJECT));
}

static void
fh_symbol_free (struct fh_symbol *s)
{
  free (s->name);
  free (s);
}

static uint32_t
fh_u32 (const unsigned char *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

static bool
fh_has_section (Elf *elf, unsigned type)
{
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) != NULL && sh.sh_type == type)
	return true;
    }
  return false;
}

/* Apply the dynamic relocations of the loaded image at BASE (SPAN bytes),
   as the runtime's loader does (relocation types from LLVM's AMDGPUUsage:
   ABS32_LO 1, ABS32_HI 2, ABS64 3, ABS32 6, RELATIVE64 13).  */
static bool
fh_relocate (Elf *elf, void *base, uint64_t span, char *why, size_t why_len)
{
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL)
	{
	  snprintf (why, why_len, "bad section header");
	  return false;
	}
      if (sh.sh_type != SHT_RELA || (sh.sh_flags & SHF_ALLOC) == 0)
	continue;
      Elf_Data *d = elf_getdata (scn, NULL);
      Elf_Scn *symscn = elf_getscn (elf, sh.sh_link);
      Elf_Data *syms = symscn != NULL ? elf_getdata (symscn, NULL) : NULL;
      if (d == NULL || sh.sh_entsize == 0)
	{
	  snprintf (why, why_len, "unreadable relocations");
	  return false;
	}
      size_t n = sh.sh_size / sh.sh_entsize;
      for (size_t i = 0; i < n; i++)
	{
	  GElf_Rela r;
	  if (gelf_getrela (d, (int) i, &r) == NULL || r.r_offset > span - 8)
	    {
	      snprintf (why, why_len, "relocation %zu outside the image", i);
	      return false;
	    }
	  unsigned type = (unsigned) GELF_R_TYPE (r.r_info);
	  size_t symi = GELF_R_SYM (r.r_info);
	  uint64_t S = 0;
	  if (symi != 0)
	    {
	      GElf_Sym sym;
	      if (syms == NULL || gelf_getsym (syms, (int) symi, &sym) == NULL
		  || sym.st_shndx == SHN_UNDEF)
		{
		  snprintf (why, why_len, "relocation %zu: undefined symbol",
			    i);
		  return false;
		}
	      S = (uintptr_t) base + sym.st_value;
	    }
	  uint64_t v = S + (uint64_t) r.r_addend;
	  unsigned char *p = (unsigned char *) base + r.r_offset;
	  uint32_t w;
	  switch (type)
	    {
	    case 0:
	      break;
	    case 1:
	    case 6:
	      w = (uint32_t) v;
	      memcpy (p, &w, 4);
	      break;
	    case 2:
	      w = (uint32_t) (v >> 32);
	      memcpy (p, &w, 4);
	      break;
	    case 3:
	      memcpy (p, &v, 8);
	      break;
	    case 13:
	      v = (uintptr_t) base + (uint64_t) r.r_addend;
	      memcpy (p, &v, 8);
	      break;
	    default:
	      snprintf (why, why_len, "relocation type %u not supported by "
			"the loader", type);
	      return false;
	    }
	}
    }
  return true;
}

/* Kernarg sizes as ROCr reports them for code object v3: from the
   metadata note's ".kernarg_segment_size" of the kernel whose ".symbol"
   is NAME.kd (LLVM 13's assembler leaves the descriptor's field 0).  */
struct fh_meta
{
  struct fh_symbol **syms;
  int nsyms;
};

static void
fh_meta_entry (const char *symbol, size_t symlen, const char *key,
	       size_t keylen, uint64_t value, void *arg)
{
  static const char kernarg[] = ".kernarg_segment_size";
  struct fh_meta *m = arg;
  if (keylen != sizeof kernarg - 1 || memcmp (key, kernarg, keylen) != 0)
    return;
  for (int i = 0; i < m->nsyms; i++)
    if (m->syms[i]->kernel && strlen (m->syms[i]->name) == symlen
	&& memcmp (m->syms[i]->name, symbol, symlen) == 0)
      m->syms[i]->kernarg = value > UINT32_MAX ? UINT32_MAX
			    : (uint32_t) value;
}

/* Read the AMDGPU metadata notes of ELF into the kernels SYMS; a kernel
   without an entry keeps its descriptor's kernarg size.  False (with
   *WHY) when a note is malformed, as the runtime refuses the object.  */
static bool
fh_metadata (Elf *elf, struct fh_symbol **syms, int nsyms, char *why,
	     size_t why_len)
{
  struct fh_meta m = { syms, nsyms };
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
	continue;
      Elf_Data *d = elf_getdata (scn, NULL);
      if (d == NULL)
	{
	  snprintf (why, why_len, "unreadable note section");
	  return false;
	}
      size_t off = 0, name_off, desc_off;
      GElf_Nhdr nh;
      while (off < d->d_size
	     && (off = gelf_getnote (d, off, &nh, &name_off, &desc_off)) > 0)
	if (nh.n_type == OK_NT_AMDGPU_METADATA
	    && nh.n_namesz == sizeof OK_AMDGPU_NOTE_OWNER
	    && memcmp ((char *) d->d_buf + name_off, OK_AMDGPU_NOTE_OWNER,
		       nh.n_namesz) == 0
	    && ok_gcn_metadata_scan ((const unsigned char *) d->d_buf
				     + desc_off, nh.n_descsz, fh_meta_entry,
				     &m) < 0)
	  {
	    snprintf (why, why_len, "malformed AMDGPU metadata note");
	    return false;
	  }
    }
  return true;
}

/* Load code object BYTES for agent A into executable E: validate, copy
   the PT_LOAD segments into a block, add the symbols.  Sets *WHY.  */
static hsa_status_t
fh_load (struct fh_exec *e, struct fh_agent *a, const unsigned char *bytes,
	 size_t size, char *why, size_t why_len)
{
  why[0] = '\0';
  if (size < sizeof (Elf64_Ehdr) || memcmp (bytes, ELFMAG, SELFMAG) != 0
      || bytes[EI_CLASS] != ELFCLASS64 || bytes[EI_DATA] != ELFDATA2LSB)
    {
      snprintf (why, why_len, "not a 64-bit little-endian ELF file");
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
  /* libelf wants a writable buffer.  */
  unsigned char *copy = malloc (size);
  if (copy == NULL)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy (copy, bytes, size);
  hsa_status_t st = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  struct fh_symbol **syms = NULL;
  int nsyms = 0;
  void *base = NULL;
  Elf *elf = elf_memory ((char *) copy, size);
  GElf_Ehdr eh;
  size_t phnum = 0;
  if (elf == NULL || gelf_getehdr (elf, &eh) == NULL)
    {
      snprintf (why, why_len, "unreadable ELF header");
      goto out;
    }
  if (eh.e_machine != EM_AMDGPU_)
    {
      snprintf (why, why_len, "e_machine %u is not EM_AMDGPU",
		eh.e_machine);
      goto out;
    }
  if ((eh.e_flags & EF_AMDGPU_MACH_) != a->mach)
    {
      snprintf (why, why_len, "code object machine %#x, agent %s is %#x",
		(unsigned) (eh.e_flags & EF_AMDGPU_MACH_), a->name, a->mach);
      st = HSA_STATUS_ERROR_INVALID_ISA;
      goto out;
    }
  if (elf_getphdrnum (elf, &phnum) != 0 || phnum == 0)
    {
      snprintf (why, why_len, "no program headers (not a linked object)");
      goto out;
    }
  uint64_t span = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
	{
	  snprintf (why, why_len, "bad program header %zu", i);
	  goto out;
	}
      if (ph.p_type != PT_LOAD)
	continue;
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset
	  || ph.p_filesz > ph.p_memsz || ph.p_memsz > (1u << 30)
	  || ph.p_vaddr > (1u << 30))
	{
	  snprintf (why, why_len, "segment %zu outside the file", i);
	  goto out;
	}
      if (ph.p_vaddr + ph.p_memsz > span)
	span = ph.p_vaddr + ph.p_memsz;
    }
  if (span == 0)
    {
      snprintf (why, why_len, "nothing to load");
      goto out;
    }
  base = fh_block_new (span, FH_BLOCK_CODE, NULL);
  if (base == NULL)
    {
      st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      goto out;
    }
  memset (base, 0, span);
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      gelf_getphdr (elf, (int) i, &ph);
      if (ph.p_type == PT_LOAD)
	memcpy ((char *) base + ph.p_vaddr, copy + ph.p_offset, ph.p_filesz);
    }
  if (!fh_relocate (elf, base, span, why, why_len))
    goto out;
  /* Symbols from .symtab, else (a stripped object) from .dynsym; local
     symbols are not the executable's.  */
  Elf_Scn *scn = NULL;
  bool have_symtab = false;
  int symtab_type = fh_has_section (elf, SHT_SYMTAB) ? SHT_SYMTAB : SHT_DYNSYM;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL)
	{
	  snprintf (why, why_len, "bad section header");
	  goto out;
	}
      if (sh.sh_type != (unsigned) symtab_type)
	continue;
      have_symtab = true;
      Elf_Data *d = elf_getdata (scn, NULL);
      if (d == NULL || sh.sh_entsize == 0)
	{
	  snprintf (why, why_len, "unreadable symbol table");
	  goto out;
	}
      size_t n = sh.sh_size / sh.sh_entsize;
      for (size_t k = 0; k < n; k++)
	{
	  GElf_Sym s;
	  if (gelf_getsym (d, (int) k, &s) == NULL)
	    {
	      snprintf (why, why_len, "bad symbol %zu", k);
	      goto out;
	    }
	  bool local = GELF_ST_BIND (s.st_info) == STB_LOCAL;
	  if (GELF_ST_TYPE (s.st_info) != STT_OBJECT
	      || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
	    continue;
	  const char *name = elf_strptr (elf, sh.sh_link, s.st_name);
	  if (name == NULL || *name == '\0')
	    continue;
	  size_t len = strlen (name);
	  bool kernel = len > 3 && strcmp (name + len - 3, ".kd") == 0;
	  if (local && (kernel || s.st_value + s.st_size > span
			|| s.st_value > span))
	    continue;
	  if (s.st_value + s.st_size > span || s.st_value > span)
	    {
	      snprintf (why, why_len, "symbol %s outside the loaded image",
			name);
	      goto out;
	    }
	  if (kernel && s.st_size != 64)
	    {
	      snprintf (why, why_len, "kernel descriptor %s is %llu bytes",
			name, (unsigned long long) s.st_size);
	      goto out;
	    }
	  struct fh_symbol *sym = calloc (1, sizeof *sym);
	  struct fh_symbol **ns = realloc (syms, (nsyms + 1) * sizeof *ns);
	  if (sym == NULL || ns == NULL || (sym->name = strdup (name)) == NULL)
	    {
	      free (sym);
	      if (ns != NULL)
		syms = ns;
	      st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	      goto out;
	    }
	  syms = ns;
	  syms[nsyms++] = sym;
	  sym->exec = e;
	  sym->agent = a;
	  sym->kernel = kernel;
	  sym->local = local;
	  sym->addr = (uintptr_t) base + s.st_value;
	  sym->size = s.st_size;
	  if (kernel)
	    {
	      /* AMDHSA kernel descriptor: group segment fixed size at 0,
		 private segment fixed size at 4, kernarg size at 8.  */
	      const unsigned char *kd = (const unsigned char *) sym->addr;
	      sym->group = fh_u32 (kd);
	      sym->private_ = fh_u32 (kd + 4);
	      sym->kernarg = fh_u32 (kd + 8);
	    }
	}
    }
  if (!have_symtab)
    {
      snprintf (why, why_len, "no symbol table");
      goto out;
    }
  if (!fh_metadata (elf, syms, nsyms, why, why_len))
    goto out;
  /* Commit.  */
  {
    struct fh_symbol **all = realloc (e->syms, (e->nsyms + nsyms)
				      * sizeof *all + 1);
    uintptr_t *code = realloc (e->code, (e->ncode + 1) * sizeof *code);
    if (all != NULL)
      e->syms = all;
    if (code != NULL)
      e->code = code;
    if (all == NULL || code == NULL)
      {
	st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	goto out;
      }
    memcpy (e->syms + e->nsyms, syms, nsyms * sizeof *syms);
    e->nsyms += nsyms;
    e->code[e->ncode++] = (uintptr_t) base;
    free (syms);
    syms = NULL;
    nsyms = 0;
    base = NULL;
    st = HSA_STATUS_SUCCESS;
  }
 out:
  for (int i = 0; i < nsyms; i++)
    fh_symbol_free (syms[i]);
  free (syms);
  if (base != NULL)
    fh_block_free ((uintptr_t) base, FH_BLOCK_CODE);
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  return st;
}

static hsa_status_t
fh_load_common (int sym, hsa_executable_t exec, hsa_agent_t agent,
		struct fh_reader *r)
{
  struct fh_exec *e = fh_exec_find (exec);
  struct fh_agent *a = fh_agent_find (agent);
  if (e == NULL)
    {
      fh_bad (sym, "unknown executable");
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
  if (a == NULL || !a->gpu)
    {
      fh_bad (sym, "not a GPU agent");
      return HSA_STATUS_ERROR_INVALID_AGENT;
    }
  if (e->frozen)
    {
      fh_bad (sym, "executable is frozen");
      return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    }
  char why[200];
  hsa_status_t st = fh_load (e, a, r->bytes, r->size, why, sizeof why);
  if (st == HSA_STATUS_SUCCESS)
    fh_log ("load agent %d %zu bytes, %d symbols", fh_agent_index (a),
	    r->size, e->nsyms);
  else
    fh_log ("load agent %d refused 0x%x: %s", fh_agent_index (a), st, why);
  return st;
}

hsa_status_t
hsa_executable_load_agent_code_object (hsa_executable_t exec,
				       hsa_agent_t agent,
				       hsa_code_object_reader_t reader,
				       const char *options,
				       hsa_loaded_code_object_t *loaded)
{
  ENTER (hsa_executable_load_agent_code_object);
  NEED_INIT (hsa_executable_load_agent_code_object);
  (void) options;
  struct fh_reader *r = fh_reader_find (reader.handle, FH_H_READER);
  if (r == NULL)
    BAD (hsa_executable_load_agent_code_object,
	 HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, "unknown reader");
  hsa_status_t st = fh_load_common (FH_hsa_executable_load_agent_code_object,
				    exec, agent, r);
  if (st == HSA_STATUS_SUCCESS && loaded != NULL)
    loaded->handle = (uintptr_t) r;
  RETURN (st);
}

hsa_status_t
hsa_executable_load_code_object (hsa_executable_t exec, hsa_agent_t agent,
				 hsa_code_object_t object,
				 const char *options)
{
  ENTER (hsa_executable_load_code_object);
  NEED_INIT (hsa_executable_load_code_object);
  (void) options;
  struct fh_reader *r = fh_reader_find (object.handle, FH_H_CODE_OBJECT);
  if (r == NULL)
    BAD (hsa_executable_load_code_object,
	 HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "unknown code object");
  RETURN (fh_load_common (FH_hsa_executable_load_code_object, exec, agent,
			  r));
}

hsa_status_t
hsa_executable_global_variable_define (hsa_executable_t exec,
				       const char *name, void *address)
{
  ENTER (hsa_executable_global_variable_define);
  NEED_INIT (hsa_executable_global_variable_define);
  (void) address;
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL || name == NULL)
    BAD (hsa_executable_global_variable_define,
	 HSA_STATUS_ERROR_INVALID_EXECUTABLE, "unknown executable or NULL name");
  RETURN (e->frozen ? HSA_STATUS_ERROR_FROZEN_EXECUTABLE : HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_executable_freeze (hsa_executable_t exec, const char *options)
{
  ENTER (hsa_executable_freeze);
  NEED_INIT (hsa_executable_freeze);
  (void) options;
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    BAD (hsa_executable_freeze, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable");
  if (e->frozen)
    BAD (hsa_executable_freeze, HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
	 "frozen twice");
  e->frozen = true;
  RETURN (HSA_STATUS_SUCCESS);
}

static void
fh_exec_free (struct fh_exec *e)
{
  for (int i = 0; i < e->nsyms; i++)
    fh_symbol_free (e->syms[i]);
  for (int i = 0; i < e->ncode; i++)
    fh_block_free (e->code[i], FH_BLOCK_CODE);
  free (e->syms);
  free (e->code);
  free (e);
}

hsa_status_t
hsa_executable_destroy (hsa_executable_t exec)
{
  ENTER (hsa_executable_destroy);
  NEED_INIT (hsa_executable_destroy);
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    BAD (hsa_executable_destroy, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable");
  fake_handle_remove (&fh_handles, FH_H_EXEC, e);
  fh_exec_free (e);
  fh_log ("executable destroyed");
  RETURN (HSA_STATUS_SUCCESS);
}

static hsa_status_t
fh_get_symbol (int sym, hsa_executable_t exec, const char *name,
	       const hsa_agent_t *agent, hsa_executable_symbol_t *out)
{
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL)
    {
      fh_bad (sym, "unknown executable");
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
  if (name == NULL || out == NULL)
    {
      fh_bad (sym, "NULL name or result");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  if (!e->frozen)
    fh_log ("warning %s: executable not frozen", fh_sym_names[sym]);
  struct fh_agent *a = agent != NULL ? fh_agent_find (*agent) : NULL;
  if (agent != NULL && a == NULL)
    {
      fh_bad (sym, "unknown agent");
      return HSA_STATUS_ERROR_INVALID_AGENT;
    }
  for (int i = 0; i < e->nsyms; i++)
    if (!e->syms[i]->local && strcmp (e->syms[i]->name, name) == 0
	&& (a == NULL || e->syms[i]->agent == a))
      {
	out->handle = (uintptr_t) e->syms[i];
	return HSA_STATUS_SUCCESS;
      }
  fh_log ("no symbol %s", name);
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t
hsa_executable_get_symbol_by_name (hsa_executable_t exec, const char *name,
				   const hsa_agent_t *agent,
				   hsa_executable_symbol_t *symbol)
{
  ENTER (hsa_executable_get_symbol_by_name);
  NEED_INIT (hsa_executable_get_symbol_by_name);
  RETURN (fh_get_symbol (FH_hsa_executable_get_symbol_by_name, exec, name,
			 agent, symbol));
}

hsa_status_t
hsa_executable_get_symbol (hsa_executable_t exec, const char *module,
			   const char *name, hsa_agent_t agent,
			   int32_t call_convention,
			   hsa_executable_symbol_t *symbol)
{
  ENTER (hsa_executable_get_symbol);
  NEED_INIT (hsa_executable_get_symbol);
  (void) module;
  (void) call_convention;
  RETURN (fh_get_symbol (FH_hsa_executable_get_symbol, exec, name, &agent,
			 symbol));
}

hsa_status_t
hsa_executable_iterate_symbols (hsa_executable_t exec,
				hsa_status_t (*cb) (hsa_executable_t,
						    hsa_executable_symbol_t,
						    void *),
				void *data)
{
  ENTER (hsa_executable_iterate_symbols);
  NEED_INIT (hsa_executable_iterate_symbols);
  struct fh_exec *e = fh_exec_find (exec);
  if (e == NULL || cb == NULL)
    BAD (hsa_executable_iterate_symbols, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
	 "unknown executable or NULL callback");
  struct fh_symbol **copy = malloc ((e->nsyms + 1) * sizeof *copy);
  if (copy == NULL)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  int n = 0;
  for (int i = 0; i < e->nsyms; i++)
    if (!e->syms[i]->local)
      copy[n++] = e->syms[i];
  pthread_mutex_unlock (&fh_lock);
  hsa_status_t r = HSA_STATUS_SUCCESS;
  for (int i = 0; i < n && r == HSA_STATUS_SUCCESS; i++)
    r = cb (exec, (hsa_executable_symbol_t) { (uintptr_t) copy[i] }, data);
  free (copy);
  return r;
}

hsa_status_t
hsa_executable_symbol_get_info (hsa_executable_symbol_t symbol,
				int attribute, void *value)
{
  ENTER (hsa_executable_symbol_get_info);
  NEED_INIT (hsa_executable_symbol_get_info);
  struct fh_symbol *s = fh_symbol_find (symbol);
  if (s == NULL)
    BAD (hsa_executable_symbol_get_info,
	 HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL, "unknown symbol %#llx",
	 (unsigned long long) symbol.handle);
  if (value == NULL)
    BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL value");
  bool kernel_attr = false, var_attr = false;
  switch (attribute)
    {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *(uint32_t *) value = s->kernel ? HSA_SYMBOL_KIND_KERNEL
				      : HSA_SYMBOL_KIND_VARIABLE;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      *(uint32_t *) value = (uint32_t) strlen (s->name);
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      /* Not NUL-terminated, as in ROCm.  */
      memcpy (value, s->name, strlen (s->name));
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      ((hsa_agent_t *) value)->handle = (uintptr_t) s->agent;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
      var_attr = true;
      *(uint64_t *) value = s->addr;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
      var_attr = true;
      *(uint32_t *) value = (uint32_t) s->size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      kernel_attr = true;
      *(uint64_t *) value = s->addr;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->kernarg;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      kernel_attr = true;
      *(uint32_t *) value = 16;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->group;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      kernel_attr = true;
      *(uint32_t *) value = s->private_;
      break;
    default:
      BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	   "attribute %d not implemented", attribute);
    }
  /* The real runtime answers these with garbage or an error for the
     other kind of symbol: the plugin should not ask.  */
  if ((kernel_attr && !s->kernel) || (var_attr && s->kernel))
    BAD (hsa_executable_symbol_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "attribute %d asked of %s %s", attribute,
	 s->kernel ? "kernel" : "variable", s->name);
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Signals.  */

/* A new signal of KIND (FH_H_SIGNAL or FH_H_DOORBELL) holding VALUE.  */
static struct fh_signal *
fh_signal_new (enum fh_handle_kind kind, int64_t value)
{
  struct fh_signal *s = calloc (1, sizeof *s);
  if (s == NULL || !fake_handle_add (&fh_handles, kind, s))
    {
      free (s);
      return NULL;
    }
  s->value = value;
  return s;
}

static void
fh_signal_free (enum fh_handle_kind kind, struct fh_signal *s)
{
  fake_handle_remove (&fh_handles, kind, s);
  free (s);
}

hsa_status_t
hsa_signal_create (hsa_signal_value_t initial, uint32_t num_consumers,
		   const hsa_agent_t *consumers, hsa_signal_t *signal)
{
  ENTER (hsa_signal_create);
  NEED_INIT (hsa_signal_create);
  if (signal == NULL || (num_consumers > 0 && consumers == NULL))
    BAD (hsa_signal_create, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL result or consumers");
  struct fh_signal *s = fh_signal_new (FH_H_SIGNAL, initial);
  if (s == NULL)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  signal->handle = (uintptr_t) s;
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_signal_destroy (hsa_signal_t signal)
{
  ENTER (hsa_signal_destroy);
  NEED_INIT (hsa_signal_destroy);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL || s->doorbell_of != NULL)
    BAD (hsa_signal_destroy, HSA_STATUS_ERROR_INVALID_SIGNAL,
	 s == NULL ? "unknown signal" : "a queue's doorbell");
  fh_signal_free (FH_H_SIGNAL, s);
  RETURN (HSA_STATUS_SUCCESS);
}

static void fh_process (struct fh_queue *q);

static void
fh_signal_store (int sym, hsa_signal_t signal, hsa_signal_value_t value)
{
  fh_enter_void (sym);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL)
    fh_bad (sym, "unknown signal %#llx", (unsigned long long) signal.handle);
  else
    {
      s->value = value;
      if (s->doorbell_of != NULL)
	fh_process (s->doorbell_of);
      pthread_cond_broadcast (&fh_cond);
    }
  pthread_mutex_unlock (&fh_lock);
}

void
hsa_signal_store_relaxed (hsa_signal_t s, hsa_signal_value_t v)
{
  fh_signal_store (FH_hsa_signal_store_relaxed, s, v);
}

void
hsa_signal_store_release (hsa_signal_t s, hsa_signal_value_t v)
{
  fh_signal_store (FH_hsa_signal_store_release, s, v);
}

void
hsa_signal_store_screlease (hsa_signal_t s, hsa_signal_value_t v)
{
  fh_signal_store (FH_hsa_signal_store_screlease, s, v);
}

static hsa_signal_value_t
fh_signal_load (int sym, hsa_signal_t signal)
{
  fh_enter_void (sym);
  struct fh_signal *s = fh_signal_find (signal);
  hsa_signal_value_t v = 0;
  if (s == NULL)
    fh_bad (sym, "unknown signal %#llx", (unsigned long long) signal.handle);
  else
    v = s->value;
  pthread_mutex_unlock (&fh_lock);
  return v;
}

hsa_signal_value_t
hsa_signal_load_relaxed (hsa_signal_t s)
{
  return fh_signal_load (FH_hsa_signal_load_relaxed, s);
}

hsa_signal_value_t
hsa_signal_load_acquire (hsa_signal_t s)
{
  return fh_signal_load (FH_hsa_signal_load_acquire, s);
}

hsa_signal_value_t
hsa_signal_load_scacquire (hsa_signal_t s)
{
  return fh_signal_load (FH_hsa_signal_load_scacquire, s);
}

static void
fh_signal_subtract (int sym, hsa_signal_t signal, hsa_signal_value_t v)
{
  fh_enter_void (sym);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL)
    fh_bad (sym, "unknown signal");
  else
    s->value -= v;
  pthread_cond_broadcast (&fh_cond);
  pthread_mutex_unlock (&fh_lock);
}

void
hsa_signal_subtract_relaxed (hsa_signal_t s, hsa_signal_value_t v)
{
  fh_signal_subtract (FH_hsa_signal_subtract_relaxed, s, v);
}

void
hsa_signal_subtract_release (hsa_signal_t s, hsa_signal_value_t v)
{
  fh_signal_subtract (FH_hsa_signal_subtract_release, s, v);
}

static bool
fh_condition (int cond, int64_t v, int64_t cmp)
{
  switch (cond)
    {
    case HSA_SIGNAL_CONDITION_EQ: return v == cmp;
    case HSA_SIGNAL_CONDITION_NE: return v != cmp;
    case HSA_SIGNAL_CONDITION_LT: return v < cmp;
    case HSA_SIGNAL_CONDITION_GTE: return v >= cmp;
    }
  return true;
}

/* Waits until the condition holds (packets complete when the doorbell
   rings, or when the gate opens), or TIMEOUT_HINT nanoseconds passed
   (HSA allows returning early: the caller re-checks).  */
static hsa_signal_value_t
fh_signal_wait (int sym, hsa_signal_t signal, int cond, int64_t cmp,
		uint64_t timeout_hint)
{
  fh_enter_void (sym);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL)
    {
      fh_bad (sym, "unknown signal %#llx", (unsigned long long) signal.handle);
      pthread_mutex_unlock (&fh_lock);
      return 0;
    }
  if (cond < 0 || cond > HSA_SIGNAL_CONDITION_GTE)
    fh_bad (sym, "condition %d", cond);
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  /* Never more than 1 s per call: the caller loops.  */
  uint64_t ns = timeout_hint < 1000000000u ? timeout_hint : 1000000000u;
  until.tv_nsec += (long) ns;
  while (until.tv_nsec >= 1000000000)
    {
      until.tv_nsec -= 1000000000;
      until.tv_sec++;
    }
  while (fh_signal_find (signal) == s && !fh_condition (cond, s->value, cmp))
    if (pthread_cond_timedwait (&fh_cond, &fh_lock, &until) != 0)
      break;
  hsa_signal_value_t v = fh_signal_find (signal) == s ? s->value : 0;
  pthread_mutex_unlock (&fh_lock);
  return v;
}

hsa_signal_value_t
hsa_signal_wait_relaxed (hsa_signal_t s, int cond, hsa_signal_value_t cmp,
			 uint64_t timeout, int state)
{
  (void) state;
  return fh_signal_wait (FH_hsa_signal_wait_relaxed, s, cond, cmp, timeout);
}

hsa_signal_value_t
hsa_signal_wait_acquire (hsa_signal_t s, int cond, hsa_signal_value_t cmp,
			 uint64_t timeout, int state)
{
  (void) state;
  return fh_signal_wait (FH_hsa_signal_wait_acquire, s, cond, cmp, timeout);
}

hsa_signal_value_t
hsa_signal_wait_scacquire (hsa_signal_t s, int cond, hsa_signal_value_t cmp,
			   uint64_t timeout, int state)
{
  (void) state;
  return fh_signal_wait (FH_hsa_signal_wait_scacquire, s, cond, cmp,
			 timeout);
}

/* ------------------------------------------------------------------ */
/* Queues.  */

hsa_status_t
hsa_queue_create (hsa_agent_t agent, uint32_t size, uint32_t type,
		  void (*callback) (hsa_status_t, hsa_queue_t *, void *),
		  void *data, uint32_t private_size, uint32_t group_size,
		  hsa_queue_t **queue)
{
  ENTER (hsa_queue_create);
  NEED_INIT (hsa_queue_create);
  (void) private_size;
  (void) group_size;
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL || !a->gpu)
    BAD (hsa_queue_create, HSA_STATUS_ERROR_INVALID_AGENT,
	 "not a GPU agent");
  if (queue == NULL || size < 64 || size > 131072 || (size & (size - 1))
      || type > 1)
    BAD (hsa_queue_create, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "size %u (a power of 2 in [64, 131072]), type %u", size, type);
  struct fh_queue *q = calloc (1, sizeof *q);
  void *ring = NULL;
  if (q == NULL || posix_memalign (&ring, 64, (size_t) size * 64) != 0)
    {
      free (q);
      RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    }
  /* Every slot starts INVALID, as the packet processor expects.  */
  for (uint32_t i = 0; i < size; i++)
    ((fh_dispatch_packet *) ring)[i].header = HSA_PACKET_TYPE_INVALID;
  q->doorbell = fh_signal_new (FH_H_DOORBELL, 0);
  if (q->doorbell == NULL || !fake_handle_add (&fh_handles, FH_H_QUEUE, q))
    {
      if (q->doorbell != NULL)
	fh_signal_free (FH_H_DOORBELL, q->doorbell);
      free (ring);
      free (q);
      RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    }
  q->doorbell->doorbell_of = q;
  q->agent = a;
  q->callback = callback;
  q->cb_data = data;
  q->q.type = type;
  q->q.features = HSA_FEATURE_KERNEL_DISPATCH;
  q->q.base_address = ring;
  q->q.doorbell_signal.handle = (uintptr_t) q->doorbell;
  q->q.size = size;
  q->q.id = fh_next_queue_id++;
  *queue = &q->q;
  fh_log ("queue create agent %d size %u", fh_agent_index (a), size);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_queue_destroy (hsa_queue_t *queue)
{
  ENTER (hsa_queue_destroy);
  NEED_INIT (hsa_queue_destroy);
  struct fh_queue *q = fh_queue_find (queue);
  if (q == NULL)
    BAD (hsa_queue_destroy, HSA_STATUS_ERROR_INVALID_QUEUE, "unknown queue");
  if (q->read_index != q->write_index)
    fh_log ("warning hsa_queue_destroy: %llu packets pending",
	    (unsigned long long) (q->write_index - q->read_index));
  fake_handle_remove (&fh_handles, FH_H_QUEUE, q);
  fh_signal_free (FH_H_DOORBELL, q->doorbell);
  free (q->q.base_address);
  free (q);
  pthread_cond_broadcast (&fh_cond);
  RETURN (HSA_STATUS_SUCCESS);
}

static struct fh_queue *
fh_queue_get (int sym, const hsa_queue_t *queue)
{
  fh_enter_void (sym);
  struct fh_queue *q = fh_queue_find (queue);
  if (q == NULL)
    fh_bad (sym, "unknown queue %p", (const void *) queue);
  return q;
}

#define QUEUE_LOAD(name, field) \
  uint64_t name (const hsa_queue_t *queue) \
  { \
    struct fh_queue *q = fh_queue_get (FH_##name, queue); \
    uint64_t v = q != NULL ? q->field : 0; \
    pthread_mutex_unlock (&fh_lock); \
    return v; \
  }
QUEUE_LOAD (hsa_queue_load_write_index_relaxed, write_index)
QUEUE_LOAD (hsa_queue_load_write_index_acquire, write_index)
QUEUE_LOAD (hsa_queue_load_write_index_scacquire, write_index)
QUEUE_LOAD (hsa_queue_load_read_index_relaxed, read_index)
QUEUE_LOAD (hsa_queue_load_read_index_acquire, read_index)
QUEUE_LOAD (hsa_queue_load_read_index_scacquire, read_index)

#define QUEUE_ADD(name) \
  uint64_t name (const hsa_queue_t *queue, uint64_t value) \
  { \
    struct fh_queue *q = fh_queue_get (FH_##name, queue); \
    uint64_t v = 0; \
    if (q != NULL) \
      { \
	v = q->write_index; \
	q->write_index += value; \
      } \
    pthread_mutex_unlock (&fh_lock); \
    return v; \
  }
QUEUE_ADD (hsa_queue_add_write_index_relaxed)
QUEUE_ADD (hsa_queue_add_write_index_release)
QUEUE_ADD (hsa_queue_add_write_index_screlease)
QUEUE_ADD (hsa_queue_add_write_index_acq_rel)
QUEUE_ADD (hsa_queue_add_write_index_scacq_screl)

#define QUEUE_STORE(name) \
  void name (const hsa_queue_t *queue, uint64_t value) \
  { \
    struct fh_queue *q = fh_queue_get (FH_##name, queue); \
    if (q != NULL) \
      q->write_index = value; \
    pthread_mutex_unlock (&fh_lock); \
  }
QUEUE_STORE (hsa_queue_store_write_index_relaxed)
QUEUE_STORE (hsa_queue_store_write_index_release)
QUEUE_STORE (hsa_queue_store_write_index_screlease)

/* The loaded kernel whose descriptor is at OBJ, on agent A.  */
static struct fh_symbol *
fh_kernel_at (uint64_t obj, struct fh_agent *a)
{
  struct fh_exec *e;
  FAKE_HANDLES_EACH (&fh_handles, FH_H_EXEC, e)
    for (int i = 0; i < e->nsyms; i++)
      if (e->syms[i]->kernel && !e->syms[i]->local
	  && e->syms[i]->addr == obj && e->syms[i]->agent == a)
	return e->syms[i];
  return NULL;
}

/* The queue error callback of a faulted dispatch, called from a thread
   of the runtime's, as ROCm does.  */
struct fh_fault
{
  void (*callback) (hsa_status_t, hsa_queue_t *, void *);
  hsa_status_t status;
  hsa_queue_t *queue;
  void *data;
};

static void *
fh_fault_thread (void *arg)
{
  struct fh_fault *f = arg;
  f->callback (f->status, f->queue, f->data);
  free (f);
  return NULL;
}

/* Whether an injected fault hits this dispatch; its status.  */
static hsa_status_t
fh_dispatch_fault (void)
{
  const struct fake_fail *f = fake_count_call (&fh_fs, FH_kernel_dispatch,
					       NULL);
  if (f == NULL)
    return HSA_STATUS_SUCCESS;
  return f->err >= 0 ? f->err : fh_default_status (FH_kernel_dispatch);
}

/* Check and record one kernel-dispatch packet.  */
static void
fh_dispatch (struct fh_queue *q, const fh_dispatch_packet *p)
{
  const int sym = FH_hsa_signal_store_relaxed;
  unsigned dims = p->setup & 3;
  struct fh_symbol *k = fh_kernel_at (p->kernel_object, q->agent);
  if (dims < 1 || dims > 3)
    fh_bad (sym, "dispatch: setup dimensions %u", dims);
  if (p->workgroup_size_x == 0 || p->workgroup_size_y == 0
      || p->workgroup_size_z == 0
      || (unsigned) p->workgroup_size_x * p->workgroup_size_y
	 * p->workgroup_size_z > 1024)
    fh_bad (sym, "dispatch: workgroup %u,%u,%u", p->workgroup_size_x,
	    p->workgroup_size_y, p->workgroup_size_z);
  if (p->grid_size_x == 0 || p->grid_size_y == 0 || p->grid_size_z == 0)
    fh_bad (sym, "dispatch: grid %u,%u,%u", p->grid_size_x, p->grid_size_y,
	    p->grid_size_z);
  if ((dims < 2 && (p->grid_size_y != 1 || p->workgroup_size_y != 1))
      || (dims < 3 && (p->grid_size_z != 1 || p->workgroup_size_z != 1)))
    fh_bad (sym, "dispatch: %u dimensions but grid %u,%u,%u workgroup "
	    "%u,%u,%u", dims, p->grid_size_x, p->grid_size_y, p->grid_size_z,
	    p->workgroup_size_x, p->workgroup_size_y, p->workgroup_size_z);
  if (k == NULL)
    fh_bad (sym, "dispatch: kernel object %#llx is no loaded kernel of "
	    "agent %d", (unsigned long long) p->kernel_object,
	    fh_agent_index (q->agent));
  else if (p->private_segment_size < k->private_
	   || p->group_segment_size < k->group)
    fh_bad (sym, "dispatch: %s needs private %u group %u, packet has %u, %u",
	    k->name, k->private_, k->group, p->private_segment_size,
	    p->group_segment_size);
  struct fake_block *b = fh_block_find ((uintptr_t) p->kernarg_address);
  struct fh_region *region = b != NULL ? b->owner : NULL;
  size_t need = k != NULL ? k->kernarg : 8;
  if (b == NULL || b->kind != FH_BLOCK_MEM || region == NULL
      || (region->kind != FH_KERNARG && region->kind != FH_SYSTEM))
    fh_bad (sym, "dispatch: kernarg address %p is not in a kernarg-region "
	    "allocation", p->kernarg_address);
  else if ((uintptr_t) p->kernarg_address + need > b->base + b->size)
    fh_bad (sym, "dispatch: %zu kernarg bytes at %p leave their block",
	    need, p->kernarg_address);
  else if ((uintptr_t) p->kernarg_address % 16 != 0)
    fh_bad (sym, "dispatch: kernarg address %p not 16-byte aligned",
	    p->kernarg_address);

  if (!fake_table_room (&fh_dispatches, &fh_dispatches_cap, fh_ndispatches,
			sizeof *fh_dispatches, 16))
    return;
  struct fh_dispatch *d = &fh_dispatches[fh_ndispatches++];
  memset (d, 0, sizeof *d);
  d->pkt = *p;
  d->agent = fh_agent_index (q->agent);
  snprintf (d->kernel, sizeof d->kernel, "%s", k != NULL ? k->name : "?");
  if (b != NULL)
    {
      size_t avail = b->base + b->size - (uintptr_t) p->kernarg_address;
      d->kernarg_len = avail < sizeof d->kernargs ? avail
		       : sizeof d->kernargs;
      memcpy (d->kernargs, p->kernarg_address, d->kernarg_len);
    }
  fh_log ("dispatch agent %d %s grid %u,%u,%u workgroup %u,%u,%u private %u "
	  "group %u", d->agent, d->kernel, p->grid_size_x, p->grid_size_y,
	  p->grid_size_z, p->workgroup_size_x, p->workgroup_size_y,
	  p->workgroup_size_z, p->private_segment_size,
	  p->group_segment_size);
}

/* The packet processor: take the packets up to the write index (the
   doorbell says where the producer is); each completes at once unless
   the gate is closed.  Called with FH_LOCK held.  */
static void
fh_process (struct fh_queue *q)
{
  if (fh_gate_closed)
    return;
  while (q->read_index < q->write_index)
    {
      fh_dispatch_packet *p = (fh_dispatch_packet *) q->q.base_address
			      + (q->read_index & (q->q.size - 1));
      unsigned type = p->header & 0xff;
      if (type == HSA_PACKET_TYPE_INVALID)
	/* Reserved but not yet published: the producer writes the header
	   last and rings again.  */
	break;
      if (q->faulted)
	break;
      if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH)
	{
	  fh_dispatch (q, p);
	  hsa_status_t st = fh_dispatch_fault ();
	  if (st != HSA_STATUS_SUCCESS)
	    {
	      fh_log ("fail kernel_dispatch %s -> 0x%x",
		      fh_ndispatches > 0
		      ? fh_dispatches[fh_ndispatches - 1].kernel : "?", st);
	      q->faulted = true;
	      struct fh_fault *f = malloc (sizeof *f);
	      pthread_t th;
	      pthread_attr_t attr;
	      pthread_attr_init (&attr);
	      pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
	      if (f != NULL && q->callback != NULL)
		{
		  *f = (struct fh_fault) { q->callback, st, &q->q, q->cb_data };
		  if (pthread_create (&th, &attr, fh_fault_thread, f) != 0)
		    free (f);
		}
	      else
		free (f);
	      pthread_attr_destroy (&attr);
	      break;
	    }
	}
      else if (type != HSA_PACKET_TYPE_BARRIER_AND
	       && type != HSA_PACKET_TYPE_BARRIER_OR)
	fh_bad (FH_hsa_signal_store_relaxed, "packet type %u", type);
      /* Barrier packets have their completion signal at the same
	 offset.  */
      hsa_signal_t done = p->completion_signal;
      p->header = HSA_PACKET_TYPE_INVALID;
      q->read_index++;
      if (done.handle != 0)
	{
	  struct fh_signal *s = fh_signal_find (done);
	  if (s == NULL)
	    fh_bad (FH_hsa_signal_store_relaxed,
		    "packet completion signal %#llx unknown",
		    (unsigned long long) done.handle);
	  else
	    s->value--;
	}
    }
  pthread_cond_broadcast (&fh_cond);
}

/* ------------------------------------------------------------------ */
/* For tests that load this library themselves.  */

/* Replace the failures to inject (FAKEHSA_FAIL syntax; NULL or "" for
   none); call counts for @N start again.  0 if SPEC is bad.  */
int
fakehsa_fail (const char *spec)
{
  return fake_control_fail (&fh_fs, spec);
}

/* Close (CLOSED != 0) or open the gate.  While it is closed, rung
   packets stay in their queues (their signals keep their values); opening
   it processes them.  */
void
fakehsa_gate (int closed)
{
  pthread_mutex_lock (&fh_lock);
  fh_gate_closed = closed != 0;
  struct fh_queue *q;
  if (!fh_gate_closed)
    FAKE_HANDLES_EACH (&fh_handles, FH_H_QUEUE, q)
      fh_process (q);
  pthread_cond_broadcast (&fh_cond);
  pthread_mutex_unlock (&fh_lock);
}

/* Calls of SYM so far (-1: no such symbol).  */
long
fakehsa_calls (const char *sym)
{
  return fake_control_calls (&fh_fs, sym);
}

/* How many of KIND are alive: "mem" (region and pool allocations),
   "executable", "code" (loaded code blocks), "reader" (code object
   readers and deserialized code objects), "queue", "signal" (not counting
   doorbells), "init" (hsa_init not matched by hsa_shut_down).  -1 for an
   unknown kind.  */
long
fakehsa_outstanding (const char *kind)
{
  long n = -1;
  pthread_mutex_lock (&fh_lock);
  if (strcmp (kind, "mem") == 0)
    n = fake_block_count (&fh_blocks, FH_BLOCK_MEM);
  else if (strcmp (kind, "code") == 0)
    n = fake_block_count (&fh_blocks, FH_BLOCK_CODE);
  else if (strcmp (kind, "executable") == 0)
    n = fake_handle_count (&fh_handles, FH_H_EXEC);
  else if (strcmp (kind, "reader") == 0)
    n = (fake_handle_count (&fh_handles, FH_H_READER)
	 + fake_handle_count (&fh_handles, FH_H_CODE_OBJECT));
  else if (strcmp (kind, "queue") == 0)
    n = fake_handle_count (&fh_handles, FH_H_QUEUE);
  else if (strcmp (kind, "signal") == 0)
    n = fake_handle_count (&fh_handles, FH_H_SIGNAL);
  else if (strcmp (kind, "init") == 0)
    n = fh_init_refs;
  pthread_mutex_unlock (&fh_lock);
  return n;
}

/* Dispatches recorded so far.  */
int
fakehsa_dispatch_count (void)
{
  pthread_mutex_lock (&fh_lock);
  int n = (int) fh_ndispatches;
  pthread_mutex_unlock (&fh_lock);
  return n;
}

/* Dispatch I (0-based): the packet as the plugin wrote it (PACKET: 64
   bytes, header included), the agent index, the kernel's symbol name
   (NAME.kd; "?" for an unknown kernel object) and up to KARGS_LEN bytes of
   the kernarg block as it was at dispatch.  Returns the number of kernarg
   bytes copied + 1, 0 if there is no dispatch I.  Any pointer may be
   NULL.  */
int
fakehsa_dispatch_info (int i, void *packet, int *agent, char *kernel,
		       size_t kernel_len, void *kargs, size_t kargs_len)
{
  pthread_mutex_lock (&fh_lock);
  if (i < 0 || (size_t) i >= fh_ndispatches)
    {
      pthread_mutex_unlock (&fh_lock);
      return 0;
    }
  struct fh_dispatch *d = &fh_dispatches[i];
  if (packet != NULL)
    memcpy (packet, &d->pkt, sizeof d->pkt);
  if (agent != NULL)
    *agent = d->agent;
  if (kernel != NULL && kernel_len > 0)
    snprintf (kernel, kernel_len, "%s", d->kernel);
  size_t n = d->kernarg_len < kargs_len ? d->kernarg_len : kargs_len;
  if (kargs != NULL)
    memcpy (kargs, d->kernargs, n);
  pthread_mutex_unlock (&fh_lock);
  return (int) n + 1;
}

/* Invalid calls so far, and the last one described.  */
long
fakehsa_bad_calls (const char **last)
{
  return fake_control_bad_calls (&fh_fs, last);
}

/* The address, size and kind (1 kernel, 0 variable) of the live symbol
   NAME (kernels: NAME.kd; also a `static' variable's local symbol, which
   no HSA call finds, when no global one has the name) most recently
   loaded for agent AGENT (an index
   as in fakehsa_dispatch_info; -1: any agent); 0 if none.  For kernels,
   *SIZE is the descriptor's private segment size and *EXTRA packs group
   segment size << 32 | kernarg size.  */
int
fakehsa_symbol (const char *name, int agent, uintptr_t *addr,
		uint64_t *size, int *kernel, uint64_t *extra)
{
  int found = 0;
  pthread_mutex_lock (&fh_lock);
  /* Global symbols first, then local ones (`static' variables).  */
  struct fh_exec *e;
  for (int pass = 0; pass < 2 && !found; pass++)
    FAKE_HANDLES_EACH (&fh_handles, FH_H_EXEC, e)
      for (int i = e->nsyms - 1; i >= 0 && !found; i--)
	if (e->syms[i]->local == (pass == 1)
	    && strcmp (e->syms[i]->name, name) == 0
	    && (agent < 0 || fh_agent_index (e->syms[i]->agent) == agent))
	  {
	    struct fh_symbol *s = e->syms[i];
	    if (addr != NULL)
	      *addr = s->addr;
	    if (size != NULL)
	      *size = s->kernel ? s->private_ : s->size;
	    if (kernel != NULL)
	      *kernel = s->kernel;
	    if (extra != NULL)
	      *extra = (uint64_t) s->group << 32 | s->kernarg;
	    found = 1;
	  }
  pthread_mutex_unlock (&fh_lock);
  return found;
}

/* Whether hsa_init ever succeeded in this process.  */
int
fakehsa_initialised (void)
{
  pthread_mutex_lock (&fh_lock);
  int r = fh_initialised_once;
  pthread_mutex_unlock (&fh_lock);
  return r;
}

static void
fh_atfork_prepare (void)
{
  pthread_mutex_lock (&fh_lock);
}

static void
fh_atfork_release (void)
{
  pthread_mutex_unlock (&fh_lock);
}

__attribute__ ((constructor)) static void
fh_init (void)
{
  pthread_atfork (fh_atfork_prepare, fh_atfork_release, fh_atfork_release);
}

static void
fh_reset_tables (void)
{
  free (fh_dispatches);
  fh_dispatches = NULL;
  fh_ndispatches = fh_dispatches_cap = 0;
  fake_tables_release (&fh_handles, &fh_blocks);
}

/* At unload or exit: if asked, fail when anything created is alive.
   (Kernels do not run, so nothing else needs stopping.)  */
__attribute__ ((destructor)) static void
fh_fini (void)
{
  pthread_mutex_lock (&fh_lock);
  fh_reset_tables ();
  pthread_mutex_unlock (&fh_lock);
  static const char *const kinds[] = { "mem", "code", "executable", "reader",
				       "queue", "signal" };
  fake_check_leaks ("fakehsa", "FAKEHSA_CHECK_LEAKS", kinds,
		    sizeof kinds / sizeof kinds[0], fakehsa_outstanding);
}
