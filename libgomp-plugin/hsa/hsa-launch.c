/* Launching GCN kernels: launch geometry, the kernel arguments GCC 12's
   device runtime expects, AQL dispatch, waiting, device printf, and the
   completion thread of asynchronous launches.

   Geometry (facts from GCC 12's plugin, our own code): an OpenMP team is
   one work-group, an OpenMP thread one 64-lane wavefront.  The grid is
   (teams, 64, threads) work-items in work-groups of (1, 64, threads).
   Without num_teams there is one team per compute unit; without
   thread_limit 16 wavefronts (4 on gfx900, whose hardware GCC works
   around); never more than 16, and never more than the kernel's vector
   registers allow: 256 VGPRs per SIMD lane, allocated in granules of 4,
   4 SIMDs per compute unit.  */

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-internal.h"
#include "trace.h"

#define GCN_MAX_THREADS 16
#define GCN_WAVEFRONT 64
/* How long one wait on a completion signal lasts before the waiter looks
   at the queue's error state and the print buffer (the runtime's unit is
   the system timestamp, nanoseconds on Linux).  */
#define GCN_WAIT_SLICE 1000000u

/* Device printf output of concurrent kernels is not interleaved.  */
static pthread_mutex_t hsa_print_lock = PTHREAD_MUTEX_INITIALIZER;

