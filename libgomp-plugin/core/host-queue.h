/* OpenACC async queues run by a host thread each: the mechanism of the
   backends whose queues are not a driver's (the emulated device, and the
   HSA backend, whose runtime has no queue that orders copies, callbacks
   and waits for other queues with launches, as GCC's gcn plugin has
   none).

   A queue is a list of entries: launches, copies, libgomp's callbacks,
   and the markers that order two queues (ok_hostq_join).  A thread of
   the queue's own runs them in order: a launch through ok_device_run, so
   with the backend's launch hook on that thread; a copy with the
   backend's copy hooks; a callback by calling it.  A failed entry has
   said why; the next wait for the queue (or its test) says it failed.

   When the thread runs the entries is the queue's policy:
   - OK_HOSTQ_EAGER: as soon as they come (GCC's gcn plugin's
     drain_queue);
   - OK_HOSTQ_LAZY: as late as a device may: only once the program waits
     for the queue, tests it (the work starts; it is done when asked
     again), orders another queue after it, or destroys it, or a
     synchronous operation of the device comes (the backend calls
     ok_hostq_run_device first).
   With either, an upload from host memory takes the bytes of the moment
   it is queued, once the downloads queued into them have landed
   (ok_hostq_copy).

   The backend's queue record begins with struct ok_hostq, which begins
   with struct ok_acc_queue; the functions here that take a struct
   ok_acc_queue are the backend's acc_queue_* hooks as they are
   (backend.h says what each promises), or what the backend's hooks call
   after their own part.  */

#ifndef OFFLOADKIT_HOST_QUEUE_H
#define OFFLOADKIT_HOST_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

enum ok_hostq_policy
{
  OK_HOSTQ_EAGER,
  OK_HOSTQ_LAZY
};

struct ok_hostq_entry;

struct ok_hostq
{
  struct ok_acc_queue base;	/* First: the core's OpenACC part.  */
  enum ok_hostq_policy policy;
  /* Optional: called first on the queue's thread (the HSA backend's
     launches from there go to the queue's own HSA queue).  */
  void (*on_thread) (struct ok_hostq *q);
  pthread_mutex_t lock;		/* Guards what follows.  */
  /* Signalled for the queue's thread: entries released to it, or the
     queue stops.  */
  pthread_cond_t cond;
  /* Broadcast for the threads that wait for entries to be done, once
     DONE reaches WAKE_AT, the smallest count one of them waits for
     (UINT64_MAX: none waits), rather than after every entry.  */
  pthread_cond_t done_cond;
  uint64_t wake_at;
  struct ok_hostq_entry *head, *tail;
  struct ok_hostq_entry *running;	/* Taken from HEAD by the thread.  */
  /* Copies to host memory not done; changed under LOCK, atomically, so
     that uploads may look without it.  */
  unsigned downloads;
  /* Entries counted since the queue began: queued, released to the
     thread (which runs the first RELEASED ones; all of them for an eager
     queue), done.  */
  uint64_t queued, released, done;
  bool failed;			/* An entry failed since the last wait.  */
  bool stopping;
  pthread_t thread;
  /* In the device's list of queues (struct ok_device's HOSTQS).  */
  struct ok_hostq *next;
};

static inline struct ok_hostq *
ok_hostq (struct ok_acc_queue *q)
{
  return (struct ok_hostq *) q;
}

/* Start queue Q (zeroed but for its DEV) with POLICY: its thread, which
   calls ON_THREAD (may be NULL) first.  False after a message.  */
bool ok_hostq_start (struct ok_acc_queue *q, enum ok_hostq_policy policy,
		     void (*on_thread) (struct ok_hostq *q));
/* Wait for the work queued on Q, stop its thread and free what the
   queue holds (not Q); whether all that work succeeded since the last
   wait.  */
bool ok_hostq_stop (struct ok_acc_queue *q);

/* The acc_queue_test, acc_queue_wait, acc_queue_join,
   acc_queue_callback and acc_queue_copy hooks.  */
int ok_hostq_test (struct ok_acc_queue *q);
bool ok_hostq_wait (struct ok_acc_queue *q);
bool ok_hostq_join (struct ok_acc_queue *first, struct ok_acc_queue *later);
bool ok_hostq_callback (struct ok_acc_queue *q, void (*fn) (void *),
			void *data);
/* ok_hostq_copy takes the bytes of a copy from host memory when it is
   queued, after the downloads already queued into them (host-queue.c
   says how); ok_hostq_copy_kept reads them when the queue runs, for a
   source that its caller knows stays (page-locked host memory, which a
   GPU's DMA reads then).  */
bool ok_hostq_copy (struct ok_acc_queue *q, enum ok_copy_dir dir, void *dst,
		    const void *src, size_t n);
bool ok_hostq_copy_kept (struct ok_acc_queue *q, enum ok_copy_dir dir,
			 void *dst, const void *src, size_t n);
/* Queue a launch of FN with ARGS as *LAUNCH says (acc_exec on a
   queue).  */
bool ok_hostq_launch (struct ok_acc_queue *q, void *fn, void *args,
		      const struct ok_launch *launch);

/* Lazy queues: run what every queue of DEV holds so far and wait for it,
   before a synchronous operation of DEV; what failed is said at the next
   wait for its queue.  Nothing from a queue's thread, which must not
   wait for queues (it may be what they wait for).  */
void ok_hostq_run_device (struct ok_device *dev);

/* The queue whose thread the calling thread is, or NULL.  */
struct ok_hostq *ok_hostq_self (void);

#endif /* OFFLOADKIT_HOST_QUEUE_H */
