/* libgomp 15's interop entry points: GOMP_OFFLOAD_interop, which
   initialises, uses and destroys the objects of the `interop' directive,
   and the four getters behind omp_get_interop_int, _ptr, _str and
   _type_desc.  libgomp 15 and 16 look up all five when the plugin has
   GOMP_OFFLOAD_interop; older ones never look.

   The core parses prefer_type, remembers the device in the object and
   turns a backend's answer for a property (struct ok_interop_value) into
   each getter's value and return code, as GCC 15's nvptx and gcn plugins
   answer (libgomp/plugin/plugin-nvptx.c and plugin-gcn.c).  A backend
   without the interop hooks (the emulated device) gives objects whose
   foreign runtime is none: libgomp allocates an object for every `init'
   on a device of a plugin that has the entry point, so omp_interop_none
   cannot be given for one device and not another; every query of such an
   object answers omp_irc_no_value, as GCC's plugins answer for an object
   of a runtime they do not know, and its type descriptions are NULL.  */

#include <string.h>

#include "core-internal.h"

/* gomp-constants.h's encoding of prefer_type (GCC 15's
   GOMP_INTEROP_IFR_SEPARATOR).  */
#define CORE_IFR_SEPARATOR ((char) (-__INT8_MAX__ - 1))

static bool
core_fr_listed (const int *frs, int fr)
{
  for (; frs != NULL && *frs != 0; frs++)
    if (*frs == fr)
      return true;
  return false;
}

/* The foreign runtime that PREFER_TYPE (may be NULL) chooses from FRS, 0
   for none.  PREFER_TYPE is a list of blocks, each the separator, the
   runtimes' numbers (a char each), the separator, attribute strings
   (each NUL-ended) and a NUL; the list ends with something other than
   the separator.  As in GCC's plugins, the first block that names a
   runtime of FRS decides, and within it the last such runtime; the
   attributes are skipped.  A NUL where a block's runtimes should be ends
   the list, so that a malformed string is not read past its end.  */
static int
core_interop_prefer (const char *p, const int *frs)
{
  int chosen = 0;
  if (p == NULL)
    return 0;
  while (*p == CORE_IFR_SEPARATOR && chosen == 0)
    {
      for (p++; *p != CORE_IFR_SEPARATOR; p++)
	{
	  if (*p == '\0')
	    return chosen;
	  if (core_fr_listed (frs, (signed char) *p))
	    chosen = (signed char) *p;
	}
      for (p++; *p != '\0'; p += strlen (p) + 1)
	;
      p++;
    }
  return chosen;
}

/* ACTION (libgomp's enum gomp_interop_flag) on OBJ, an object of device
   ORD: 0 fills the new object, 1 waits for its stream's work, 2 frees
   the stream before libgomp frees OBJ.  GCC's plugins end the program
   when the driver fails here (libgomp cannot be told); so does this,
   after the backend's message.  */
void
GOMP_OFFLOAD_interop (struct ok_interop *obj, int ord, int action,
		      bool targetsync, const char *prefer_type)
{
  struct ok_device *dev = core_device (ord, "handle an interop object");
  if (dev == NULL)
    GOMP_PLUGIN_fatal ("offloadkit-%s: interop object not handled",
		       ok_plugin.name);
  const struct ok_backend *b = dev->backend;
  if (action == 0)
    {
      obj->device_data = dev;
      if (b->interop == NULL)
	{
	  OK_DEBUG ("%s: interop object of no foreign runtime", dev->label);
	  return;
	}
      int fr = core_interop_prefer (prefer_type, b->interop->frs);
      if (!b->interop->init (dev, obj, fr, targetsync))
	GOMP_PLUGIN_fatal ("offloadkit-%s: cannot create an interop object"
			   " on device %d", ok_plugin.name, ord);
      OK_DEBUG ("%s: interop object, runtime %d, %s", dev->label, obj->fr,
		obj->stream != NULL ? "targetsync" : "no targetsync");
      return;
    }
  if (obj->stream == NULL || b->interop == NULL)
    return;
  bool destroy = action == 2;
  if (!b->interop->sync (dev, obj, destroy))
    GOMP_PLUGIN_fatal ("offloadkit-%s: cannot %s the interop object's"
		       " targetsync on device %d", ok_plugin.name,
		       destroy ? "destroy" : "wait for", ord);
  if (destroy)
    obj->stream = NULL;
}

/* OBJ's device when OBJ has a foreign runtime, else NULL.  */
static struct ok_device *
core_interop_device (const struct ok_interop *obj)
{
  if (obj == NULL || obj->fr == 0 || obj->device_data == NULL)
    return NULL;
  struct ok_device *dev = obj->device_data;
  return dev->backend->interop != NULL ? dev : NULL;
}

