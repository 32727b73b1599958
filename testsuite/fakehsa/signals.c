/* The fake HSA runtime: signals.  A store to a queue's doorbell runs its
   packet processor; waits return when the condition holds or at their
   timeout hint.  See fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "fake-hsa.h"

/* A signal's handle, a queue's doorbell's included; NULL if it is
   neither.  */
struct fh_signal *
fh_signal_find (hsa_signal_t s)
{
  const void *h = (const void *) (uintptr_t) s.handle;
  struct fh_signal *p = fake_handle_get (&fh_handles, FH_H_SIGNAL, h);
  return p != NULL ? p : fake_handle_get (&fh_handles, FH_H_DOORBELL, h);
}

struct fh_signal *
fh_signal_new (enum fh_handle_kind kind, int64_t value)
{
  struct fh_signal *s = fake_handle_new (&fh_handles, kind, sizeof *s);
  if (s != NULL)
    s->value = value;
  return s;
}

void
fh_signal_free (enum fh_handle_kind kind, struct fh_signal *s)
{
  fake_handle_free (&fh_handles, kind, s);
}

hsa_status_t
hsa_signal_create (hsa_signal_value_t initial, uint32_t num_consumers,
		   const hsa_agent_t *consumers, hsa_signal_t *signal)
{
  ENTER (hsa_signal_create);
  NEED_INIT (hsa_signal_create);
  if (signal == NULL || (num_consumers > 0 && consumers == NULL))
    BAD (hsa_signal_create, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL result or consumers");
  struct fh_signal *s = fh_signal_new (FH_H_SIGNAL, initial);
  if (s == NULL)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  signal->handle = (uintptr_t) s;
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_signal_destroy (hsa_signal_t signal)
{
  ENTER (hsa_signal_destroy);
  NEED_INIT (hsa_signal_destroy);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL || s->doorbell_of != NULL)
    BAD (hsa_signal_destroy, HSA_STATUS_ERROR_INVALID_SIGNAL,
	 s == NULL ? "unknown signal" : "a queue's doorbell");
  fh_signal_free (FH_H_SIGNAL, s);
  RETURN (HSA_STATUS_SUCCESS);
}

/* Count a call of SYM that cannot fail and take FH_LOCK; the signal
   SIGNAL, or NULL, reported as an invalid call.  */
static struct fh_signal *
fh_signal_arg (int sym, hsa_signal_t signal)
{
  fh_enter_void (sym);
  struct fh_signal *s = fh_signal_find (signal);
  if (s == NULL)
    fh_bad (sym, "unknown signal %#llx", (unsigned long long) signal.handle);
  return s;
}

/* A store to a doorbell says the queue has packets.  */
static void
fh_signal_store (int sym, hsa_signal_t signal, hsa_signal_value_t value)
{
  struct fh_signal *s = fh_signal_arg (sym, signal);
  if (s != NULL)
    {
      s->value = value;
      if (s->doorbell_of != NULL)
	fh_process (s->doorbell_of);
      pthread_cond_broadcast (&fh_cond);
    }
  pthread_mutex_unlock (&fh_lock);
}

static hsa_signal_value_t
fh_signal_load (int sym, hsa_signal_t signal)
{
  struct fh_signal *s = fh_signal_arg (sym, signal);
  hsa_signal_value_t v = s != NULL ? s->value : 0;
  pthread_mutex_unlock (&fh_lock);
  return v;
}

static void
fh_signal_subtract (int sym, hsa_signal_t signal, hsa_signal_value_t v)
{
  struct fh_signal *s = fh_signal_arg (sym, signal);
  if (s != NULL)
    s->value -= v;
  pthread_cond_broadcast (&fh_cond);
  pthread_mutex_unlock (&fh_lock);
}

/* The memory-order variants of each operation are the same here: the
   fake's signals live under one lock.  OP is fh_signal_store or
   fh_signal_subtract.  */
#define SIGNAL_UPDATE(name, op) \
  void name (hsa_signal_t s, hsa_signal_value_t v) \
  { \
    op (FH_##name, s, v); \
  }
SIGNAL_UPDATE (hsa_signal_store_relaxed, fh_signal_store)
SIGNAL_UPDATE (hsa_signal_store_release, fh_signal_store)
SIGNAL_UPDATE (hsa_signal_store_screlease, fh_signal_store)
SIGNAL_UPDATE (hsa_signal_subtract_relaxed, fh_signal_subtract)
SIGNAL_UPDATE (hsa_signal_subtract_release, fh_signal_subtract)

#define SIGNAL_LOAD(name) \
  hsa_signal_value_t name (hsa_signal_t s) \
  { \
    return fh_signal_load (FH_##name, s); \
  }
SIGNAL_LOAD (hsa_signal_load_relaxed)
SIGNAL_LOAD (hsa_signal_load_acquire)
SIGNAL_LOAD (hsa_signal_load_scacquire)

static bool
fh_condition (int cond, int64_t v, int64_t cmp)
{
  switch (cond)
    {
    case HSA_SIGNAL_CONDITION_EQ: return v == cmp;
    case HSA_SIGNAL_CONDITION_NE: return v != cmp;
    case HSA_SIGNAL_CONDITION_LT: return v < cmp;
    case HSA_SIGNAL_CONDITION_GTE: return v >= cmp;
    }
  return true;
}

/* Waits until the condition holds (packets complete when the doorbell
   rings, or when the gate opens), or TIMEOUT_HINT nanoseconds passed
   (HSA allows returning early: the caller re-checks).  */
static hsa_signal_value_t
fh_signal_wait (int sym, hsa_signal_t signal, int cond, int64_t cmp,
		uint64_t timeout_hint)
{
  struct fh_signal *s = fh_signal_arg (sym, signal);
  if (s == NULL)
    {
      pthread_mutex_unlock (&fh_lock);
      return 0;
    }
  if (cond < 0 || cond > HSA_SIGNAL_CONDITION_GTE)
    fh_bad (sym, "condition %d", cond);
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  /* Never more than 1 s per call: the caller loops.  */
  uint64_t ns = timeout_hint < 1000000000u ? timeout_hint : 1000000000u;
  until.tv_nsec += (long) ns;
  while (until.tv_nsec >= 1000000000)
    {
      until.tv_nsec -= 1000000000;
      until.tv_sec++;
    }
  while (fh_signal_find (signal) == s && !fh_condition (cond, s->value, cmp))
    if (pthread_cond_timedwait (&fh_cond, &fh_lock, &until) != 0)
      break;
  hsa_signal_value_t v = fh_signal_find (signal) == s ? s->value : 0;
  pthread_mutex_unlock (&fh_lock);
  return v;
}

/* The wait state (blocked or active) makes no difference here.  */
#define SIGNAL_WAIT(name) \
  hsa_signal_value_t name (hsa_signal_t s, int cond, hsa_signal_value_t cmp, \
			   uint64_t timeout, int state) \
  { \
    (void) state; \
    return fh_signal_wait (FH_##name, s, cond, cmp, timeout); \
  }
SIGNAL_WAIT (hsa_signal_wait_relaxed)
SIGNAL_WAIT (hsa_signal_wait_acquire)
SIGNAL_WAIT (hsa_signal_wait_scacquire)
