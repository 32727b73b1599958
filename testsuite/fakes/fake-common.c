/* Bookkeeping shared by the fake vendor runtimes; see fake-common.h.  */

#define _GNU_SOURCE
#include "fake-common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
fake_log (struct fake_state *fs, const char *fmt, ...)
{
  if (fs->log_fd < 0)
    return;
  char line[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n > sizeof line - 2)
    n = sizeof line - 2;
  line[n++] = '\n';
  /* One write per line, so lines from threads stay whole.  */
  ssize_t w = write (fs->log_fd, line, (size_t) n);
  (void) w;
}

void
fake_bad (struct fake_state *fs, int sym, const char *fmt, ...)
{
  char msg[400];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  fs->bad_calls++;
  snprintf (fs->last_bad, sizeof fs->last_bad, "%s: %s",
	    fs->sym_names[sym], msg);
  fake_log (fs, "error %s", fs->last_bad);
}

void
fake_open_log (struct fake_state *fs, const char *var)
{
  const char *log = getenv (var);
  if (log == NULL || *log == '\0')
    return;
  fs->log_fd = open (log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fs->log_fd < 0)
    fprintf (stderr, "%s: cannot open %s: %s\n", fs->tag, log,
	     strerror (errno));
}

int
fake_sym_lookup (const struct fake_state *fs, const char *name, size_t len)
{
  for (int i = 0; i < fs->nsyms; i++)
    {
      const char *s = fs->sym_names[i];
      if (strlen (s) == len && strncmp (s, name, len) == 0)
	return i;
    }
  /* The API name of a versioned symbol: cuMemAlloc for cuMemAlloc_v2.  */
  if (fs->v2_alias)
    for (int i = 0; i < fs->nsyms; i++)
      {
	const char *s = fs->sym_names[i];
	size_t sl = strlen (s);
	if (sl == len + 3 && strncmp (s, name, len) == 0
	    && strcmp (s + len, "_v2") == 0)
	  return i;
      }
  return -1;
}

/* Parse one ITEM (sym[@N][=ERR], modified in place) into *F.  */
static bool
fake_parse_item (const struct fake_state *fs, char *item,
		 struct fake_fail *f)
{
  *f = (struct fake_fail) { -1, 0, -1 };
  char *eq = strchr (item, '=');
  if (eq != NULL)
    {
      *eq++ = '\0';
      char *e;
      long v = strtol (eq, &e, 0);
      if (*eq != '\0' && *e == '\0')
	f->err = (int) v;
      else if (fs->err_by_name != NULL)
	f->err = fs->err_by_name (eq);
      else
	return false;
      /* A fake with named errors has no negative ones.  */
      if (fs->err_by_name != NULL && f->err < 0)
	return false;
    }
  char *at = strchr (item, '@');
  if (at != NULL)
    {
      char *e;
      f->nth = strtol (at + 1, &e, 0);
      if (*e != '\0' || f->nth < 1)
	return false;
      *at = '\0';
    }
  f->sym = fake_sym_lookup (fs, item, strlen (item));
  return f->sym >= 0;
}

bool
fake_parse_fail (struct fake_state *fs, const char *spec)
{
  fs->num_fails = 0;
  memset (fs->calls_since_spec, 0,
	  (size_t) fs->nsyms * sizeof *fs->calls_since_spec);
  if (spec == NULL)
    return true;
  const char *p = spec;
  while (*p != '\0')
    {
      const char *end = strchr (p, ',');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);
      char item[256];
      struct fake_fail f;
      if (len == 0 || len >= fs->item_max || len >= sizeof item)
	goto bad;
      memcpy (item, p, len);
      item[len] = '\0';
      if (!fake_parse_item (fs, item, &f) || fs->num_fails == fs->max_fails)
	goto bad;
      fs->fails[fs->num_fails++] = f;
      p += len;
      if (*p == ',')
	p++;
    }
  return true;
 bad:
  fprintf (stderr, "%s: bad %s item in '%s'\n", fs->tag, fs->fail_var, spec);
  fs->num_fails = 0;
  return false;
}

const struct fake_fail *
fake_count_call (struct fake_state *fs, int sym, long *nth)
{
  fs->calls_total[sym]++;
  long n = ++fs->calls_since_spec[sym];
  if (nth != NULL)
    *nth = n;
  for (int i = 0; i < fs->num_fails; i++)
    if (fs->fails[i].sym == sym
	&& (fs->fails[i].nth == 0 || fs->fails[i].nth == n))
      return &fs->fails[i];
  return NULL;
}

void
fake_check_leaks (const char *tag, const char *check_var,
		  const char *const *kinds, size_t nkinds,
		  long (*outstanding) (const char *kind))
{
  const char *check = getenv (check_var);
  if (check == NULL || strcmp (check, "1") != 0)
    return;
  char msg[512];
  int len = 0;
  for (size_t i = 0; i < nkinds; i++)
    {
      long n = outstanding (kinds[i]);
      if (n != 0 && len < (int) sizeof msg)
	len += snprintf (msg + len, sizeof msg - (size_t) len, " %ld %s", n,
			 kinds[i]);
    }
  if (len > 0)
    {
      fprintf (stderr, "%s: leaked:%s\n", tag, msg);
      fflush (NULL);
      _exit (97);
    }
}
