/* OFFLOADKIT_INFO and OFFLOADKIT_PROFILE (see trace.h).

   INFO lines go to stderr with one write(2) each, so that lines of
   different threads never mix.  Their formats are stable, for people and
   scripts alike (ORD = the device's number within this plugin, i.e.
   libgomp's target id among the plugin's devices, not omp_get_device_num;
   BACKEND = "cuda", "emulated", ...; times in milliseconds with three
   decimals):

     offloadkit-nvptx: device ORD (BACKEND): image loaded: WHAT, N functions, M variables, T ms
     offloadkit-nvptx: device ORD (BACKEND): launch KERNEL grid XxYxZ block XxYxZ, T ms
     offloadkit-nvptx: device ORD (BACKEND): launch KERNEL grid XxYxZ block XxYxZ, T ms, nowait
     offloadkit-nvptx: device ORD (BACKEND): host->device B bytes, T ms (R GB/s)

   ("function"/"variable" without the s for exactly one; the direction is
   one of host->device, device->host, device->device; the rate is left out,
   with its parentheses, for a transfer that took no measurable time.)
   Control characters in names are shown as '?'.

   The profile is a Chrome trace in JSON object format, written as events
   happen (one write per event, under a mutex, nothing held back), and
   completed with the closing brackets by a destructor, which also runs
   when the program ends through exit () (libgomp's fatal errors do).  A
   program killed by a signal or ended by _exit () leaves the file
   without them: every event up to then is there, but the file is not
   valid JSON until "]}" is appended.  Times are microseconds since the
   plugin started tracing; each device is a track (tid = its number).

   The file is created at the plugin's first event, not before: libgomp
   loads every plugin it finds, and one without devices (or without
   events) must leave the file alone.  Each plugin is a shared object with
   its own copy of this file, so when two plugins of one process have
   events, the second would truncate and overwrite the first's profile.
   The header therefore names the process (pid and start time), and a
   plugin that finds the file already begun by its own process writes its
   profile to FILE with ".PLUGIN" inserted before the extension instead
   (p.json, p.gcn.json).  */

/* O_CLOEXEC, clock_gettime.  */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin-core.h"
#include "trace.h"

unsigned ok_trace_mode;

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

/* Guards everything below: the profile file and what was written to it.  */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
/* OFFLOADKIT_PROFILE's value (a copy) while the profile is still to be
   opened, at the first event; NULL when not asked for, once opened, and
   after a failure.  */
static char *trace_path;
static int trace_fd = -1;	/* The profile; -1 when not (or no more).  */
/* Set (atomically, for trace_begin's unlocked read) when no profile will
   be written any more: it could not be opened or written, or the
   destructor completed it.  Events are then not even formatted.  */
static bool trace_profile_off;
/* The process that writes the profile.  A child made by fork () inherits
   the descriptor but must not write: its events and closing brackets
   would corrupt the parent's file; nor may it open the profile itself
   when the parent has not yet.  */
static pid_t trace_pid;
static uint64_t trace_base;	/* ok_trace_now () at ok_trace_init.  */
/* Devices whose track got its "thread_name" metadata event; more devices
   than this just go unnamed.  */
#define TRACE_NAMED_MAX 4096
static unsigned char trace_named[TRACE_NAMED_MAX / 8];

uint64_t
ok_trace_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* A growable string: lines and events are built in one, then written
   with one call.  Starts on the stack; grows on the heap if needed.  A
   failed allocation truncates (a shorter event beats none).  */
struct tbuf
{
  char *s;
  size_t len, cap;
  bool heap;
  char small[512];
};

static void
tb_init (struct tbuf *b)
{
  b->s = b->small;
  b->len = 0;
  b->cap = sizeof b->small;
  b->heap = false;
  b->s[0] = '\0';
}

static void
tb_free (struct tbuf *b)
{
  if (b->heap)
    free (b->s);
}

/* Room for N more bytes and the NUL; false if there is none.  */
static bool
tb_reserve (struct tbuf *b, size_t n)
{
  if (b->len + n < b->cap)
    return true;
  size_t cap = b->cap * 2;
  while (cap <= b->len + n)
    cap *= 2;
  char *s = b->heap ? realloc (b->s, cap) : malloc (cap);
  if (s == NULL)
    return false;
  if (!b->heap)
    memcpy (s, b->s, b->len + 1);
  b->s = s;
  b->cap = cap;
  b->heap = true;
  return true;
}

