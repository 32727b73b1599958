/* What libgomp's OpenACC half shares with its plugins, GCC 12 to 16
   (libgomp-plugin.h, oacc-int.h, oacc-plugin.c): our own declarations of
   an external interface, the same in every version but where said.  The
   profiling structures are the OpenACC standard's, from the compiler's
   <acc_prof.h>.  */

#ifndef OFFLOADKIT_OACC_ABI_H
#define OFFLOADKIT_OACC_ABI_H

#include <stdbool.h>
#include <stddef.h>

#include <acc_prof.h>

/* A queue, as libgomp names the plugin's (core-openacc.c).  */
struct goacc_asyncqueue;

/* libgomp-plugin.h: enum goacc_property, the properties of
   acc_get_property (numbers, then strings)...  */
enum ok_acc_prop
{
  OK_ACC_PROP_MEMORY = 1,
  OK_ACC_PROP_FREE_MEMORY = 2,
  OK_ACC_PROP_NAME = 0x10001,
  OK_ACC_PROP_VENDOR = 0x10002,
  OK_ACC_PROP_DRIVER = 0x10003
};

/* ... and a property's value.  */
union ok_goacc_property_value
{
  const char *ptr;
  size_t val;
};

/* The beginning of libgomp's struct goacc_thread (oacc-int.h), the same
   in GCC 12 to 16: a plugin dispatches the profiling events of what it
   does itself (allocations, uploads, launches) through the thread's
   PROF_INFO and API_INFO, non-NULL while a tool listens; TARGET_TLS is
   what create_thread_data gave for the thread's device.  */
struct ok_goacc_thread
{
  void *base_dev;
  void *dev;
  void *saved_bound_dev;
  void *mapped_data;
  acc_prof_info *prof_info;
  acc_api_info *api_info;
  bool prof_callbacks_enabled;
  void *next;
  void *target_tls;
};

/* libgomp's callbacks for OpenACC (oacc-plugin.c, GOMP_PLUGIN_1.0 on).  */
extern void *GOMP_PLUGIN_acc_thread (void);
extern struct ok_goacc_thread *GOMP_PLUGIN_goacc_thread (void);
extern void GOMP_PLUGIN_goacc_profiling_dispatch (acc_prof_info *,
						  acc_event_info *,
						  acc_api_info *);
/* The launch dimension I (GOMP_DIM_*) that GOMP_OPENACC_DIM sets, 0
   when it sets none.  */
extern int GOMP_PLUGIN_acc_default_dim (unsigned int i);

#endif /* OFFLOADKIT_OACC_ABI_H */
