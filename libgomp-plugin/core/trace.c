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
#include "text-buf.h"
#include "trace-profile.h"
#include "trace.h"

unsigned ok_trace_mode;

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static uint64_t trace_base;	/* ok_trace_now () at ok_trace_init.  */

uint64_t
ok_trace_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
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

/* One event being built: its INFO line and, when profiling, its
   profile event.  */
struct trace_event
{
  int ord;
  const char *backend;
  bool profile;
  struct ok_tbuf line, event;
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
		&& ok_profile_on ());
  ok_tb_init (&e->line);
  ok_tb_init (&e->event);
  ok_tb_printf (&e->line, "offloadkit-%s: device %d (", ok_plugin.name, ord);
  ok_tb_plain (&e->line, backend);
  ok_tb_printf (&e->line, "): ");
  if (e->profile)
    {
      ok_tb_printf (&e->event, "{\"ph\":\"X\",\"name\":");
      ok_tb_json (&e->event, name);
      ok_tb_printf (&e->event, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,"
		 "\"pid\":%d,\"tid\":%d,\"args\":{", cat, trace_us (start),
		 end > start ? (double) (end - start) / 1e3 : 0.0,
		 ok_profile_pid (), ord);
    }
}

/* Complete E: the INFO line goes to stderr, the event (its arguments
   ended with the backend) to the profile.  */
static void
trace_end (struct trace_event *e)
{
  if (ok_trace_mode & OK_TRACE_INFO)
    {
      ok_tb_putc (&e->line, '\n');
      ok_write_all (STDERR_FILENO, e->line.s, e->line.len);
    }
  if (e->profile)
    {
      ok_tb_printf (&e->event, ",\"backend\":");
      ok_tb_json (&e->event, e->backend);
      ok_tb_printf (&e->event, "}}");
      ok_profile_event (e->ord, e->backend, &e->event);
    }
  ok_tb_free (&e->line);
  ok_tb_free (&e->event);
}

void
ok_trace_image (int ord, const char *backend, const char *what,
		size_t nfuncs, size_t nvars, uint64_t start, uint64_t end)
{
  if (!ok_trace_on ())
    return;
  struct trace_event e;
  trace_begin (&e, ord, backend, "image load", "image", start, end);
  ok_tb_printf (&e.line, "image loaded: ");
  ok_tb_plain (&e.line, what);
  ok_tb_printf (&e.line, ", %zu function%s, %zu variable%s, %.3f ms", nfuncs,
	     nfuncs == 1 ? "" : "s", nvars, nvars == 1 ? "" : "s",
	     trace_ms (start, end));
  if (e.profile)
    {
      ok_tb_printf (&e.event, "\"what\":");
      ok_tb_json (&e.event, what);
      ok_tb_printf (&e.event, ",\"functions\":%zu,\"variables\":%zu", nfuncs,
		 nvars);
    }
  trace_end (&e);
}

void
ok_trace_memory (const char *backend, int n, unsigned usm)
{
  char line[256];
  const char *what = ((usm & OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY)
		      && (usm & OK_GOMP_REQUIRES_SELF_MAPS)
		      ? "unified_shared_memory and self_maps"
		      : (usm & OK_GOMP_REQUIRES_SELF_MAPS) ? "self_maps"
		      : "unified_shared_memory");
  if (usm != 0)
    snprintf (line, sizeof line, "%d %s device%s: the host's memory (the"
	      " program requires %s)", n, backend, n == 1 ? "" : "s", what);
  else
    snprintf (line, sizeof line, "%d %s device%s: memory of %s own", n,
	      backend, n == 1 ? "" : "s", n == 1 ? "its" : "their");
  OK_DEBUG ("%s", line);
  if (ok_trace_mode & OK_TRACE_INFO)
    {
      struct ok_tbuf b;
      ok_tb_init (&b);
      ok_tb_printf (&b, "offloadkit-%s: %s\n", ok_plugin.name, line);
      ok_write_all (STDERR_FILENO, b.s, b.len);
      ok_tb_free (&b);
    }
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
  ok_tb_printf (&e.line, "launch ");
  ok_tb_plain (&e.line, kernel);
  ok_tb_printf (&e.line, " grid %ux%ux%u block %ux%ux%u, %.3f ms%s", grid[0],
	     grid[1], grid[2], block[0], block[1], block[2],
	     trace_ms (start, end), async ? ", nowait" : "");
  if (e.profile)
    ok_tb_printf (&e.event, "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
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
  ok_tb_printf (&e.line, "%s %zu bytes, %.3f ms", name, bytes,
	     trace_ms (start, end));
  if (end > start)
    /* Bytes per nanosecond are GB/s.  */
    ok_tb_printf (&e.line, " (%.2f GB/s)",
	       (double) bytes / (double) (end - start));
  if (e.profile)
    ok_tb_printf (&e.event, "\"bytes\":%zu", bytes);
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

  /* Set, not empty and not "0".  */
  const char *info = trace_env ("OFFLOADKIT_INFO");
  if (info != NULL && strcmp (info, "0") != 0)
    mode |= OK_TRACE_INFO;

  /* Any value not empty is a file name, "0" included.  The file is
     opened at the first event (trace-profile.c).  */
  const char *path = trace_env ("OFFLOADKIT_PROFILE");
  if (path != NULL)
    {
      if (ok_profile_start (path))
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
  ok_profile_finish ();
}

/* Complete the profile when the plugin is unloaded and when the process
   ends through exit (), after libgomp's own atexit handler has finalised
   the devices.  Events that come even later are dropped.  */
__attribute__ ((destructor)) static void
trace_fini (void)
{
  ok_trace_finish ();
}