static const char *
core_fr_name (int fr)
{
  static const char *const names[] = {
    NULL, "cuda", "cuda_driver", "opencl", "sycl", "hip", "level_zero", "hsa"
  };
  return fr > 0 && fr < (int) (sizeof names / sizeof names[0])
	 ? names[fr] : NULL;
}

/* Property PROP of OBJ into *VAL; false when PROP is out of range.  */
static bool
core_interop_value (const struct ok_interop *obj, int prop,
		    struct ok_interop_value *val)
{
  memset (val, 0, sizeof *val);
  if (prop < OK_IPR_FIRST || prop >= 0)
    return false;
  struct ok_device *dev = core_interop_device (obj);
  val->type = OK_IRC_NO_VALUE;
  if (dev == NULL)
    return true;
  switch (prop)
    {
    case OK_IPR_FR_ID:
      val->type = OK_IRC_TYPE_INT;
      val->i = obj->fr;
      break;
    case OK_IPR_FR_NAME:
      val->s = core_fr_name (obj->fr);
      val->type = val->s != NULL ? OK_IRC_TYPE_STR : OK_IRC_NO_VALUE;
      break;
    case OK_IPR_DEVICE_NUM:
      val->type = OK_IRC_TYPE_INT;
      val->i = obj->device_num;
      break;
    case OK_IPR_VENDOR:
      val->type = OK_IRC_TYPE_INT;
      val->i = dev->backend->interop->vendor;
      break;
    case OK_IPR_VENDOR_NAME:
      val->type = OK_IRC_TYPE_STR;
      val->s = dev->backend->interop->vendor_name;
      break;
    default:
      dev->backend->interop->property (dev, obj, (enum ok_ipr) prop, val);
      break;
    }
  return true;
}

static void
core_set_rc (int *ret_code, int rc)
{
  if (ret_code != NULL)
    *ret_code = rc;
}

/* The return code of a getter for values of type WANT given VAL: success
   when the types agree, else the type the property has (which names the
   getter to use), or no value.  */
static int
core_interop_rc (const struct ok_interop_value *val, enum ok_irc want)
{
  if (val->type == want
      || (want == OK_IRC_TYPE_INT && val->type == OK_IRC_TYPE_PTR
	  && val->ptr_as_int))
    return OK_IRC_SUCCESS;
  return val->type;
}

intptr_t
GOMP_OFFLOAD_get_interop_int (struct ok_interop *obj, int prop, int *ret_code)
{
  struct ok_interop_value val;
  if (!core_interop_value (obj, prop, &val))
    {
      core_set_rc (ret_code, OK_IRC_OUT_OF_RANGE);
      return 0;
    }
  int rc = core_interop_rc (&val, OK_IRC_TYPE_INT);
  core_set_rc (ret_code, rc);
  if (rc != OK_IRC_SUCCESS)
    return 0;
  return val.type == OK_IRC_TYPE_PTR ? (intptr_t) val.p : val.i;
}

void *
GOMP_OFFLOAD_get_interop_ptr (struct ok_interop *obj, int prop, int *ret_code)
{
  struct ok_interop_value val;
  if (!core_interop_value (obj, prop, &val))
    {
      core_set_rc (ret_code, OK_IRC_OUT_OF_RANGE);
      return NULL;
    }
  int rc = core_interop_rc (&val, OK_IRC_TYPE_PTR);
  core_set_rc (ret_code, rc);
  return rc == OK_IRC_SUCCESS ? val.p : NULL;
}

const char *
GOMP_OFFLOAD_get_interop_str (struct ok_interop *obj, int prop,
			      int *ret_code)
{
  struct ok_interop_value val;
  if (!core_interop_value (obj, prop, &val))
    {
      core_set_rc (ret_code, OK_IRC_OUT_OF_RANGE);
      return NULL;
    }
  int rc = core_interop_rc (&val, OK_IRC_TYPE_STR);
  core_set_rc (ret_code, rc);
  return rc == OK_IRC_SUCCESS ? val.s : NULL;
}

/* The C type of property PROP.  libgomp answers FR_ID to DEVICE_NUM
   itself and asks only for the others; those get libgomp's answers
   here too, so that every property has one.  NULL for an object of no
   foreign runtime.  */
const char *
GOMP_OFFLOAD_get_interop_type_desc (struct ok_interop *obj, int prop)
{
  static const char *const own[] = {
    "omp_interop_t", "const char *", "int", "const char *", "int"
  };
  struct ok_interop_value val;
  if (!core_interop_value (obj, prop, &val)
      || core_interop_device (obj) == NULL)
    return NULL;
  if (prop >= OK_IPR_DEVICE_NUM)
    return own[OK_IPR_FR_ID - prop];
  return val.type_desc;
}
