/* Reading whole files, and finishing written ones; see file-io.h.  */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Why a file of mode MODE, which is no regular file, is not read.  */
static const char *
not_regular_reason (mode_t mode)
{
  if (S_ISDIR (mode))
    return strerror (EISDIR);
  if (S_ISFIFO (mode))
    return "it is a FIFO, not a regular file";
  if (S_ISCHR (mode))
    return "it is a character device, not a regular file";
  if (S_ISBLK (mode))
    return "it is a block device, not a regular file";
  if (S_ISSOCK (mode))
    return "it is a socket, not a regular file";
  return "it is not a regular file";
}

/* ok_open_regular's answer for a file of status ST that is no regular
   file.  */
static int
refuse_not_regular (const struct stat *st, const char **why)
{
  *why = not_regular_reason (st->st_mode);
  errno = S_ISDIR (st->st_mode) ? EISDIR : EINVAL;
  return -2;
}

int
ok_open_regular (const char *path, struct stat *st, const char **why)
{
  if (stat (path, st) != 0)
    {
      *why = strerror (errno);
      return -1;
    }
  if (!S_ISREG (st->st_mode))
    return refuse_not_regular (st, why);
  /* Should PATH be replaced by a FIFO after the stat, O_NONBLOCK keeps
     the open from waiting for a writer, and fstat tells what it is.  */
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    {
      *why = strerror (errno);
      return -1;
    }
  if (fstat (fd, st) == 0 && !S_ISREG (st->st_mode))
    {
      close (fd);
      return refuse_not_regular (st, why);
    }
  /* Back to blocking reads: O_NONBLOCK means nothing for a regular file
     on Linux, but POSIX leaves that open.  */
  int flags = fcntl (fd, F_GETFL);
  if (flags != -1)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

char *
ok_read_file (const char *path, size_t *lenp, const char **why)
{
  struct stat st;
  const char *reason;
  int fd = ok_open_regular (path, &st, &reason);
  if (fd < 0)
    {
      if (why)
	*why = reason;
      return NULL;
    }
  char *buf = ok_read_fd (fd, lenp);
  int err = errno;
  if (!buf && why)
    *why = strerror (err);
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

int
ok_write_file (const char *path, const void *data, size_t len)
{
  FILE *f = fopen (path, "w");
  if (!f)
    {
      ok_error ("cannot write '%s': %s", path, strerror (errno));
      return -1;
    }
  errno = 0;
  fwrite (data, 1, len, f);
  return ok_close_written (f, path);
}
