/* The interface between the plugin core and one kind of device.

   A plugin (libgomp-plugin-<name>.so.1) is the core, which implements
   every GOMP_OFFLOAD_* entry point once, plus a list of backends.  A
   backend drives one kind of device (CUDA, HSA, the emulated device) and
   knows nothing about libgomp's numbering, descriptor validation, image
   bookkeeping, argument decoding, the completion of asynchronous
   launches, tracing or the device-memory pool: the core does all of that
   and calls the backend's hooks with the device and already-checked
   data.

   A backend's device is a structure of its own whose first member is the
   core's struct ok_device; the core allocates it (DEVICE_SIZE bytes,
   zeroed) and frees it, so that both halves are one object.  A launch is
   the same: the backend's job record begins with struct ok_job.

   Every hook that can fail reports through the core's ok_error or
   ok_dev_error (plugin-core.h) first, then returns false (or NULL); the
   core adds no second message.  */

#ifndef OFFLOADKIT_BACKEND_H
#define OFFLOADKIT_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "completion.h"
#include "gomp-abi.h"
#include "offload-desc.h"

struct ok_backend;
struct ok_hostq;
struct ok_loaded_image;
struct ok_mem_pool;

/* The core's half of a device.  Backends read it; only the core and the
   functions of plugin-core.h change it.  */
struct ok_device
{
  const struct ok_backend *backend;
  int local;			/* Index among the backend's devices.  */
  int ord;			/* libgomp's number among the plugin's.  */
  /* How messages name the device: "device 0" until the backend names it
     better (ok_device_set_label: "device 0 (NVIDIA H200, sm_90)").  */
  char label[192];
  /* A fatal error happened (a kernel faulted): the device is unusable,
     and teardown failures that follow are not reported (ok_dev_broken).  */
  bool broken;
  /* Small allocations, over the backend's raw_alloc and raw_free; NULL
     for a backend without them.  */
  struct ok_mem_pool *pool;
  /* Asynchronous launches waiting to complete (completion.h).  */
  struct ok_completion async;
  /* The images loaded on the device, newest first; IMAGES_LOCK guards the
     list and is held while an image is loaded or unloaded (see
     ok_images_hold).  */
  pthread_mutex_t images_lock;
  struct ok_loaded_image *images;
  /* The device's host-run OpenACC queues (host-queue.h): the lazy ones
     its synchronous operations wait for, all of them an upload from
     host memory their downloads write; HOSTQS_LOCK guards the list.  */
  pthread_mutex_t hostqs_lock;
  struct ok_hostq *hostqs;
};

/* The device variable whose address and size load_image returns as the
   table's trailing entry, as the libgomp that loaded the plugin wants it:
   "__gomp_device_num" (an int) for GCC 12's, "__gomp_additional_icvs"
   (SIZE 16: struct gomp_offload_icvs) from GCC 13's.  */
struct ok_trailing_var
{
  const char *name;
  size_t size;
};

/* One image being loaded, as the core hands it to the image hooks
   (struct ok_image_ops).  The core runs the load, in this order, for
   both formats: open (the backend picks its code among the image's and
   loads it), function and variable for each table entry, trailing,
   map_indirect, rev_table, run_ctors; then it checks the variables'
   sizes (offloadkit's images), shares the ICV block, and returns the
   table to libgomp.  After a failure past open it calls close.  */
struct ok_image_load
{
  /* offloadkit's image: a descriptor that ok_desc_check accepted for the
     plugin's device type (DEVICE_TYPE, for ok_desc_target, which steps at
     the stride of the descriptor's version; ok_desc_oacc_dims (DESC,
     TGT) reads the OpenACC launch dimensions of the target picked, one
     per function, or NULL).  NULL for an image in GCC's format.  */
  const struct ok_openmp_target *desc;
  int device_type;
  /* GCC's own mkoffload's image for this device type (DESC NULL):
     TARGET_DATA in GCC's format for device version OK_GOMP_VERSION_DEV
     (GCC_VERSION), one of the plugin's gcc_dev_version*.  */
  const void *gcc_data;
  unsigned gcc_version;
  /* How many functions and variables the table maps: the host table's
     counts for offloadkit's images (set by the core), the target data's
     for GCC's (set by open_gcc).  */
  size_t num_funcs;
  size_t num_vars;
  /* The backend's handle, set by open.  */
  void *image;
  /* Set by open: which code it loaded and how ("cubin sm_90", "PTX
     JIT-linked for sm_90"), for OFFLOADKIT_INFO.  */
  char what[96];
};

