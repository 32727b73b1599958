/* hsa-harness: libgomp 15's interop objects on HSA devices, as GCC's gcn
   plugin gives them without the HIP runtime: HSA whatever prefer_type
   asks, every property through each getter with its return code, the
   type descriptions, the targetsync queue created for the agent and
   destroyed with the object, and the runtime's failures, each with one
   message before the program ends.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-harness.h"
#include "interop-standin.h"

/* libgomp 15's runtimes (omp.h.in) that this plugin names.  */
enum { FR_HSA = 7 };

static int
rc_int (struct interop_obj *o, int prop, intptr_t *v)
{
  int rc = 99;
  *v = get_int (o, prop, &rc);
  return rc;
}

static int
rc_ptr (struct interop_obj *o, int prop, void **v)
{
  int rc = 99;
  *v = get_ptr (o, prop, &rc);
  return rc;
}

static int
rc_str (struct interop_obj *o, int prop, const char **v)
{
  int rc = 99;
  *v = get_str (o, prop, &rc);
  return rc;
}

static bool
desc_is (struct interop_obj *o, int prop, const char *want)
{
  const char *v = type_desc (o, prop);
  return v != NULL && strcmp (v, want) == 0;
}

static void
interop_plain (void)
{
  intptr_t i;
  void *p;
  const char *s;
  struct interop_obj o = new_obj (1, false, NULL);
  check ("interop init: HSA, no queue", o.fr == FR_HSA && o.stream == NULL);
  check ("interop fr_id and fr_name: 7, \"hsa\"",
	 rc_int (&o, IPR_FR_ID, &i) == IRC_SUCCESS && i == FR_HSA
	 && rc_str (&o, IPR_FR_NAME, &s) == IRC_SUCCESS
	 && strcmp (s, "hsa") == 0
	 && rc_ptr (&o, IPR_FR_ID, &p) == IRC_TYPE_INT && p == NULL);
  check ("interop vendor: 1 (amd), \"amd\"",
	 rc_int (&o, IPR_VENDOR, &i) == IRC_SUCCESS && i == 1
	 && rc_ptr (&o, IPR_VENDOR, &p) == IRC_TYPE_INT
	 && rc_str (&o, IPR_VENDOR_NAME, &s) == IRC_SUCCESS
	 && strcmp (s, "amd") == 0
	 && rc_int (&o, IPR_VENDOR_NAME, &i) == IRC_TYPE_STR);
  check ("interop device_num",
	 rc_int (&o, IPR_DEVICE_NUM, &i) == IRC_SUCCESS && i == 1);
  check ("interop platform and device_context: no value",
	 rc_int (&o, IPR_PLATFORM, &i) == IRC_NO_VALUE
	 && rc_ptr (&o, IPR_DEVICE_CONTEXT, &p) == IRC_NO_VALUE && p == NULL
	 && rc_str (&o, IPR_DEVICE_CONTEXT, &s) == IRC_NO_VALUE);
  void *agent1;
  struct interop_obj o0 = new_obj (0, false, NULL);
  void *agent0;
  check ("interop device: a pointer to the agent, each device's own",
	 rc_ptr (&o, IPR_DEVICE, &agent1) == IRC_SUCCESS && agent1 != NULL
	 && rc_ptr (&o0, IPR_DEVICE, &agent0) == IRC_SUCCESS
	 && agent0 != NULL && *(uint64_t *) agent1 != 0
	 && *(uint64_t *) agent0 != *(uint64_t *) agent1
	 && rc_int (&o, IPR_DEVICE, &i) == IRC_TYPE_PTR && i == 0
	 && rc_str (&o, IPR_DEVICE, &s) == IRC_TYPE_PTR);
  check ("interop targetsync: no value without targetsync",
	 rc_ptr (&o, IPR_TARGETSYNC, &p) == IRC_NO_VALUE && p == NULL
	 && rc_int (&o, IPR_TARGETSYNC, &i) == IRC_NO_VALUE);
  check ("interop properties out of range",
	 rc_int (&o, 0, &i) == IRC_OUT_OF_RANGE
	 && rc_ptr (&o, -10, &p) == IRC_OUT_OF_RANGE);
  check ("interop type descriptions for HSA",
	 desc_is (&o, IPR_PLATFORM, "N/A")
	 && desc_is (&o, IPR_DEVICE, "hsa_agent_t *")
	 && desc_is (&o, IPR_DEVICE_CONTEXT, "N/A")
	 && desc_is (&o, IPR_TARGETSYNC, "hsa_queue_t *"));
  interop (&o, 1, USE, false, NULL);
  interop (&o, 1, DESTROY, false, NULL);
  interop (&o0, 0, DESTROY, false, NULL);
  /* {hip} and {cuda}, {hsa}: HSA all the same.  */
  o = new_obj (0, false, SEP "\x05" SEP "\0" "\0");
  check ("interop prefer_type {hip}: HSA (no HIP runtime)", o.fr == FR_HSA);
  o = new_obj (0, false, SEP "\x01" SEP "\0" SEP "\x07" SEP "\0" "\0");
  check ("interop prefer_type {cuda}, {hsa}: HSA", o.fr == FR_HSA);
}

