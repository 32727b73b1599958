/* The emulated device (OFFLOADKIT_EMULATE=N), a backend of both plugins:
   it runs each target region's host-fallback function, but on separate
   "device" memory, so that programs exercise the whole offloading
   protocol (mapping, copies, images, asynchronous regions) without a GPU,
   and mapping mistakes show.  Split by concern:

     emu-setting.c OFFLOADKIT_EMULATE: how many devices
     emu-device.c  starting and stopping devices, the backend itself
     emu-memory.c  device memory: the registry of live blocks, allocation,
                   copies
     emu-image.c   images: the variables' device copies
     emu-view.c    what a running region sees in the variables' host
                   globals
     emu-run.c     the worker that runs a device's regions in order
     emu-queue.c   OpenACC: queues, launches, properties
     emu-rev.c     reverse offload: `target device (ancestor: 1)' regions
                   of a running region go to libgomp, which runs them on
                   the host

   Device memory is host memory from malloc, so device pointers given to a
   region work as they are.  Each allocation is its own malloc block,
   filled with a poison byte and recorded in a sorted per-device registry:
   copies must stay inside one live block and only live blocks may be
   freed, which turns mapping bugs into errors instead of silent
   corruption.

   Host-fallback code reads and writes `declare target' variables two ways:
   code that names a variable uses the host global, and a region body given
   the variable's device address (map clauses, `always' ones included)
   uses that.  On a device both are one place, so here too: an ordinary
   variable's device address is its host global.  Its device bytes are
   kept aside, copies to and from that address go to them, and a launch
   trades them with the host's bytes in the global for the run, all under
   one process-wide lock (the globals exist once per process); copies that
   touch a variable take the same lock, so they never see a half-done
   trade.  Variables in read-only memory (const tables, compiler-made
   constants) are never written: their device bytes cannot differ.
   `declare target link' variables are reached both ways too, but their
   device data is a separate mapping (see emu_view_begin).

   The region runs as on a device: the thread limit of its launch, and
   omp_get_device_num () / omp_is_initial_device () answer as on a device
   (through the wrapper's interposers, see offload-desc.h).

   The core (plugin-core.h) owns the device's identity, its list of
   loaded images (which a running region holds, ok_images_hold), the
   completion of asynchronous launches, and the error contract.  */

#ifndef OFFLOADKIT_EMU_INTERNAL_H
#define OFFLOADKIT_EMU_INTERNAL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host-queue.h"
#include "plugin-core.h"

struct emu_fault;
struct emu_region;

/* ---- emu-setting.c ---- */

/* The number of emulated devices OFFLOADKIT_EMULATE gives this plugin.  */
int emu_probe (void);

struct dl_phdr_info;
/* The kinds of device (bits by rank) the loaded object INFO has offloadkit
   images for.  */
unsigned emu_object_kinds (const struct dl_phdr_info *info);
/* offloadkit's plugins have ranks, the order in which they speak: nvptx
   0, gcn 1.  This plugin's, and how many there are.  */
int emu_rank (void);
int emu_num_ranks (void);
/* Symbol NAME of our plugin of rank RANK, another one, when the process
   has it loaded; else NULL.  */
void *emu_peer_symbol (int rank, const char *name);

/* ---- emu-memory.c ---- */

enum emu_kind
{
  EMU_USER,			/* From alloc; free may release it.  */
  EMU_VAR,			/* An image variable's device copy.  */
  EMU_DEVNUM			/* An image's __gomp_device_num.  */
};

struct emu_var;

/* One live allocation.  VIEWS counts the `declare target link' objects
   mapped in it that a running region also sees through their host objects
   (one mapping libgomp made may hold several): the block must not change
   or go away behind the region's back.  */