__attribute__ ((format (printf, 2, 3))) static void
tb_printf (struct tbuf *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n >= b->cap - b->len)
    {
      if (!tb_reserve (b, (size_t) n))
	{
	  /* vsnprintf wrote what fitted.  */
	  b->len = b->cap - 1;
	  return;
	}
      va_start (ap, fmt);
      vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
      va_end (ap);
    }
  b->len += (size_t) n;
}

static void
tb_putc (struct tbuf *b, char c)
{
  if (!tb_reserve (b, 1))
    return;
  b->s[b->len++] = c;
  b->s[b->len] = '\0';
}

/* S for an INFO line: control characters, which could end the line or
   disturb a terminal, become '?'.  */
static void
tb_plain (struct tbuf *b, const char *s)
{
  for (; *s != '\0'; s++)
    {
      unsigned char c = (unsigned char) *s;
      tb_putc (b, c < 0x20 || c == 0x7f ? '?' : (char) c);
    }
}

/* The length of the valid UTF-8 sequence at S (1 to 4), or 0 if S does
   not start one (overlong forms, surrogates and code points above
   U+10FFFF are not valid).  */
static size_t
utf8_len (const unsigned char *s)
{
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;	/* Range of the second byte.  */
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      n = 3;
      if (c == 0xe0)
	lo = 0xa0;
      else if (c == 0xed)
	hi = 0x9f;
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      n = 4;
      if (c == 0xf0)
	lo = 0x90;
      else if (c == 0xf4)
	hi = 0x8f;
    }
  else
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return n;
}

/* S as a JSON string, quotes included.  Quotes, backslashes and control
   characters are escaped, valid UTF-8 is kept, and any other byte
   becomes the code point of the same value (\u00XX, as if Latin-1), so
   the file is valid JSON whatever a kernel name holds.  */
static void
tb_json (struct tbuf *b, const char *s)
{
  tb_putc (b, '"');
  const unsigned char *u = (const unsigned char *) s;
  while (*u != '\0')
    {
      unsigned char c = *u;
      size_t n;
      if (c == '"' || c == '\\')
	{
	  tb_putc (b, '\\');
	  tb_putc (b, (char) c);
	  u++;
	}
      else if (c < 0x20 || c == 0x7f)
	{
	  tb_printf (b, "\\u%04x", c);
	  u++;
	}
      else if (c < 0x80)
	{
	  tb_putc (b, (char) c);
	  u++;
	}
      else if ((n = utf8_len (u)) > 0)
	for (; n > 0; n--)
	  tb_putc (b, (char) *u++);
      else
	{
	  tb_printf (b, "\\u%04x", c);
	  u++;
	}
    }
  tb_putc (b, '"');
}

/* Write all of S; false on an error.  */
static bool
write_all (int fd, const char *s, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, s, n);
      if (w < 0 && errno == EINTR)
	continue;
      if (w <= 0)
	return false;
      s += w;
      n -= (size_t) w;
    }
  return true;
}

/* Microseconds since ok_trace_init, for "ts" and "dur".  */
static double
trace_us (uint64_t t)
{
  return t > trace_base ? (double) (t - trace_base) / 1e3 : 0.0;
}

static double
trace_ms (uint64_t start, uint64_t end)
{
  return end > start ? (double) (end - start) / 1e6 : 0.0;
}

/* No more profile: stop formatting events.  */
static void
profile_stop (void)
{
  __atomic_store_n (&trace_profile_off, true, __ATOMIC_RELAXED);
  free (trace_path);
  trace_path = NULL;
}

/* The process's start time in clock ticks since boot (field 22 of
   /proc/self/stat), which with the pid tells this process from any
   other that ever wrote the file; 0 if unknown.  */
static unsigned long long
process_start_time (void)
{
  char buf[1024];
  int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* Field 2, the command name, is in parentheses and may hold anything,
     spaces and ')' included: count from the last ')', which ends field
     2, so that field 22 is the 20th after it.  */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  for (int field = 2; field < 22; field++)
    {
      p = strchr (p + 1, ' ');
      if (p == NULL)
	return 0;
    }
  return strtoull (p + 1, NULL, 10);
}

/* PATH with ".PLUGIN" inserted before the extension of its last
   component (or appended when it has none), malloced; NULL when out of
   memory.  */
