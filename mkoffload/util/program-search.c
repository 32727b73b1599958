/* Finding the programs a tool runs; see program-search.h.  */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "program-search.h"

static int
is_executable_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode)
	 && access (path, X_OK) == 0;
}

char *
ok_search_path (const char *prog, const char *dirs)
{
  if (strchr (prog, '/'))
    return is_executable_file (prog) ? xstrdup (prog) : NULL;
  if (!dirs)
    return NULL;
  const char *p = dirs;
  for (;;)
    {
      const char *colon = strchr (p, ':');
      size_t len = colon ? (size_t) (colon - p) : strlen (p);
      char *cand = len ? xasprintf ("%.*s/%s", (int) len, p, prog)
		       : xasprintf ("./%s", prog);
      if (is_executable_file (cand))
	return cand;
      free (cand);
      if (!colon)
	return NULL;
      p = colon + 1;
    }
}

char *
ok_find_program (const char *prog)
{
  if (strchr (prog, '/'))
    return ok_search_path (prog, NULL);

  char *found = NULL;
  const char *collect_gcc = getenv ("COLLECT_GCC");
  const char *slash = collect_gcc ? strrchr (collect_gcc, '/') : NULL;
  if (slash)
    {
      char *dir = xstrndup (collect_gcc, slash - collect_gcc);
      found = ok_search_path (prog, *dir ? dir : "/");
      free (dir);
    }
  if (!found)
    {
      const char *cpath = getenv ("COMPILER_PATH");
      /* An empty COMPILER_PATH must not mean ".".  */
      if (cpath && *cpath)
	found = ok_search_path (prog, cpath);
    }
  if (!found)
    found = ok_search_path (prog, getenv ("PATH"));
  return found;
}
