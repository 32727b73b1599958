/* Launching GCN kernels: launch geometry, the kernel arguments the
   image's device runtime expects (GCC 12's layout, or GCC 13+'s with the
   "ephemeral memories"), AQL dispatch, waiting (for a target nowait
   region, on the core's completion thread), device printf and, for GCC
   13+'s device code, reverse-offload requests.

   Geometry (facts from GCC 12's plugin, our own code): an OpenMP team is
   one work-group, an OpenMP thread one 64-lane wavefront.  The grid is
   (teams, 64, threads) work-items in work-groups of (1, 64, threads).
   Without num_teams there is one team per compute unit; without
   thread_limit 16 wavefronts (4 on gfx900, whose hardware GCC works
   around); never more than 16, and never more than the kernel's vector
   registers allow: 256 VGPRs per SIMD lane, allocated in granules of 4,
   4 SIMDs per compute unit.  */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-internal.h"

#define GCN_MAX_THREADS 16
#define GCN_WAVEFRONT 64
/* How long one wait on a completion signal lasts before the waiter looks
   at the queue's error state and the print buffer (the runtime's unit is
   the system timestamp, nanoseconds on Linux).  */
#define GCN_WAIT_SLICE 1000000u

/* Our declarations must have the offsets GCC's device code reads.  */
_Static_assert (offsetof (struct gcn_kernargs_v2, output) == 40,
		"GCC 12's output buffer follows five words");
_Static_assert (offsetof (struct gcn_kernargs_v3, stack_ptr) == 40
		&& offsetof (struct gcn_kernargs_v3, arena_size_per_team) == 48
		&& offsetof (struct gcn_kernargs_v3, output) == 56,
		"GCC 13's struct kernargs_abi");
_Static_assert (offsetof (struct gcn_print_entry, u) == 136
		&& sizeof (struct gcn_print_entry) == 264,
		"GCC's struct printf_data");

/* Device printf output of concurrent kernels is not interleaved.  */
static pthread_mutex_t gcn_print_lock = PTHREAD_MUTEX_INITIALIZER;

/* The settings GCC 13+'s plugin reads for device code of ABI 3, under
   the same names (GCC 13's libgomp/plugin/plugin-gcn.c init_environment
   _variables; GOMP_GCN_LOWLAT_POOL from 14).  */
static struct
{
  size_t arena_per_team;	/* GCN_TEAM_ARENA_SIZE.  */
  size_t stack_per_thread;	/* GCN_STACK_SIZE.  */
  int lowlat;			/* GOMP_GCN_LOWLAT_POOL; -1 when unset.  */
} gcn_settings;
static pthread_once_t gcn_settings_once = PTHREAD_ONCE_INIT;

/* A positive int from environment variable NAME, or DEFAULT_VALUE.  GCC's
   plugin takes atoi's value unless it is 0; a value it would misread
   (negative, not a number, beyond an int) is left out here.  */
static size_t
gcn_env_int (const char *name, size_t default_value)
{
  const char *v = getenv (name);
  if (v == NULL || *v == '\0')
    return default_value;
  char *end;
  errno = 0;
  long n = strtol (v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || n <= 0 || n > INT_MAX)
    {
      OK_DEBUG ("%s=%s is not a positive int: using %zu", name, v,
		default_value);
      return default_value;
    }
  return (size_t) n;
}

static void
gcn_settings_read (void)
{
  gcn_settings.arena_per_team = gcn_env_int ("GCN_TEAM_ARENA_SIZE",
					     GCN_TEAM_ARENA);
  gcn_settings.stack_per_thread = gcn_env_int ("GCN_STACK_SIZE",
					       GCN_STACK_DEFAULT);
  const char *lowlat = getenv ("GOMP_GCN_LOWLAT_POOL");
  gcn_settings.lowlat = -1;
  if (lowlat != NULL && *lowlat != '\0')
    {
      long n = strtol (lowlat, NULL, 10);
      gcn_settings.lowlat = n < 0 ? -1 : n > 65536 ? 65536 : (int) n;
    }
}

