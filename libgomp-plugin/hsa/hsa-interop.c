/* libgomp 15's interop objects on GCN devices, answered as GCC 15's and
   16's gcn plugin answers them (libgomp/plugin/plugin-gcn.c,
   GOMP_OFFLOAD_interop and the get_interop_* getters) when it cannot
   load the HIP runtime: the runtime is HSA, whatever prefer_type asks
   (GCC's plugin also falls back to HSA when HIP is chosen but missing;
   this backend drives HSA alone and never loads HIP).  The device is a
   pointer to the agent (hsa_agent_t *), there is no context, and
   targetsync is a queue of the agent, created as GCC's plugin creates
   it (64 packets, multiple producers) and, when the object is used or
   destroyed, waited for until the program's packets on it are consumed.

   One difference from GCC's getters, where their return codes disagree
   with the property's type: GCC 15's omp_get_interop_ptr answers
   omp_irc_type_str for the vendor, an int; here every getter names the
   type the property has (core-interop.c).  */

#include <sched.h>
#include <stdint.h>

#include "hsa-internal.h"

/* Queue size of GCC's plugin (ASYNC_QUEUE_SIZE): a power of 2 of at
   least 40 that every GPU agent accepts.  */
#define GCN_INTEROP_QUEUE_SIZE 64

/* HIP is listed so that prefer_type's block naming it decides, as in
   GCC's plugin, which then falls back to HSA as this backend does.  */
const int gcn_interop_frs[] = { OK_IFR_HIP, OK_IFR_HSA, 0 };

bool
gcn_interop_init (struct ok_device *d, struct ok_interop *obj, int fr,
		  bool targetsync)
{
  struct gcn_device *dev = gcn_dev (d);
  (void) fr;
  obj->fr = OK_IFR_HSA;
  if (!targetsync)
    return true;
  hsa_queue_t *queue = NULL;
  hsa_status_t s = ok_hsa.hsa_queue_create (dev->agent,
					    GCN_INTEROP_QUEUE_SIZE,
					    HSA_QUEUE_TYPE_MULTI, NULL, NULL,
					    UINT32_MAX, UINT32_MAX, &queue);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (d, "cannot create the interop object's queue",
			 "hsa_queue_create", s);
      return false;
    }
  obj->stream = queue;
  return true;
}

bool
gcn_interop_sync (struct ok_device *d, struct ok_interop *obj, bool destroy)
{
  hsa_queue_t *queue = obj->stream;
  /* The program's packets are done when the packet processor has read
     all that were written.  */
  while (ok_hsa.hsa_queue_load_read_index_scacquire (queue)
	 != ok_hsa.hsa_queue_load_write_index_scacquire (queue))
    sched_yield ();
  if (!destroy)
    return true;
  hsa_status_t s = ok_hsa.hsa_queue_destroy (queue);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (d, "cannot destroy the interop object's queue",
			 "hsa_queue_destroy", s);
      return false;
    }
  return true;
}

void
gcn_interop_property (struct ok_device *d, const struct ok_interop *obj,
		      enum ok_ipr prop, struct ok_interop_value *val)
{
  struct gcn_device *dev = gcn_dev (d);
  /* GCC's descriptions of platform, device, device_context and
     targetsync for HSA.  */
  static const char *const desc[] = {
    "N/A", "hsa_agent_t *", "N/A", "hsa_queue_t *"
  };
  if (prop <= OK_IPR_PLATFORM)
    val->type_desc = desc[OK_IPR_PLATFORM - prop];
  val->type = OK_IRC_NO_VALUE;
  switch (prop)
    {
    case OK_IPR_DEVICE:
      val->type = OK_IRC_TYPE_PTR;
      val->p = &dev->agent;
      break;
    case OK_IPR_TARGETSYNC:
      if (obj->stream != NULL)
	{
	  val->type = OK_IRC_TYPE_PTR;
	  val->p = obj->stream;
	}
      break;
    default:			/* The platform and the context: none.  */
      break;
    }
}
