/* The worker of an emulated device, which runs its regions in order as a
   stream would.  A launch queues a job; the core waits for it
   (emu_finish), on the launching thread or, for target nowait, on the
   device's completion thread.  The worker is a thread of the plugin's,
   not one of the program's OpenMP threads, so regions do not see the
   launching thread's ICVs; each region starts from the OpenMP settings
   of a new thread (emu_icvs_reset), as libgomp's host fallback clears
   the thread's state around a region.  */

/* RTLD_DEFAULT, dladdr.  */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "emu-internal.h"
#include "trace.h"

/* libgomp's GOMP_teams4, when libgomp loaded the plugin (the plugin
   harness has none): it sets the calling thread's thread limit, as
   libgomp's own host fallback does for a thread_limit clause.  */
static pthread_once_t emu_gomp_once = PTHREAD_ONCE_INIT;
static bool (*emu_gomp_teams4) (unsigned, unsigned, unsigned, bool);
/* libgomp's too, for traces: the threads a parallel region would get.  */
static int (*emu_gomp_max_threads) (void);
/* And for reverse offload: whether the region's thread is inside a
   parallel region of several threads.  */
static int (*emu_gomp_active_level) (void);

/* The per-thread OpenMP settings a region may change with omp_set_*
   (libgomp's icv.c: a thread's implicit task's ICVs, and its default
   allocator), read and set through libgomp's API.  */
static struct
{
  void (*set_num_threads) (int);
  int (*get_dynamic) (void);
  void (*set_dynamic) (int);
  int (*get_max_active_levels) (void);
  void (*set_max_active_levels) (int);
  void (*get_schedule) (int *, int *);
  void (*set_schedule) (int, int);
  int (*get_default_device) (void);
  void (*set_default_device) (int);
  int (*get_thread_limit) (void);
  uintptr_t (*get_default_allocator) (void);
  void (*set_default_allocator) (uintptr_t);
} emu_icv_api;

/* Those settings' values.  */
struct emu_icvs
{
  int num_threads, dynamic, max_active_levels, sched_kind, sched_chunk;
  int default_device, thread_limit;
  uintptr_t allocator;
};

static void
emu_gomp_resolve (void)
{
  *(void **) &emu_gomp_teams4 = dlsym (RTLD_DEFAULT, "GOMP_teams4");
  *(void **) &emu_gomp_max_threads = dlsym (RTLD_DEFAULT,
					    "omp_get_max_threads");
  *(void **) &emu_gomp_active_level = dlsym (RTLD_DEFAULT,
					     "omp_get_active_level");
  static const char *const names[] = {
    "omp_set_num_threads", "omp_get_dynamic", "omp_set_dynamic",
    "omp_get_max_active_levels", "omp_set_max_active_levels",
    "omp_get_schedule", "omp_set_schedule", "omp_get_default_device",
    "omp_set_default_device", "omp_get_thread_limit",
    "omp_get_default_allocator", "omp_set_default_allocator"
  };
  void **fns = (void **) &emu_icv_api;
  _Static_assert (sizeof emu_icv_api == sizeof names / sizeof names[0]
		  * sizeof (void *), "one name per function");
  bool all = emu_gomp_max_threads != NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    all &= (fns[i] = dlsym (RTLD_DEFAULT, names[i])) != NULL;
  if (!all)
    /* No libgomp (the plugin's test harness): no settings to keep.  */
    memset (&emu_icv_api, 0, sizeof emu_icv_api);
}

/* The calling thread's settings into *V; false without libgomp.  */
static bool
emu_icvs_read (struct emu_icvs *v)
{
  if (emu_icv_api.set_num_threads == NULL)
    return false;
  v->num_threads = emu_gomp_max_threads ();
  v->dynamic = emu_icv_api.get_dynamic ();
  v->max_active_levels = emu_icv_api.get_max_active_levels ();
  emu_icv_api.get_schedule (&v->sched_kind, &v->sched_chunk);
  v->default_device = emu_icv_api.get_default_device ();
  v->thread_limit = emu_icv_api.get_thread_limit ();
  v->allocator = emu_icv_api.get_default_allocator ();
  return true;
}

/* A new thread's settings: the program's global ICVs, read on the
   worker before its first region.  */
static __thread struct emu_icvs emu_fresh_icvs;
static __thread bool emu_fresh_icvs_read;

/* Give the calling thread, which ran regions before, a new thread's
   settings back where a region changed them.  The thread limit is set
   with the region's (emu_region_run).  */
