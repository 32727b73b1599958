/* GCN devices of the HSA backend: one per GPU agent.  A device has the
   agent's ISA (which image it can run), two memory regions (host-visible
   kernel arguments, coarse-grained device memory), one AQL queue shared
   by every host thread (the runtime's multi-producer queues allow that),
   and the state of the other files.  */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-internal.h"

/* The agent's ISA name, "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-".  */
struct isa_walk
{
  char *buf;
  size_t len;
  bool found;
};

static hsa_status_t
gcn_first_isa (hsa_isa_t isa, void *data)
{
  struct isa_walk *walk = data;
  uint32_t n = 0;
  if (ok_hsa.hsa_isa_get_info_alt (isa, HSA_ISA_INFO_NAME_LENGTH, &n)
      != HSA_STATUS_SUCCESS || n == 0 || n > 4096)
    return HSA_STATUS_SUCCESS;
  char *name = calloc (1, (size_t) n + 1);
  if (name == NULL)
    return HSA_STATUS_SUCCESS;
  if (ok_hsa.hsa_isa_get_info_alt (isa, HSA_ISA_INFO_NAME, name)
      == HSA_STATUS_SUCCESS)
    {
      snprintf (walk->buf, walk->len, "%s", name);
      walk->found = true;
    }
  free (name);
  return walk->found ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

/* Fill DEV's ISA_NAME, GFX and ARCH.  The ISA name is authoritative; the
   agent's name ("gfx906") serves when the runtime cannot list ISAs.  */
static bool
gcn_get_isa (struct gcn_device *dev)
{
  struct isa_walk walk = { dev->isa_name, sizeof dev->isa_name, false };
  if (ok_hsa.hsa_agent_iterate_isas != NULL
      && ok_hsa.hsa_isa_get_info_alt != NULL)
    ok_hsa.hsa_agent_iterate_isas (dev->agent, gcn_first_isa, &walk);
  if (!walk.found)
    {
      char name[64] = "";
      hsa_status_t s = ok_hsa.hsa_agent_get_info (dev->agent,
						  HSA_AGENT_INFO_NAME, name);
      if (s != HSA_STATUS_SUCCESS)
	{
	  ok_dev_call_error (&dev->base, "cannot name the agent's ISA",
			  "hsa_agent_get_info", s);
	  return false;
	}
      name[sizeof name - 1] = '\0';
      snprintf (dev->isa_name, sizeof dev->isa_name, "%s", name);
    }
  /* The processor is the "gfx..." part, up to the first ':'.  */
  const char *g = strstr (dev->isa_name, "gfx");
  if (g == NULL)
    {
      ok_dev_error (&dev->base, "agent ISA \"%s\" is not an AMD GCN ISA",
		     dev->isa_name);
      return false;
    }
  size_t n = strcspn (g, ":");
  if (n >= sizeof dev->gfx)
    n = sizeof dev->gfx - 1;
  memcpy (dev->gfx, g, n);
  dev->gfx[n] = '\0';
  /* gfx906 -> 0x906, gfx90a -> 0x90a, gfx1030 -> 0x1030: how offloadkit's
     descriptors name architectures.  */
  char *end;
  unsigned long arch = strtoul (dev->gfx + 3, &end, 16);
  dev->arch = (*end == '\0' && end != dev->gfx + 3) ? (uint32_t) arch : 0;
  return true;
}

/* Pick the kernarg region and the coarse-grained device-memory region.  */
static hsa_status_t
gcn_pick_region (hsa_region_t region, void *data)
{
  struct gcn_device *dev = data;
  hsa_region_segment_t segment;
  if (ok_hsa.hsa_region_get_info (region, HSA_REGION_INFO_SEGMENT, &segment)
      != HSA_STATUS_SUCCESS || segment != HSA_REGION_SEGMENT_GLOBAL)
    return HSA_STATUS_SUCCESS;
  bool alloc_ok = false;
  if (ok_hsa.hsa_region_get_info (region,
				  HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED,
				  &alloc_ok) != HSA_STATUS_SUCCESS
      || !alloc_ok)
    return HSA_STATUS_SUCCESS;
  uint32_t flags = 0;
  if (ok_hsa.hsa_region_get_info (region, HSA_REGION_INFO_GLOBAL_FLAGS,
				  &flags) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG)
      && dev->kernarg_region.handle == 0)
    dev->kernarg_region = region;
  if ((flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED)
      && dev->data_region.handle == 0)
    dev->data_region = region;
  return HSA_STATUS_SUCCESS;
}

/* A fault of a dispatched kernel arrives here, on a runtime thread.  The
   waiting host thread sees QUEUE_ERROR and reports, naming the kernel.  */
void
gcn_queue_callback (hsa_status_t status, hsa_queue_t *queue, void *data)
{
  (void) queue;
  struct gcn_device *dev = data;
  __atomic_store_n (&dev->queue_error, status, __ATOMIC_RELEASE);
  ok_dev_mark_broken (&dev->base);
}

