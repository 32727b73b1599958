/* What the core's files share and backends do not see.

     core-devices.c  numbering devices across backends, identity,
                     starting and stopping devices
     core-images.c   loading and unloading images, the lists of them
     core-memory.c   allocation (through the pool) and copies
     core-launch.c   launches, their completion, regions, ending the
                     program from a device
     core-openacc.c  OpenACC: launches, queues, properties, profiling
     messages.c      the error contract (plugin-core.h)  */

#ifndef OFFLOADKIT_CORE_INTERNAL_H
#define OFFLOADKIT_CORE_INTERNAL_H

#include <pthread.h>

#include "plugin-core.h"

/* One of libgomp's device numbers (a "target id" among the plugin's
   devices): which backend's device it is, and that device once
   initialised.  */
struct core_slot
{
  const struct ok_backend *backend;
  int local;			/* Index among the backend's devices.  */
  /* Serialises initialisation, finalisation and image loads of the
     device.  Not taken by the entry points that use an initialised
     device: a target region that calls back into the plugin
     (omp_target_alloc inside the region, say) must not wait for a lock
     that a loading thread holds while it waits for that region.  */
  pthread_mutex_t lock;
  struct ok_device *dev;	/* Non-NULL while initialised.  */
  /* A device that finalisation had to leave as it was (the program ends
     from one of its threads, or its driver is gone), kept here so that it
     stays reachable until the process ends.  */
  struct ok_device *left;
  /* libgomp 13+'s ICV block of the device (core-images.c,
     core_share_icvs): the device address of the one libgomp was given
     (0: none yet), and its contents once read, for later images.  */
  uintptr_t icv_block;
  bool icv_cached;
  unsigned char icv_cache[OK_GOMP_ICVS_SIZE];
};

/* Device slot ORD, or NULL after an error saying that WHAT failed.  */
struct core_slot *core_slot (int ord, const char *what);

/* The initialised device ORD, or NULL after an error saying that WHAT
   failed.  Read without the slot's lock (see struct core_slot).  */
struct ok_device *core_device (int ord, const char *what);

/* core-memory.c: set up and tear down DEV's pool, when its backend has
   raw allocations.  */
bool core_pool_init (struct ok_device *dev);
bool core_pool_fini (struct ok_device *dev);
/* Allocate and free device memory on DEV as GOMP_OFFLOAD_alloc and
   GOMP_OFFLOAD_free do (the pool, the profiling events).  */
void *core_dev_alloc (struct ok_device *dev, size_t size);
bool core_dev_free (struct ok_device *dev, void *ptr);

/* core-devices.c: the devices backend B of OK_PLUGIN has, whatever the
   program requires.  */
int core_backend_devices (int b);

/* core-openacc.c: OK_GOMP_CAP_OPENACC_200 when the plugin can offer
   OpenACC, else 0; and the profiling events of device allocations.  */
unsigned core_acc_caps (void);
void core_acc_alloc_event (void *ptr, size_t size);
void core_acc_free_event (void *ptr);

/* core-images.c: unload every image of DEV (finalisation).  */
bool core_images_unload_all (struct ok_device *dev);

/* core-launch.c: the completion callback of DEV's queue.  */
void core_complete (void *dev, struct ok_completion_job *job);

#endif /* OFFLOADKIT_CORE_INTERNAL_H */
