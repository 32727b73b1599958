/* Bookkeeping shared by the fake vendor runtimes; see fake-common.h.  */

#define _GNU_SOURCE
#include "fake-common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* ------------------------------------------------------------------ */
/* Test-control queries.  */

int
fake_control_fail (struct fake_state *fs, const char *spec)
{
  pthread_mutex_lock (fs->lock);
  fs->configure ();
  bool ok = fake_parse_fail (fs, spec);
  pthread_mutex_unlock (fs->lock);
  return ok;
}

long
fake_control_calls (struct fake_state *fs, const char *sym)
{
  int i = fake_sym_lookup (fs, sym, strlen (sym));
  if (i < 0)
    return -1;
  pthread_mutex_lock (fs->lock);
  long n = fs->calls_total[i];
  pthread_mutex_unlock (fs->lock);
  return n;
}

long
fake_control_bad_calls (struct fake_state *fs, const char **last)
{
  pthread_mutex_lock (fs->lock);
  long n = fs->bad_calls;
  if (last != NULL)
    *last = fs->last_bad;
  pthread_mutex_unlock (fs->lock);
  return n;
}

void
fake_control_read (struct fake_state *fs, void *to, const void *from,
		   size_t size)
{
  pthread_mutex_lock (fs->lock);
  memcpy (to, from, size);
  pthread_mutex_unlock (fs->lock);
}

/* ------------------------------------------------------------------ */
/* Growing tables.  */

/* Make room in *TABLE (elements of ELEM_SIZE bytes, *CAP of them, N in
   use) for one more: double it, FIRST elements the first time.  False,
   the table unchanged, when out of memory.  */
static bool
fake_table_room (void *table, size_t *cap, size_t n, size_t elem_size,
		 size_t first)
{
  if (n < *cap)
    return true;
  void *old;
  memcpy (&old, table, sizeof old);
  size_t ncap = *cap ? 2 * *cap : first;
  void *grown = realloc (old, ncap * elem_size);
  if (grown == NULL)
    return false;
  memcpy (table, &grown, sizeof grown);
  *cap = ncap;
  return true;
}

/* ------------------------------------------------------------------ */
/* Records.  */

void *
fake_record_new (struct fake_records *r)
{
  if (!fake_table_room (&r->items, &r->cap, r->n, r->size, 64))
    return NULL;
  void *rec = (char *) r->items + r->n++ * r->size;
  memset (rec, 0, r->size);
  return rec;
}

void *
fake_record_get (const struct fake_records *r, long i)
{
  if (i < 0 || (size_t) i >= r->n)
    return NULL;
  return (char *) r->items + (size_t) i * r->size;
}

void
fake_records_free (struct fake_records *r)
{
  free (r->items);
  r->items = NULL;
  r->n = r->cap = 0;
}

int
fake_control_records (struct fake_state *fs, const struct fake_records *r)
{
  pthread_mutex_lock (fs->lock);
  int n = (int) r->n;
  pthread_mutex_unlock (fs->lock);
  return n;
}

/* ------------------------------------------------------------------ */
/* Live handles.  */

void *
fake_handle_new (struct fake_handles *h, int kind, size_t size)
{
  if (!fake_table_room (&h->live, &h->cap, h->n, sizeof *h->live, 64))
    return NULL;
  void *obj = calloc (1, size);
  if (obj == NULL)
    return NULL;
  h->live[h->n++] = (struct fake_handle) { obj, kind };
  h->count[kind]++;
  return obj;
}

/* The index of the live handle OBJ of KIND, or -1.  Recent handles are
   the likelier: search from the newest.  */
static long
fake_handle_index (const struct fake_handles *h, int kind, const void *obj)
{
  if (obj == NULL)
    return -1;
  for (size_t i = h->n; i-- > 0; )
    if (h->live[i].obj == obj && h->live[i].kind == kind)
      return (long) i;
  return -1;
}

void *
fake_handle_get (const struct fake_handles *h, int kind, const void *obj)
{
  long i = fake_handle_index (h, kind, obj);
  return i >= 0 ? h->live[i].obj : NULL;
}

