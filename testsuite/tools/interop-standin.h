/* What the harnesses need to play libgomp 15's interop objects: its
   struct interop_obj_t, enum gomp_interop_flag and the omp.h values
   (libgomp-plugin.h, omp.h.in) as libgomp hands them to a plugin, the
   plugin's five entry points, and an object made as libgomp makes one.
   Included by the interop checks of each harness.  */

#ifndef OFFLOADKIT_INTEROP_STANDIN_H
#define OFFLOADKIT_INTEROP_STANDIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gomp-standin.h"

struct interop_obj
{
  void *stream;
  void *device_data;
  int fr;
  int device_num;
};
enum { INIT, USE, DESTROY };
enum
{
  IPR_FR_ID = -1, IPR_FR_NAME = -2, IPR_VENDOR = -3, IPR_VENDOR_NAME = -4,
  IPR_DEVICE_NUM = -5, IPR_PLATFORM = -6, IPR_DEVICE = -7,
  IPR_DEVICE_CONTEXT = -8, IPR_TARGETSYNC = -9
};
enum
{
  IRC_NO_VALUE = 1, IRC_SUCCESS = 0, IRC_EMPTY = -1, IRC_OUT_OF_RANGE = -2,
  IRC_TYPE_INT = -3, IRC_TYPE_PTR = -4, IRC_TYPE_STR = -5
};

/* prefer_type as GCC encodes it: per block, the separator, the
   runtimes, the separator, NUL-ended attributes and a NUL; a NUL after
   the last block.  */
#define SEP "\x80"

static void (*interop) (struct interop_obj *, int, int, bool, const char *);
static intptr_t (*get_int) (struct interop_obj *, int, int *);
static void *(*get_ptr) (struct interop_obj *, int, int *);
static const char *(*get_str) (struct interop_obj *, int, int *);
static const char *(*type_desc) (struct interop_obj *, int);

/* Look the five entry points up in the open plugin, as libgomp 15 does;
   false when one is missing.  */
static inline bool
interop_standin_syms (void)
{
  return (standin_plugin_sym ("GOMP_OFFLOAD_interop", &interop)
	  && standin_plugin_sym ("GOMP_OFFLOAD_get_interop_int", &get_int)
	  && standin_plugin_sym ("GOMP_OFFLOAD_get_interop_ptr", &get_ptr)
	  && standin_plugin_sym ("GOMP_OFFLOAD_get_interop_str", &get_str)
	  && standin_plugin_sym ("GOMP_OFFLOAD_get_interop_type_desc",
				 &type_desc));
}

/* A new object of device DEV as libgomp makes one: zeroed, its device
   number set, then the plugin's init.  */
static inline struct interop_obj
new_obj (int dev, bool targetsync, const char *prefer)
{
  struct interop_obj o;
  memset (&o, 0, sizeof o);
  o.device_num = dev;
  interop (&o, dev, INIT, targetsync, prefer);
  return o;
}

/* Whether a new object of device DEV with a targetsync (new_obj) ends
   the program (GOMP_PLUGIN_fatal), as it must when the vendor runtime
   fails; *E gets the error count from before.  */
static inline bool
new_obj_fatal (int dev, int *e)
{
  volatile bool fatal;
  *e = errors_now ();
  STANDIN_CATCH_FATAL (fatal, (void) new_obj (dev, true, NULL));
  return fatal;
}

/* The same for the plugin's ACTION (USE, DESTROY) on O.  */
static inline bool
interop_fatal (struct interop_obj *o, int dev, int action, int *e)
{
  volatile bool fatal;
  *e = errors_now ();
  STANDIN_CATCH_FATAL (fatal, interop (o, dev, action, false, NULL));
  return fatal;
}

#endif /* OFFLOADKIT_INTEROP_STANDIN_H */