static void
interop_targetsync (void)
{
  long queues = f_outstanding ("queue");
  long creates = f_calls ("hsa_queue_create");
  struct interop_obj o = new_obj (1, true, SEP "\x07" SEP "\0" "\0");
  check ("interop targetsync: one new queue",
	 o.stream != NULL && f_outstanding ("queue") == queues + 1
	 && f_calls ("hsa_queue_create") == creates + 1);
  intptr_t i;
  void *p;
  check ("interop targetsync: the queue by get_ptr, type_ptr by get_int",
	 rc_ptr (&o, IPR_TARGETSYNC, &p) == IRC_SUCCESS && p == o.stream
	 && rc_int (&o, IPR_TARGETSYNC, &i) == IRC_TYPE_PTR && i == 0);
  long reads = f_calls ("hsa_queue_load_read_index_scacquire");
  interop (&o, 1, USE, false, NULL);
  check ("interop use: the queue read, kept",
	 f_calls ("hsa_queue_load_read_index_scacquire") > reads
	 && o.stream != NULL && f_outstanding ("queue") == queues + 1);
  interop (&o, 1, DESTROY, false, NULL);
  check ("interop destroy: the queue destroyed",
	 o.stream == NULL && f_outstanding ("queue") == queues);
}

static void
interop_failures (void)
{
  long queues = f_outstanding ("queue");
  int e;
  f_fail ("hsa_queue_create");
  bool fatal = new_obj_fatal (0, &e);
  check ("interop init, hsa_queue_create fails: fatal, one message",
	 fatal && error_says (e, "interop", "hsa_queue_create", NULL)
	 && f_outstanding ("queue") == queues);
  f_fail (NULL);
  struct interop_obj o = new_obj (0, true, NULL);
  f_fail ("hsa_queue_destroy");
  fatal = interop_fatal (&o, 0, DESTROY, &e);
  check ("interop destroy, hsa_queue_destroy fails: fatal, one message",
	 fatal && error_says (e, "interop", "hsa_queue_destroy", NULL)
	 && o.stream != NULL);
  f_fail (NULL);
  interop (&o, 0, DESTROY, false, NULL);
  check ("interop destroy after the failure: nothing left",
	 o.stream == NULL && f_outstanding ("queue") == queues);
}

void
test_interop (void)
{
  if (!interop_standin_syms ())
    {
      check ("interop entry points exported", false);
      return;
    }
  long bad = bad_calls ();
  interop_plain ();
  interop_targetsync ();
  check_no_bad_calls ("interop: no invalid runtime calls", bad);
  interop_failures ();
}