struct emu_block
{
  char *start;
  size_t size;
  enum emu_kind kind;
  unsigned views;
  /* Which allocation of the device this is, counting from 1: a block
     freed and another made at the same address are told apart.  */
  unsigned long serial;
  /* Non-NULL: START is an ordinary variable's host global, which is also
     its device address; its device bytes live in VAR->copy except while a
     region runs with them in the global.  */
  struct emu_var *var;
  /* Non-NULL: this block is the pointer slot of link variable LINK, and
     copies into it say where the variable's device data is
     (emu_link_resolve).  */
  struct emu_var *link;
};

struct emu_job;
struct emu_rev_req;

struct emu_device
{
  struct ok_device base;	/* First: the core's part.  */

  pthread_mutex_t mem_lock;	/* Guards the registry.  */
  struct emu_block *blocks;	/* Sorted by start.  */
  size_t num_blocks, max_blocks;
  /* The device's memory as a GPU's driver counts it: its size
     (OFFLOADKIT_EMULATE_MEMORY, else the host's memory) and the bytes of
     its live blocks (allocations, managed memory, images' variables).  */
  size_t mem_total, mem_used;
  unsigned long last_serial;	/* Of the newest block.  */
  /* The reverse-offload requests of the device's region that libgomp is
     serving (emu-rev.c), under MEM_LOCK: its copies may read and write
     what they name.  */
  struct emu_rev_req *rev_reqs;
  /* Held while libgomp serves a request of the region made inside a
     parallel region of it: one at a time.  */
  pthread_mutex_t rev_lock;

  /* The worker's queue (emu-run.c).  */
  pthread_mutex_t queue_lock;
  pthread_cond_t queue_cond;	/* Signalled for the worker.  */
  pthread_cond_t done_cond;	/* Signalled when a job ends.  */
  struct emu_job *head, *tail;
  bool stopping;
  /* The worker waits on QUEUE_COND, and WAITERS threads on DONE_COND:
     only then are they signalled (each spins first, emu-run.c).  */
  bool worker_asleep;
  unsigned waiters;
  void *worker_altstack;	/* The worker's signal stack.  */
  pthread_t worker;

  /* OpenACC (emu-queue.c): the frees asked for on its queues' threads
     (libgomp's callbacks unmapping data), which wait for the next
     synchronous operation (emu_acc_sync): work queued earlier on another
     queue may still use the memory.  */
  pthread_mutex_t defer_lock;	/* Guards DEFERRED.  */
  void **deferred;
  size_t num_deferred, max_deferred;
};

/* The emulated device whose core half is D.  */
static inline struct emu_device *
emu_dev (struct ok_device *d)
{
  return (struct emu_device *) d;
}

/* Set while the calling thread, a region's, runs a reverse-offload region
   of it on the host (emu-rev.c): host code, without the region lock, but
   still inside the region for the core (exit there leaves the devices
   alone, as the threads a finalisation would wait for wait for it).  */
extern __thread bool emu_on_host;

/* The device whose region the calling thread runs (it then holds
   emu_region_lock), or NULL.  */
static inline struct emu_device *
emu_current (void)
{
  struct ok_device *d = ok_region_device ();
  return (d != NULL && d->backend == &ok_backend_emulated && !emu_on_host
	  ? emu_dev (d) : NULL);
}

/* Held while any region runs, on any emulated device: the variables' host
   globals exist once per process.  The region's thread holds it, and lets
   go of it while a reverse-offload region of it runs on the host with the
   host's bytes in the globals (emu-rev.c).  */
extern pthread_mutex_t emu_region_lock;
/* How many regions' threads run a reverse-offload region on the host
   without the region lock (at most one): the host code expects the
   host's bytes in the globals, so no region may show its device's there
   meanwhile, and a region waits on EMU_REGION_COND before it does.
   Copies need not wait: they find the device bytes aside.  Under
   EMU_REGION_LOCK.  */
extern unsigned emu_regions_on_host;
extern pthread_cond_t emu_region_cond;

/* The region lock, unless this thread already holds it because it is
   running a region.  Return whether it was taken.  */
bool emu_lock_region (void);
void emu_unlock_region (bool taken);

