/* Loading the HSA runtime and finding GPU agents.

   libhsa-runtime64.so.1 is often installed on machines without an AMD GPU
   (it comes with Debian's GCC offloading packages), and there hsa_init is
   slow and prints messages of its own.  So before loading the runtime we
   check that the amdgpu kernel driver's device node, /dev/kfd, can be
   opened: ROCm's runtime cannot work without it.  No node means no GCN
   devices, silently (GOMP_DEBUG=1 tells why).  OFFLOADKIT_HSA_LIBRARY
   names another runtime to load (the testsuite's fake) and skips that
   check.  */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dynlib.h"
#include "hsa-internal.h"

struct ok_hsa_api ok_hsa;
hsa_agent_t ok_hsa_agents[HSA_MAX_AGENTS];

/* Kept open for the life of the process, as libgomp never unloads a
   plugin and queues and executables depend on it.  */
static void *gcn_handle;

void
gcn_describe_result (int code, const char **name, const char **text)
{
  static const struct { hsa_status_t s; const char *name; } names[] = {
    { HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS" },
    { HSA_STATUS_INFO_BREAK, "HSA_STATUS_INFO_BREAK" },
    { HSA_STATUS_ERROR, "HSA_STATUS_ERROR" },
    { HSA_STATUS_ERROR_INVALID_ARGUMENT, "HSA_STATUS_ERROR_INVALID_ARGUMENT" },
    { HSA_STATUS_ERROR_OUT_OF_RESOURCES, "HSA_STATUS_ERROR_OUT_OF_RESOURCES" },
    { HSA_STATUS_ERROR_NOT_INITIALIZED, "HSA_STATUS_ERROR_NOT_INITIALIZED" },
    { HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
      "HSA_STATUS_ERROR_INVALID_CODE_OBJECT" },
    { HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
      "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME" },
  };
  hsa_status_t s = (hsa_status_t) code;
  *name = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].s == s)
      *name = names[i].name;
  if (ok_hsa.hsa_status_string == NULL
      || ok_hsa.hsa_status_string (s, text) != HSA_STATUS_SUCCESS)
    *text = NULL;
}

/* The entry points, for ok_dynlib_load.  */
static const struct ok_dynsym gcn_syms[] = {
#define OK_HSA_FN(fn, ret, required, params)				\
  { #fn, required, offsetof (struct ok_hsa_api, fn) },
#include "hsa-calls.def"
#undef OK_HSA_FN
};

static const struct ok_dynlib gcn_lib = {
  .env = "OFFLOADKIT_HSA_LIBRARY",
  .default_path = "libhsa-runtime64.so.1",
  .library = "HSA runtime",
  .a_library = "an HSA runtime",
  .devices = "GCN",
  OK_DYNLIB_TABLE (gcn_syms, struct ok_hsa_api),
};

struct agent_walk
{
  int count;
  hsa_status_t error;
};

static hsa_status_t
gcn_collect_agent (hsa_agent_t agent, void *data)
{
  struct agent_walk *walk = data;
  hsa_device_type_t type = HSA_DEVICE_TYPE_CPU;
  hsa_status_t s = ok_hsa.hsa_agent_get_info (agent, HSA_AGENT_INFO_DEVICE,
					      &type);
  if (s != HSA_STATUS_SUCCESS)
    {
      walk->error = s;
      return s;
    }
  if (type == HSA_DEVICE_TYPE_GPU && walk->count < HSA_MAX_AGENTS)
    ok_hsa_agents[walk->count++] = agent;
  return HSA_STATUS_SUCCESS;
}

int
ok_hsa_load (void)
{
  bool chosen;
  const char *path = ok_dynlib_path (&gcn_lib, &chosen);
  if (!chosen)
    {
      int fd = open ("/dev/kfd", O_RDWR | O_CLOEXEC);
      if (fd < 0)
	{
	  OK_DEBUG ("cannot open /dev/kfd (%s): no amdgpu kernel driver,"
		    " no GCN devices; the HSA runtime is not loaded",
		    strerror (errno));
	  return 0;
	}
      close (fd);
    }

  void *handle = ok_dynlib_load (&gcn_lib, path, chosen, &ok_hsa);
  if (handle == NULL)
    return 0;

  char err[OK_HSA_ERRLEN];
  hsa_status_t s = ok_hsa.hsa_init ();
  if (s != HSA_STATUS_SUCCESS)
    {
      /* With /dev/kfd present a failing hsa_init is a real problem (no
	 permission to use the GPU, a broken installation): say so.  */
      ok_error ("cannot initialise the HSA runtime (%s): hsa_init: %s; no"
		" GCN devices", path, ok_hsa_status (s, err, sizeof err));
      ok_dynlib_unload (&gcn_lib, handle, &ok_hsa);
      return 0;
    }

  struct agent_walk walk = { 0, HSA_STATUS_SUCCESS };
  s = ok_hsa.hsa_iterate_agents (gcn_collect_agent, &walk);
  if (s != HSA_STATUS_SUCCESS || walk.error != HSA_STATUS_SUCCESS)
    {
      ok_error ("cannot list HSA agents: hsa_iterate_agents: %s; no GCN"
		" devices", ok_hsa_status (s != HSA_STATUS_SUCCESS ? s
					   : walk.error, err, sizeof err));
      walk.count = 0;
    }
  OK_DEBUG ("HSA runtime %s: %d GPU agent%s", path, walk.count,
	    walk.count == 1 ? "" : "s");
  if (walk.count == 0)
    {
      /* Nothing will use the runtime: release what hsa_init took.  */
      ok_hsa.hsa_shut_down ();
      ok_dynlib_unload (&gcn_lib, handle, &ok_hsa);
      return 0;
    }
  gcn_handle = handle;
  return walk.count;
}
