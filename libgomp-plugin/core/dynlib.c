/* Loading a vendor runtime and its entry points (see dynlib.h).  */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "dynlib.h"
#include "plugin-core.h"

const char *
ok_dynlib_path (const struct ok_dynlib *lib, bool *chosen)
{
  const char *path = getenv (lib->env);
  *chosen = path != NULL && *path != '\0';
  return *chosen ? path : lib->default_path;
}

void *
ok_dynlib_load (const struct ok_dynlib *lib, const char *path, bool chosen,
		void *api)
{
  void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      /* A plugin without devices must say nothing; GOMP_DEBUG=1 tells why
	 (also when LIB->env names a library that does not load).  */
      const char *why = dlerror ();
      OK_DEBUG ("no %s (%s%s%s): no %s devices", lib->library,
		chosen ? lib->env : "", chosen ? ": " : "",
		why != NULL ? why : path, lib->devices);
      return NULL;
    }
  for (size_t i = 0; i < lib->nsyms; i++)
    {
      const struct ok_dynsym *sym = &lib->syms[i];
      void *fn = dlsym (handle, sym->symbol);
      if (fn == NULL && sym->required)
	{
	  ok_error ("%s lacks %s (not %s, or one too old); no %s devices",
		    path, sym->symbol, lib->a_library, lib->devices);
	  dlclose (handle);
	  return NULL;
	}
      /* POSIX: a function's address fits a void *.  */
      memcpy ((char *) api + sym->offset, &fn, sizeof fn);
    }
  return handle;
}