/* The registry.  The caller holds DEV->mem_lock.  */
/* The block holding all of [PTR, PTR + N), N > 0, or NULL.  */
struct emu_block *emu_reg_find (struct emu_device *dev, const void *ptr,
				size_t n);
/* The block that starts exactly at PTR, or NULL.  */
struct emu_block *emu_reg_exact (struct emu_device *dev, const void *ptr);
/* The newest block of kind KIND that holds some of [PTR, PTR + N), or
   NULL.  */
struct emu_block *emu_reg_newest (struct emu_device *dev, const void *ptr,
				  size_t n, enum emu_kind kind);
/* Record a block; false when there is no room for it (the device's
   memory is full) or for its record.  The caller holds MEM_LOCK.  */
bool emu_reg_insert (struct emu_device *dev, char *start, size_t size,
		     enum emu_kind kind);
void emu_reg_remove (struct emu_device *dev, struct emu_block *b);

/* A new poisoned block of SIZE bytes (a unique one for 0), or NULL after
   an error.  */
char *emu_new_block (struct emu_device *dev, size_t size, enum emu_kind kind);
/* Release a block that load_image made (no error checking needed).  */
void emu_drop_block (struct emu_device *dev, char *p);

void *emu_alloc (struct ok_device *dev, size_t size);
bool emu_free (struct ok_device *dev, void *ptr);
bool emu_host2dev (struct ok_device *dev, void *dst, const void *src,
		   size_t n);
bool emu_dev2host (struct ok_device *dev, void *dst, const void *src,
		   size_t n);
bool emu_dev2dev (struct ok_device *dev, void *dst, const void *src,
		  size_t n);
/* The entry points of libgomp 15 and 16 (backend.h says what each
   promises).  */
char *emu_get_uid (struct ok_device *dev);
void *emu_managed_alloc (struct ok_device *dev, size_t size);
bool emu_managed_free (struct ok_device *dev, void *ptr);
int emu_is_accessible (struct ok_device *dev, const void *ptr, size_t size);
bool emu_page_locked_alloc (struct ok_device *dev, void **ptr, size_t size);
/* Whether all of [PTR, PTR + N) is page-locked memory of the devices.  */
bool emu_locked_holds (const void *ptr, size_t n);
bool emu_page_locked_free (struct ok_device *dev, void *ptr);

/* Check that [PTR, PTR + N), N > 0, lies in one live block of DEV, or
   report that WHAT it is does not.  */
bool emu_check_range (struct emu_device *dev, const void *ptr, size_t n,
		      const char *what);

/* ---- emu-image.c ---- */

struct emu_var
{
  char *host;			/* The host global.  */
  size_t size;			/* Its size, without the link bit.  */
  bool link;			/* `declare target link': COPY is a pointer.  */
  bool readonly;		/* HOST lies in read-only memory: no view.  */
  /* Ordinary variables (size > 0): where the device bytes are kept while
     no region has them in the global (see emu_block.var).  Link and empty
     variables: the device copy itself, a block of kind EMU_VAR.  */
  char *copy;
  /* Link variables: what the pointer slot (COPY) was last set to, the
     device address of the object's element 0, which lies outside the
     mapping when libgomp mapped a section further in; and the block of
     the mapping (START and serial), or NULL when the slot points at
     none.  See emu_link_resolve.  */
  char *link_ptr;
  char *link_block;
  unsigned long link_serial;
  /* While a region runs: the device bytes HOST + VIEW_OFF stands for
     (COPY, or for a link variable the part of the object in its mapping),
     else NULL.  */
  char *view;
  size_t view_off;		/* 0 but for a link variable's section.  */
  size_t view_n;		/* Bytes in view.  */
  /* Link variables in view: 2 * VIEW_N bytes, the host's own bytes, then
     the mapping's bytes the global started with (what tells which bytes
     code wrote through the global).  */
  char *save;
};

