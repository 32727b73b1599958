/* Emulated devices: starting and stopping them, and the backend's hook
   table (how many: emu-setting.c).  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu-internal.h"
#include "env.h"

static bool
emu_init_device (struct ok_device *d)
{
  struct emu_device *dev = emu_dev (d);
  ok_device_set_label (d, "emulated device %d", d->local);
  /* Device memory is the host's, unless the user gives the device a
     size of its own (a GPU's, say).  */
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  size_t host = (pages > 0 && page > 0 ? (size_t) pages * (size_t) page
		 : SIZE_MAX / 2);
  dev->mem_total = ok_env_size ("OFFLOADKIT_EMULATE_MEMORY", host);
  dev->mem_used = 0;
  emu_fault_install ();
  pthread_mutex_init (&dev->mem_lock, NULL);
  pthread_mutex_init (&dev->defer_lock, NULL);
  pthread_mutex_init (&dev->rev_lock, NULL);
  pthread_mutex_init (&dev->queue_lock, NULL);
  pthread_cond_init (&dev->queue_cond, NULL);
  pthread_cond_init (&dev->done_cond, NULL);
  int err = pthread_create (&dev->worker, NULL, emu_worker, dev);
  if (err != 0)
    {
      ok_dev_error (d, "cannot start its thread: %s", strerror (err));
      pthread_cond_destroy (&dev->done_cond);
      pthread_cond_destroy (&dev->queue_cond);
      pthread_mutex_destroy (&dev->queue_lock);
      pthread_mutex_destroy (&dev->defer_lock);
      pthread_mutex_destroy (&dev->rev_lock);
      pthread_mutex_destroy (&dev->mem_lock);
      return false;
    }
  return true;
}

/* After the core has waited for the device's launches and unloaded its
   images.  */
static bool
emu_fini_device (struct ok_device *d)
{
  struct emu_device *dev = emu_dev (d);
  emu_worker_stop (dev);
  /* What the program did not free goes with the device.  */
  for (size_t i = 0; i < dev->num_blocks; i++)
    free (dev->blocks[i].start);
  free (dev->blocks);
  /* Deferred frees are among the blocks just freed.  */
  free (dev->deferred);
  pthread_mutex_destroy (&dev->defer_lock);
  pthread_cond_destroy (&dev->done_cond);
  pthread_cond_destroy (&dev->queue_cond);
  pthread_mutex_destroy (&dev->queue_lock);
  pthread_mutex_destroy (&dev->rev_lock);
  pthread_mutex_destroy (&dev->mem_lock);
  return true;
}

static const struct ok_managed_ops emu_managed_ops = {
  .alloc = emu_managed_alloc,
  .free = emu_managed_free,
};

static const struct ok_acc_ops emu_acc_ops = {
  .queue_size = sizeof (struct emu_queue),
  .queue_init = emu_acc_queue_init,
  .queue_fini = ok_hostq_stop,
  .queue_test = ok_hostq_test,
  .queue_wait = ok_hostq_wait,
  .queue_join = ok_hostq_join,
  .queue_callback = ok_hostq_callback,
  .queue_copy = emu_acc_queue_copy,
  .exec = emu_acc_exec,
  .memory = emu_acc_memory,
  .names = emu_acc_names,
};

static const struct ok_acc_cuda_ops emu_acc_cuda_ops = {
  .device = emu_acc_cuda_device,
  .context = emu_acc_cuda_context,
  .stream = emu_acc_cuda_stream,
  .set_stream = emu_acc_cuda_set_stream,
};

const struct ok_backend ok_backend_emulated = {
  .name = "emulated",
  .device_size = sizeof (struct emu_device),
  .job_size = sizeof (struct emu_job),
  .in_order = true,
  /* Host-fallback code on memory of its own: addresses are host addresses
     (unified address), and mapped data is a copy, unless the program
     requires unified shared memory or self maps: host code can honestly
     reach the host's memory, so the device is then one that does, and
     libgomp 15+ maps nothing (the core says which at start-up; its
     `declare target' variables keep device copies of their own, as on a
     GPU).  Reverse offload where the program's calls of GOMP_target_ext
     can be redirected (emu-rev.c): a `target device(ancestor: 1)' region
     goes to libgomp, which maps its data back to the host, as for a GPU;
     else the program gets no emulated device and runs on the host,
     correctly.  */
  .requires_supported = (OK_GOMP_REQUIRES_UNIFIED_ADDRESS
			 | OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			 | OK_GOMP_REQUIRES_SELF_MAPS
			 | OK_GOMP_REQUIRES_REVERSE_OFFLOAD),
  .requires_unmet = emu_requires_unmet,
  .host_fn_ptrs = true,
  .probe = emu_probe,
  .init_device = emu_init_device,
  .fini_device = emu_fini_device,
  .image = &emu_image_ops,
  .alloc = emu_alloc,
  .free = emu_free,
  .host2dev = emu_host2dev,
  .dev2host = emu_dev2host,
  .dev2dev = emu_dev2dev,
  .get_uid = emu_get_uid,
  .is_accessible = emu_is_accessible,
  .page_locked_alloc = emu_page_locked_alloc,
  .page_locked_free = emu_page_locked_free,
  .launch = emu_launch,
  .finish = emu_finish,
  .managed = &emu_managed_ops,
  .acc = &emu_acc_ops,
  .acc_cuda = &emu_acc_cuda_ops
};