/* The output buffer of kernel-argument block ARGS in layout ABI.  */
static struct gcn_output *
gcn_output_of (void *args, int abi)
{
  return abi == 3 ? &((struct gcn_kernargs_v3 *) args)->output
		  : &((struct gcn_kernargs_v2 *) args)->output;
}

/* Clear every print entry of OUT (fresh memory, or a block last used in
   the other layout, whose entries lie elsewhere).  */
static void
gcn_output_clear (struct gcn_output *out)
{
  for (unsigned i = 0; i < GCN_PRINT_ENTRIES; i++)
    __atomic_store_n (&out->queue[i].written, 0, __ATOMIC_RELAXED);
}

static void
gcn_geometry (const struct gcn_device *dev, const struct gcn_kernel *k,
	      const struct ok_launch *launch, unsigned grid[3],
	      unsigned block[3])
{
  int teams = launch->num_teams, threads = launch->thread_limit;
  int dflt = dev->arch == 0x900 ? 4 : GCN_MAX_THREADS;
  if (teams <= 0)
    teams = (int) dev->cu_count;
  if (threads <= 0)
    threads = dflt;
  if (threads > GCN_MAX_THREADS)
    threads = GCN_MAX_THREADS;
  if (k->vgprs > 0)
    {
      unsigned granules = (k->vgprs + 3) & ~3u;
      int fit = (int) (256 / granules) * 4;
      if (fit < 1)
	fit = 1;
      if (threads > fit)
	{
	  OK_DEBUG ("%s: kernel %s uses %u VGPRs: %d wavefronts per team,"
		    " not %d", dev->base.label, k->name, (unsigned) k->vgprs, fit,
		    threads);
	  threads = fit;
	}
    }
  grid[0] = (unsigned) teams;
  grid[1] = GCN_WAVEFRONT;
  grid[2] = (unsigned) threads;
  block[0] = 1;
  block[1] = GCN_WAVEFRONT;
  block[2] = (unsigned) threads;
}

/* A kernel-argument block and signal, reused when possible.  */
static struct gcn_slot *
gcn_slot_take (struct gcn_device *dev)
{
  pthread_mutex_lock (&dev->slot_lock);
  struct gcn_slot *slot = dev->free_slots;
  if (slot != NULL)
    dev->free_slots = slot->next;
  pthread_mutex_unlock (&dev->slot_lock);
  if (slot != NULL)
    return slot;

  slot = calloc (1, sizeof *slot);
  if (slot == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return NULL;
    }
  void *args = NULL;
  hsa_status_t s = ok_hsa.hsa_memory_allocate (dev->kernarg_region,
					       GCN_KERNARGS_SIZE, &args);
  if (s != HSA_STATUS_SUCCESS || args == NULL)
    {
      ok_dev_call_error (&dev->base, "cannot allocate kernel arguments",
		      "hsa_memory_allocate",
		      s != HSA_STATUS_SUCCESS ? s : HSA_STATUS_ERROR);
      free (slot);
      return NULL;
    }
  slot->args = args;
  /* gcn_console expects every print entry clear before a launch and
     leaves them so; fresh memory need not be zero.  gcn_dispatch clears
     them for its layout (SLOT->ABI 0: none yet).  */
  slot->abi = 0;
  s = ok_hsa.hsa_signal_create (1, 0, NULL, &slot->signal);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (&dev->base, "cannot create a completion signal",
		      "hsa_signal_create", s);
      ok_hsa.hsa_memory_free (args);
      free (slot);
      return NULL;
    }
  return slot;
}

/* Free SLOT for good (after a failed launch, whose signal may never be
   decremented).  */
static bool
gcn_slot_destroy (struct gcn_device *dev, struct gcn_slot *slot)
{
  bool ok = ok_dev_teardown_ok (&dev->base, ok_hsa.hsa_signal_destroy (slot->signal),
			     "destroy a signal", "hsa_signal_destroy");
  ok &= ok_dev_teardown_ok (&dev->base, ok_hsa.hsa_memory_free (slot->args),
			 "free kernel arguments", "hsa_memory_free");
  free (slot);
  return ok;
}