/* Whether V's device address is its host global.  */
static inline bool
emu_var_aliased (const struct emu_var *v)
{
  return !v->link && v->size > 0;
}

/* The most GOT slots of one function one object may have (emu-got.c).  */
#define EMU_GOT_MAX_SLOTS 4
struct emu_rev_slot;

/* The backend's handle of a loaded image.  */
struct emu_image
{
  size_t num_vars;
  struct emu_var *vars;
  /* While loading: the wrapper's snapshot of the initial values of the
     variables not loaded yet, or NULL (the host's bytes then).  */
  const unsigned char *init;
  char *device_num;
  /* The fault handler watches DEVICE_NUM_SLOT for this image.  */
  bool watching;
  /* The wrapper's: the calling thread's "current device" slot that its
     omp_get_device_num / omp_is_initial_device interposers read; NULL in
     descriptors without one.  */
  int *(*device_num_slot) (void);
  /* The same for the OpenACC device type its acc_on_device answers
     with; NULL in descriptors before version 3.  */
  int *(*acc_device_slot) (void);
  /* And the device exit function its Fortran STOP interposers call in a
     region; NULL in descriptors before version 4.  */
  ok_device_exit_fn **(*device_exit_slot) (void);
  /* For traces: the host functions and, when the descriptor has a target
     for this device type, their device names (NULL otherwise).  */
  size_t num_funcs;
  void *const *funcs;
  const char *const *func_names;
  /* The OpenACC launch dimensions the device compiler fixed, one per
     function (descriptors of version 3 with a target for this device
     type; NULL otherwise).  */
  const struct ok_oacc_dims *oacc_dims;
  /* The program requires reverse offload: each function is its own
     entry of the reverse-offload table, and the GOT slots through which
     the object that holds the functions calls GOMP_target_ext lead to
     emu-rev.c; the records of those slots this image holds.  */
  bool rev;
  size_t num_rev_slots;
  struct emu_rev_slot *rev_slots[EMU_GOT_MAX_SLOTS];
};

/* The image of DEV's loaded-image record L.  */
static inline struct emu_image *
emu_image_of (const struct ok_loaded_image *l)
{
  return l->handle;
}

/* The image hooks (emu-image.c).  */
extern const struct ok_image_ops emu_image_ops;

/* The name of OpenACC kernel FN of DEV, as emu_fn_name gives it, and the
   launch dimensions its device compiler fixed in FIXED (0 where it left
   them to the run time), with *KNOWN false and FIXED all 0 when the
   image does not say them (a descriptor before version 3).  Called while
   DEV's images are held.  */
const char *emu_acc_kernel (struct emu_device *dev, void *fn, char *buf,
			    size_t len, unsigned fixed[OK_ACC_DIMS],
			    bool *known);

/* ---- emu-gpu-nvptx.c or emu-gpu-gcn.c (one in each plugin) ---- */

/* The launch of OpenACC kernel NAME as the plugin's GPU backend would
   make it on the GPU the emulated device models: the dimensions DIMS
   from the compiler's FIXED ones and libgomp's GIVEN ones, the GPU's
   checks (only where the compiler's dimensions are KNOWN: without them
   the checks would judge dimensions it may have lowered) and GOMP_DEBUG
   lines.  False after a reported error: the launch must not be made.
   The code, compiled for the host, then runs as one gang of one worker
   of one vector lane.  */
bool emu_gpu_acc_dims (const char *name, const unsigned fixed[OK_ACC_DIMS],
		       bool known, const unsigned given[OK_ACC_DIMS],
		       unsigned dims[OK_ACC_DIMS]);
/* After the launch of NAME has been made (queued or run).  */
void emu_gpu_acc_launched (const char *name);

/* Region KERNEL of DEV called the device's exit with STATUS (Fortran
   STOP or ERROR STOP in it; the wrappers' interposers printed the device
   libgfortran's words) and ended there.  What the modelled GPU's plugin
   then does: GCC's nvptx plugin reports the kernel's trap and the launch
   fails (false, after the message); GCC's gcn plugin ends the process
   with the status's low byte (ok_device_exit).  Called where the launch
   is waited for.  */