/* Host variable I of LD's image (offloadkit's format), as libgomp's host
   table gives it: its address, its size, and whether it is a `declare
   target link' variable (whose device copy is a pointer).  The core
   checks that each variable's table entry spans the size the device copy
   must have (ok_host_var_device_size), and refuses the image otherwise,
   with one message: backends need not.  */
struct ok_host_var
{
  void *addr;
  size_t size;
  bool link;
};
static inline struct ok_host_var
ok_host_var (const struct ok_image_load *ld, size_t i)
{
  uintptr_t word = (uintptr_t) ld->desc->host.vars[2 * i + 1];
  struct ok_host_var v = { .addr = ld->desc->host.vars[2 * i],
			   .size = (size_t) (word & ~OK_GOMP_LINK_BIT),
			   .link = (word & OK_GOMP_LINK_BIT) != 0 };
  return v;
}
/* The bytes V has on the device: its own, or a pointer's.  */
static inline size_t
ok_host_var_device_size (const struct ok_host_var *v)
{
  return v->link ? sizeof (void *) : v->size;
}

/* A backend's part of loading and unloading images: the load sequence is
   the core's (struct ok_image_load says it), these are its steps.  Every
   hook but close reports and returns false on failure.  */
struct ok_image_ops
{
  /* Pick the code for DEV among offloadkit's image LD->desc, check it and
     load it; set LD->image and LD->what.  Nothing is held after a
     failure.  */
  bool (*open) (struct ok_device *dev, struct ok_image_load *ld);
  /* Optional: the same for GCC's format (LD->gcc_data), setting
     LD->num_funcs and LD->num_vars too; NULL when the backend cannot run
     images built by GCC's own mkoffload (the core refuses them with a
     hint).  */
  bool (*open_gcc) (struct ok_device *dev, struct ok_image_load *ld);
  /* The table entry of function I (< LD->num_funcs): what launch and
     acc_exec will get back as FN.  */
  bool (*function) (struct ok_device *dev, struct ok_image_load *ld,
		    size_t i, struct ok_addr_pair *entry);
  /* The table entry of variable I (< LD->num_vars): its device copy (a
     pointer for a link variable).  */
  bool (*variable) (struct ok_device *dev, struct ok_image_load *ld,
		    size_t i, struct ok_addr_pair *entry);
  /* The table entry of VAR, the trailing variable, or {0, 0} when the
     image has none; the core refuses one of another size.  */
  bool (*trailing) (struct ok_device *dev, struct ok_image_load *ld,
		    const struct ok_trailing_var *var,
		    struct ok_addr_pair *entry);
  /* Optional: give the device code the map from HOST_IND_FNS (libgomp
     14+'s host addresses of the image's `declare target indirect'
     functions, in the order of the device's table of them, or NULL when
     libgomp passed none) to their device addresses.  A backend without
     it either runs host code (HOST_FN_PTRS) or gets no image with such
     functions (the core refuses them).  */
  bool (*map_indirect) (struct ok_device *dev, struct ok_image_load *ld,
			const uint64_t *host_ind_fns);
  /* Optional; only for a program that requires reverse offload (libgomp
     13+): set *REV_FNS to an array (GOMP_PLUGIN_malloc) of the device
     addresses of the image's functions in table order, 0 for those no
     ancestor region can name, which ok_target_rev gets one of; leave it
     NULL when the image has no reverse-offload regions.  */
  bool (*rev_table) (struct ok_device *dev, struct ok_image_load *ld,
		     uint64_t **rev_fns);
  /* Optional: run the image's constructors, last.  */
  bool (*run_ctors) (struct ok_device *dev, struct ok_image_load *ld);
  /* Release IMAGE, after running its destructors when DTORS (its
     constructors ran: unload, or a failure after run_ctors) and DEV is
     not broken.  The core has waited for DEV's asynchronous launches,
     which might still use it.  False after a reported failure.  */
  bool (*close) (struct ok_device *dev, void *image, bool dtors);
};

/* A target region launch, with libgomp's ARGS vector decoded by the core.
   Zero means "not given".  */
struct ok_launch
{
  int num_teams;
  int thread_limit;
  bool openacc;			/* An OpenACC region's (acc_exec).  */
};

