/* mkoffload's cache directory; see cache.h.  */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "diag.h"
#include "tempfile.h"

void
mko_hash_init (struct mko_hash *h)
{
  h->h = ((unsigned __int128) 0x6c62272e07bb0142ull << 64)
	 | 0x62b821756295c58dull;
}

void
mko_hash_bytes (struct mko_hash *h, const void *data, size_t len)
{
  const unsigned __int128 prime = ((unsigned __int128) 1 << 88) + 0x13b;
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++)
    {
      h->h ^= p[i];
      h->h *= prime;
    }
}

void
mko_hash_str (struct mko_hash *h, const char *s)
{
  mko_hash_bytes (h, s, strlen (s) + 1);
}

char *
mko_hash_hex (const struct mko_hash *h)
{
  return xasprintf ("%016llx%016llx", (unsigned long long) (h->h >> 64),
		    (unsigned long long) h->h);
}

/* mkdir -p DIR (new directories private to the user).  0, or -1.  */
static int
make_dirs (const char *dir)
{
  struct stat st;
  if (stat (dir, &st) == 0)
    return S_ISDIR (st.st_mode) ? 0 : -1;
  char *copy = xstrdup (dir);
  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
	*p = '\0';
	if (mkdir (copy, 0700) < 0 && errno != EEXIST)
	  {
	    free (copy);
	    return -1;
	  }
	*p = '/';
      }
  int rc = mkdir (copy, 0700) < 0 && errno != EEXIST ? -1 : 0;
  free (copy);
  return rc;
}

char *
mko_cache_dir (void)
{
  char *dir = NULL;
  const char *d = getenv ("OFFLOADKIT_CACHE_DIR");
  if (d)
    dir = *d ? xstrdup (d) : NULL;
  /* The XDG specification says to ignore a relative path.  */
  else if ((d = getenv ("XDG_CACHE_HOME")) && d[0] == '/')
    dir = xasprintf ("%s/offloadkit", d);
  else if ((d = getenv ("HOME")) && d[0] == '/')
    dir = xasprintf ("%s/.cache/offloadkit", d);
  if (dir && make_dirs (dir) < 0)
    {
      ok_inform ("cannot use the cache directory '%s': %s", dir,
		 strerror (errno));
      free (dir);
      dir = NULL;
    }
  return dir;
}

int
mko_cache_limit (uint64_t *limit)
{
  const char *v = getenv ("OFFLOADKIT_CACHE_SIZE");
  *limit = (uint64_t) 256 << 20;
  if (!v || !*v)
    return 0;
  char *end;
  errno = 0;
  unsigned long long n = strtoull (v, &end, 10);
  unsigned shift = 0;
  switch (*end)
    {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
  if (errno || end == v || *end || v[0] == '-' || n > (UINT64_MAX >> shift))
    {
      ok_error ("OFFLOADKIT_CACHE_SIZE: expected a size such as 256M (a"
		" number of bytes, or with K, M or G), found '%s'", v);
      return -1;
    }
  *limit = (uint64_t) n << shift;
  return 0;
}

int
mko_cache_put (const char *dir, const char *dest, const void *data,
	       size_t len)
{
  char *tmp = xasprintf ("%s/.tmp-XXXXXX", dir);
  sigset_t old_mask;
  int rc = -1;
  ok_tempfile_block_signals (&old_mask);
  int fd = mkstemp (tmp);
  if (fd >= 0)
    {
      size_t done = 0;
      while (done < len)
	{
	  ssize_t w = write (fd, (const char *) data + done, len - done);
	  if (w < 0 && errno == EINTR)
	    continue;
	  if (w <= 0)
	    break;
	  done += w;
	}
      if (close (fd) == 0 && done == len && rename (tmp, dest) == 0)
	rc = 0;
      else
	unlink (tmp);
    }
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  free (tmp);
  return rc;
}
