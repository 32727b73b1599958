/* The completion thread of a device's asynchronous launches, shared by
   the GPU backends.

   async_run must return once the kernel is started; libgomp learns that
   it finished through GOMP_PLUGIN_target_task_completion.  Each device
   keeps one FIFO of started launches and one thread, started with the
   first asynchronous launch, that takes them in order, lets the backend
   wait for each (its FINISH callback) and then tells libgomp.  */

#ifndef OFFLOADKIT_COMPLETION_H
#define OFFLOADKIT_COMPLETION_H

#include <pthread.h>
#include <stdbool.h>

/* The first member of a backend's job, which the backend allocates.  */
struct ok_completion_job
{
  struct ok_completion_job *next;
  void *async_data;		/* What libgomp gets back.  */
};

struct ok_completion
{
  void *owner;			/* The device, passed to the callbacks.  */
  /* Called first in the thread (e.g. to make a context current); may be
     NULL.  */
  void (*enter) (void *owner);
  /* Waits for JOB, releases what it holds and frees it; may only end the
     process when the launch failed, as libgomp cannot be told.  */
  void (*finish) (void *owner, struct ok_completion_job *job);

  pthread_mutex_t lock;
  pthread_cond_t cond;		/* Signalled for the thread.  */
  pthread_cond_t idle;		/* Signalled when PENDING drops to 0.  */
  unsigned pending;		/* Started and not yet completed.  */
  struct ok_completion_job *head, *tail;
  bool started, stopping;
  pthread_t thread;
};

void ok_completion_init (struct ok_completion *c, void *owner,
			 void (*enter) (void *),
			 void (*finish) (void *, struct ok_completion_job *));
/* After ok_completion_fini.  */
void ok_completion_destroy (struct ok_completion *c);
/* Start the thread if it is not running: before the kernel is launched,
   as after that there is no going back.  0 or pthread_create's error.  */
int ok_completion_start (struct ok_completion *c);
/* Queue JOB, started, for the thread.  */
void ok_completion_push (struct ok_completion *c,
			 struct ok_completion_job *job);
/* Wait until every queued job has completed (before an image goes away:
   its kernels may still be running); at once in the thread itself.  */
void ok_completion_drain (struct ok_completion *c);
/* Complete what is queued and stop the thread; false when the caller is
   that thread (exit called from a completion), which must then leave the
   device as it is.  */
bool ok_completion_fini (struct ok_completion *c);

#endif