/* One launch.  The backend's job record begins with it; the core
   allocates JOB_SIZE bytes, zeroed, and frees them after finish.  */
struct ok_job
{
  struct ok_completion_job link;	/* The completion queue's part.  */
  /* Set by the backend by the time finish returns, for OFFLOADKIT_INFO:
     the kernel's name (valid as long as its image is loaded) and the
     launch's geometry, blocks (teams) and threads per block.  */
  const char *kernel;
  unsigned grid[3], block[3];
  uint64_t start;		/* The core's: when the launch began.  */
};

/* One rectangular copy of libgomp 14's omp_target_memcpy_rect, for a
   backend's copy_rect hook: PLANES planes of ROWS rows of WIDTH bytes
   each (all > 0), from SRC to DST, both at the first byte to copy.  On
   each side rows are PITCH bytes apart and planes HEIGHT rows (of PITCH
   bytes) apart; HEIGHT means nothing when PLANES is 1.  */
enum ok_copy_dir { OK_COPY_H2D, OK_COPY_D2H, OK_COPY_D2D };

struct ok_rect
{
  enum ok_copy_dir dir;
  void *dst;
  const void *src;
  size_t width, rows, planes;
  size_t dst_pitch, src_pitch;
  size_t dst_height, src_height;
};

/* libgomp 15's interop objects (libgomp-plugin.h's struct interop_obj_t
   and the omp_interop_* enums of omp.h), in the same layout: libgomp
   allocates the object zeroed and sets DEVICE_NUM before the plugin
   fills it.  */
struct ok_interop
{
  void *stream;		/* The targetsync stream or queue, or NULL.  */
  void *device_data;	/* The core's: the struct ok_device.  */
  int fr;		/* The foreign runtime (OK_IFR_*), 0 for none.  */
  int device_num;
};

enum ok_ifr			/* omp_interop_fr_t */
{
  OK_IFR_CUDA = 1,
  OK_IFR_CUDA_DRIVER = 2,
  OK_IFR_OPENCL = 3,
  OK_IFR_SYCL = 4,
  OK_IFR_HIP = 5,
  OK_IFR_LEVEL_ZERO = 6,
  OK_IFR_HSA = 7
};

enum ok_ipr			/* omp_interop_property_t */
{
  OK_IPR_FR_ID = -1,
  OK_IPR_FR_NAME = -2,
  OK_IPR_VENDOR = -3,
  OK_IPR_VENDOR_NAME = -4,
  OK_IPR_DEVICE_NUM = -5,
  OK_IPR_PLATFORM = -6,
  OK_IPR_DEVICE = -7,
  OK_IPR_DEVICE_CONTEXT = -8,
  OK_IPR_TARGETSYNC = -9,
  OK_IPR_FIRST = -9
};

enum ok_irc			/* omp_interop_rc_t */
{
  OK_IRC_NO_VALUE = 1,
  OK_IRC_SUCCESS = 0,
  OK_IRC_EMPTY = -1,
  OK_IRC_OUT_OF_RANGE = -2,
  OK_IRC_TYPE_INT = -3,
  OK_IRC_TYPE_PTR = -4,
  OK_IRC_TYPE_STR = -5
};

/* A backend's answer for one property of an interop object: its type
   (OK_IRC_TYPE_INT, _PTR or _STR, or OK_IRC_NO_VALUE when the object has
   none) and value; the core turns it into each getter's answer and
   return code.  PTR_AS_INT: get_interop_int gives the pointer too (GCC's
   nvptx plugin does for targetsync).  TYPE_DESC, for
   omp_get_interop_type_desc, whether or not there is a value.  */
struct ok_interop_value
{
  enum ok_irc type;
  intptr_t i;
  void *p;
  const char *s;
  bool ptr_as_int;
  const char *type_desc;
};

/* OpenACC.  An OpenACC async queue of a device (libgomp's struct
   goacc_asyncqueue, which only the plugin looks into): the backend's
   queue record begins with it; the core allocates ACC_QUEUE_SIZE bytes,
   zeroed, sets DEV, and frees them after acc_queue_fini.  */
struct ok_acc_queue
{
  struct ok_device *dev;
};

/* The string properties of acc_get_property of a device: each lives as
   long as the device, NULL where the device has no value for it.  (The
   core answers libgomp's enum goacc_property from these and from the
   memory hook.)  */
