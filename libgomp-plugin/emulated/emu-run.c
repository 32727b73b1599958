/* The worker of an emulated device, which runs its regions in order as a
   stream would, each on a thread of its own.  A launch queues a job; the
   core waits for it (emu_finish), on the launching thread or, for target
   nowait, on the device's completion thread.  The worker is a thread of
   the plugin's, not one of the program's OpenMP threads, so regions do
   not see the launching thread's ICVs.  */

/* RTLD_DEFAULT, dladdr.  */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void
emu_gomp_resolve (void)
{
  *(void **) &emu_gomp_teams4 = dlsym (RTLD_DEFAULT, "GOMP_teams4");
  *(void **) &emu_gomp_max_threads = dlsym (RTLD_DEFAULT,
					    "omp_get_max_threads");
  *(void **) &emu_gomp_active_level = dlsym (RTLD_DEFAULT,
					     "omp_get_active_level");
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

/* Run one region.  This is the region's initial thread: what it knows as
   "current device" and its OpenMP settings are its own.  It holds the
   region lock while the variables' host globals show the device's bytes,
   so that it can let go of it for a reverse-offload region (emu-rev.c),
   which runs host code with the host's bytes there.  */
static void *
emu_region_thread (void *r)
{
  struct emu_region *region = r;
  struct emu_job *job = region->job;
  pthread_mutex_lock (&emu_region_lock);
  while (emu_regions_on_host > 0)
    pthread_cond_wait (&emu_region_cond, &emu_region_lock);
  emu_view_all (region->dev, true);
  emu_rev_own (region->dev);
  emu_rev_recheck ();
  ok_region_enter (&region->dev->base);
  emu_set_device_num (region->dev, true);
  if (emu_gomp_teams4 != NULL && job->thread_limit > 0)
    emu_gomp_teams4 (1, 1, (unsigned) job->thread_limit, true);
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
  return NULL;
}

/* Each region runs on a thread of its own, started here and joined: like
   libgomp's host fallback, which clears the thread's OpenMP state around
   a region, it starts from the global settings (omp_set_num_threads in
   one region does not leak into the next), and libgomp frees what the
   thread used when it ends.  The device's images are held meanwhile:
   the region sees their variables.  */
static void
emu_execute (struct emu_device *dev, struct emu_job *job)
{
  struct emu_region region = { .dev = dev, .job = job };
  pthread_t thread;
  ok_images_hold (&dev->base);
  if (pthread_create (&thread, NULL, emu_region_thread, &region) == 0)
    pthread_join (thread, NULL);
  else
    /* No thread to be had: run it here, on the worker, rather than not
       at all; only settings a previous region changed can differ.  */
    emu_region_thread (&region);
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

void *
emu_worker (void *d)
{
  struct emu_device *dev = d;
  pthread_once (&emu_gomp_once, emu_gomp_resolve);
  pthread_mutex_lock (&dev->queue_lock);
  for (;;)
    {
      while (dev->head == NULL && !dev->stopping)
	pthread_cond_wait (&dev->queue_cond, &dev->queue_lock);
      struct emu_job *job = dev->head;
      if (job == NULL)
	break;			/* Stopping, and the queue is drained.  */
      dev->head = job->next;
      if (dev->head == NULL)
	dev->tail = NULL;
      pthread_mutex_unlock (&dev->queue_lock);

      emu_execute (dev, job);

      pthread_mutex_lock (&dev->queue_lock);
      job->done = true;
      pthread_cond_broadcast (&dev->done_cond);
    }
  pthread_mutex_unlock (&dev->queue_lock);
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
    dev->head = job;
  dev->tail = job;
  pthread_cond_signal (&dev->queue_cond);
  pthread_mutex_unlock (&dev->queue_lock);
  return true;
}

bool
emu_finish (struct ok_device *d, struct ok_job *j)
{
  struct emu_device *dev = emu_dev (d);
  struct emu_job *job = (struct emu_job *) j;
  pthread_mutex_lock (&dev->queue_lock);
  while (!job->done)
    pthread_cond_wait (&dev->done_cond, &dev->queue_lock);
  pthread_mutex_unlock (&dev->queue_lock);
  if (job->exited)
    return emu_gpu_region_exited (dev, job->base.kernel, job->exit_status);
  if (job->fault.sig != 0)
    {
      emu_fault_report (dev, job, job->base.kernel);
      emu_gpu_fault_end (dev, job, false);
    }
  return true;
}