bool
fake_handle_free (struct fake_handles *h, int kind, void *obj)
{
  long i = fake_handle_index (h, kind, obj);
  if (i < 0)
    return false;
  /* Keep the order: walks go from the newest.  */
  memmove (&h->live[i], &h->live[i + 1],
	   (h->n - (size_t) i - 1) * sizeof *h->live);
  h->n--;
  h->count[kind]--;
  free (obj);
  return true;
}

void *
fake_handle_next (const struct fake_handles *h, int kind, size_t *pos)
{
  while (*pos < h->n)
    {
      const struct fake_handle *e = &h->live[h->n - 1 - (*pos)++];
      if (e->kind == kind)
	return e->obj;
    }
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Device memory blocks.  */

/* The index of the first block whose base is above ADDR.  */
static size_t
fake_block_after (const struct fake_blocks *b, uintptr_t addr)
{
  size_t lo = 0, hi = b->n;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (b->live[mid].base <= addr)
	lo = mid + 1;
      else
	hi = mid;
    }
  return lo;
}

struct fake_block *
fake_block_find (const struct fake_blocks *b, uintptr_t addr)
{
  size_t i = fake_block_after (b, addr);
  if (i == 0)
    return NULL;
  struct fake_block *k = &b->live[i - 1];
  if (addr < k->base + (k->size > 0 ? k->size : 1))
    return k;
  return NULL;
}

void *
fake_block_new (struct fake_blocks *b, size_t size, size_t align, int kind,
		void *owner)
{
  if (!fake_table_room (&b->live, &b->cap, b->n, sizeof *b->live, 256))
    return NULL;
  void *p;
  size_t mapped = 0;
  if (size >= ((size_t) 1 << 20))
    {
      /* Big blocks (soft stacks, pool chunks) are mapped lazily, so that a
	 generous allocation costs no real memory until it is touched.  */
      mapped = (size + 4095) & ~(size_t) 4095;
      p = mmap (NULL, mapped, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED)
	return NULL;
    }
  else if (posix_memalign (&p, align, size > 0 ? size : 1) != 0)
    return NULL;
  size_t pos = fake_block_after (b, (uintptr_t) p);
  memmove (&b->live[pos + 1], &b->live[pos],
	   (b->n - pos) * sizeof *b->live);
  b->live[pos] = (struct fake_block) { (uintptr_t) p, size, mapped, kind,
				       owner };
  b->n++;
  b->count[kind]++;
  return p;
}

bool
fake_block_free (struct fake_blocks *b, uintptr_t addr, int kind,
		 struct fake_block *freed)
{
  struct fake_block *k = fake_block_find (b, addr);
  if (k == NULL || k->base != addr || k->kind != kind)
    return false;
  struct fake_block gone = *k;
  size_t i = (size_t) (k - b->live);
  memmove (&b->live[i], &b->live[i + 1], (b->n - i - 1) * sizeof *b->live);
  b->n--;
  b->count[kind]--;
  if (gone.mapped)
    munmap ((void *) gone.base, gone.mapped);
  else
    free ((void *) gone.base);
  if (freed != NULL)
    *freed = gone;
  return true;
}

long
fake_count_of (const struct fake_count *counts, size_t n,
	       const struct fake_handles *h, const struct fake_blocks *b,
	       const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (counts[i].name, name) == 0)
      {
	long live = 0;
	for (int k = 0; k < FAKE_MAX_KINDS; k++)
	  {
	    if (counts[i].handles & FAKE_KIND (k))
	      live += h->count[k];
	    if (counts[i].blocks & FAKE_KIND (k))
	      live += b->count[k];
	  }
	return live;
      }
  return -1;
}

long
fake_control_count (struct fake_state *fs, const struct fake_count *counts,
		    size_t n, const struct fake_handles *h,
		    const struct fake_blocks *b, const char *name,
		    long (*more) (const char *name))
{
  pthread_mutex_lock (fs->lock);
  long live = fake_count_of (counts, n, h, b, name);
  if (live < 0)
    live = more (name);
  pthread_mutex_unlock (fs->lock);
  return live;
}

void
fake_tables_release (struct fake_handles *h, struct fake_blocks *b)
{
  if (h->n == 0)
    {
      free (h->live);
      h->live = NULL;
      h->cap = 0;
    }
  if (b->n == 0)
    {
      free (b->live);
      b->live = NULL;
      b->cap = 0;
    }
}

/* ------------------------------------------------------------------ */
/* The leak report.  */

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
