/* Reading whole files, and finishing written ones; see file-io.h.  */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "file-io.h"

char *
ok_read_file (const char *path, size_t *lenp)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return NULL;
  size_t len = 0, cap = 1 << 16;
  char *buf = xmalloc (cap);
  for (;;)
    {
      if (cap - len < 2)
	buf = xrealloc (buf, cap *= 2);
      size_t n = fread (buf + len, 1, cap - len - 1, f);
      len += n;
      if (n == 0)
	break;
    }
  if (ferror (f))
    {
      /* fread sets errno on a read error (EISDIR for a directory).  */
      int err = errno ? errno : EIO;
      fclose (f);
      free (buf);
      errno = err;
      return NULL;
    }
  fclose (f);
  buf[len] = '\0';
  if (lenp)
    *lenp = len;
  return buf;
}

int
ok_close_written (FILE *f, const char *path)
{
  int bad = ferror (f);
  int err = errno;
  if (fclose (f) != 0 && !bad)
    {
      bad = 1;
      err = errno;
    }
  if (!bad)
    return 0;
  ok_error ("cannot write '%s': %s", path, err ? strerror (err)
	    : "write error");
  return -1;
}
