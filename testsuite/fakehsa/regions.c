/* The fake HSA runtime: regions and AMD memory pools, the same objects
   under both APIs.  A GPU agent has a kernarg region (fine-grained), a
   coarse-grained one and a group one; the CPU agent system memory.  See
   fake-hsa.h.  */

#define _GNU_SOURCE
#include <stddef.h>

#include "fake-hsa.h"

struct fh_region *
fh_region_find (uint64_t h)
{
  for (int i = 0; i <= fh_nagents; i++)
    for (int k = 0; k < FH_NREGIONS; k++)
      if (h == (uintptr_t) &fh_agents[i].regions[k])
	return &fh_agents[i].regions[k];
  return NULL;
}

/* The regions of agent HANDLE (GPU: kernarg, coarse-grained, group; CPU:
   system memory) into OUT; their number, or -1 for an unknown agent.
   Iterations call back without the lock, so that callbacks may call in.  */
static int
fh_regions_of (int sym, hsa_agent_t agent, bool have_cb, uint64_t *out)
{
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL || !have_cb)
    {
      fh_bad (sym, "bad agent or callback");
      pthread_mutex_unlock (&fh_lock);
      return -1;
    }
  pthread_mutex_unlock (&fh_lock);
  int n = 0;
  for (int k = 0; k < FH_NREGIONS; k++)
    if (a->gpu == (k != FH_SYSTEM))
      out[n++] = (uintptr_t) &a->regions[k];
  return n;
}

hsa_status_t
hsa_agent_iterate_regions (hsa_agent_t agent,
			   hsa_status_t (*cb) (hsa_region_t, void *),
			   void *data)
{
  ENTER (hsa_agent_iterate_regions);
  NEED_INIT (hsa_agent_iterate_regions);
  uint64_t r[FH_NREGIONS];
  int n = fh_regions_of (FH_hsa_agent_iterate_regions, agent, cb != NULL, r);
  if (n < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (int i = 0; i < n; i++)
    {
      hsa_status_t st = cb ((hsa_region_t) { r[i] }, data);
      if (st != HSA_STATUS_SUCCESS)
	return st;
    }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_amd_agent_iterate_memory_pools (hsa_agent_t agent,
				    hsa_status_t (*cb) (hsa_amd_memory_pool_t,
							void *),
				    void *data)
{
  ENTER (hsa_amd_agent_iterate_memory_pools);
  NEED_INIT (hsa_amd_agent_iterate_memory_pools);
  uint64_t r[FH_NREGIONS];
  int n = fh_regions_of (FH_hsa_amd_agent_iterate_memory_pools, agent,
			 cb != NULL, r);
  if (n < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (int i = 0; i < n; i++)
    {
      hsa_status_t st = cb ((hsa_amd_memory_pool_t) { r[i] }, data);
      if (st != HSA_STATUS_SUCCESS)
	return st;
    }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t
fh_region_info (int sym, uint64_t h, int attribute, void *value)
{
  struct fh_region *r = fh_region_find (h);
  if (r == NULL || value == NULL)
    {
      fh_bad (sym, "unknown region %#llx or NULL value",
	      (unsigned long long) h);
      return r == NULL ? HSA_STATUS_ERROR_INVALID_REGION
		       : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  switch (attribute)
    {
    case HSA_REGION_INFO_SEGMENT:
      *(uint32_t *) value = (r->kind == FH_GROUP ? HSA_REGION_SEGMENT_GROUP
			     : HSA_REGION_SEGMENT_GLOBAL);
      break;
    case HSA_REGION_INFO_GLOBAL_FLAGS:
      switch (r->kind)
	{
	case FH_KERNARG:
	case FH_SYSTEM:
	  *(uint32_t *) value = (HSA_REGION_GLOBAL_FLAG_KERNARG
				 | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED);
	  break;
	case FH_COARSE:
	  *(uint32_t *) value = HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED;
	  break;
	default:
	  *(uint32_t *) value = 0;
	}
      break;
    case HSA_REGION_INFO_SIZE:
    case HSA_REGION_INFO_ALLOC_MAX_SIZE:
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
      *(size_t *) value = r->kind == FH_GROUP ? 65536 : (size_t) 16 << 30;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
      *(bool *) value = r->kind != FH_GROUP;
      break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *(size_t *) value = 4096;
      break;
    default:
      fh_bad (sym, "attribute %#x not implemented", attribute);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_region_get_info (hsa_region_t region, int attribute, void *value)
{
  ENTER (hsa_region_get_info);
  NEED_INIT (hsa_region_get_info);
  RETURN (fh_region_info (FH_hsa_region_get_info, region.handle, attribute,
			  value));
}

hsa_status_t
hsa_amd_memory_pool_get_info (hsa_amd_memory_pool_t pool, int attribute,
			      void *value)
{
  ENTER (hsa_amd_memory_pool_get_info);
  NEED_INIT (hsa_amd_memory_pool_get_info);
  RETURN (fh_region_info (FH_hsa_amd_memory_pool_get_info, pool.handle,
			  attribute, value));
}
