/* The fake libcuda: events, recorded on streams; an event recorded
   behind pending work is pending with it.  See fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdlib.h>

#include "fake-cuda.h"

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

/* After ENTER: the driver is initialised and EV, SYM's event argument,
   is the live event E.  */
#define NEED_EVENT(sym, ev, e) \
  do { NEED_INIT (sym); \
       if (((e) = fk_event_arg (FK_##sym, (ev))) == NULL) \
	 RETURN (CUDA_ERROR_INVALID_HANDLE); } while (0)

int
fk_events_drop (struct fk_ctx *ctx)
{
  int n = 0;
  for (;;)
    {
      struct fk_event *e, *found = NULL;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_EVENT, e)
	if (e->ctx == ctx)
	  found = e;
      if (found == NULL)
	return n;
      fake_handle_free (&fk_handles, FK_H_EVENT, found);
      n++;
    }
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
  struct fk_event *e = fake_handle_new (&fk_handles, FK_H_EVENT, sizeof *e);
  if (e == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  e->ctx = fk_current ();
  e->flags = flags;
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
  struct fk_event *e;
  NEED_EVENT (cuEventSynchronize, event, e);
  while (fk_event_find (event) != NULL && fk_event_pending (e))
    pthread_cond_wait (&fk_cond, &fk_lock);
  RETURN (CUDA_SUCCESS);
}

CUresult
cuEventQuery (CUevent event)
{
  ENTER (cuEventQuery);
  struct fk_event *e;
  NEED_EVENT (cuEventQuery, event, e);
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
  if (!fake_handle_free (&fk_handles, FK_H_EVENT, event))
    {
      fk_bad (FK_cuEventDestroy_v2, "%p is not a live event", (void *) event);
      RETURN (CUDA_ERROR_INVALID_HANDLE);
    }
  RETURN (CUDA_SUCCESS);
}
