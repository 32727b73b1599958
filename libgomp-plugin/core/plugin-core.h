/* The plugin core: what every plugin and every backend shares.

   The core defines all GOMP_OFFLOAD_* entry points (core-*.c).  What
   differs between plugins is only their identity and which backends they
   combine; each plugin-<name>.c defines OK_PLUGIN with those.  This
   header is what backends may use of the core besides backend.h: the
   error contract, devices' names and state, loaded images, launches of
   their own, and the ways a program may end from a device.

   The error contract: a function that fails reports through ok_error or
   ok_dev_error (which call GOMP_PLUGIN_error) before it returns false or
   NULL, once; its callers add nothing.  Every message starts with
   "offloadkit-PLUGIN: ", and one about a device continues with the
   device's label.  Debug output (OK_DEBUG) shows only with GOMP_DEBUG=1:
   a plugin without devices prints nothing else.  */

#ifndef OFFLOADKIT_PLUGIN_CORE_H
#define OFFLOADKIT_PLUGIN_CORE_H

#include <stdarg.h>

#include "backend.h"
#include "gomp-abi.h"

struct ok_plugin
{
  const char *name;		/* GOMP_OFFLOAD_get_name: "nvptx", "gcn".  */
  int device_type;		/* GOMP_OFFLOAD_get_type: OK_GOMP_DEVICE_*.  */
  unsigned caps;		/* GOMP_OFFLOAD_get_caps.  */
  /* Device version GCC's own mkoffload puts in the version word for this
     device type (OK_GCC_DEV_VERSION_*); such images go to a backend's
     image hooks' open_gcc, or are refused with a hint.  */
  unsigned gcc_dev_version;
  /* The same from GCC 13 when it changed (gcn: 3), else 0.  */
  unsigned gcc_dev_version_13;
  /* The device API an OpenACC profiling tool is told the plugin's events
     come from (acc_prof.h's acc_device_api): what GCC's plugin of the
     same name says, acc_device_api_cuda for nvptx, acc_device_api_other
     for gcn, so that a tool keyed on it works alike with either.  */
  int acc_device_api;
  /* What GCC's plugin of the same name says when a program frees an
     address inside a device allocation, not at its start; programs and
     libgomp's tests (lib-11.c) match it whole (ok_inner_free_error).  */
  const char *gcc_inner_free_words;
  /* The backends, NULL-terminated, in device-numbering order: devices of
     the first come first.  The emulated backend goes last, so emulated
     devices follow the real ones.  */
  const struct ok_backend *const *backends;
};

/* Defined by the plugin's own file (plugin-nvptx.c, ...).  */
extern const struct ok_plugin ok_plugin;

/* Exported by every offloadkit plugin, and only by them: see
   core-devices.c.  */
extern const char offloadkit_plugin[];
#define OK_PLUGIN_MARK "offloadkit_plugin"

/* ---- The libgomp that loaded the plugin (libgomp-abi.c) ---- */

/* Its GCC version, 12 to 16, found once (thread-safe) from libgomp's
   symbol-version nodes; 12 when none of the newer ones is there.  */
int ok_libgomp_gcc (void);
/* Its plugin interface version (GOMP_VERSION): 1, 2 or 3.  */
unsigned ok_libgomp_version (void);
/* Whether the program requires unified shared memory (or self maps) and
   the plugin's devices give it: libgomp 15+ then maps nothing, regions
   get the host's addresses and every host address is the devices' too.
   A backend whose devices cannot give it leaves them out (its
   requires_unmet), so that a true answer holds for every device.  */
bool ok_usm (void);
/* offloadkit-info's question, exported (core-devices.c).  */
bool offloadkit_plugin_describe (int ord, char *buf, size_t len);
/* The variable load_image returns as its trailing entry for it
   (backend.h, struct ok_trailing_var).  */
struct ok_trailing_var ok_trailing_var (void);
/* Run a reverse-offload region (`target device (ancestor: 1)') on the
   host for DEV, as its device code asked: FN the device address of the
   region's function (one of load_image's REV_FNS), MAPNUM and the device
   addresses of its address, size and kind arrays, DEV_NUM the device
   number the device code gives.  libgomp (13+) maps the data, copying
   through DEV's backend, and runs the host function; call it on the
   thread waiting for the launch, while the kernel waits.  False, after a
   message, when the libgomp has no reverse offload (12).  */
bool ok_target_rev (struct ok_device *dev, uint64_t fn, uint64_t mapnum,
		    uint64_t devaddrs, uint64_t sizes, uint64_t kinds,
		    int dev_num);

/* ---- Messages (messages.c) ---- */

#define OK_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* Debug output, shown by libgomp only when GOMP_DEBUG=1.  Every message
   names the plugin, as in "offloadkit-nvptx: ...".  */