static void
gcn_slot_give (struct gcn_device *dev, struct gcn_slot *slot)
{
  pthread_mutex_lock (&dev->slot_lock);
  slot->next = dev->free_slots;
  dev->free_slots = slot;
  pthread_mutex_unlock (&dev->slot_lock);
}

/* Team arenas, kept for reuse (scratch.h).  */

static void *
gcn_arena_alloc (struct ok_device *d, size_t size, const char *kernel)
{
  char what[160];
  snprintf (what, sizeof what, "the team arenas and stacks of kernel"
	    " '%.110s'", kernel);
  return gcn_region_alloc (gcn_dev (d), size, what);
}

static bool
gcn_arena_free (struct ok_device *d, void *ptr)
{
  return gcn_region_free (gcn_dev (d), ptr, "team arenas and stacks");
}

void
gcn_launch_init (struct gcn_device *dev)
{
  pthread_mutex_init (&dev->slot_lock, NULL);
  ok_scratch_init (&dev->arenas, gcn_arena_alloc, gcn_arena_free);
}

bool
gcn_launch_fini (struct gcn_device *dev)
{
  bool ok = true;
  struct gcn_slot *slot = dev->free_slots;
  while (slot != NULL)
    {
      struct gcn_slot *next = slot->next;
      ok &= gcn_slot_destroy (dev, slot);
      slot = next;
    }
  dev->free_slots = NULL;
  ok &= ok_scratch_fini (&dev->base, &dev->arenas);
  pthread_mutex_destroy (&dev->slot_lock);
  return ok;
}

/* Run the reverse-offload request of entry E on the host (libgomp maps
   the data through DEV's copies and runs the host function); the device
   waits until E is released.  Called without the print lock: the region
   may print, and it takes as long as the host code does.  */
static void
gcn_reverse_offload (struct gcn_device *dev, const struct gcn_print_entry *e)
{
  const uint64_t *v = e->u.value_u64;
  OK_DEBUG ("%s: reverse offload of %#llx (%llu mappings)", dev->base.label,
	    (unsigned long long) v[0], (unsigned long long) v[1]);
  /* A libgomp without reverse offload (12) has been told; the device
     goes on once the entry is released.  */
  ok_target_rev (&dev->base, v[0], v[1], v[2], v[3], v[4], (int) v[5]);
}

/* Print what the device wrote into OUT since last time, and run its
   reverse-offload requests; FINAL: the kernel has finished, print
   everything and leave every entry clear, as the block's next launch
   expects.  */
static void
gcn_console (struct gcn_device *dev, struct gcn_output *out, bool final)
{
  unsigned from = __atomic_load_n (&out->consumed, __ATOMIC_ACQUIRE);
  unsigned to = __atomic_load_n (&out->next_output, __ATOMIC_ACQUIRE);
  if (from == to)
    return;
  pthread_mutex_lock (&gcn_print_lock);
  if (from > to)
    {
      if (final)
	{
	  printf ("GCN print buffer overflowed.\n");
	  /* Which entries went unread is unknown: clear them all.  */
	  gcn_output_clear (out);
	}
    }
  else
    for (unsigned i = from; i < to; i++)
      {
	struct gcn_print_entry *e = &out->queue[i % GCN_PRINT_ENTRIES];
	if (!__atomic_load_n (&e->written, __ATOMIC_ACQUIRE) && !final)
	  break;
	switch (e->type)
	  {
	  case 0: printf ("%.128s%ld\n", e->msg, (long) e->u.ivalue); break;
	  case 1: printf ("%.128s%f\n", e->msg, e->u.dvalue); break;
	  case 2: printf ("%.128s%.128s\n", e->msg, e->u.text); break;
	  case 3: printf ("%.128s%.128s", e->msg, e->u.text); break;
	  case 4:
	    fflush (stdout);
	    pthread_mutex_unlock (&gcn_print_lock);
	    gcn_reverse_offload (dev, e);
	    pthread_mutex_lock (&gcn_print_lock);
	    break;
	  default: printf ("GCN print buffer error!\n"); break;
	  }
	__atomic_store_n (&e->written, 0, __ATOMIC_RELEASE);
	__atomic_store_n (&out->consumed, i + 1, __ATOMIC_RELEASE);
      }
  fflush (stdout);
  pthread_mutex_unlock (&gcn_print_lock);
}

