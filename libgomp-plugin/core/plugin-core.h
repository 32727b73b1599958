/* The generic half of every offloadkit plugin.

   plugin-core.c defines all GOMP_OFFLOAD_* entry points.  What differs
   between plugins is only their identity and which backends they combine;
   each plugin-<name>.c defines OK_PLUGIN with those.  */

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
     device type (OK_GCC_DEV_VERSION_*); such images are recognised and
     refused with a hint instead of a bare version mismatch.  */
  unsigned gcc_dev_version;
  /* The backends, NULL-terminated, in device-numbering order: devices of
     the first come first.  The emulated backend goes last, so emulated
     devices follow the real ones.  */
  const struct ok_backend *const *backends;
};

/* Defined by the plugin's own file (plugin-nvptx.c, ...).  */
extern const struct ok_plugin ok_plugin;

/* Debug output, shown by libgomp only when GOMP_DEBUG=1.  Every message
   names the plugin, as in "offloadkit-nvptx: ...".  */
#define OK_DEBUG(fmt, ...) \
  GOMP_PLUGIN_debug (0, "offloadkit-%s: " fmt "\n", ok_plugin.name, \
		     ##__VA_ARGS__)

/* Report an error about the device named LABEL through GOMP_PLUGIN_error
   as "offloadkit-PLUGIN: LABEL: MESSAGE", MESSAGE formatted from FMT and
   AP in full, however long (a JIT compiler's log, say).  */
void ok_dev_verror (const char *label, const char *fmt, va_list ap);

#endif /* OFFLOADKIT_PLUGIN_CORE_H */
