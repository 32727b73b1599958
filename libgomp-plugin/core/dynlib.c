/* Loading a vendor runtime and its entry points (see dynlib.h).  */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dynlib.h"
#include "plugin-core.h"

const char *
ok_dynlib_path (const struct ok_dynlib *lib, bool *chosen)
{
  const char *path = getenv (lib->env);
  *chosen = path != NULL && *path != '\0';
  return *chosen ? path : lib->default_path;
}

/* What PATH is when it exists and is not a regular file ("a FIFO"), or
   NULL.  */
static const char *
dynlib_odd_file (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0 || S_ISREG (st.st_mode))
    return NULL;
  return (S_ISFIFO (st.st_mode) ? "a FIFO"
	  : S_ISDIR (st.st_mode) ? "a directory"
	  : S_ISCHR (st.st_mode) ? "a character device"
	  : S_ISBLK (st.st_mode) ? "a block device"
	  : S_ISSOCK (st.st_mode) ? "a socket" : "not a regular file");
}

/* Whether dlopen (PATH), which reads the file it finds, would meet a file
   that is not a regular one (a FIFO would block it for ever): PATH itself
   when it has a '/', else PATH in the directories of LD_LIBRARY_PATH,
   where the dynamic linker looks first.  Say so, naming LIB->env, and
   return true.  */
static bool
dynlib_refuse_odd (const struct ok_dynlib *lib, const char *path)
{
  const char *odd = NULL;
  char *found = NULL;
  if (strchr (path, '/') != NULL)
    odd = dynlib_odd_file (path);
  else
    {
      const char *dirs = getenv ("LD_LIBRARY_PATH");
      size_t plen = strlen (path);
      while (dirs != NULL && *dirs != '\0' && odd == NULL)
	{
	  size_t dlen = strcspn (dirs, ":");
	  free (found);
	  found = malloc (dlen + plen + 2);
	  if (found == NULL)
	    break;
	  /* An empty entry is the current directory.  */
	  memcpy (found, dlen ? dirs : ".", dlen ? dlen : 1);
	  size_t at = dlen ? dlen : 1;
	  found[at] = '/';
	  memcpy (found + at + 1, path, plen + 1);
	  /* The first file of that name is the one the linker would take.  */
	  struct stat st;
	  if (stat (found, &st) == 0)
	    {
	      odd = dynlib_odd_file (found);
	      break;
	    }
	  dirs += dlen;
	  if (*dirs == ':')
	    dirs++;
	}
    }
  if (odd != NULL)
    ok_error ("%s=%s: %s is %s, not a shared library; no %s devices",
	      lib->env, path, found != NULL ? found : path, odd,
	      lib->devices);
  free (found);
  return odd != NULL;
}

void *
ok_dynlib_load (const struct ok_dynlib *lib, const char *path, bool chosen,
		void *api)
{
  memset (api, 0, lib->api_size);
  if (chosen && dynlib_refuse_odd (lib, path))
    return NULL;
  void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      const char *why = dlerror ();
      /* A library the user named should be there: say why not.  Without
	 a name, no runtime is the normal case on a machine without such a
	 GPU, and a plugin without devices says nothing (GOMP_DEBUG=1
	 tells why).  */
      if (chosen)
	ok_error ("cannot load %s=%s: %s; no %s devices", lib->env, path,
		  why != NULL ? why : "unknown error", lib->devices);
      else
	OK_DEBUG ("no %s (%s): no %s devices", lib->library,
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
	  ok_dynlib_unload (lib, handle, api);
	  return NULL;
	}
      /* POSIX: a function's address fits a void *.  */
      memcpy ((char *) api + sym->offset, &fn, sizeof fn);
    }
  return handle;
}

void
ok_dynlib_unload (const struct ok_dynlib *lib, void *handle, void *api)
{
  memset (api, 0, lib->api_size);
  dlclose (handle);
}