struct ok_acc_names
{
  const char *name, *vendor, *driver;
};

/* The OpenACC launch dimensions, in libgomp's order (GOMP_DIM_*).  */
enum { OK_ACC_GANG, OK_ACC_WORKER, OK_ACC_VECTOR, OK_ACC_DIMS };

/* A backend's job record may be this large at most: synchronous launches
   keep it on the launching thread's stack.  */
#define OK_JOB_MAX 256

/* Groups of hooks that a backend has all of or none of: each is a
   table the backend points at, or NULL.  */

/* Memory that the host and DEV both reach at the same address (libgomp
   16's ompx_gnu_managed_mem_space).  */
struct ok_managed_ops
{
  /* SIZE bytes, or NULL, after a message when something failed; NULL
     without one when DEV cannot have such memory.  FREE frees what ALLOC
     gave.  */
  void *(*alloc) (struct ok_device *dev, size_t size);
  bool (*free) (struct ok_device *dev, void *ptr);
};

/* libgomp 15's interop objects.  */
struct ok_interop_ops
{
  /* The runtimes (OK_IFR_*) a prefer_type clause may choose on these
     devices, 0-ended.  */
  const int *frs;
  /* Fill OBJ, a new object for DEV: FR is the runtime that prefer_type
     chose from FRS, 0 when it chose none; set OBJ->FR to the one
     given and, when TARGETSYNC, OBJ->STREAM to a new stream or queue.
     False after a reported error, with nothing held.  */
  bool (*init) (struct ok_device *dev, struct ok_interop *obj, int fr,
		bool targetsync);
  /* Wait until the work on OBJ->STREAM (non-NULL) is done and, when
     DESTROY, free the stream; false after a reported error.  */
  bool (*sync) (struct ok_device *dev, struct ok_interop *obj,
		bool destroy);
  /* The devices' vendor, as OpenMP's additional definitions number and
     name it (11, "nvidia"; 1, "amd").  */
  int vendor;
  const char *vendor_name;
  /* Property PROP, OK_IPR_FIRST to OK_IPR_VENDOR, of OBJ (OBJ->FR one
     the backend gave), into *VAL (zeroed).  The core answers FR_ID,
     FR_NAME, DEVICE_NUM, VENDOR and VENDOR_NAME itself.  */
  void (*property) (struct ok_device *dev, const struct ok_interop *obj,
		    enum ok_ipr prop, struct ok_interop_value *val);
};

/* OpenACC: libgomp's GOMP_OFFLOAD_openacc_* entry points.  */
struct ok_acc_ops
{
  /* Every hook but memory and names reports its failures and returns
     false (-1).  QUEUE_SIZE is at least sizeof (struct ok_acc_queue).  */
  size_t queue_size;
  /* Start queue Q (zeroed, Q->DEV set).  */
  bool (*queue_init) (struct ok_acc_queue *q);
  /* Wait for the work queued on Q, then free what Q holds (not Q).  */
  bool (*queue_fini) (struct ok_acc_queue *q);
  /* 1 when the work queued on Q so far is done, 0 while some is not.  */
  int (*queue_test) (struct ok_acc_queue *q);
  /* Wait until the work queued on Q so far is done.  */
  bool (*queue_wait) (struct ok_acc_queue *q);
  /* Work queued on LATER from now on starts only after the work queued
     on FIRST so far is done (FIRST != LATER).  */
  bool (*queue_join) (struct ok_acc_queue *first,
		      struct ok_acc_queue *later);
  /* Call FN (DATA) after the work queued on Q so far, on a thread of the
     backend's, never from within this call: FN may free what that work
     used, and call the plugin (libgomp's callbacks unmap data).  */
  bool (*queue_callback) (struct ok_acc_queue *q, void (*fn) (void *),
			  void *data);
  /* Queue a copy of N > 0 bytes on Q.  */
  bool (*queue_copy) (struct ok_acc_queue *q, enum ok_copy_dir dir,
		      void *dst, const void *src, size_t n);
  /* Run OpenACC compute region FN (a function's table entry) with
     ARGS, the device address of its argument block, in DIMS (gang,
     worker, vector; 0: the backend chooses) on Q, or when Q is NULL
     synchronously: done when it returns.  The backend calls
     ok_acc_launch_event around the start of the kernel.  */
  bool (*exec) (struct ok_device *dev, void *fn, void *args,
		const unsigned dims[OK_ACC_DIMS], struct ok_acc_queue *q);
  /* For acc_get_property: DEV's memory in bytes into *NUM, all of it
     or (FREE) what its allocations leave of it; false when DEV does not
     say.  And DEV's name, vendor and driver into *NAMES, whose members
     are NULL on entry.  */
  bool (*memory) (struct ok_device *dev, bool free, size_t *num);
  void (*names) (struct ok_device *dev, struct ok_acc_names *names);
};