bool emu_gpu_region_exited (struct emu_device *dev, const char *kernel,
			    int status);

/* A message built in a buffer of its own, for signal handlers: text
   past the buffer's end is dropped.  */
struct emu_msg
{
  char buf[1024];
  size_t len;
};
void emu_msg_str (struct emu_msg *m, const char *s);
void emu_msg_hex (struct emu_msg *m, uintptr_t v);
void emu_msg_dec (struct emu_msg *m, long v);
/* Write M on standard error, after libgomp's "\nlibgomp: " (LIBGOMP)
   or alone, and a newline.  */
void emu_msg_say (struct emu_msg *m, bool libgomp);

/* What the modelled GPU's plugin (or runtime) says of a kernel that
   faulted as F says (an OpenACC launch's when OPENACC), written with M:
   async-signal-safe.  */
void emu_gpu_fault_words (struct emu_device *dev, const struct emu_fault *f,
			  bool openacc, struct emu_msg *m);
/* Then end the program as libgomp (or the runtime) ends it after such a
   kernel; IN_HANDLER: from the signal handler, async-signal-safe.  */
_Noreturn void emu_gpu_fault_end (struct emu_device *dev,
				  const struct emu_job *job,
				  bool in_handler);

/* Check LD's device images as the modelled GPU's plugin would before
   loading one: the nvidia device checks every cubin of the image as the
   CUDA backend checks the one it loads (ok_cubin_check), so that the
   cubins of a program run here are checked though none runs; the radeon
   device checks nothing.  False after reporting the first problem, with
   the image refused.  Writes into WHAT (LEN bytes) what it checked, for
   the trace: "; cubins checked: sm_80, sm_90", or nothing.  */
bool emu_gpu_check_images (struct emu_device *dev,
			   const struct ok_image_load *ld, char *what,
			   size_t len);

/* ---- emu-fault.c ---- */

/* Catch faults of regions' code (once per process).  */
void emu_fault_install (void);
/* A loaded image's wrapper slot function (offload-desc.h's
   device_num_slot; NULL: none) is watched, or no longer.  */
void emu_fault_watch (int *(*slot) (void));
void emu_fault_unwatch (int *(*slot) (void));
/* REGION's thread starts running its code on the device libgomp numbers
   GOMP_NUM (-1: unknown), or ends.  */
void emu_fault_enter (struct emu_region *region, int gomp_num);
void emu_fault_leave (struct emu_region *region);
/* The calling thread will run regions one after another until
   emu_fault_thread_end: its signal stack is set up once for them all
   rather than for each.  Returns the stack (NULL: none), for the caller
   to keep where it stays reachable while the thread lasts.  */
void *emu_fault_thread_begin (void);
void emu_fault_thread_end (void);
/* Report the fault of JOB on DEV (its KERNEL's name, NULL: unknown):
   the modelled GPU's words, then offloadkit's line.  Async-signal-safe.  */
void emu_fault_report (struct emu_device *dev, const struct emu_job *job,
		       const char *kernel);

/* ---- emu-view.c ---- */

/* Link variable V's pointer slot has just been written (libgomp maps the
   variable): find the mapping it now points into.  Called
   with emu_region_lock held, not DEV->mem_lock.  */
void emu_link_resolve (struct emu_device *dev, struct emu_var *v);

/* Start (IN) or end the views of all of DEV's variables around a region:
   the host globals show the device bytes.  Called with emu_region_lock
   and DEV's images held.  */
void emu_view_all (struct emu_device *dev, bool in);
/* In the middle of a region of DEV: bring what was written through the
   host objects of link variables into their mappings, so that these are
   complete; and after a change of device bytes, show the mappings in the
   host objects again.  */
void emu_view_merge (struct emu_device *dev);
void emu_view_reload (struct emu_device *dev);

/* ---- emu-run.c ---- */

