/* The fake HSA runtime's functions for tests that load it themselves:
   failure injection at run time, the gate, counters, dispatch records and
   loaded symbols.  They are exported beside the runtime's.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "fake-hsa.h"

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

/* The kind fakehsa_outstanding counts itself (under FH_LOCK).  */
static long
fh_outstanding_more (const char *kind)
{
  return strcmp (kind, "init") == 0 ? fh_init_refs : -1;
}

/* How many of KIND are alive: "mem" (region and pool allocations),
   "executable", "code" (loaded code blocks), "reader" (code object
   readers and deserialized code objects), "queue", "signal" (not counting
   doorbells), "init" (hsa_init not matched by hsa_shut_down).  -1 for an
   unknown kind.  */
long
fakehsa_outstanding (const char *kind)
{
  static const struct fake_count counts[] = {
    { "mem", 0, FAKE_KIND (FH_BLOCK_MEM) },
    { "code", 0, FAKE_KIND (FH_BLOCK_CODE) },
    { "executable", FAKE_KIND (FH_H_EXEC), 0 },
    { "reader", FAKE_KIND (FH_H_READER) | FAKE_KIND (FH_H_CODE_OBJECT), 0 },
    { "queue", FAKE_KIND (FH_H_QUEUE), 0 },
    { "signal", FAKE_KIND (FH_H_SIGNAL), 0 },
    { "lock", FAKE_KIND (FH_H_LOCK), 0 },
  };
  return fake_control_count (&fh_fs, counts, sizeof counts / sizeof *counts,
			     &fh_handles, &fh_blocks, kind,
			     fh_outstanding_more);
}

/* Dispatches recorded so far.  */
int
fakehsa_dispatch_count (void)
{
  return fake_control_records (&fh_fs, &fh_dispatches);
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
  const struct fh_dispatch *d = fake_record_get (&fh_dispatches, i);
  if (d == NULL)
    {
      pthread_mutex_unlock (&fh_lock);
      return 0;
    }
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

/* The id (hsa_queue_t's ID) of the queue dispatch I came on; 0 if there
   is no dispatch I.  */
uint64_t
fakehsa_dispatch_queue (int i)
{
  pthread_mutex_lock (&fh_lock);
  const struct fh_dispatch *d = fake_record_get (&fh_dispatches, i);
  uint64_t id = d != NULL ? d->queue : 0;
  pthread_mutex_unlock (&fh_lock);
  return id;
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
  bool r;
  fake_control_read (&fh_fs, &r, &fh_initialised_once, sizeof r);
  return r;
}

/* The live block of device memory (a region or pool allocation, or a
   loaded code object) that contains ADDR: its start and size, 1; 0 if
   ADDR is in none.  For checks that a pointer the plugin gave the device
   leads to memory of the size it needs.  */
int
fakehsa_block (uintptr_t addr, uintptr_t *base, size_t *size)
{
  pthread_mutex_lock (&fh_lock);
  struct fake_block *b = fh_block_find (addr);
  int found = b != NULL;
  if (found && base != NULL)
    *base = b->base;
  if (found && size != NULL)
    *size = b->size;
  pthread_mutex_unlock (&fh_lock);
  return found;
}