static char *
profile_own_path (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base != NULL ? base + 1 : path;
  const char *dot = strrchr (base, '.');
  /* A leading dot starts a hidden file's name, not an extension.  */
  size_t cut = dot != NULL && dot != base ? (size_t) (dot - path)
					  : strlen (path);
  size_t len = strlen (path) + 1 + strlen (ok_plugin.name) + 1;
  char *own = malloc (len);
  if (own != NULL)
    snprintf (own, len, "%.*s.%s%s", (int) cut, path, ok_plugin.name,
	      path + cut);
  return own;
}

/* Open trace_path (PATH) and write the profile's header; the caller
   holds trace_lock.  If the file was begun by another plugin of this
   process, open the plugin's own file instead (see the top of the file).
   False after a message; no profile is written then.  */
static bool
profile_open (void)
{
  const char *path = trace_path;
  char *own = NULL;
  struct tbuf head;
  tb_init (&head);
  /* First the part that says which process wrote the file.  */
  tb_printf (&head, "{\"displayTimeUnit\":\"ms\",\"otherData\":"
	     "{\"process\":\"%d %llu\"},", (int) trace_pid,
	     process_start_time ());
  size_t id_len = head.len;
  tb_printf (&head, "\"traceEvents\":[\n"
	     "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
	     "\"tid\":0,\"args\":{\"name\":\"offloadkit-%s\"}}",
	     (int) trace_pid, ok_plugin.name);

  /* A regular file (or a new one) is opened for reading as well, to see
     whose it is; anything else (a pipe, /dev/stderr) only for writing,
     as reading could block or eat input.  */
  struct stat st;
  bool exists = stat (path, &st) == 0;
  bool regular = !exists || S_ISREG (st.st_mode);
  int fd = -1;
  bool readable = false;
  /* Never wait in open: a FIFO would block until some process reads it,
     and one that nobody reads would block the program for ever.  Then
     writes block as usual, once somebody reads.  */
  if (regular)
    {
      fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
      readable = fd >= 0;
    }
  if (fd < 0)
    fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
  bool no_reader = (fd < 0 && errno == ENXIO && exists
		    && S_ISFIFO (st.st_mode));
  if (fd >= 0)
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
  if (fd >= 0 && regular)
    {
      /* The other plugin may be opening the file in another thread right
	 now: hold its header back until ours is written.  flock's lock
	 belongs to the open file, so it also excludes another
	 descriptor of this process (fcntl's would not).  */
      while (flock (fd, LOCK_EX) != 0 && errno == EINTR)
	;
      char *seen = malloc (id_len);
      bool taken = (readable && seen != NULL
		    && pread (fd, seen, id_len, 0) == (ssize_t) id_len
		    && memcmp (seen, head.s, id_len) == 0);
      free (seen);
      if (taken)
	{
	  close (fd);		/* Which also drops the lock.  */
	  fd = -1;
	  own = profile_own_path (path);
	  if (own == NULL)
	    errno = ENOMEM;
	  else
	    {
	      path = own;
	      fd = open (own, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	    }
	}
      else if (ftruncate (fd, 0) != 0)
	{
	  int err = errno;
	  close (fd);
	  fd = -1;
	  errno = err;
	}
    }

  bool ok = false;
  if (no_reader)
    ok_error ("the profile %s (OFFLOADKIT_PROFILE) is a FIFO that no"
	      " process reads; no profile is written", path);
  else if (fd < 0)
    ok_error ("cannot create the profile %s (OFFLOADKIT_PROFILE): %s; no"
	      " profile is written", path, strerror (errno));
  else if (!write_all (fd, head.s, head.len))
    {
      ok_error ("cannot write the profile %s (OFFLOADKIT_PROFILE): %s; no"
		" profile is written", path, strerror (errno));
      close (fd);
    }
  else
    {
      /* Closing would drop the lock too, but the descriptor stays.  */
      if (regular && own == NULL)
	flock (fd, LOCK_UN);
      trace_fd = fd;
      ok = true;
    }
  free (own);
  tb_free (&head);
  if (ok)
    {
      free (trace_path);
      trace_path = NULL;
    }
  else
    profile_stop ();
  return ok;
}

/* Append B to the profile, with the separator from the previous event,
   opening the profile first at the first event; the caller holds
   trace_lock.  A failed write closes the profile after one message: a
   half-written event would break the JSON anyway.  */
static void
profile_put (const struct tbuf *b)
{
  if (getpid () != trace_pid)
    return;
  if (trace_fd < 0 && (trace_path == NULL || !profile_open ()))
    return;
  if (!write_all (trace_fd, ",\n", 2) || !write_all (trace_fd, b->s, b->len))
    {
      ok_error ("cannot write the profile (OFFLOADKIT_PROFILE): %s;"
		" profiling stops", strerror (errno));
      close (trace_fd);
      trace_fd = -1;
      profile_stop ();
    }
}

/* Name device ORD's track, once; the caller holds trace_lock.  */
static void
profile_name_track (int ord, const char *backend)
{
  if (ord < 0 || ord >= TRACE_NAMED_MAX
      || (trace_named[ord / 8] & (1u << (ord % 8))))
    return;
  trace_named[ord / 8] |= (unsigned char) (1u << (ord % 8));
  struct tbuf b, n;
  tb_init (&b);
  tb_init (&n);
  tb_printf (&n, "device %d (%s)", ord, backend);
  tb_printf (&b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
	     "\"tid\":%d,\"args\":{\"name\":", (int) trace_pid, ord);
  tb_json (&b, n.s);
  tb_printf (&b, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\","
	     "\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
	     (int) trace_pid, ord, ord);
  profile_put (&b);
  tb_free (&n);
  tb_free (&b);
}

/* One event being built: its INFO line and, when profiling, its
   profile event.  */
struct trace_event
{
  int ord;
  const char *backend;
  bool profile;
  struct tbuf line, event;
};

/* Start an event of device ORD of BACKEND in [START, END]: the INFO
   line's common start, and the profile event's up to its "args" object
   (NAME and CAT are its name and category).  The caller adds the line's
   text and the event's arguments (non-empty: trace_end adds the backend
   after a comma).  */
static void
trace_begin (struct trace_event *e, int ord, const char *backend,
	     const char *name, const char *cat, uint64_t start, uint64_t end)
{
  e->ord = ord;
  e->backend = backend;
  e->profile = ((ok_trace_mode & OK_TRACE_PROFILE) != 0
		&& !__atomic_load_n (&trace_profile_off, __ATOMIC_RELAXED));
  tb_init (&e->line);
  tb_init (&e->event);
  tb_printf (&e->line, "offloadkit-%s: device %d (", ok_plugin.name, ord);
  tb_plain (&e->line, backend);
  tb_printf (&e->line, "): ");
  if (e->profile)
    {
      tb_printf (&e->event, "{\"ph\":\"X\",\"name\":");
      tb_json (&e->event, name);
      tb_printf (&e->event, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,"
		 "\"pid\":%d,\"tid\":%d,\"args\":{", cat, trace_us (start),
		 end > start ? (double) (end - start) / 1e3 : 0.0,
		 (int) trace_pid, ord);
    }
}

/* Complete E: the INFO line goes to stderr, the event (its arguments
   ended with the backend) to the profile.  */
static void
trace_end (struct trace_event *e)
{
  if (ok_trace_mode & OK_TRACE_INFO)
    {
      tb_putc (&e->line, '\n');
      write_all (STDERR_FILENO, e->line.s, e->line.len);
    }
  if (e->profile)
    {
      tb_printf (&e->event, ",\"backend\":");
      tb_json (&e->event, e->backend);
      tb_printf (&e->event, "}}");
      pthread_mutex_lock (&trace_lock);
      profile_name_track (e->ord, e->backend);
      profile_put (&e->event);
      pthread_mutex_unlock (&trace_lock);
    }
  tb_free (&e->line);
  tb_free (&e->event);
}

void
ok_trace_image (int ord, const char *backend, const char *what,
		size_t nfuncs, size_t nvars, uint64_t start, uint64_t end)
{
  if (!ok_trace_on ())
    return;
  struct trace_event e;
  trace_begin (&e, ord, backend, "image load", "image", start, end);
  tb_printf (&e.line, "image loaded: ");
  tb_plain (&e.line, what);
  tb_printf (&e.line, ", %zu function%s, %zu variable%s, %.3f ms", nfuncs,
	     nfuncs == 1 ? "" : "s", nvars, nvars == 1 ? "" : "s",
	     trace_ms (start, end));
  if (e.profile)
    {
      tb_printf (&e.event, "\"what\":");
      tb_json (&e.event, what);
      tb_printf (&e.event, ",\"functions\":%zu,\"variables\":%zu", nfuncs,
		 nvars);
    }
  trace_end (&e);
}

void
ok_trace_launch (int ord, const char *backend, const char *kernel,
		 const unsigned grid[3], const unsigned block[3], bool async,
		 uint64_t start, uint64_t end)
{
  if (!ok_trace_on ())
    return;
  struct trace_event e;
  trace_begin (&e, ord, backend, kernel, "launch", start, end);
  tb_printf (&e.line, "launch ");
  tb_plain (&e.line, kernel);
  tb_printf (&e.line, " grid %ux%ux%u block %ux%ux%u, %.3f ms%s", grid[0],
	     grid[1], grid[2], block[0], block[1], block[2],
	     trace_ms (start, end), async ? ", nowait" : "");
  if (e.profile)
    tb_printf (&e.event, "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
	       "\"async\":%s", grid[0], grid[1], grid[2], block[0], block[1],
	       block[2], async ? "true" : "false");
  trace_end (&e);
}

void
ok_trace_transfer (int ord, const char *backend, enum ok_trace_dir dir,
		   size_t bytes, uint64_t start, uint64_t end)
{
  if (!ok_trace_on ())
    return;
  static const char *const names[] = {
    [OK_TRACE_H2D] = "host->device",
    [OK_TRACE_D2H] = "device->host",
    [OK_TRACE_D2D] = "device->device"
  };
  const char *name = (unsigned) dir < 3 ? names[dir] : "transfer";
  struct trace_event e;
  trace_begin (&e, ord, backend, name, "transfer", start, end);
  tb_printf (&e.line, "%s %zu bytes, %.3f ms", name, bytes,
	     trace_ms (start, end));
  if (end > start)
    /* Bytes per nanosecond are GB/s.  */
    tb_printf (&e.line, " (%.2f GB/s)",
	       (double) bytes / (double) (end - start));
  if (e.profile)
    tb_printf (&e.event, "\"bytes\":%zu", bytes);
  trace_end (&e);
}

/* Environment variable NAME's value when it is set and not empty; NULL
   otherwise.  */
static const char *
trace_env (const char *name)
{
  const char *v = getenv (name);
  if (v == NULL || *v == '\0')
    return NULL;
  return v;
}

static void
trace_init_once (void)
{
  unsigned mode = 0;
  trace_base = ok_trace_now ();
  trace_pid = getpid ();

  /* Set, not empty and not "0".  */
  const char *info = trace_env ("OFFLOADKIT_INFO");
  if (info != NULL && strcmp (info, "0") != 0)
    mode |= OK_TRACE_INFO;

  /* Any value not empty is a file name, "0" included.  The file is
     opened at the first event (profile_put).  */
  const char *path = trace_env ("OFFLOADKIT_PROFILE");
  if (path != NULL)
    {
      trace_path = strdup (path);
      if (trace_path == NULL)
	ok_error ("out of memory; no profile is written"
		  " (OFFLOADKIT_PROFILE)");
      else
	mode |= OK_TRACE_PROFILE;
    }
  ok_trace_mode = mode;
}

void
ok_trace_init (void)
{
  pthread_once (&trace_once, trace_init_once);
}

void
ok_trace_finish (void)
{
  pthread_mutex_lock (&trace_lock);
  /* A profile not opened by now never will be: a plugin without events
     leaves the file alone.  */
  profile_stop ();
  if (trace_fd >= 0 && getpid () != trace_pid)
    {
      /* A forked child: the file is its parent's to complete.  */
      close (trace_fd);
      trace_fd = -1;
    }
  if (trace_fd >= 0)
    {
      static const char end[] = "\n]}\n";
      if (!write_all (trace_fd, end, sizeof end - 1) || close (trace_fd) != 0)
	ok_error ("cannot complete the profile (OFFLOADKIT_PROFILE): %s",
		  strerror (errno));
      trace_fd = -1;
    }
  pthread_mutex_unlock (&trace_lock);
}

/* Complete the profile when the plugin is unloaded and when the process
   ends through exit (), after libgomp's own atexit handler has finalised
   the devices.  Events that come even later are dropped.  */
__attribute__ ((destructor)) static void
trace_fini (void)
{
  ok_trace_finish ();
}
