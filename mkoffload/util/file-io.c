/* Reading whole files, and finishing written ones; see file-io.h.  */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "file-io.h"

char *
ok_read_fd (int fd, size_t *lenp)
{
  size_t len = 0, cap = 1 << 16;
  char *buf = xmalloc (cap);
  for (;;)
    {
      if (cap - len < 2)
	buf = xrealloc (buf, cap *= 2);
      ssize_t n = read (fd, buf + len, cap - len - 1);
      if (n < 0 && errno == EINTR)
	continue;
      if (n < 0)
	{
	  int err = errno;
	  free (buf);
	  errno = err;
	  return NULL;
	}
      if (n == 0)
	break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  if (lenp)
    *lenp = len;
  return buf;
}

char *
ok_read_file (const char *path, size_t *lenp)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *buf = ok_read_fd (fd, lenp);
  int err = errno;
  close (fd);
  errno = err;
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
