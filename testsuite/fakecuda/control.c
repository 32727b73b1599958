/* The fake libcuda's functions for tests that load it themselves:
   failure injection at run time, the gate, counters and launch records.
   They are exported beside the driver's.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"

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

/* The kinds fakecuda_outstanding counts itself (under FK_LOCK).  */
static long
fk_outstanding_more (const char *kind)
{
  long n = -1;
  if (strcmp (kind, "context") == 0)
    {
      n = 0;
      for (int d = 0; d < FK_MAX_DEVICES; d++)
	n += fk_ctxs[d].refs;
      n += fk_created_alive ();
    }
  else if (strcmp (kind, "mem_bytes") == 0)
    {
      n = 0;
      for (size_t i = 0; i < fk_blocks.n; i++)
	if (fk_blocks.live[i].kind == FK_MEM)
	  n += (long) fk_blocks.live[i].size;
    }
  return n;
}

/* How many objects of KIND are alive: "mem" (cuMemAlloc blocks), "host"
   (page-locked host blocks), "module", "stream", "event", "link",
   "context" (primary context retains not released, and contexts of
   cuCtxCreate_v2 not destroyed); "mem_bytes" their
   bytes.  -1 for an unknown kind.  */
long
fakecuda_outstanding (const char *kind)
{
  static const struct fake_count counts[] = {
    { "mem", 0, FAKE_KIND (FK_MEM) }, { "host", 0, FAKE_KIND (FK_HOST) },
    { "module", FAKE_KIND (FK_H_MODULE), 0 },
    { "stream", FAKE_KIND (FK_H_STREAM), 0 },
    { "event", FAKE_KIND (FK_H_EVENT), 0 },
    { "link", FAKE_KIND (FK_H_LINK), 0 },
  };
  return fake_control_count (&fk_fs, counts, sizeof counts / sizeof *counts,
			     &fk_handles, &fk_blocks, kind,
			     fk_outstanding_more);
}

/* Launches recorded so far.  */
int
fakecuda_launch_count (void)
{
  return fake_control_records (&fk_fs, &fk_launches);
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
  const struct fk_launch *l = fake_record_get (&fk_launches, i);
  if (l == NULL)
    {
      pthread_mutex_unlock (&fk_lock);
      return 0;
    }
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

/* Make the next launch of kernel KERNEL ask for a reverse-offload region
   while it runs (see struct fk_rev): ARGS are the fn, mapnum, addrs,
   sizes and kinds it writes, DEV_NUM its device number.  Replaces one
   armed before.  0 when out of memory.  */
int
fakecuda_rev_request (const char *kernel, const unsigned long long args[5],
		      int dev_num)
{
  struct fk_rev *q = calloc (1, sizeof *q);
  if (q == NULL)
    return 0;
  snprintf (q->kernel, sizeof q->kernel, "%s", kernel);
  q->fn = args[0];
  q->mapnum = args[1];
  q->addrs = args[2];
  q->sizes = args[3];
  q->kinds = args[4];
  q->dev_num = dev_num;
  pthread_mutex_lock (&fk_lock);
  free (fk_rev_armed);
  fk_rev_armed = q;
  pthread_mutex_unlock (&fk_lock);
  return 1;
}

/* Reverse-offload requests served by the host so far.  */
long
fakecuda_rev_served (void)
{
  long n;
  fake_control_read (&fk_fs, &n, &fk_rev_served, sizeof n);
  return n;
}

/* The address the fake's linker gives symbol NAME in the initialiser of
   a PTX global (fk_symbol_address).  */
unsigned long long
fakecuda_symbol_address (const char *name)
{
  return fk_symbol_address (name);
}
