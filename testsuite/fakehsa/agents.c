/* The fake HSA runtime: agents (the GPUs of FAKEHSA_AGENTS and one CPU)
   and their ISAs.  See fake-hsa.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-hsa.h"

struct fh_agent fh_agents[FH_MAX_AGENTS + 1];
int fh_nagents;

/* The ELF machine number of gfxNAME (LLVM 20's AMDGPUUsage, table
"AMDGPU EF_AMDGPU_MACH Values") and that of the generic target whose
   code objects it runs (its table "AMDGPU Generic Processors"), as ROCr
   knows them; 0 for one we do not know.  Our own table, not the
   plugin's, so that a wrong value there fails a test.  */
static unsigned
fh_mach_of (const char *gfx, unsigned *generic)
{
  enum { G9 = 0x051, G101 = 0x052, G103 = 0x053, G11 = 0x054, G12 = 0x059,
	 G94 = 0x05f };
  static const struct { const char *name; unsigned mach, generic; } machs[] = {
    { "gfx803", 0x02a, 0 }, { "gfx900", 0x02c, G9 }, { "gfx902", 0x02d, G9 },
    { "gfx904", 0x02e, G9 }, { "gfx906", 0x02f, G9 }, { "gfx908", 0x030, 0 },
    { "gfx909", 0x031, G9 }, { "gfx90a", 0x03f, 0 }, { "gfx90c", 0x032, G9 },
    { "gfx940", 0x040, G94 }, { "gfx941", 0x04b, G94 },
    { "gfx942", 0x04c, G94 }, { "gfx950", 0x04f, G94 },
    { "gfx1010", 0x033, G101 }, { "gfx1011", 0x034, G101 },
    { "gfx1012", 0x035, G101 }, { "gfx1013", 0x042, G101 },
    { "gfx1030", 0x036, G103 }, { "gfx1031", 0x037, G103 },
    { "gfx1032", 0x038, G103 }, { "gfx1033", 0x039, G103 },
    { "gfx1034", 0x03e, G103 }, { "gfx1035", 0x03d, G103 },
    { "gfx1036", 0x045, G103 }, { "gfx1100", 0x041, G11 },
    { "gfx1101", 0x046, G11 }, { "gfx1102", 0x047, G11 },
    { "gfx1103", 0x044, G11 }, { "gfx1150", 0x043, G11 },
    { "gfx1151", 0x04a, G11 }, { "gfx1152", 0x055, G11 },
    { "gfx1153", 0x058, G11 }, { "gfx1200", 0x048, G12 },
    { "gfx1201", 0x04e, G12 },
  };
  for (size_t i = 0; i < sizeof machs / sizeof *machs; i++)
    if (strcmp (machs[i].name, gfx) == 0)
      {
	*generic = machs[i].generic;
	return machs[i].mach;
      }
  *generic = 0;
  return 0;
}

static void
fh_agent_setup (struct fh_agent *a, bool gpu)
{
  a->gpu = gpu;
  for (int k = 0; k < FH_NREGIONS; k++)
    {
      a->regions[k].agent = a;
      a->regions[k].kind = (enum fh_region_kind) k;
    }
}

void
fh_agents_configure (const char *list)
{
  const char *p = list;
  while (*p != '\0' && fh_nagents < FH_MAX_AGENTS)
    {
      size_t len = strcspn (p, ",");
      char item[64];
      if (len > 0 && len < sizeof item)
	{
	  memcpy (item, p, len);
	  item[len] = '\0';
	  struct fh_agent *a = &fh_agents[fh_nagents++];
	  fh_agent_setup (a, true);
	  char *colon = strchr (item, ':');
	  snprintf (a->isa, sizeof a->isa, "amdgcn-amd-amdhsa--%s", item);
	  if (colon != NULL)
	    *colon = '\0';
	  snprintf (a->name, sizeof a->name, "%s", item);
	  a->mach = fh_mach_of (item, &a->generic_mach);
	  if (a->mach == 0)
	    fprintf (stderr, "fakehsa: unknown agent %s in FAKEHSA_AGENTS\n",
		     item);
	}
      p += len;
      if (*p == ',')
	p++;
    }
  struct fh_agent *cpu = &fh_agents[fh_nagents];
  fh_agent_setup (cpu, false);
  snprintf (cpu->name, sizeof cpu->name, "Fake CPU");
}

