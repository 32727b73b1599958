/* OFFLOADKIT_PROFILE's file (see trace.h and the top of trace.c): opened
   at the first event, each event appended with one write, completed at
   the end; one per process, or one per plugin when both of ours have
   events.  */

/* O_CLOEXEC.  */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin-core.h"
#include "text-buf.h"
#include "trace-profile.h"

/* Guards everything below: the profile file and what was written to it.  */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
/* OFFLOADKIT_PROFILE's value (a copy) while the profile is still to be
   opened, at the first event; NULL when not asked for, once opened, and
   after a failure.  */
static char *trace_path;
static int trace_fd = -1;	/* The profile; -1 when not (or no more).  */
/* Set (atomically, for ok_profile_on's unlocked read) when no profile will
   be written any more: it could not be opened or written, or the
   destructor completed it.  Events are then not even formatted.  */
static bool trace_profile_off;
/* The process that writes the profile.  A child made by fork () inherits
   the descriptor but must not write: its events and closing brackets
   would corrupt the parent's file; nor may it open the profile itself
   when the parent has not yet.  */
static pid_t trace_pid;
/* Devices whose track got its "thread_name" metadata event; more devices
   than this just go unnamed.  */
#define TRACE_NAMED_MAX 4096
static unsigned char trace_named[TRACE_NAMED_MAX / 8];

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
  struct ok_tbuf head;
  ok_tb_init (&head);
  /* First the part that says which process wrote the file.  */
  ok_tb_printf (&head, "{\"displayTimeUnit\":\"ms\",\"otherData\":"
	     "{\"process\":\"%d %llu\"},", (int) trace_pid,
	     process_start_time ());
  size_t id_len = head.len;
  ok_tb_printf (&head, "\"traceEvents\":[\n"
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
  else if (!ok_write_all (fd, head.s, head.len))
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
  ok_tb_free (&head);
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
profile_put (const struct ok_tbuf *b)
{
  if (getpid () != trace_pid)
    return;
  if (trace_fd < 0 && (trace_path == NULL || !profile_open ()))
    return;
  if (!ok_write_all (trace_fd, ",\n", 2) || !ok_write_all (trace_fd, b->s, b->len))
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
  struct ok_tbuf b, n;
  ok_tb_init (&b);
  ok_tb_init (&n);
  ok_tb_printf (&n, "device %d (%s)", ord, backend);
  ok_tb_printf (&b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
	     "\"tid\":%d,\"args\":{\"name\":", (int) trace_pid, ord);
  ok_tb_json (&b, n.s);
  ok_tb_printf (&b, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\","
	     "\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
	     (int) trace_pid, ord, ord);
  profile_put (&b);
  ok_tb_free (&n);
  ok_tb_free (&b);
}

void
ok_profile_finish (void)
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
      if (!ok_write_all (trace_fd, end, sizeof end - 1) || close (trace_fd) != 0)
	ok_error ("cannot complete the profile (OFFLOADKIT_PROFILE): %s",
		  strerror (errno));
      trace_fd = -1;
    }
  pthread_mutex_unlock (&trace_lock);
}


bool
ok_profile_start (const char *path)
{
  trace_pid = getpid ();
  trace_path = strdup (path);
  if (trace_path == NULL)
    {
      ok_error ("out of memory; no profile is written"
		" (OFFLOADKIT_PROFILE)");
      return false;
    }
  return true;
}

bool
ok_profile_on (void)
{
  return !__atomic_load_n (&trace_profile_off, __ATOMIC_RELAXED);
}

int
ok_profile_pid (void)
{
  return (int) trace_pid;
}

void
ok_profile_event (int ord, const char *backend, const struct ok_tbuf *event)
{
  pthread_mutex_lock (&trace_lock);
  profile_name_track (ord, backend);
  profile_put (event);
  pthread_mutex_unlock (&trace_lock);
}