/* OpenACC's CUDA handles (acc_get_current_cuda_device and _context,
   acc_get_cuda_stream, acc_set_cuda_stream), nvptx plugin only.  */
struct ok_acc_cuda_ops
{
  /* The CUdevice * and CUcontext of DEV, the CUstream of Q (NULL:
     none), and Q's work going to STREAM from now on, once what Q holds
     is done (false after a message).  */
  void *(*device) (struct ok_device *dev);
  void *(*context) (struct ok_device *dev);
  void *(*stream) (struct ok_acc_queue *q);
  bool (*set_stream) (struct ok_acc_queue *q, void *stream);
};

struct ok_backend
{
  /* Short name for messages and traces: "emulated", "cuda", "hsa".  */
  const char *name;

  /* Bytes of the backend's device structure, which begins with struct
     ok_device, and of its job record, which begins with struct ok_job
     (at most OK_JOB_MAX).  */
  size_t device_size;
  size_t job_size;

  /* The device runs launches one at a time, in the order they were made
     (one stream): then the core also tells libgomp of their completion
     in that order, so that a synchronous launch returns only after the
     completions of the asynchronous ones before it.  */
  bool in_order;

  /* The OpenMP "requires" features (OK_GOMP_REQUIRES_*) its devices
     meet; libgomp 13+ numbers no device of this kind for a program that
     requires any other.  */
  unsigned requires_supported;
  /* Optional: which of FEATURES (non-zero, all in requires_supported)
     the backend's N > 0 devices cannot meet in this process after all
     (the emulated device's reverse offload needs what the loaded objects
     allow; unified shared memory, devices that reach the host's pageable
     memory), said with GOMP_DEBUG=1; 0 when they meet them all.  Asked
     by the first GOMP_OFFLOAD_get_num_devices, before any device is
     started or image loaded.  Unified shared memory and self maps reach
     it only from a libgomp that gives them (OK_GCC_HAS_USM): the core
     refuses them for older ones.  */
  unsigned (*requires_unmet) (unsigned features, int n);
  /* Device code calls host function addresses as they are (the emulated
     device runs host code): images with `declare target indirect'
     functions need no map from host to device addresses (the
     image hooks' map_indirect).  */
  bool host_fn_ptrs;

  /* Optional: set N > 0 bytes of device memory at PTR to VAL.  Without
     it the core copies a host buffer with host2dev.  */
  bool (*memset) (struct ok_device *dev, void *ptr, int val, size_t n);
  /* Optional: the copy RECT with the driver's own rectangular copy, done
     when it returns.  1 when copied, 0 after a reported error, -1 when
     the driver cannot take this rectangle (nothing was copied, nothing
     said): the core then copies row by row with the copy hooks, as it
     does for a backend without it.  */
  int (*copy_rect) (struct ok_device *dev, const struct ok_rect *rect);

  /* The entry points of libgomp 15 and 16, each optional; without one
     the core answers as libgomp does when a plugin lacks the entry
     point.  */
  /* A string that names DEV uniquely and stays the same from run to run
     (libgomp 15's omp_get_uid_from_device), allocated with
     GOMP_PLUGIN_malloc; NULL when there is none (libgomp then makes one
     of the device number), after a message if a driver call failed.  */
  char *(*get_uid) (struct ok_device *dev);
  /* Managed memory (libgomp 16), or NULL.  */
  const struct ok_managed_ops *managed;
  /* Whether code on DEV can access all of [PTR, PTR + SIZE), SIZE > 0
     (libgomp 16's omp_target_is_accessible): 1 or 0.  */
  int (*is_accessible) (struct ok_device *dev, const void *ptr, size_t size);
  /* Page-locked host memory of SIZE > 0 bytes into *PTR (libgomp 16's
     pinned allocators), through device DEV, the plugin's first; *PTR
     NULL when none is to be had.  False only after a reported error,
     which ends the program (libgomp's gomp_fatal).  Only the nvptx
     plugin exports these entry points (core-page-locked.c says why).  */
  bool (*page_locked_alloc) (struct ok_device *dev, void **ptr, size_t size);
  bool (*page_locked_free) (struct ok_device *dev, void *ptr);

