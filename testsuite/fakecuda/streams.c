/* The fake libcuda: streams, and the host functions queued on them,
   which one thread of the fake's runs in order.  Work on a stream is
   pending only while the test keeps the gate closed (fakecuda_gate).  See
   fake-cuda.h.  */

#define _GNU_SOURCE
#include <stdlib.h>

#include "fake-cuda.h"

bool fk_gate_closed;
unsigned long fk_gate_gen;
__thread bool fk_in_callback;

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

struct fk_stream *
fk_stream_find (CUstream s)
{
  return fake_handle_get (&fk_handles, FK_H_STREAM, s);
}

bool
fk_is_real_stream (CUstream s)
{
  return s != NULL && s != FK_STREAM_LEGACY && s != FK_STREAM_PER_THREAD;
}

bool
fk_stream_pending (struct fk_stream *s)
{
  return s != NULL && s->busy && fk_gate_closed && s->busy_gen == fk_gate_gen;
}

bool
fk_stream_ok (int sym, CUstream s)
{
  if (!fk_is_real_stream (s))
    return true;
  struct fk_stream *p = fk_stream_find (s);
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
  struct fk_stream *s = fake_handle_new (&fk_handles, FK_H_STREAM,
					 sizeof *s);
  if (s == NULL)
    RETURN (CUDA_ERROR_OUT_OF_MEMORY);
  s->ctx = fk_current ();
  s->flags = flags;
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
  fk_rev_drop (stream, "stream destroyed");
  fake_handle_free (&fk_handles, FK_H_STREAM, stream);
  RETURN (CUDA_SUCCESS);
}

int
fk_streams_drop (struct fk_ctx *ctx)
{
  int n = 0;
  for (;;)
    {
      struct fk_stream *s, *found = NULL;
      FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
	if (s->ctx == ctx)
	  found = s;
      if (found == NULL)
	return n;
      fk_rev_drop (found, "context destroyed");
      fake_handle_free (&fk_handles, FK_H_STREAM, found);
      n++;
    }
}

bool
fk_blocking_pending (void)
{
  struct fk_ctx *ctx = fk_current ();
  struct fk_stream *s;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
    if (s->ctx == ctx && !(s->flags & FK_STREAM_NON_BLOCKING)
	&& (fk_stream_pending (s) || s->callbacks > 0))
      return true;
  return false;
}

CUresult
cuStreamSynchronize (CUstream stream)
{
  ENTER (cuStreamSynchronize);
  NEED_INIT (cuStreamSynchronize);
  NEED_STREAM (cuStreamSynchronize, stream);
  if (fk_is_real_stream (stream) && fk_rev_step (stream))
    {
      /* The kernel waits for the host, which waits for the kernel.  */
      fk_bad (FK_cuStreamSynchronize, "kernel %s waits for its"
	      " reverse-offload request to be served: the driver would wait"
	      " for ever", stream->rev->kernel);
      fk_rev_drop (stream, "deadlock");
      stream->fault = CUDA_ERROR_LAUNCH_FAILED;
    }
  if (fk_is_real_stream (stream))
    {
      while (fk_stream_find (stream) != NULL
	     && (fk_stream_pending (stream) || stream->callbacks > 0))
	pthread_cond_wait (&fk_cond, &fk_lock);
      if (fk_stream_find (stream) != NULL && stream->fault != 0)
	RETURN ((CUresult) stream->fault);
    }
  else if (stream != FK_STREAM_PER_THREAD)
    /* The legacy stream waits for the blocking streams of the context.  */
    while (fk_blocking_pending ())
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
      && (fk_rev_step (stream) || fk_stream_pending (stream)
	  || stream->callbacks > 0))
    RETURN (CUDA_ERROR_NOT_READY);
  /* A kernel that faulted (its error, as cuStreamSynchronize's).  */
  if (fk_is_real_stream (stream) && stream->fault != 0)
    RETURN ((CUresult) stream->fault);
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

CUresult
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

void
fk_callbacks_stop (void)
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
}

void
fk_callbacks_forget (void)
{
  fk_cb_thread_started = false;
  fk_cb_head = NULL;
  fk_cb_tail = &fk_cb_head;
  struct fk_stream *s;
  FAKE_HANDLES_EACH (&fk_handles, FK_H_STREAM, s)
    s->callbacks = 0;
}