/* The HSA queue of the OpenACC queue whose thread the calling thread is,
   or NULL.  */
static __thread hsa_queue_t *gcn_thread_queue;

void
gcn_launch_on (hsa_queue_t *queue)
{
  gcn_thread_queue = queue;
}

/* The LDS a work-group of K gets.  GCC 14+'s device runtime keeps its
   team data and its low-latency heap (omp_low_lat_mem_space) in the LDS
   beyond the kernel's own, and sizes the heap from the dispatch packet:
   so, for ABI 3, as GCC 14's plugin (create_kernel_dispatch) does, the
   LDS is shared out between the teams that run at once on a compute unit,
   never less than the kernel needs, or GOMP_GCN_LOWLAT_POOL bytes when
   set (at least the runtime's own data: 48 bytes before the heap in GCC
   15 and 16, 40 in 14, and the heap's 8-byte header).  GCC 13's runtime
   uses no more than the kernel's, and more does it no harm.  */
static uint32_t
gcn_group_size (const struct gcn_device *dev, const struct gcn_kernel *k,
		unsigned teams)
{
  if (k->image->abi != 3)
    return k->group_size;
  pthread_once (&gcn_settings_once, gcn_settings_read);
  if (gcn_settings.lowlat >= 0)
    return gcn_settings.lowlat < 56 ? 56 : (uint32_t) gcn_settings.lowlat;
  unsigned teams_per_cu = dev->cu_count ? teams / dev->cu_count : 0;
  uint32_t lds = teams_per_cu ? 65536 / teams_per_cu : 65536;
  return k->group_size > lds ? k->group_size : lds;
}

/* Fill SLOT's kernel arguments and put one dispatch packet for K on DEV's
   queue.  */
static bool
gcn_dispatch (struct gcn_device *dev, const struct gcn_kernel *k,
	      void *tgt_vars, const unsigned grid[3], const unsigned block[3],
	      struct gcn_slot *slot, struct ok_scratch_block *arena)
{
  if (ok_dev_broken (&dev->base))
    {
      ok_dev_error (&dev->base, "cannot run kernel '%s': an earlier kernel failed"
		     " and the queue is unusable", k->name);
      return false;
    }
  int abi = k->image->abi;
  pthread_once (&gcn_settings_once, gcn_settings_read);
  struct gcn_output *out = gcn_output_of (slot->args, abi);
  if (slot->abi != abi)
    {
      gcn_output_clear (out);
      slot->abi = abi;
    }
  int64_t arena_ptr = arena != NULL ? (int64_t) (uintptr_t) arena->ptr : 0;
  if (abi == 3)
    {
      struct gcn_kernargs_v3 *args = slot->args;
      args->tgt_vars = (int64_t) (uintptr_t) tgt_vars;
      args->unused = 0;
      args->out_ptr = (int64_t) (uintptr_t) out;
      args->heap_ptr = (int64_t) (uintptr_t) k->image->heap;
      /* The arenas first, then the stacks (GCC 13's
	 configure_ephemeral_memories).  */
      args->arena_ptr = arena_ptr;
      args->stack_ptr = arena_ptr + (int64_t) (grid[0]
					       * gcn_settings.arena_per_team);
      args->arena_size_per_team = (int32_t) gcn_settings.arena_per_team;
      args->stack_size_per_thread = (int32_t) gcn_settings.stack_per_thread;
    }
  else
    {
      struct gcn_kernargs_v2 *args = slot->args;
      args->tgt_vars = (int64_t) (uintptr_t) tgt_vars;
      args->unused = 0;
      args->out_ptr = (int64_t) (uintptr_t) out;
      args->heap_ptr = (int64_t) (uintptr_t) k->image->heap;
      args->arena_ptr = arena_ptr;
    }
  out->return_value = (int) 0xcafe0000u;
  out->next_output = 0;
  out->consumed = 0;
  /* The print entries are clear: since the block was allocated, or left
     so by the last launch's gcn_console.  */
  ok_hsa.hsa_signal_store_relaxed (slot->signal, 1);