static bool
gcn_init_device (struct ok_device *d)
{
  struct gcn_device *dev = gcn_dev (d);
  dev->agent = ok_hsa_agents[d->local];
  gcn_launch_init (dev);
  gcn_managed_init (dev);

  if (!gcn_get_isa (dev))
    goto fail;
  ok_device_set_label (d, "device %d (%s)", d->ord, dev->gfx);

  if (ok_hsa.hsa_agent_get_info (dev->agent,
				 HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
				 &dev->cu_count) != HSA_STATUS_SUCCESS
      || dev->cu_count == 0)
    dev->cu_count = 64;		/* What most GCN parts have.  */

  hsa_status_t s = ok_hsa.hsa_agent_iterate_regions (dev->agent,
						     gcn_pick_region, dev);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (d, "cannot list memory regions",
			 "hsa_agent_iterate_regions", s);
      goto fail;
    }
  if (dev->kernarg_region.handle == 0 || dev->data_region.handle == 0)
    {
      ok_dev_error (d, "the agent has no %s region",
		    dev->kernarg_region.handle == 0
		    ? "kernel-argument" : "coarse-grained global memory");
      goto fail;
    }

  uint32_t qmax = 0;
  if (ok_hsa.hsa_agent_get_info (dev->agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE,
				 &qmax) != HSA_STATUS_SUCCESS || qmax == 0)
    qmax = 64;
  uint32_t qsize = qmax < 1024 ? qmax : 1024;
  s = ok_hsa.hsa_queue_create (dev->agent, qsize, HSA_QUEUE_TYPE_MULTI,
			       gcn_queue_callback, dev, UINT32_MAX,
			       UINT32_MAX, &dev->queue);
  if (s != HSA_STATUS_SUCCESS)
    {
      dev->queue = NULL;
      ok_dev_call_error (d, "cannot create a queue", "hsa_queue_create", s);
      goto fail;
    }
  OK_DEBUG ("%s: ISA %s, %u compute units, queue of %u packets", d->label,
	    dev->isa_name, dev->cu_count, dev->queue->size);
  return true;

 fail:
  gcn_launch_fini (dev);
  gcn_managed_fini (dev);
  return false;
}

static bool
gcn_fini_device (struct ok_device *d)
{
  struct gcn_device *dev = gcn_dev (d);
  bool ok = gcn_launch_fini (dev);
  ok &= gcn_managed_fini (dev);
  ok &= ok_dev_teardown_ok (d, ok_hsa.hsa_queue_destroy (dev->queue),
			    "destroy the queue", "hsa_queue_destroy");
  dev->queue = NULL;
  return ok;
}

/* Unified shared memory and self maps need the agents to reach the
   host's memory by default (APUs such as MI300A, or XNACK on), as GCC
   16's plugin-gcn.c asks in GOMP_OFFLOAD_get_num_devices; else no agent
   is counted.  */
static unsigned
gcn_requires_unmet (unsigned features, int n)
{
  (void) n;
  unsigned usm = features & (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			     | OK_GOMP_REQUIRES_SELF_MAPS);
  if (usm != 0 && !gcn_svm_by_default ())
    {
      OK_DEBUG ("the agents do not reach the host's memory by default"
		" (HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT): no unified"
		" shared memory");
      return usm;
    }
  return 0;
}

static int
gcn_probe (void)
{
  return ok_hsa_load ();
}

static const struct ok_managed_ops gcn_managed_ops = {
  .alloc = gcn_managed_alloc,
  .free = gcn_managed_free,
};

static const struct ok_interop_ops gcn_interop_ops = {
  .frs = gcn_interop_frs,
  .init = gcn_interop_init,
  .sync = gcn_interop_sync,
  .vendor = 1,			/* OpenMP's additional definitions.  */
  .vendor_name = "amd",
  .property = gcn_interop_property,
};

static const struct ok_acc_ops gcn_acc_ops = {
  .queue_size = sizeof (struct gcn_acc_queue),
  .queue_init = gcn_acc_queue_init,
  .queue_fini = gcn_acc_queue_fini,
  .queue_test = ok_hostq_test,
  .queue_wait = ok_hostq_wait,
  .queue_join = ok_hostq_join,
  .queue_callback = ok_hostq_callback,
  .queue_copy = ok_hostq_copy,
  .exec = gcn_acc_exec,
  .memory = gcn_acc_memory,
  .names = gcn_acc_names,
};

const struct ok_backend ok_backend_hsa = {
  .name = "hsa",
  .device_size = sizeof (struct gcn_device),
  .job_size = sizeof (struct gcn_job),
  /* GCC 13+'s device code posts `target device (ancestor: 1)' regions in
     its output buffer (hsa-launch.c); GCC 12's needs none of it.  */
  .requires_supported = (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			 | OK_GOMP_REQUIRES_SELF_MAPS
			 | OK_GOMP_REQUIRES_REVERSE_OFFLOAD),
  .requires_unmet = gcn_requires_unmet,
  .probe = gcn_probe,
  .init_device = gcn_init_device,
  .fini_device = gcn_fini_device,
  .image = &gcn_image_ops,
  .raw_alloc = gcn_raw_alloc,
  .raw_free = gcn_raw_free,
  .pool_env = "OFFLOADKIT_GCN_POOL_MAX",
  .host2dev = gcn_host2dev,
  .dev2host = gcn_dev2host,
  .dev2dev = gcn_dev2dev,
  .memset = gcn_memset,
  .copy_rect = gcn_copy_rect,
  .get_uid = gcn_get_uid,
  .is_accessible = gcn_is_accessible,
  .launch = gcn_launch,
  .finish = gcn_finish,
  .describe_result = gcn_describe_result,
  .result_unknown = "HSA status %#x",
  .managed = &gcn_managed_ops,
  .interop = &gcn_interop_ops,
  .acc = &gcn_acc_ops
};
