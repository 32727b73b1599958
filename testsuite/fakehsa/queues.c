/* The fake HSA runtime: queues, and the packet processor that takes
   their packets when the doorbell rings (or when the gate opens): each
   kernel-dispatch packet is checked (header, dimensions, sizes, kernel
   object, kernarg address) and recorded with a copy of its kernarg bytes,
   never executed; then its completion signal is decremented.  See
   fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-hsa.h"

struct fake_records fh_dispatches = { .size = sizeof (struct fh_dispatch) };
bool fh_gate_closed;
static uint64_t fh_next_queue_id = 1;

/* The queue whose hsa_queue_t is Q (its first member).  */
static struct fh_queue *
fh_queue_find (const hsa_queue_t *q)
{
  return fake_handle_get (&fh_handles, FH_H_QUEUE, q);
}

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
  void *ring = NULL;
  if (posix_memalign (&ring, 64, (size_t) size * 64) != 0)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  struct fh_queue *q = fake_handle_new (&fh_handles, FH_H_QUEUE, sizeof *q);
  struct fh_signal *doorbell = fh_signal_new (FH_H_DOORBELL, 0);
  if (q == NULL || doorbell == NULL)
    {
      if (q != NULL)
	fake_handle_free (&fh_handles, FH_H_QUEUE, q);
      if (doorbell != NULL)
	fh_signal_free (FH_H_DOORBELL, doorbell);
      free (ring);
      RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    }
  /* Every slot starts INVALID, as the packet processor expects.  */
  for (uint32_t i = 0; i < size; i++)
    ((fh_dispatch_packet *) ring)[i].header = HSA_PACKET_TYPE_INVALID;
  q->doorbell = doorbell;
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
  fh_signal_free (FH_H_DOORBELL, q->doorbell);
  free (q->q.base_address);
  fake_handle_free (&fh_handles, FH_H_QUEUE, q);
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

/* Check and record one kernel-dispatch packet; the record, NULL if
   there was no memory for it.  */
static const struct fh_dispatch *
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

  struct fh_dispatch *d = fake_record_new (&fh_dispatches);
  if (d == NULL)
    return NULL;
  d->pkt = *p;
  d->agent = fh_agent_index (q->agent);
  d->queue = q->q.id;
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
  return d;
}

/* The packet processor: take the packets up to the write index (the
   doorbell says where the producer is); each completes at once unless
   the gate is closed.  Called with FH_LOCK held.  */
void
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
	  const struct fh_dispatch *d = fh_dispatch (q, p);
	  hsa_status_t st = fh_dispatch_fault ();
	  if (st != HSA_STATUS_SUCCESS)
	    {
	      fh_log ("fail kernel_dispatch %s -> 0x%x",
		      d != NULL ? d->kernel : "?", st);
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
