/* The interface between the generic plugin core and one kind of device.

   A plugin (libgomp-plugin-<name>.so.1) is plugin-core.c, which implements
   every GOMP_OFFLOAD_* entry point once, plus a list of backends.  A
   backend drives one kind of device (CUDA, HSA, the emulated device) and
   knows nothing about libgomp's numbering, descriptor validation, image
   bookkeeping or argument decoding: the core does all of that and calls the
   backend with the backend's own device state and already-checked data.

   Every hook that can fail reports through GOMP_PLUGIN_error first, then
   returns false (or NULL); the core adds no second message.  */

#ifndef OFFLOADKIT_BACKEND_H
#define OFFLOADKIT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "gomp-abi.h"
#include "offload-desc.h"

/* What load_image gets: a descriptor that ok_desc_check accepted for the
   plugin's device type, the host table's sizes, and the table to fill.  */
struct ok_image_req
{
  const struct ok_openmp_target *desc;
  int device_type;		/* The plugin's; for ok_desc_target.  */
  size_t num_funcs;		/* Host function table entries.  */
  size_t num_vars;		/* Host variable table (address, size) pairs.  */
  /* NUM_FUNCS + NUM_VARS + 1 entries, zeroed: functions, then variables in
     host-table order, then the device's __gomp_device_num int (leave it
     {0, 0} when the image has none).  */
  struct ok_addr_pair *table;
};

/* A target region launch, with libgomp's ARGS vector decoded by the core.
   Zero means "not given".  */
struct ok_launch
{
  int num_teams;
  int thread_limit;
};

struct ok_backend
{
  /* Short name for messages: "emulated", "cuda", "hsa".  */
  const char *name;

  /* Number of devices of this kind.  Called once, from
     GOMP_OFFLOAD_get_num_devices.  Must return 0 *silently* when the driver
     or runtime is missing: a plugin without devices must print nothing.  A
     real misconfiguration may be reported with GOMP_PLUGIN_error.  */
  int (*probe) (void);

  /* Start device LOCAL (0 <= LOCAL < probe ()), which libgomp numbers ORD
     among the plugin's devices (for messages and traces), and return its
     state, which the core passes to every other hook; NULL after an
     error.  */
  void *(*init_device) (int local, int ord);
  /* Stop the device and free everything it holds, including images the
     core has not unloaded (libgomp does not unload at exit).  */
  bool (*fini_device) (void *dev);

  /* Load one image; store the backend's handle for it in *IMAGE.  */
  bool (*load_image) (void *dev, const struct ok_image_req *req,
		      void **image);
  bool (*unload_image) (void *dev, void *image);

  /* Optional; NULL when the backend cannot run them.  Load an image built
     by GCC's own mkoffload for this device type: TARGET_DATA is in GCC's
     format for device version OK_GOMP_VERSION_DEV (VERSION) (the
     plugin's gcc_dev_version), and carries no host table, so the backend
     sizes the table itself.  Store a table allocated with
     GOMP_PLUGIN_malloc in *TABLE (functions, variables, then the
     device-number entry, as GCC's plugin returns them), the handle in
     *IMAGE, and return the table's length; -1 after an error.  */
  int (*load_gcc_image) (void *dev, unsigned version, const void *target_data,
			 struct ok_addr_pair **table, void **image);

  /* Device memory.  alloc (dev, 0) returns a valid, unique pointer.  */
  void *(*alloc) (void *dev, size_t size);
  bool (*free) (void *dev, void *ptr);
  bool (*host2dev) (void *dev, void *dst, const void *src, size_t n);
  bool (*dev2host) (void *dev, void *dst, const void *src, size_t n);
  bool (*dev2dev) (void *dev, void *dst, const void *src, size_t n);

  /* Run FN (an address load_image returned) with TGT_VARS (a device
     address) and wait for it.  */
  bool (*run) (void *dev, void *fn, void *tgt_vars,
	       const struct ok_launch *launch);
  /* Start the same without waiting; when it has finished, call
     GOMP_PLUGIN_target_task_completion (ASYNC_DATA), from any thread.  On
     false nothing was started and the completion must not be called.
     *LAUNCH is only valid during the call.  */
  bool (*async_run) (void *dev, void *fn, void *tgt_vars,
		     const struct ok_launch *launch, void *async_data);
};

/* The backends that exist.  A plugin lists the ones it uses.  */
extern const struct ok_backend ok_backend_emulated;
extern const struct ok_backend ok_backend_cuda;
extern const struct ok_backend ok_backend_hsa;

#endif /* OFFLOADKIT_BACKEND_H */