/* A launch: the core's part, and what the worker needs.  */
/* A fault of a region's code: the signal, its si_code and address, and
   whether a thread of a parallel region in it took it.  */
struct emu_fault
{
  int sig, code;
  uintptr_t addr;
  bool in_team;
  bool stack;			/* ADDR is below the region's stack.  */
};

struct emu_job
{
  struct ok_job base;		/* First: the core's part.  */
  struct emu_job *next;		/* In the worker's queue.  */
  void (*fn) (void **);
  void **tgt_vars;
  int thread_limit;		/* From the launch; 0: the default.  */
  int num_teams;		/* Likewise, for the trace.  */
  bool done;
  /* The region's code ended the program as device code does (Fortran
     STOP in it), with EXIT_STATUS: the region ended there.  */
  bool exited;
  int exit_status;
  /* An OpenACC launch (the words of a failure differ).  */
  bool openacc;
  /* The region's code faulted (emu-fault.c): FAULT.SIG is not 0.  */
  struct emu_fault fault;
  /* With tracing on: the threads the region ran with, and a name for
     its function when it has no other.  */
  unsigned threads;
  char name_buf[2 + 2 * sizeof (void *) + 1];
};

/* A region being run: its device and job, where the device exit and a
   fault leave it (setjmp's value 1 and 2), its thread, and libgomp's
   number of its device.  */
struct emu_region
{
  struct emu_device *dev;
  struct emu_job *job;
  jmp_buf exit_point;
  pthread_t thread;
  int gomp_num;
  void *altstack;		/* Its own signal stack, or NULL.  */
  uintptr_t stack_lo;		/* Its stack's lowest address, or 0.  */
};

/* The name region function FN of DEV has in its image's descriptor, or
   NULL.  Reads only the descriptors' tables (async-signal-safe).  Called
   while DEV's images are held.  */
const char *emu_image_fn_name (struct emu_device *dev, void *fn);
/* The name of region function FN of DEV, for traces and profiling
   tools.  The device name from the image's descriptor comes first,
   because it is what a real device reports for the same region; else
   the host symbol, when the dynamic symbol table has one that starts
   exactly at FN (local functions, as GCC's outlined regions are, have
   none); else FN's address, formatted in BUF (LEN bytes).  Called while
   DEV's images are held.  */
const char *emu_fn_name (struct emu_device *dev, void *fn, char *buf,
			 size_t len);

/* Tell the wrappers of DEV's images whether the calling thread runs a
   region of DEV (ON), for omp_get_device_num (), omp_is_initial_device (),
   acc_on_device () and the device exit of Fortran STOP.  */
void emu_set_device_num (struct emu_device *dev, bool on);
/* Whether the calling thread, which runs a region, runs it alone: it is
   in no parallel region of more than one thread.  */
bool emu_region_alone (void);

/* The worker of DEV, and its end (after the queue is drained).  */
void *emu_worker (void *dev);
void emu_worker_stop (struct emu_device *dev);

bool emu_launch (struct ok_device *dev, void *fn, void *tgt_vars,
		 const struct ok_launch *launch, struct ok_job *job);
bool emu_finish (struct ok_device *dev, struct ok_job *job);

/* ---- emu-queue.c: OpenACC ---- */

/* An OpenACC queue: the core's lazy host queue (emu-queue.c says
   why).  */
struct emu_queue
{
  struct ok_hostq base;		/* First: the core's part.  */
  /* What acc_get_cuda_stream answers for the queue: the queue itself
     until acc_set_cuda_stream gives another handle.  */
  void *cuda_stream;
};

/* Whether the calling thread is one of an emulated device's OpenACC
   queues.  */
bool emu_on_queue_thread (void);
/* Free later what the caller, an OpenACC queue's thread, asked to free;
   false after a message when out of memory.  */