  hsa_queue_t *q = gcn_thread_queue != NULL ? gcn_thread_queue : dev->queue;
  uint64_t index = ok_hsa.hsa_queue_add_write_index_screlease (q, 1);
  /* Wait for the packet processor to free the slot.  */
  while (index - ok_hsa.hsa_queue_load_read_index_scacquire (q) >= q->size)
    {
      if (ok_dev_broken (&dev->base))
	{
	  ok_dev_error (&dev->base, "cannot run kernel '%s': the queue failed",
			 k->name);
	  return false;
	}
      sched_yield ();
    }
  hsa_kernel_dispatch_packet_t *p
    = (hsa_kernel_dispatch_packet_t *) q->base_address + (index % q->size);
  /* Everything but the header first; the header, written last and
     atomically, hands the packet to the processor.  */
  memset ((char *) p + 4, 0, sizeof *p - 4);
  p->workgroup_size_x = (uint16_t) block[0];
  p->workgroup_size_y = (uint16_t) block[1];
  p->workgroup_size_z = (uint16_t) block[2];
  p->grid_size_x = grid[0] * block[0];
  p->grid_size_y = grid[1];
  p->grid_size_z = grid[2];
  p->private_segment_size = k->private_size;
  p->group_segment_size = gcn_group_size (dev, k, grid[0]);
  p->kernel_object = k->object;
  p->kernarg_address = slot->args;
  p->completion_signal = slot->signal;
  uint16_t header
    = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE)
      | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
      | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  uint16_t setup = 3 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n ((uint32_t *) p, header | ((uint32_t) setup << 16),
		    __ATOMIC_RELEASE);
  ok_hsa.hsa_signal_store_screlease (q->doorbell_signal,
				     (hsa_signal_value_t) index);
  return true;
}

/* Wait for the dispatch of K that uses SLOT, printing the device's output
   and serving its reverse-offload requests as they come; handle exit and
   abort called on the device.  */
static bool
gcn_wait (struct gcn_device *dev, const struct gcn_kernel *k,
	  struct gcn_slot *slot)
{
  struct gcn_output *out = gcn_output_of (slot->args, k->image->abi);
  while (ok_hsa.hsa_signal_wait_scacquire (slot->signal,
					   HSA_SIGNAL_CONDITION_LT, 1,
					   GCN_WAIT_SLICE,
					   HSA_WAIT_STATE_BLOCKED) >= 1)
    {
      if (ok_dev_broken (&dev->base))
	{
	  hsa_status_t s = __atomic_load_n (&dev->queue_error,
					    __ATOMIC_ACQUIRE);
	  char err[OK_HSA_ERRLEN];
	  /* The queue's callback cannot tell which packet faulted: every
	     kernel waiting on the queue ends here.  */
	  ok_dev_error (&dev->base, "kernel '%s' did not complete: the device queue"
			 " failed with %s; the fault may be another kernel's",
			 k->name, ok_hsa_status (s, err, sizeof err));
	  return false;
	}
      gcn_console (dev, out, false);
    }
  gcn_console (dev, out, true);

  unsigned rv = (unsigned) out->return_value;
  switch (rv >> 16)
    {
    case 0xcafe:		/* Returned normally.  */
      return true;
    case 0xffff:		/* exit or abort on the device.  */
      if (((rv >> 8) & 0xff) == SIGABRT)
	{
	  ok_dev_error (&dev->base, "kernel '%s' aborted", k->name);
	  abort ();
	}
      /* Bits 15:8 name a signal; only exit leaves them 0.  Ending the
	 host with the low byte (often 0) would hide the failure.  */
      if (((rv >> 8) & 0xff) != 0)
	{
	  ok_dev_error (&dev->base, "kernel '%s' was terminated by signal %u"
			 " (expected exit, which leaves 0 there, or abort)",
			 k->name, (rv >> 8) & 0xff);
	  abort ();
	}
      OK_DEBUG ("%s: kernel %s called exit (%u)", dev->base.label, k->name,
		rv & 0xff);
      ok_device_exit ((int) (rv & 0xff));
    default:
      ok_dev_error (&dev->base, "kernel '%s' left a corrupt exit value %#x",
		     k->name, rv);
      return false;
    }
}

