/* Loading the CUDA driver.

   libcuda.so.1 comes with NVIDIA's kernel driver, not with a toolkit, and
   most machines that run offloading programs have none: the plugin must
   then load and report no CUDA devices, silently.  So the driver is
   dlopened at run time and each entry point looked up by its exported
   (versioned) symbol from cuda-calls.def.  OFFLOADKIT_CUDA_LIBRARY names
   another library to load instead (the testsuite's fake driver).  */

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda-internal.h"
#include "dynlib.h"

struct ok_cuda_api ok_cuda;
char ok_cuda_driver_version[32];

/* Kept open for the life of the process: kernels, contexts and the
   completion threads depend on it, and libgomp never unloads a plugin.  */
static void *cuda_handle;

void
cuda_describe_result (int code, const char **name, const char **text)
{
  CUresult r = (CUresult) code;
  if (ok_cuda.cuGetErrorName == NULL
      || ok_cuda.cuGetErrorName (r, name) != CUDA_SUCCESS)
    *name = NULL;
  if (ok_cuda.cuGetErrorString == NULL
      || ok_cuda.cuGetErrorString (r, text) != CUDA_SUCCESS)
    *text = NULL;
}

/* At exit the driver may have shut down before libgomp finalises the
   devices: then every call says so, and nothing is left to free.  */
bool
cuda_teardown_quiet (int code)
{
  return code == CUDA_ERROR_DEINITIALIZED;
}

/* The entry points, for ok_dynlib_load.  */
static const struct ok_dynsym cuda_syms[] = {
#define OK_CUDA_FN(fn, symbol, required, params)			\
  { symbol, required, offsetof (struct ok_cuda_api, fn) },
#include "cuda-calls.def"
#undef OK_CUDA_FN
};

static const struct ok_dynlib cuda_lib = {
  .env = "OFFLOADKIT_CUDA_LIBRARY",
  .default_path = "libcuda.so.1",
  .library = "CUDA driver",
  .a_library = "a CUDA driver",
  .devices = "CUDA",
  OK_DYNLIB_TABLE (cuda_syms, struct ok_cuda_api),
};

int
ok_cuda_load (void)
{
  bool chosen;
  const char *path = ok_dynlib_path (&cuda_lib, &chosen);

  void *handle = ok_dynlib_load (&cuda_lib, path, chosen, &ok_cuda);
  if (handle == NULL)
    return 0;

  char err[OK_CUDA_ERRLEN];
  CUresult r = ok_cuda.cuInit (0);
  if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY)
    {
      /* The toolkit's stub libcuda.so.1 (found when its stubs directory
	 is on the library path of a machine without NVIDIA's driver) is
	 no driver either: no device, silently.  */
      OK_DEBUG ("CUDA driver %s %s", path,
		r == CUDA_ERROR_NO_DEVICE ? "sees no device"
		: "is the CUDA toolkit's stub, not a driver");
      ok_dynlib_unload (&cuda_lib, handle, &ok_cuda);
      return 0;
    }
  if (r != CUDA_SUCCESS)
    {
      ok_error ("cannot initialise the CUDA driver (%s): cuInit: %s; no"
		" CUDA devices", path, ok_cuda_result (r, err, sizeof err));
      ok_dynlib_unload (&cuda_lib, handle, &ok_cuda);
      return 0;
    }

  int count = 0;
  r = ok_cuda.cuDeviceGetCount (&count);
  if (r != CUDA_SUCCESS)
    {
      ok_error ("cannot count CUDA devices: cuDeviceGetCount: %s",
		ok_cuda_result (r, err, sizeof err));
      count = 0;
    }
  if (count < 0)
    count = 0;

  int version = 0;
  if (ok_cuda.cuDriverGetVersion != NULL
      && ok_cuda.cuDriverGetVersion (&version) != CUDA_SUCCESS)
    version = 0;
  if (version > 0)
    snprintf (ok_cuda_driver_version, sizeof ok_cuda_driver_version,
	      "CUDA Driver %u.%u", (unsigned) version / 1000,
	      (unsigned) version % 1000 / 10);
  OK_DEBUG ("CUDA driver %s, version %d.%d: %d device%s", path,
	    version / 1000, version % 1000 / 10, count, count == 1 ? "" : "s");

  /* Even with no device the library stays: cuInit succeeded, and
     unloading an initialised driver is not supported.  */
  cuda_handle = handle;
  return count;
}