struct fh_agent *
fh_agent_find (hsa_agent_t a)
{
  for (int i = 0; i <= fh_nagents; i++)
    if (a.handle == (uintptr_t) &fh_agents[i])
      return &fh_agents[i];
  return NULL;
}

int
fh_agent_index (const struct fh_agent *a)
{
  return (int) (a - fh_agents);
}

/* Iterations call back without the lock, so that callbacks may call in.  */
hsa_status_t
hsa_iterate_agents (hsa_status_t (*cb) (hsa_agent_t, void *), void *data)
{
  ENTER (hsa_iterate_agents);
  NEED_INIT (hsa_iterate_agents);
  if (cb == NULL)
    BAD (hsa_iterate_agents, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL callback");
  int n = fh_nagents;
  pthread_mutex_unlock (&fh_lock);
  /* The CPU agent first, as ROCm lists it.  */
  for (int k = 0; k <= n; k++)
    {
      int i = k == 0 ? n : k - 1;
      hsa_status_t r = cb ((hsa_agent_t) { (uintptr_t) &fh_agents[i] }, data);
      if (r != HSA_STATUS_SUCCESS)
	return r;
    }
  return HSA_STATUS_SUCCESS;
}

static void
fh_put_string (void *value, size_t size, const char *s)
{
  memset (value, 0, size);
  size_t n = strlen (s);
  memcpy (value, s, n < size ? n : size - 1);
}

hsa_status_t
hsa_agent_get_info (hsa_agent_t agent, int attribute, void *value)
{
  ENTER (hsa_agent_get_info);
  NEED_INIT (hsa_agent_get_info);
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL)
    BAD (hsa_agent_get_info, HSA_STATUS_ERROR_INVALID_AGENT,
	 "unknown agent %#llx", (unsigned long long) agent.handle);
  if (value == NULL)
    BAD (hsa_agent_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL value");
  switch (attribute)
    {
    case HSA_AGENT_INFO_NAME:
      fh_put_string (value, 64, a->name);
      break;
    case HSA_AGENT_INFO_VENDOR_NAME:
      fh_put_string (value, 64, a->gpu ? "AMD" : "CPU");
      break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      fh_put_string (value, 64, a->gpu ? "Fake Radeon" : "Fake CPU");
      break;
    case HSA_AGENT_INFO_FEATURE:
      *(uint32_t *) value = a->gpu ? HSA_FEATURE_KERNEL_DISPATCH
				   : HSA_FEATURE_AGENT_DISPATCH;
      break;
    case HSA_AGENT_INFO_PROFILE:
      *(uint32_t *) value = 0;
      break;
    case HSA_AGENT_INFO_DEVICE:
      *(uint32_t *) value = a->gpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
      break;
    case HSA_AGENT_INFO_NODE:
      *(uint32_t *) value = (uint32_t) fh_agent_index (a);
      break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
      *(uint32_t *) value = 64;
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM:
      ((uint16_t *) value)[0] = 1024;
      ((uint16_t *) value)[1] = 1024;
      ((uint16_t *) value)[2] = 1024;
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
      *(uint32_t *) value = 1024;
      break;
    case HSA_AGENT_INFO_GRID_MAX_DIM:
      ((uint32_t *) value)[0] = UINT32_MAX;
      ((uint32_t *) value)[1] = UINT32_MAX;
      ((uint32_t *) value)[2] = UINT32_MAX;
      break;
    case HSA_AGENT_INFO_GRID_MAX_SIZE:
      *(uint32_t *) value = UINT32_MAX;
      break;
    case HSA_AGENT_INFO_QUEUES_MAX:
      *(uint32_t *) value = a->gpu ? 128 : 0;
      break;
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      *(uint32_t *) value = a->gpu ? 64 : 0;
      break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      *(uint32_t *) value = a->gpu ? 131072 : 0;
      break;
    case HSA_AGENT_INFO_ISA:
      ((hsa_isa_t *) value)->handle = a->gpu ? (uintptr_t) a : 0;
      break;
    case HSA_AMD_AGENT_INFO_CHIP_ID:
      *(uint32_t *) value = 0x66a0;
      break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      *(uint32_t *) value = a->gpu ? 60 : 4;
      break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
      *(uint32_t *) value = 1725;
      break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
      *(uint32_t *) value = 40;
      break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
      *(uint32_t *) value = 4;
      break;
    case HSA_AMD_AGENT_INFO_UUID:
      /* At most 21 characters with the NUL; FAKEHSA_UUID=none plays an
	 agent without one, which answers "GPU-XX" (hsa_ext_amd.h).  */
      if (a->gpu && getenv ("FAKEHSA_UUID") != NULL
	  && strcmp (getenv ("FAKEHSA_UUID"), "none") == 0)
	fh_put_string (value, 21, "GPU-XX");
      else
	snprintf (value, 21, "%s-%016llx", a->gpu ? "GPU" : "CPU",
		  0xfeed0000ull + (unsigned long long) (a - fh_agents));
      break;
    default:
      fh_bad (FH_hsa_agent_get_info, "attribute %#x not implemented",
	      attribute);
      RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* An agent's one ISA has the agent's address as its handle.  */
static struct fh_agent *
fh_isa_find (hsa_isa_t isa)
{
  struct fh_agent *a = fh_agent_find ((hsa_agent_t) { isa.handle });
  return a != NULL && a->gpu ? a : NULL;
}

hsa_status_t
hsa_agent_iterate_isas (hsa_agent_t agent,
			hsa_status_t (*cb) (hsa_isa_t, void *), void *data)
{
  ENTER (hsa_agent_iterate_isas);
  NEED_INIT (hsa_agent_iterate_isas);
  struct fh_agent *a = fh_agent_find (agent);
  if (a == NULL || cb == NULL)
    BAD (hsa_agent_iterate_isas, a == NULL ? HSA_STATUS_ERROR_INVALID_AGENT
	 : HSA_STATUS_ERROR_INVALID_ARGUMENT, "bad agent or callback");
  pthread_mutex_unlock (&fh_lock);
  if (!a->gpu)
    return HSA_STATUS_SUCCESS;
  return cb ((hsa_isa_t) { (uintptr_t) a }, data);
}

static hsa_status_t
fh_isa_info (int sym, hsa_isa_t isa, int attribute, void *value)
{
  struct fh_agent *a = fh_isa_find (isa);
  if (a == NULL)
    {
      fh_bad (sym, "unknown ISA %#llx", (unsigned long long) isa.handle);
      return HSA_STATUS_ERROR_INVALID_ISA;
    }
  if (value == NULL)
    {
      fh_bad (sym, "NULL value");
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  switch (attribute)
    {
    case HSA_ISA_INFO_NAME_LENGTH:
      /* With the terminating NUL, as ROCm counts it.  */
      *(uint32_t *) value = (uint32_t) strlen (a->isa) + 1;
      return HSA_STATUS_SUCCESS;
    case HSA_ISA_INFO_NAME:
      memcpy (value, a->isa, strlen (a->isa) + 1);
      return HSA_STATUS_SUCCESS;
    default:
      fh_bad (sym, "attribute %#x not implemented", attribute);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

hsa_status_t
hsa_isa_get_info_alt (hsa_isa_t isa, int attribute, void *value)
{
  ENTER (hsa_isa_get_info_alt);
  NEED_INIT (hsa_isa_get_info_alt);
  RETURN (fh_isa_info (FH_hsa_isa_get_info_alt, isa, attribute, value));
}

hsa_status_t
hsa_isa_get_info (hsa_isa_t isa, int attribute, uint32_t index, void *value)
{
  ENTER (hsa_isa_get_info);
  NEED_INIT (hsa_isa_get_info);
  if (index != 0)
    BAD (hsa_isa_get_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "index %u", index);
  RETURN (fh_isa_info (FH_hsa_isa_get_info, isa, attribute, value));
}
