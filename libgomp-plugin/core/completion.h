/* The completion thread of a device's asynchronous launches.

   async_run must return once the kernel is started; libgomp learns that
   it finished through GOMP_PLUGIN_target_task_completion.  Each device
   keeps one FIFO of started launches and one thread, started with the
   first asynchronous launch, that takes them in order, has them finished
   (the FINISH callback: the core's, which lets the backend wait) and then
   tells libgomp.  */

#ifndef OFFLOADKIT_COMPLETION_H
#define OFFLOADKIT_COMPLETION_H

#include <pthread.h>
#include <stdbool.h>

/* The first member of a queued launch.  */
struct ok_completion_job
{
  struct ok_completion_job *next;
  void *async_data;		/* What libgomp gets back.  */
};

struct ok_completion
{
  void *owner;			/* The device, passed to FINISH.  */
  /* Waits for JOB, releases what it holds and frees it.  It must not
     return when the launch failed: libgomp cannot be told, and the
     program ends (ok_end_program).  */
  void (*finish) (void *owner, struct ok_completion_job *job);

  pthread_mutex_t lock;
  pthread_cond_t cond;		/* Signalled for the thread.  */
  pthread_cond_t idle;		/* Signalled at each completion.  */
  unsigned pending;		/* Started and not yet completed.  */
  /* Jobs ever queued, and ever completed (libgomp told): completions
     come in queue order, so job N (counting from 1) is complete once
     COMPLETED >= N.  */
  unsigned long queued, completed;
  struct ok_completion_job *head, *tail;
  bool started, stopping;
  pthread_t thread;
};

void ok_completion_init (struct ok_completion *c, void *owner,
			 void (*finish) (void *, struct ok_completion_job *));
/* After ok_completion_fini.  */
void ok_completion_destroy (struct ok_completion *c);
/* Start the thread if it is not running: before the kernel is launched,
   as after that there is no going back.  0 or pthread_create's error.  */
int ok_completion_start (struct ok_completion *c);
/* Queue JOB, started, for the thread.  */
void ok_completion_push (struct ok_completion *c,
			 struct ok_completion_job *job);
/* How many jobs have been queued so far; and wait until the first N of
   them have completed (at once in the thread itself).  */
unsigned long ok_completion_queued (struct ok_completion *c);
void ok_completion_wait (struct ok_completion *c, unsigned long n);
/* Wait until every queued job has completed (before an image goes away:
   its kernels may still be running); at once in the thread itself.  */
void ok_completion_drain (struct ok_completion *c);
/* Complete what is queued and stop the thread; false when the caller is
   that thread, which must then leave the device as it is.  */
bool ok_completion_fini (struct ok_completion *c);
/* Whether the calling thread is a completion thread (of any device).  */
bool ok_completion_thread_p (void);

#endif
