/* The completion thread of asynchronous launches (see completion.h).  */

#include "completion.h"
#include "gomp-abi.h"

/* The queue whose thread this is, in that thread; else NULL, so that the
   thread never waits for itself.  */
static __thread struct ok_completion *ok_completing;

void
ok_completion_init (struct ok_completion *c, void *owner,
		    void (*finish) (void *, struct ok_completion_job *))
{
  c->owner = owner;
  c->finish = finish;
  pthread_mutex_init (&c->lock, NULL);
  pthread_cond_init (&c->cond, NULL);
  pthread_cond_init (&c->idle, NULL);
  c->pending = 0;
  c->queued = c->completed = 0;
  c->head = c->tail = NULL;
  c->started = c->stopping = false;
}

void
ok_completion_destroy (struct ok_completion *c)
{
  pthread_cond_destroy (&c->idle);
  pthread_cond_destroy (&c->cond);
  pthread_mutex_destroy (&c->lock);
}

static void *
ok_completion_thread (void *arg)
{
  struct ok_completion *c = arg;
  ok_completing = c;
  for (;;)
    {
      pthread_mutex_lock (&c->lock);
      while (c->head == NULL && !c->stopping)
	pthread_cond_wait (&c->cond, &c->lock);
      struct ok_completion_job *job = c->head;
      if (job != NULL)
	{
	  c->head = job->next;
	  if (c->head == NULL)
	    c->tail = NULL;
	}
      pthread_mutex_unlock (&c->lock);
      if (job == NULL)
	break;

      void *async_data = job->async_data;
      c->finish (c->owner, job);
      GOMP_PLUGIN_target_task_completion (async_data);

      pthread_mutex_lock (&c->lock);
      c->completed++;
      --c->pending;
      pthread_cond_broadcast (&c->idle);
      pthread_mutex_unlock (&c->lock);
    }
  return NULL;
}

int
ok_completion_start (struct ok_completion *c)
{
  int err = 0;
  pthread_mutex_lock (&c->lock);
  if (!c->started)
    {
      err = pthread_create (&c->thread, NULL, ok_completion_thread, c);
      if (err == 0)
	c->started = true;
    }
  pthread_mutex_unlock (&c->lock);
  return err;
}

void
ok_completion_push (struct ok_completion *c, struct ok_completion_job *job)
{
  job->next = NULL;
  pthread_mutex_lock (&c->lock);
  c->pending++;
  /* Read without the lock (ok_completion_queued).  */
  __atomic_store_n (&c->queued, c->queued + 1, __ATOMIC_RELEASE);
  if (c->tail != NULL)
    c->tail->next = job;
  else
    c->head = job;
  c->tail = job;
  pthread_cond_signal (&c->cond);
  pthread_mutex_unlock (&c->lock);
}

unsigned long
ok_completion_queued (struct ok_completion *c)
{
  /* Every synchronous launch asks; a job queued by another thread
     meanwhile is not ordered before it anyway.  */
  return __atomic_load_n (&c->queued, __ATOMIC_ACQUIRE);
}

void
ok_completion_wait (struct ok_completion *c, unsigned long n)
{
  if (ok_completing == c)
    return;
  pthread_mutex_lock (&c->lock);
  while (c->completed < n)
    pthread_cond_wait (&c->idle, &c->lock);
  pthread_mutex_unlock (&c->lock);
}

void
ok_completion_drain (struct ok_completion *c)
{
  if (ok_completing == c)
    return;
  pthread_mutex_lock (&c->lock);
  while (c->pending > 0)
    pthread_cond_wait (&c->idle, &c->lock);
  pthread_mutex_unlock (&c->lock);
}

bool
ok_completion_fini (struct ok_completion *c)
{
  if (ok_completing == c)
    return false;
  pthread_mutex_lock (&c->lock);
  c->stopping = true;
  bool started = c->started;
  pthread_cond_signal (&c->cond);
  pthread_mutex_unlock (&c->lock);
  /* The thread completes what is queued, then ends.  */
  if (started)
    pthread_join (c->thread, NULL);
  c->started = false;
  return true;
}

bool
ok_completion_thread_p (void)
{
  return ok_completing != NULL;
}