static void
emu_icvs_reset (void)
{
  struct emu_icvs now;
  const struct emu_icvs *f = &emu_fresh_icvs;
  if (!emu_fresh_icvs_read || !emu_icvs_read (&now))
    return;
  if (now.num_threads != f->num_threads)
    emu_icv_api.set_num_threads (f->num_threads);
  if (now.dynamic != f->dynamic)
    emu_icv_api.set_dynamic (f->dynamic);
  if (now.max_active_levels != f->max_active_levels)
    emu_icv_api.set_max_active_levels (f->max_active_levels);
  if (now.sched_kind != f->sched_kind || now.sched_chunk != f->sched_chunk)
    emu_icv_api.set_schedule (f->sched_kind, f->sched_chunk);
  if (now.default_device != f->default_device)
    emu_icv_api.set_default_device (f->default_device);
  if (now.allocator != f->allocator)
    emu_icv_api.set_default_allocator (f->allocator);
}

bool
emu_region_alone (void)
{
  return emu_gomp_active_level == NULL || emu_gomp_active_level () == 0;
}

const char *
emu_image_fn_name (struct emu_device *dev, void *fn)
{
  for (struct ok_loaded_image *l = ok_images_first (&dev->base); l != NULL;
       l = l->next)
    {
      const struct emu_image *img = emu_image_of (l);
      if (img->func_names != NULL)
	for (size_t i = 0; i < img->num_funcs; i++)
	  if (img->funcs[i] == fn && img->func_names[i] != NULL)
	    return img->func_names[i];
    }
  return NULL;
}

const char *
emu_fn_name (struct emu_device *dev, void *fn, char *buf, size_t len)
{
  const char *name = emu_image_fn_name (dev, fn);
  if (name != NULL)
    return name;
  Dl_info info;
  if (dladdr (fn, &info) != 0 && info.dli_sname != NULL
      && info.dli_saddr == fn)
    return info.dli_sname;
  snprintf (buf, len, "%p", fn);
  return buf;
}

static _Noreturn void emu_region_exit (int status);

/* libgomp's number of DEV, which it stored in each image it loaded there
   (-1 before the first).  */
static int
emu_gomp_num (struct emu_device *dev)
{
  struct ok_loaded_image *l = ok_images_first (&dev->base);
  return l != NULL ? *(const int *) emu_image_of (l)->device_num : -1;
}

/* Tell the wrappers of DEV's images which device the calling thread runs
   a region of (ON), or that it runs none.  The program and each of its
   shared libraries have a wrapper, and the interposer that answers may be
   any of theirs, so all are told.  */
void
emu_set_device_num (struct emu_device *dev, bool on)
{
  for (struct ok_loaded_image *l = ok_images_first (&dev->base); l != NULL;
       l = l->next)
    {
      const struct emu_image *img = emu_image_of (l);
      if (img->device_num_slot == NULL)
	continue;
      int *slot = img->device_num_slot ();
      if (slot != NULL)
	/* libgomp stored its number of the device there at load.  */
	*slot = on ? *(const int *) img->device_num : -1;
      /* OpenACC's device types are numbered as the GOMP ones.  */
      int *type = (img->acc_device_slot != NULL ? img->acc_device_slot ()
		   : NULL);
      if (type != NULL)
	*type = ok_plugin.device_type;
      ok_device_exit_fn **exit_fn = (img->device_exit_slot != NULL
				     ? img->device_exit_slot () : NULL);
      if (exit_fn != NULL)
	*exit_fn = on ? emu_region_exit : NULL;
    }
}

/* The region the calling thread runs.  */
static __thread struct emu_region *emu_this_region;

/* The device exit (offload-desc.h's device_exit_slot), which the wrappers
   call only on a region's own thread while it runs the region's code:
   the region ends there, as a kernel that exits does, whatever of its
   code is left.  What follows is the modelled GPU's (emu_finish).  */
static _Noreturn void
emu_region_exit (int status)
{
  struct emu_region *region = emu_this_region;
  struct emu_job *job = region->job;
  job->exited = true;
  job->exit_status = status;
  if (emu_region_alone ())
    longjmp (region->exit_point, 1);
  /* Inside a parallel region of the region's, whose other threads wait
     for this one in libgomp (and the end of this thread would wait for
     them): the program ends here, as the GPU's plugin ends it.  The
     worker holds the device's images for this thread.  */
  const char *name = emu_fn_name (region->dev, (void *) job->fn,
				  job->name_buf, sizeof job->name_buf);
  emu_gpu_region_exited (region->dev, name, status);
  ok_end_program (EXIT_FAILURE);
}