bool emu_defer_free (struct emu_device *dev, void *ptr);
/* Before a synchronous operation of DEV (a copy, a free, a launch) by a
   thread that may wait, as CUDA's legacy stream waits for the streams
   GCC's nvptx plugin makes for OpenACC queues: run the work queued so far
   on every queue of DEV, then free what was deferred.  */
void emu_acc_sync (struct emu_device *dev);

/* The backend's own acc_* hooks (backend.h says what each promises);
   the core's host queue is the others.  */
bool emu_acc_queue_init (struct ok_acc_queue *q);
bool emu_acc_queue_copy (struct ok_acc_queue *q, enum ok_copy_dir dir,
			 void *dst, const void *src, size_t n);
bool emu_acc_exec (struct ok_device *dev, void *fn, void *args,
		   const unsigned dims[OK_ACC_DIMS], struct ok_acc_queue *q);
bool emu_acc_memory (struct ok_device *dev, bool free, size_t *num);
void emu_acc_names (struct ok_device *dev, struct ok_acc_names *names);
void *emu_acc_cuda_device (struct ok_device *dev);
void *emu_acc_cuda_context (struct ok_device *dev);
void *emu_acc_cuda_stream (struct ok_acc_queue *q);
bool emu_acc_cuda_set_stream (struct ok_acc_queue *q, void *stream);

/* ---- emu-got.c ---- */

/* The GOT slots of one function in one object.  */
struct emu_got
{
  void **slot[EMU_GOT_MAX_SLOTS];
  size_t n;
  const char *why;		/* Why they cannot be used, or NULL.  */
};

/* The GOT slots of the function called NAME in the loaded object INFO
   (none when it does not call it).  */
struct emu_got emu_got_find (const struct dl_phdr_info *info,
			     const char *name);

/* The loaded object that holds ADDR, and its GOT slots of SYMBOL.  */
struct emu_got_object
{
  uintptr_t addr;
  const char *symbol;
  bool found;
  struct emu_got slots;
  bool relro[EMU_GOT_MAX_SLOTS];	/* Each slot's page is RELRO.  */
  char name[128];			/* The object's, for messages.  */
};
void emu_got_object (uintptr_t addr, const char *symbol,
		     struct emu_got_object *q);

/* Make *SLOT hold VALUE, opening its page for the write when RELRO (and
   closing it again).  False when the page cannot be opened.  The caller
   keeps writers of one slot apart.  */
bool emu_got_write (void **slot, bool relro, void *value);

/* ---- emu-rev.c ---- */

/* backend.h's requires_unmet: reverse offload needs the GOT slots of
   GOMP_target_ext in every loaded object with offloadkit images to be
   found and writable, and libgomp 13 or newer; unified shared memory
   and self maps are always met (regions run on the host).  */
unsigned emu_requires_unmet (unsigned features, int n);
/* At load, when libgomp asks for the reverse-offload table (the program
   requires reverse offload): give it for IMG, LD's image, in *REV_FNS and
   redirect the GOT slots of the object holding IMG's functions.  False
   after an error.  */
bool emu_rev_load (struct emu_device *dev, struct emu_image *img,
		   const struct ok_image_load *ld, uint64_t **rev_fns);
/* At unload: let go of IMG's slot records.  */
void emu_rev_unload (struct emu_image *img);
/* Before a region runs: put back a redirection that a lazy binding in
   flight while it was made may have overwritten.  */
void emu_rev_recheck (void);
/* The region of DEV holds the region lock from now on (the region's
   thread calls it after taking the lock), or no longer (before it lets go
   of the lock: it waits for the threads of the region that are serving
   requests).  */
void emu_rev_own (struct emu_device *dev);
void emu_rev_disown (void);
/* Whether all of [PTR, PTR + N) lies in what a reverse-offload request in
   flight on DEV names: its address, size and kind arrays and the data
   its entries name (on the region's stack, say).  DEV->mem_lock held.  */
bool emu_rev_covers (struct emu_device *dev, const void *ptr, size_t n);

#endif /* OFFLOADKIT_EMU_INTERNAL_H */