#define OK_DEBUG(fmt, ...) \
  GOMP_PLUGIN_debug (0, "offloadkit-%s: " fmt "\n", ok_plugin.name, \
		     ##__VA_ARGS__)

/* "offloadkit-PLUGIN: " and the formatted text, in full however long (a
   JIT compiler's log, say), through GOMP_PLUGIN_error.  */
void ok_error (const char *fmt, ...) OK_PRINTF (1, 2);
void ok_verror (const char *fmt, va_list ap);

/* The same about DEV: "offloadkit-PLUGIN: LABEL: " and the text.  */
void ok_dev_error (const struct ok_device *dev, const char *fmt, ...)
  OK_PRINTF (2, 3);

/* The one exception to the prefix: the program asked to free PTR, which
   lies inside a device allocation but not at its start.  GCC's plugins
   report it in words of their own that programs and libgomp's tests
   match whole from the start of the line (lib-11.c: "libgomp: invalid
   device address"), so it is reported in exactly those words
   (ok_plugin.gcc_inner_free_words); what offloadkit knows more goes to
   OK_DEBUG, with DEV's label unless DEV is NULL.  */
void ok_inner_free_error (const struct ok_device *dev, const void *ptr);
/* The other exception: a failure that the program's device code causes
   (a kernel that traps: abort, a failed assert, Fortran STOP), which
   GCC's plugin reports in words that libgomp's tests match from the start
   of the line (stop-1.f: "libgomp: cuStreamSynchronize error"), begins
   with those words, FMT formatted, and goes on with offloadkit's own,
   DETAIL, in brackets after the plugin's name.  */
void ok_gcc_words_error (const char *detail, const char *fmt, ...)
  OK_PRINTF (2, 3);

/* "NAME (DESCRIPTION)" of driver result CODE as BACKEND's driver names
   it, written to BUF, which is returned.  */
const char *ok_result_text (const struct ok_backend *backend, int code,
			    char *buf, size_t len);

/* Report that driver call CALL failed with CODE while DEV was doing WHAT:
   "...: LABEL: WHAT: CALL: TEXT", TEXT from ok_result_text.  */
void ok_dev_call_error (const struct ok_device *dev, const char *what,
			const char *call, int code);

/* The result CODE of CALL, made while tearing down WHAT of DEV: true when
   it succeeded (0) or its failure is not worth reporting (DEV is broken,
   or the backend's teardown_quiet says so); else report "cannot WHAT" and
   return false.  */
bool ok_dev_teardown_ok (const struct ok_device *dev, int code,
			 const char *what, const char *call);

/* ---- Devices (core-devices.c) ---- */

/* Name DEV in messages, e.g. "device 0 (NVIDIA H200, sm_90)".  */
void ok_device_set_label (struct ok_device *dev, const char *fmt, ...)
  OK_PRINTF (2, 3);

/* A kernel of DEV faulted: the device is unusable.  */
static inline void
ok_dev_mark_broken (struct ok_device *dev)
{
  __atomic_store_n (&dev->broken, true, __ATOMIC_RELEASE);
}

static inline bool
ok_dev_broken (const struct ok_device *dev)
{
  return __atomic_load_n (&dev->broken, __ATOMIC_ACQUIRE);
}

/* ---- Loaded images (core-images.c) ---- */

/* An image loaded on a device, in the core's list of them.  */
struct ok_loaded_image
{
  struct ok_loaded_image *next;
  const void *target_data;	/* What libgomp gave load_image.  */
  void *handle;			/* The backend's.  */
  /* Its ICV block is the one libgomp knows (core_share_icvs).  */
  bool icv_owner;
};

/* Keep DEV's set of loaded images as it is until ok_images_release: the
   core loads and unloads no image of DEV meanwhile (it waits).  The
   emulated device holds it while a region runs, since the region's
   variables are the loaded images'.  Threads the holder waits for (the
   region's own) may read the list without holding it themselves.  */
void ok_images_hold (struct ok_device *dev);
void ok_images_release (struct ok_device *dev);
/* The first of DEV's loaded images, newest first; read while holding, or
   on behalf of a holder.  */
struct ok_loaded_image *ok_images_first (struct ok_device *dev);

/* ---- Device memory (core-memory.c) ---- */

/* Set N bytes at PTR on DEV to VAL by copying host buffers of VAL bytes
   over them with the backend's host2dev: what GOMP_OFFLOAD_memset does
   without a memset hook, and what a hook may leave to it (bytes its
   driver cannot set).  False after a reported error.  */
bool ok_memset_by_copy (struct ok_device *dev, void *ptr, int val, size_t n);

/* ---- Launches (core-launch.c) ---- */

/* Run FN on DEV as a synchronous launch would, from a backend's own code
   (an image's constructors, say): traced like any launch.  False after a
   reported error.  */
bool ok_device_run (struct ok_device *dev, void *fn, void *tgt_vars,
		    const struct ok_launch *launch);

/* Whether an OpenACC profiling tool (acc_prof.h) listens on the calling
   thread.  */
bool ok_acc_profiling (void);
/* For such a tool, when one listens: an OpenACC kernel KERNEL is being
   started with DIMS (!END, just before) or has been (END, just after).  */
void ok_acc_launch_event (bool end, const char *kernel,
			  const unsigned dims[OK_ACC_DIMS]);

/* The calling thread runs host code as a region of DEV (the emulated
   device), from ok_region_enter until ok_region_leave.  Meanwhile it may
   not launch a region or unload an image of DEV, and if it ends the
   program (exit in the region) the core leaves every device as it is:
   the threads a finalisation would wait for wait for this one.  */
void ok_region_enter (struct ok_device *dev);
void ok_region_leave (void);
/* The device whose region the calling thread runs, or NULL.  */
struct ok_device *ok_region_device (void);

/* The device asked the program to end with STATUS (exit called in a
   kernel).  On a thread libgomp called the plugin on, that is exit
   (STATUS); on a completion thread or an OpenACC queue's host thread
   (host-queue.h), where exit could wait forever for a thread that waits
   for this one, ok_end_program (STATUS).  */
_Noreturn void ok_device_exit (int status);

/* End the program from a thread of the plugin's own, at once, with
   STATUS: what stdio holds is flushed and the profile completed, then
   _exit.  Other threads may be inside libgomp or the plugin holding locks
   that exit handlers need, so none is run.  The caller has reported why.  */
_Noreturn void ok_end_program (int status);

#endif /* OFFLOADKIT_PLUGIN_CORE_H */