/* Run one region on the calling thread, the worker: while it runs, this
   is the region's initial thread, and what it knows as "current device"
   and its OpenMP settings are the region's own.  It holds the region lock
   while the variables' host globals show the device's bytes, so that it
   can let go of it for a reverse-offload region (emu-rev.c), which runs
   host code with the host's bytes there.  */
static void
emu_region_run (struct emu_region *region)
{
  struct emu_job *job = region->job;
  pthread_mutex_lock (&emu_region_lock);
  while (emu_regions_on_host > 0)
    pthread_cond_wait (&emu_region_cond, &emu_region_lock);
  emu_view_all (region->dev, true);
  emu_rev_own (region->dev);
  emu_rev_recheck ();
  ok_region_enter (&region->dev->base);
  emu_set_device_num (region->dev, true);
  emu_icvs_reset ();
  if (emu_gomp_teams4 != NULL)
    {
      /* The region's thread limit, or a new thread's; and no teams (a
	 region that ended from inside a teams construct left its
	 number).  libgomp's thread-limit-var is unsigned: beyond INT_MAX
	 it reads INT_MAX, and is set to UINT_MAX.  */
      unsigned limit = (job->thread_limit > 0 ? (unsigned) job->thread_limit
			: emu_fresh_icvs_read
			&& emu_fresh_icvs.thread_limit < INT_MAX
			? (unsigned) emu_fresh_icvs.thread_limit : UINT_MAX);
      emu_gomp_teams4 (1, 1, limit, true);
    }
  if (ok_trace_on ())
    {
      /* What a parallel region in it would get, at most.  */
      int max = emu_gomp_max_threads != NULL ? emu_gomp_max_threads () : 1;
      int limit = job->thread_limit;
      job->threads = (unsigned) (limit > 0 && limit < max ? limit
				 : max > 0 ? max : 1);
    }
  emu_this_region = region;
  emu_fault_enter (region, emu_gomp_num (region->dev));
  if (setjmp (region->exit_point) == 0)
    job->fn (job->tgt_vars);
  emu_fault_leave (region);
  emu_this_region = NULL;
  emu_set_device_num (region->dev, false);
  ok_region_leave ();
  emu_rev_disown ();
  emu_view_all (region->dev, false);
  pthread_mutex_unlock (&emu_region_lock);
}

/* Run JOB's region on the worker.  A region that ends the program's way
   (a device exit, a fault) leaves by a longjmp from wherever its code
   was, which may leave libgomp's state of this thread inside a construct;
   the program ends after it (emu_finish), so no region follows.  The
   device's images are held meanwhile: the region sees their
   variables.  */
static void
emu_execute (struct emu_device *dev, struct emu_job *job)
{
  struct emu_region region = { .dev = dev, .job = job };
  ok_images_hold (&dev->base);
  emu_region_run (&region);
  if (ok_trace_on () || job->exited || job->fault.sig != 0)
    job->base.kernel = emu_fn_name (dev, (void *) job->fn, job->name_buf,
				    sizeof job->name_buf);
  ok_images_release (&dev->base);
  /* Host-fallback code runs its teams one after another: for the trace,
     one block of the region's threads per team.  */
  job->base.grid[0] = job->num_teams > 0 ? (unsigned) job->num_teams : 1u;
  job->base.grid[1] = job->base.grid[2] = 1;
  job->base.block[0] = job->threads;
  job->base.block[1] = job->base.block[2] = 1;
}

/* How long the worker looks for its next job, and a launching thread for
   its job's end, before it sleeps on a condition variable: a GPU's queue
   starts a kernel within microseconds, and so does this one while it
   spins; a wake-up from a futex costs tens of microseconds, two per
   region.  OMP_WAIT_POLICY=passive: no spinning, as for libgomp's own
   threads.  */
#define EMU_SPIN_NS 50000
static pthread_once_t emu_spin_once = PTHREAD_ONCE_INIT;
static long emu_spin_ns;

static void
emu_spin_init (void)
{
  const char *policy = getenv ("OMP_WAIT_POLICY");
  emu_spin_ns = (policy != NULL && strcasecmp (policy, "passive") == 0
		 ? 0 : EMU_SPIN_NS);
}

static long long
emu_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spin until *FLAG (a bool) is true or EMU_SPIN_NS passed; whether it
   is.  IS_PTR: *FLAG is a pointer, true when not NULL.  */