/* Bytes of device memory a launch of K in GRID uses while it runs: GCC
   12's device runtime a 64 KiB arena per team; GCC 13+'s an arena per
   team and a stack per thread (wavefront), sized as GCC 13's
   configure_ephemeral_memories sizes them.  */
static size_t
gcn_ephemeral_size (const struct gcn_kernel *k, const unsigned grid[3])
{
  size_t teams = grid[0], threads = grid[2];
  if (k->image->abi != 3)
    return teams * GCN_TEAM_ARENA;
  pthread_once (&gcn_settings_once, gcn_settings_read);
  return teams * gcn_settings.arena_per_team
	 + teams * threads * gcn_settings.stack_per_thread;
}

/* Everything a launch holds.  */
static void
gcn_job_release (struct gcn_device *dev, struct gcn_job *job)
{
  if (job->slot != NULL)
    gcn_slot_give (dev, job->slot);
  if (job->arena != NULL)
    ok_scratch_give (&dev->base, &dev->arenas, job->arena);
  job->slot = NULL;
  job->arena = NULL;
}

bool
gcn_launch (struct ok_device *d, void *fn, void *tgt_vars,
	    const struct ok_launch *launch, struct ok_job *j)
{
  struct gcn_device *dev = gcn_dev (d);
  struct gcn_job *job = (struct gcn_job *) j;
  const struct gcn_kernel *k = fn;
  unsigned grid[3], block[3];
  if (k->device_fn)
    {
      /* libgomp maps the host's function of an ancestor region here; it
	 runs on the host, when device code asks, never as a kernel.  */
      ok_dev_error (d, "cannot run '%s': it is the device function of a"
		    " `target device (ancestor: 1)' region, which has no"
		    " kernel; only reverse-offload requests name it",
		    k->name);
      return false;
    }
  gcn_geometry (dev, k, launch, grid, block);
  /* The trace's grid counts work-groups (teams), as CUDA's counts blocks;
     the packet's grid counts work-items.  */
  job->kernel = k;
  j->kernel = k->name;
  j->grid[0] = grid[0];
  j->grid[1] = j->grid[2] = 1;
  memcpy (j->block, block, sizeof j->block);
  job->slot = gcn_slot_take (dev);
  if (job->slot == NULL)
    return false;
  job->arena = ok_scratch_take (d, &dev->arenas,
				gcn_ephemeral_size (k, grid), k->name);
  if (job->arena == NULL
      || !gcn_dispatch (dev, k, tgt_vars, grid, block, job->slot,
			job->arena))
    {
      gcn_job_release (dev, job);
      return false;
    }
  OK_DEBUG ("%s: dispatched %s: %u teams of %u wavefronts", d->label,
	    k->name, grid[0], grid[2]);
  return true;
}

bool
gcn_finish (struct ok_device *d, struct ok_job *j)
{
  struct gcn_device *dev = gcn_dev (d);
  struct gcn_job *job = (struct gcn_job *) j;
  bool ok = gcn_wait (dev, job->kernel, job->slot);
  /* After a fault the slot's signal may still be pending: drop it.  */
  if (!ok)
    {
      gcn_slot_destroy (dev, job->slot);
      job->slot = NULL;
    }
  gcn_job_release (dev, job);
  return ok;
}

bool
gcn_run_ctor (struct gcn_device *dev, const struct gcn_kernel *k)
{
  struct ok_launch launch;
  memset (&launch, 0, sizeof launch);
  launch.num_teams = 1;
  launch.thread_limit = 1;
  return ok_device_run (&dev->base, (void *) k, NULL, &launch);
}