  /* libgomp 15's interop objects, or NULL: a backend without them gives
     objects of no foreign runtime (core-interop.c).  */
  const struct ok_interop_ops *interop;

  /* OpenACC, or NULL.  The plugin offers OpenACC only when every backend
     that has devices has it (core-openacc.c).  */
  const struct ok_acc_ops *acc;
  /* OpenACC's CUDA handles (nvptx plugin only), or NULL.  */
  const struct ok_acc_cuda_ops *acc_cuda;

  /* Number of devices of this kind.  Called once, from
     GOMP_OFFLOAD_get_num_devices.  Must return 0 *silently* when the driver
     or runtime is missing: a plugin without devices must print nothing.  A
     real misconfiguration may be reported.  */
  int (*probe) (void);

  /* Start DEV, whose core half is filled in (LOCAL, ORD, LABEL); false
     after an error, with everything it took released.  */
  bool (*init_device) (struct ok_device *dev);
  /* Optional.  Called first when the core finalises DEV, before it
     waits for DEV's asynchronous launches, unloads DEV's images and
     frees its pool: make the calling thread able to use the device.
     False when the device is gone already (its driver shut down first at
     exit): the core then leaves everything as it is.  */
  bool (*fini_enter) (struct ok_device *dev);
  /* Free everything DEV still holds, after the core has unloaded its
     images and freed its pool; not the structure itself.  */
  bool (*fini_device) (struct ok_device *dev);

  /* Loading and unloading images.  */
  const struct ok_image_ops *image;

  /* Device memory, in one of two forms.  A backend with RAW_ALLOC and
     RAW_FREE gets the core's pool over them: requests up to the size in
     bytes that environment variable POOL_ENV gives (64 KiB when unset; 0
     turns pooling off) are carved from large chunks, the rest forwarded.
     Otherwise ALLOC and FREE serve every request.  In both forms a
     request of 0 bytes gives a valid, unique pointer.  */
  void *(*raw_alloc) (struct ok_device *dev, size_t size);
  bool (*raw_free) (struct ok_device *dev, void *ptr);
  const char *pool_env;
  void *(*alloc) (struct ok_device *dev, size_t size);
  bool (*free) (struct ok_device *dev, void *ptr);

  /* Copies of N > 0 bytes (the core does nothing for none).  */
  bool (*host2dev) (struct ok_device *dev, void *dst, const void *src,
		    size_t n);
  bool (*dev2host) (struct ok_device *dev, void *dst, const void *src,
		    size_t n);
  bool (*dev2dev) (struct ok_device *dev, void *dst, const void *src,
		   size_t n);

  /* Start FN (a function's table entry; never NULL) with TGT_VARS
     (a device address) as LAUNCH says, and fill JOB with what finish
     needs.  False after an error: nothing was started, nothing is held,
     and finish is not called.  *LAUNCH is only valid during the call.  */
  bool (*launch) (struct ok_device *dev, void *fn, void *tgt_vars,
		  const struct ok_launch *launch, struct ok_job *job);
  /* Wait for JOB's launch to end and give back what it holds; false after
     a reported failure of the launch.  Called once per successful launch,
     on the launching thread for a synchronous one, on the device's
     completion thread for an asynchronous one.  */
  bool (*finish) (struct ok_device *dev, struct ok_job *job);

  /* For messages (ok_result_text): the name and the description of a
     driver's result CODE (0 is success), each NULL when the driver has
     none; RESULT_UNKNOWN formats CODE, an int, when the driver has
     neither ("CUDA error %d").  And whether a failure CODE during
     teardown is expected and not worth a message (the driver shut down
     before the plugin, at exit).  Optional for a backend without a
     driver.  */
  void (*describe_result) (int code, const char **name, const char **text);
  const char *result_unknown;
  bool (*teardown_quiet) (int code);
};

/* The backends that exist.  A plugin lists the ones it uses.  */
extern const struct ok_backend ok_backend_emulated;
extern const struct ok_backend ok_backend_cuda;
extern const struct ok_backend ok_backend_hsa;

#endif /* OFFLOADKIT_BACKEND_H */