static bool
emu_spin_until (const void *flag, bool is_ptr)
{
  pthread_once (&emu_spin_once, emu_spin_init);
  if (emu_spin_ns == 0)
    return false;
  long long end = 0;
  for (unsigned i = 0;; i++)
    {
      if (is_ptr ? __atomic_load_n ((void *const *) flag, __ATOMIC_ACQUIRE)
		   != NULL
	  : __atomic_load_n ((const bool *) flag, __ATOMIC_ACQUIRE))
	return true;
      if (i % 64 == 0)
	{
	  long long now = emu_now_ns ();
	  if (end == 0)
	    end = now + emu_spin_ns;
	  else if (now >= end)
	    return false;
	}
      __builtin_ia32_pause ();
    }
}

void *
emu_worker (void *d)
{
  struct emu_device *dev = d;
  pthread_once (&emu_gomp_once, emu_gomp_resolve);
  /* A new thread: what every region starts from.  */
  emu_fresh_icvs_read = emu_icvs_read (&emu_fresh_icvs);
  /* Kept in DEV too: a program may end without stopping the worker, and
     what only the worker's thread-local storage points to would look
     lost.  */
  dev->worker_altstack = emu_fault_thread_begin ();
  pthread_mutex_lock (&dev->queue_lock);
  for (;;)
    {
      if (dev->head == NULL && !dev->stopping)
	{
	  pthread_mutex_unlock (&dev->queue_lock);
	  emu_spin_until (&dev->head, true);
	  pthread_mutex_lock (&dev->queue_lock);
	}
      while (dev->head == NULL && !dev->stopping)
	{
	  dev->worker_asleep = true;
	  pthread_cond_wait (&dev->queue_cond, &dev->queue_lock);
	  dev->worker_asleep = false;
	}
      struct emu_job *job = dev->head;
      if (job == NULL)
	break;			/* Stopping, and the queue is drained.  */
      __atomic_store_n (&dev->head, job->next, __ATOMIC_RELAXED);
      if (dev->head == NULL)
	dev->tail = NULL;
      pthread_mutex_unlock (&dev->queue_lock);

      emu_execute (dev, job);

      pthread_mutex_lock (&dev->queue_lock);
      __atomic_store_n (&job->done, true, __ATOMIC_RELEASE);
      if (dev->waiters > 0)
	pthread_cond_broadcast (&dev->done_cond);
    }
  pthread_mutex_unlock (&dev->queue_lock);
  emu_fault_thread_end ();
  dev->worker_altstack = NULL;
  return NULL;
}

void
emu_worker_stop (struct emu_device *dev)
{
  /* The worker finishes what is queued, then ends.  */
  pthread_mutex_lock (&dev->queue_lock);
  dev->stopping = true;
  pthread_cond_signal (&dev->queue_cond);
  pthread_mutex_unlock (&dev->queue_lock);
  pthread_join (dev->worker, NULL);
}

bool
emu_launch (struct ok_device *d, void *fn, void *tgt_vars,
	    const struct ok_launch *launch, struct ok_job *j)
{
  struct emu_device *dev = emu_dev (d);
  struct emu_job *job = (struct emu_job *) j;
  job->fn = (void (*) (void **)) fn;
  job->tgt_vars = tgt_vars;
  job->thread_limit = launch->thread_limit;
  job->num_teams = launch->num_teams;
  job->openacc = launch->openacc;
  job->next = NULL;
  pthread_mutex_lock (&dev->queue_lock);
  if (dev->tail != NULL)
    dev->tail->next = job;
  else
    __atomic_store_n (&dev->head, job, __ATOMIC_RELEASE);
  dev->tail = job;
  if (dev->worker_asleep)
    pthread_cond_signal (&dev->queue_cond);
  pthread_mutex_unlock (&dev->queue_lock);
  return true;
}

bool
emu_finish (struct ok_device *d, struct ok_job *j)
{
  struct emu_device *dev = emu_dev (d);
  struct emu_job *job = (struct emu_job *) j;
  if (!emu_spin_until (&job->done, false))
    {
      pthread_mutex_lock (&dev->queue_lock);
      dev->waiters++;
      while (!job->done)
	pthread_cond_wait (&dev->done_cond, &dev->queue_lock);
      dev->waiters--;
      pthread_mutex_unlock (&dev->queue_lock);
    }
  if (job->exited)
    return emu_gpu_region_exited (dev, job->base.kernel, job->exit_status);
  if (job->fault.sig != 0)
    {
      emu_fault_report (dev, job, job->base.kernel);
      emu_gpu_fault_end (dev, job, false);
    }
  return true;
}
