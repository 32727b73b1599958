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
  size_t api_size;		/* Bytes of the table of entry points.  */
};

/* The members of struct ok_dynlib that describe the table of entry
   points: SYMS (an array of struct ok_dynsym) for API_TYPE.  */
#define OK_DYNLIB_TABLE(syms_, api_type)				\
  .syms = (syms_), .nsyms = sizeof (syms_) / sizeof (syms_)[0],		\
  .api_size = sizeof (api_type)

/* The library to load for LIB: LIB->env's value when that is set and not
   empty (*CHOSEN is then true), else LIB->default_path.  */
const char *ok_dynlib_path (const struct ok_dynlib *lib, bool *chosen);

/* dlopen PATH (CHOSEN: named by LIB->env; both from ok_dynlib_path) and
   fill API, the backend's table of entry points, from it; a missing
   optional entry point is NULL.  NULL when the library does not load
   (said only with GOMP_DEBUG=1 when nobody named it: no runtime is the
   normal case without a GPU; reported when LIB->env named it, or named a
   file that is not a regular one, such as a FIFO, which is not opened)
   or lacks a required entry point (reported); API is then all NULL.  */
void *ok_dynlib_load (const struct ok_dynlib *lib, const char *path,
		      bool chosen, void *api);

/* Undo ok_dynlib_load, whose HANDLE and API the backend will not use
   (the runtime did not start, or has no device): API all NULL again, the
   library closed.  */
void ok_dynlib_unload (const struct ok_dynlib *lib, void *handle,
		       void *api);

#endif
