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
     that touch a block must stay inside it; locked host memory has
     another address for the agents, as ROCr may give it, which only
     rectangular copies accept; shared virtual memory ranges keep their
     attributes until the pages are unmapped (as KFD drops them);
   - code objects are read with libelf: ELF64, EM_AMDGPU, an e_flags
     machine equal to the agent's or that of a generic target the agent
     is a member of (code object v6, version 1 or later), PT_LOAD segments inside the file; the
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
   functions of control.c.  One mutex guards everything.

   This header is what the fake's files share; each file has one area:
     core.c          configuration, the entry of every call, statuses,
                     initialisation, the library's start and end
     agents.c        agents and their ISAs
     regions.c       regions and AMD memory pools
     memory.c        allocations and copies
     amd-memory.c    locked host memory, rectangular copies, shared
                     virtual memory, pointer information
     code-object.c   reading a code object into an executable (libelf)
     executables.c   code object readers and executables
     symbols.c       the executables' symbols
     signals.c       signals
     queues.c        queues and the packet processor
     control.c       the fakehsa_* functions for tests  */

#ifndef OFFLOADKIT_FAKEHSA_FAKE_HSA_H
#define OFFLOADKIT_FAKEHSA_FAKE_HSA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../fakes/fake-common.h"
#include "hsa-types.h"

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
  X (hsa_amd_memory_fill) \
  X (hsa_amd_memory_lock) X (hsa_amd_memory_unlock) \
  X (hsa_amd_memory_async_copy_rect) \
  X (hsa_amd_svm_attributes_set) X (hsa_amd_svm_attributes_get) \
  X (hsa_amd_pointer_info) \
  X (kernel_dispatch)

enum fh_sym
{
#define X(s) FH_##s,
  FH_SYMS (X)
#undef X
  FH_NSYMS
};

/* Everything below stays out of the dynamic symbol table: the fake
   exports the runtime's functions and its fakehsa_* queries only.  */
#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------ */
/* State, guarded by FH_LOCK (core.c unless said otherwise).  */

/* The names of the exported symbols (by enum fh_sym), FH_LOCK and
   FH_COND.  */
FAKE_DECLARE_CORE (fh_sym_names, FH_NSYMS, fh_lock, fh_cond);
extern bool fh_initialised_once;
extern int fh_init_refs;	/* hsa_init calls not shut down.  */

/* Call counts, failures to inject (FAKEHSA_FAIL: status numbers or
   names), the log, invalid calls seen.  */
extern struct fake_state fh_fs;

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
  unsigned generic_mach;	/* Its generic target's, or 0.  */
  struct fh_region regions[FH_NREGIONS];
};

/* The agents (agents.c): FH_NAGENTS GPU agents, then the CPU agent.  */
extern struct fh_agent fh_agents[FH_MAX_AGENTS + 1];
extern int fh_nagents;

/* "Device" memory: region and pool allocations (owned by their region)
   and loaded code objects (owned by none).  */
enum fh_block_kind { FH_BLOCK_MEM, FH_BLOCK_CODE };
extern struct fake_blocks fh_blocks;

/* Live handles, by kind.  A doorbell is a signal of its queue's, not
   counted with those the plugin creates.  */
enum fh_handle_kind
{
  FH_H_EXEC, FH_H_READER, FH_H_CODE_OBJECT, FH_H_SIGNAL, FH_H_DOORBELL,
  FH_H_QUEUE, FH_H_LOCK
};
extern struct fake_handles fh_handles;

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
  uint64_t queue;		/* The id of the queue it came on.  */
  char kernel[128];
  unsigned char kernargs[256];
  size_t kernarg_len;
};

/* Dispatch records and the gate (queues.c).  */
extern struct fake_records fh_dispatches;
/* While closed, rung packets stay in their queues.  */
extern bool fh_gate_closed;

/* ------------------------------------------------------------------ */
/* The entry of every call (core.c).  Called with FH_LOCK held.  */

#define fh_log(...) fake_log (&fh_fs, __VA_ARGS__)
/* The plugin made a call the real runtime would refuse (or that would
   fault on a GPU).  */
#define fh_bad(...) fake_bad (&fh_fs, __VA_ARGS__)

/* Count a call of SYM and inject a failure if one is armed.  Takes
   FH_LOCK; returns with it held on success and released otherwise.  */
hsa_status_t fh_enter (int sym);
/* For the functions that cannot fail: count, lock.  */
void fh_enter_void (int sym);
/* The status a failing SYM returns when FAKEHSA_FAIL names none.  */
int fh_default_status (int sym);

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
/* What the files give each other.  */

/* agents.c: make the GPU agents of LIST (FAKEHSA_AGENTS' syntax) and the
   CPU agent.  */
void fh_agents_configure (const char *list);
/* The agent A, or NULL.  */
struct fh_agent *fh_agent_find (hsa_agent_t a);
/* A's index: GPU agents from 0, then the CPU agent.  */
int fh_agent_index (const struct fh_agent *a);

/* regions.c: the region (or pool) H, or NULL.  */
struct fh_region *fh_region_find (uint64_t h);

/* memory.c: the live block containing ADDR, or NULL.  */
struct fake_block *fh_block_find (uintptr_t addr);
/* A new block of KIND, of region R for FH_BLOCK_MEM, filled with a
   pattern, not zeros.  */
void *fh_block_new (size_t size, enum fh_block_kind kind,
		    struct fh_region *r);
bool fh_block_free (uintptr_t addr, enum fh_block_kind kind);

/* code-object.c: load code object BYTES[0, SIZE) for agent A into
   executable E; on failure *WHY says why.  */
hsa_status_t fh_load (struct fh_exec *e, struct fh_agent *a,
		      const unsigned char *bytes, size_t size, char *why,
		      size_t why_len);

/* executables.c: the live executable E, or NULL.  */
struct fh_exec *fh_exec_find (hsa_executable_t e);
void fh_symbol_free (struct fh_symbol *s);

/* signals.c: the signal S, a queue's doorbell included, or NULL.  */
struct fh_signal *fh_signal_find (hsa_signal_t s);
/* A new signal of KIND (FH_H_SIGNAL or FH_H_DOORBELL) holding VALUE.  */
struct fh_signal *fh_signal_new (enum fh_handle_kind kind, int64_t value);
void fh_signal_free (enum fh_handle_kind kind, struct fh_signal *s);

/* queues.c: the packet processor of Q (its doorbell rang, or the gate
   opened).  */
void fh_process (struct fh_queue *q);

#pragma GCC visibility pop

/* control.c, exported: how many of KIND are alive.  */
long fakehsa_outstanding (const char *kind);
/* amd-memory.c, exported: the SVM range of P.  */
int fakehsa_svm (uintptr_t p, uintptr_t *base, size_t *size, uint64_t *flag,
		 unsigned *agents);

/* metadata.c: the AMDGPU metadata note (type FH_NT_AMDGPU_METADATA,
   owner "AMDGPU") of a code object.  FN gets each kernel's symbol
   (SYMLEN bytes, not NUL-terminated) and kernarg segment size; -1 when
   the note is not well-formed MessagePack.  */
#define FH_NT_AMDGPU_METADATA 32u
#define FH_AMDGPU_NOTE_OWNER "AMDGPU"
typedef void (*fh_kernarg_fn) (const char *symbol, size_t symlen,
			       uint64_t kernarg, void *arg);
int fh_metadata_kernargs (const unsigned char *desc, size_t len,
			  fh_kernarg_fn fn, void *arg);

#endif
