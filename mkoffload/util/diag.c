/* Diagnostics and allocation helpers; see diag.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

int ok_verbose;

static const char *progname = "offloadkit";
static unsigned error_count;

void
ok_set_progname (const char *name)
{
  progname = name;
}

const char *
ok_progname (void)
{
  return progname;
}

unsigned
ok_error_count (void)
{
  return error_count;
}

/* Format the whole line first and write it with one call, so that output
   of concurrently running subprocesses cannot split it.  */
static void
report (const char *kind, const char *fmt, va_list ap)
{
  char buf[4096];
  int n = snprintf (buf, sizeof buf, "%s: %s", progname, kind);
  if (n < 0)
    n = 0;
  if ((size_t) n < sizeof buf)
    {
      int m = vsnprintf (buf + n, sizeof buf - n, fmt, ap);
      if (m > 0)
	n += m;
    }
  if ((size_t) n >= sizeof buf - 1)
    n = sizeof buf - 2;
  buf[n++] = '\n';
  fflush (stdout);
  fwrite (buf, 1, n, stderr);
  fflush (stderr);
}

void
ok_verror (const char *fmt, va_list ap)
{
  error_count++;
  report ("error: ", fmt, ap);
}

void
ok_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  ok_verror (fmt, ap);
  va_end (ap);
}

void
ok_fatal (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  ok_verror (fmt, ap);
  va_end (ap);
  exit (1);
}

void
ok_warning (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  report ("warning: ", fmt, ap);
  va_end (ap);
}

void
ok_inform (const char *fmt, ...)
{
  va_list ap;
  if (!ok_verbose)
    return;
  va_start (ap, fmt);
  report ("", fmt, ap);
  va_end (ap);
}

static void
out_of_memory (size_t size)
{
  ok_fatal ("out of memory allocating %zu bytes", size);
}

void *
xmalloc (size_t size)
{
  void *p = malloc (size ? size : 1);
  if (!p)
    out_of_memory (size);
  return p;
}

void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);
  if (!p)
    out_of_memory (n * size);
  return p;
}

void *
xrealloc (void *ptr, size_t size)
{
  void *p = realloc (ptr, size ? size : 1);
  if (!p)
    out_of_memory (size);
  return p;
}

char *
xstrdup (const char *s)
{
  return xstrndup (s, strlen (s));
}

char *
xstrndup (const char *s, size_t n)
{
  char *p = xmalloc (n + 1);
  memcpy (p, s, n);
  p[n] = '\0';
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *p;
  va_start (ap, fmt);
  int n = vasprintf (&p, fmt, ap);
  va_end (ap);
  if (n < 0)
    out_of_memory (strlen (fmt));
  return p;
}