static void
hsa_geometry (const struct hsa_device *dev, const struct hsa_kernel *k,
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
		    " not %d", dev->label, k->name, (unsigned) k->vgprs, fit,
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
static struct hsa_slot *
hsa_slot_take (struct hsa_device *dev)
{
  pthread_mutex_lock (&dev->slot_lock);
  struct hsa_slot *slot = dev->free_slots;
  if (slot != NULL)
    dev->free_slots = slot->next;
  pthread_mutex_unlock (&dev->slot_lock);
  if (slot != NULL)
    return slot;

  slot = calloc (1, sizeof *slot);
  if (slot == NULL)
    {
      hsa_dev_error (dev, "out of memory");
      return NULL;
    }
  void *args = NULL;
  hsa_status_t s = ok_hsa.hsa_memory_allocate (dev->kernarg_region,
					       sizeof (struct gcn_kernargs),
					       &args);
  if (s != HSA_STATUS_SUCCESS || args == NULL)
    {
      hsa_call_error (dev, "cannot allocate kernel arguments",
		      "hsa_memory_allocate",
		      s != HSA_STATUS_SUCCESS ? s : HSA_STATUS_ERROR);
      free (slot);
      return NULL;
    }
  slot->args = args;
  /* hsa_console expects every print entry clear before a launch and
     leaves them so; fresh memory need not be zero.  */
  struct gcn_kernargs *ka = args;
  for (unsigned i = 0; i < GCN_PRINT_ENTRIES; i++)
    ka->output.queue[i].written = 0;
  s = ok_hsa.hsa_signal_create (1, 0, NULL, &slot->signal);
  if (s != HSA_STATUS_SUCCESS)
    {
      hsa_call_error (dev, "cannot create a completion signal",
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
hsa_slot_destroy (struct hsa_device *dev, struct hsa_slot *slot)
{
  bool ok = hsa_teardown_ok (dev, ok_hsa.hsa_signal_destroy (slot->signal),
			     "destroy a signal", "hsa_signal_destroy");
  ok &= hsa_teardown_ok (dev, ok_hsa.hsa_memory_free (slot->args),
			 "free kernel arguments", "hsa_memory_free");
  free (slot);
  return ok;
}

static void
hsa_slot_give (struct hsa_device *dev, struct hsa_slot *slot)
{
  pthread_mutex_lock (&dev->slot_lock);
  slot->next = dev->free_slots;
  dev->free_slots = slot;
  pthread_mutex_unlock (&dev->slot_lock);
}

/* TEAMS team arenas in one block of device memory.  */
static struct hsa_arena *
hsa_arena_take (struct hsa_device *dev, unsigned teams)
{
  size_t need = (size_t) teams * GCN_TEAM_ARENA;
  pthread_mutex_lock (&dev->slot_lock);
  struct hsa_arena **link = &dev->free_arenas;
  while (*link != NULL && (*link)->size < need)
    link = &(*link)->next;
  struct hsa_arena *arena = *link;
  if (arena != NULL)
    *link = arena->next;
  pthread_mutex_unlock (&dev->slot_lock);
  if (arena != NULL)
    return arena;

  arena = calloc (1, sizeof *arena);
  if (arena == NULL)
    {
      hsa_dev_error (dev, "out of memory");
      return NULL;
    }
  arena->size = need;
  arena->ptr = hsa_raw_alloc (dev, need, "team arenas");
  if (arena->ptr == NULL)
    {
      free (arena);
      return NULL;
    }
  return arena;
}

static void
hsa_arena_give (struct hsa_device *dev, struct hsa_arena *arena)
{
  pthread_mutex_lock (&dev->slot_lock);
  arena->next = dev->free_arenas;
  dev->free_arenas = arena;
  pthread_mutex_unlock (&dev->slot_lock);
}

bool
hsa_launch_fini (struct hsa_device *dev)
{
  bool ok = true;
  struct hsa_slot *slot = dev->free_slots;
  while (slot != NULL)
    {
      struct hsa_slot *next = slot->next;
      ok &= hsa_slot_destroy (dev, slot);
      slot = next;
    }
  dev->free_slots = NULL;
  struct hsa_arena *arena = dev->free_arenas;
  while (arena != NULL)
    {
      struct hsa_arena *next = arena->next;
      ok &= hsa_raw_free (dev, arena->ptr, "team arenas");
      free (arena);
      arena = next;
    }
  dev->free_arenas = NULL;
  return ok;
}

/* Print what the device wrote into ARGS's output buffer since last time;
   FINAL: the kernel has finished, print everything and leave every entry
   clear, as the block's next launch expects.  */
static void
hsa_console (struct gcn_kernargs *args, bool final)
{
  unsigned from = __atomic_load_n (&args->output.consumed, __ATOMIC_ACQUIRE);
  unsigned to = __atomic_load_n (&args->output.next_output, __ATOMIC_ACQUIRE);
  if (from == to)
    return;
  pthread_mutex_lock (&hsa_print_lock);
  if (from > to)
    {
      if (final)
	{
	  printf ("GCN print buffer overflowed.\n");
	  /* Which entries went unread is unknown: clear them all.  */
	  for (unsigned i = 0; i < GCN_PRINT_ENTRIES; i++)
	    __atomic_store_n (&args->output.queue[i].written, 0,
			      __ATOMIC_RELAXED);
	}
    }
  else
    for (unsigned i = from; i < to; i++)
      {
	struct gcn_print_entry *e = &args->output.queue[i % GCN_PRINT_ENTRIES];
	if (!__atomic_load_n (&e->written, __ATOMIC_ACQUIRE) && !final)
	  break;
	switch (e->type)
	  {
	  case 0: printf ("%.128s%ld\n", e->msg, (long) e->u.ivalue); break;
	  case 1: printf ("%.128s%f\n", e->msg, e->u.dvalue); break;
	  case 2: printf ("%.128s%.128s\n", e->msg, e->u.text); break;
	  case 3: printf ("%.128s%.128s", e->msg, e->u.text); break;
	  default: printf ("GCN print buffer error!\n"); break;
	  }
	__atomic_store_n (&e->written, 0, __ATOMIC_RELEASE);
	__atomic_store_n (&args->output.consumed, i + 1, __ATOMIC_RELEASE);
      }
  fflush (stdout);
  pthread_mutex_unlock (&hsa_print_lock);
}

/* Fill SLOT's kernel arguments and put one dispatch packet for K on DEV's
   queue.  */
static bool
hsa_dispatch (struct hsa_device *dev, const struct hsa_kernel *k,
	      void *tgt_vars, const unsigned grid[3], const unsigned block[3],
	      struct hsa_slot *slot, struct hsa_arena *arena)
{
  if (hsa_is_broken (dev))
    {
      hsa_dev_error (dev, "cannot run kernel '%s': an earlier kernel failed"
		     " and the queue is unusable", k->name);
      return false;
    }
  struct gcn_kernargs *args = slot->args;
  args->tgt_vars = (int64_t) (uintptr_t) tgt_vars;
  args->unused = 0;
  args->out_ptr = (int64_t) (uintptr_t) &args->output;
  args->heap_ptr = (int64_t) (uintptr_t) k->image->heap;
  args->arena_ptr = arena != NULL ? (int64_t) (uintptr_t) arena->ptr : 0;
  args->output.return_value = (int) 0xcafe0000u;
  args->output.next_output = 0;
  args->output.consumed = 0;
  /* The print entries are clear: since the block was allocated, or left
     so by the last launch's hsa_console.  */
  ok_hsa.hsa_signal_store_relaxed (slot->signal, 1);

  hsa_queue_t *q = dev->queue;
  uint64_t index = ok_hsa.hsa_queue_add_write_index_screlease (q, 1);
  /* Wait for the packet processor to free the slot.  */
  while (index - ok_hsa.hsa_queue_load_read_index_scacquire (q) >= q->size)
    {
      if (hsa_is_broken (dev))
	{
	  hsa_dev_error (dev, "cannot run kernel '%s': the queue failed",
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
  p->group_segment_size = k->group_size;
  p->kernel_object = k->object;
  p->kernarg_address = args;
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
   as it comes; handle exit and abort called on the device.  */
static bool
hsa_wait (struct hsa_device *dev, const struct hsa_kernel *k,
	  struct hsa_slot *slot)
{
  while (ok_hsa.hsa_signal_wait_scacquire (slot->signal,
					   HSA_SIGNAL_CONDITION_LT, 1,
					   GCN_WAIT_SLICE,
					   HSA_WAIT_STATE_BLOCKED) >= 1)
    {
      if (hsa_is_broken (dev))
	{
	  hsa_status_t s = __atomic_load_n (&dev->queue_error,
					    __ATOMIC_ACQUIRE);
	  char err[OK_HSA_ERRLEN];
	  /* The queue's callback cannot tell which packet faulted: every
	     kernel waiting on the queue ends here.  */
	  hsa_dev_error (dev, "kernel '%s' did not complete: the device queue"
			 " failed with %s; the fault may be another kernel's",
			 k->name, ok_hsa_status (s, err, sizeof err));
	  return false;
	}
      hsa_console (slot->args, false);
    }
  hsa_console (slot->args, true);

  unsigned rv = (unsigned) slot->args->output.return_value;
  switch (rv >> 16)
    {
    case 0xcafe:		/* Returned normally.  */
      return true;
    case 0xffff:		/* exit or abort on the device.  */
      if (((rv >> 8) & 0xff) == SIGABRT)
	{
	  hsa_dev_error (dev, "kernel '%s' aborted", k->name);
	  abort ();
	}
      /* Bits 15:8 name a signal; only exit leaves them 0.  Ending the
	 host with the low byte (often 0) would hide the failure.  */
      if (((rv >> 8) & 0xff) != 0)
	{
	  hsa_dev_error (dev, "kernel '%s' was terminated by signal %u"
			 " (expected exit, which leaves 0 there, or abort)",
			 k->name, (rv >> 8) & 0xff);
	  abort ();
	}
      OK_DEBUG ("%s: kernel %s called exit (%u)", dev->label, k->name,
		rv & 0xff);
      exit ((int) (rv & 0xff));
    default:
      hsa_dev_error (dev, "kernel '%s' left a corrupt exit value %#x",
		     k->name, rv);
      return false;
    }
}

/* The trace's grid counts work-groups (teams), as CUDA's counts blocks;
   the packet's grid counts work-items.  */
static void
hsa_trace_launch (const struct hsa_device *dev, const struct hsa_job *job,
		  bool async)
{
  unsigned groups[3] = { job->grid[0], 1, 1 };
  ok_trace_launch (dev->ord, "hsa", job->kernel->name, groups, job->block,
		   async, job->start, ok_trace_now ());
}

/* Everything a launch holds.  */
static void
hsa_job_release (struct hsa_device *dev, struct hsa_job *job)
{
  if (job->slot != NULL)
    hsa_slot_give (dev, job->slot);
  if (job->arena != NULL)
    hsa_arena_give (dev, job->arena);
  job->slot = NULL;
  job->arena = NULL;
}

static bool
hsa_start (struct hsa_device *dev, void *fn, void *tgt_vars,
	   const struct ok_launch *launch, struct hsa_job *job)
{
  const struct hsa_kernel *k = fn;
  job->kernel = k;
  hsa_geometry (dev, k, launch, job->grid, job->block);
  job->start = ok_trace_on () ? ok_trace_now () : 0;
  job->slot = hsa_slot_take (dev);
  if (job->slot == NULL)
    return false;
  job->arena = hsa_arena_take (dev, job->grid[0]);
  if (job->arena == NULL
      || !hsa_dispatch (dev, k, tgt_vars, job->grid, job->block, job->slot,
			job->arena))
    {
      hsa_job_release (dev, job);
      return false;
    }
  OK_DEBUG ("%s: dispatched %s: %u teams of %u wavefronts", dev->label,
	    k->name, job->grid[0], job->grid[2]);
  return true;
}

bool
hsa_run (void *d, void *fn, void *tgt_vars, const struct ok_launch *launch)
{
  struct hsa_device *dev = d;
  struct hsa_job job;
  memset (&job, 0, sizeof job);
  if (!hsa_start (dev, fn, tgt_vars, launch, &job))
    return false;
  bool ok = hsa_wait (dev, job.kernel, job.slot);
  if (ok && ok_trace_on ())
    hsa_trace_launch (dev, &job, false);
  /* After a fault the slot's signal may still be pending: drop it.  */
  if (!ok)
    {
      hsa_slot_destroy (dev, job.slot);
      job.slot = NULL;
    }
  hsa_job_release (dev, &job);
  return ok;
}

bool
hsa_run_ctor (struct hsa_device *dev, const struct hsa_kernel *k)
{
  struct ok_launch launch;
  memset (&launch, 0, sizeof launch);
  launch.num_teams = 1;
  launch.thread_limit = 1;
  return hsa_run (dev, (void *) k, NULL, &launch);
}

/* The completion thread waits for asynchronous launches in the order they
   were dispatched.  */
static void
hsa_completion_finish (void *d, struct ok_completion_job *link)
{
  struct hsa_device *dev = d;
  struct hsa_job *job = (struct hsa_job *) link;
  if (!hsa_wait (dev, job->kernel, job->slot))
    /* Only libgomp could be told, and it can only stop.  */
    GOMP_PLUGIN_fatal ("offloadkit-%s: asynchronous target region on %s"
		       " cannot complete", ok_plugin.name, dev->label);
  if (ok_trace_on ())
    hsa_trace_launch (dev, job, true);
  hsa_job_release (dev, job);
  free (job);
}

void
hsa_async_init (struct hsa_device *dev)
{
  ok_completion_init (&dev->async, dev, NULL, hsa_completion_finish);
}

bool
hsa_async_run (void *d, void *fn, void *tgt_vars,
	       const struct ok_launch *launch, void *async_data)
{
  struct hsa_device *dev = d;
  /* The thread first: once the kernel is dispatched there is no going
     back.  */
  int err = ok_completion_start (&dev->async);
  if (err != 0)
    {
      hsa_dev_error (dev, "cannot start the completion thread: %s",
		     strerror (err));
      return false;
    }

  struct hsa_job *job = calloc (1, sizeof *job);
  if (job == NULL)
    {
      hsa_dev_error (dev, "out of memory");
      return false;
    }
  if (!hsa_start (dev, fn, tgt_vars, launch, job))
    {
      free (job);
      return false;
    }
  job->link.async_data = async_data;
  ok_completion_push (&dev->async, &job->link);
  return true;
}
