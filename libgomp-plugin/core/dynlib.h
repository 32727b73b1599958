/* Loading a vendor runtime (CUDA driver, HSA runtime) with dlopen, and
   its entry points with dlsym from a table built from the backend's
   X-macro list: building needs none of the vendor's headers or
   libraries, and a machine without the runtime has no such devices.  */

#ifndef OFFLOADKIT_DYNLIB_H
#define OFFLOADKIT_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

/* One entry point: its exported symbol, whether the backend needs it, and
   where its pointer goes in the backend's table of entry points.  */
struct ok_dynsym
{
  const char *symbol;
  bool required;
  size_t offset;
};

/* A runtime, as the messages name it.  */
struct ok_dynlib
{
  const char *env;		/* Names another library to load instead.  */
  const char *default_path;	/* What to load otherwise: "libcuda.so.1".  */
  const char *library;		/* "CUDA driver".  */
  const char *a_library;	/* "a CUDA driver".  */
  const char *devices;		/* "CUDA": its devices.  */
  const struct ok_dynsym *syms;
  size_t nsyms;
};

/* The library to load for LIB: LIB->env's value when that is set and not
   empty (*CHOSEN is then true), else LIB->default_path.  */
const char *ok_dynlib_path (const struct ok_dynlib *lib, bool *chosen);

/* dlopen PATH (CHOSEN: named by LIB->env; both from ok_dynlib_path) and
   fill API, the backend's table of entry points, from it; a missing
   optional entry point is NULL.  NULL when the library does not load
   (said only with GOMP_DEBUG=1 when nobody named it: no runtime is the
   normal case without a GPU; reported when LIB->env named it, or named a
   file that is not a regular one, such as a FIFO, which is not opened)
   or lacks a required entry point (reported; API is then
   unspecified).  */
void *ok_dynlib_load (const struct ok_dynlib *lib, const char *path,
		      bool chosen, void *api);

#endif
