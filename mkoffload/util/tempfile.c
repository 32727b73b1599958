/* Temporary files removed on every exit path; see tempfile.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#if defined __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "tempfile.h"

/* A singly linked list whose head is only updated once a node is
   complete, so that the signal handler can walk it at any moment.  */
struct tempfile
{
  struct tempfile *next;
  char *path;
  int is_dir;			/* Removed with everything in it.  */
};

static struct tempfile *volatile registry;
/* The process that owns the files: a forked child must not remove them.  */
static pid_t owner;
/* SIGPIPE too: an error message written to a closed pipe kills us.  */
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				       SIGPIPE };
static volatile pid_t running_child;

void
ok_tempfile_set_child (pid_t pid)
{
  running_child = pid;
}

void
ok_tempfile_block_signals (sigset_t *old)
{
  sigset_t set;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals;
       i++)
    sigaddset (&set, cleanup_signals[i]);
  sigprocmask (SIG_BLOCK, &set, old);
}

/* How deep remove_tree goes below a registered directory: the
   commands' temporary files lie flat in it, and the bound keeps the
   stack the signal handler needs small.  */
#define MAX_TREE_DEPTH 8

static void remove_tree (int parent, const char *name, int depth);

static int
is_dot_or_dotdot (const char *name)
{
  return name[0] == '.'
	 && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Remove everything in the directory open as FD, DEPTH levels below a
   registered one.  getdents64, not readdir: readdir allocates, which a
   signal handler must not.  */
static void
remove_entries (int fd, int depth)
{
  char buf[2048] __attribute__ ((aligned (__alignof__ (struct dirent64))));
  ssize_t n;
  while ((n = getdents64 (fd, buf, sizeof buf)) > 0)
    for (ssize_t off = 0; off < n;)
      {
	const struct dirent64 *d = (const struct dirent64 *) (buf + off);
	off += d->d_reclen;
	if (!is_dot_or_dotdot (d->d_name))
	  remove_tree (fd, d->d_name, depth + 1);
      }
}

/* Remove NAME, relative to the directory open as PARENT (or AT_FDCWD),
   and when it is a directory, everything in it first.  A command that
   outlived the one we waited for (a compiler's own child) may add a file
   while we empty the directory: then we empty it again, a few times.
   Only async-signal-safe calls (openat, unlinkat, close and the
   getdents64 system call).  */
static void
remove_tree (int parent, const char *name, int depth)
{
  for (int attempt = 0; attempt < 4; attempt++)
    {
      if (unlinkat (parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
	return;
      if (errno == ENOTDIR)
	{
	  unlinkat (parent, name, 0);
	  return;
	}
      if ((errno != ENOTEMPTY && errno != EEXIST) || depth >= MAX_TREE_DEPTH)
	return;
      int fd = openat (parent, name,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
	return;
      remove_entries (fd, depth);
      close (fd);
    }
}

/* Only async-signal-safe calls here: it also runs from the signal
   handler.  Not in a child forked from the owner.  */
static void
remove_all (void)
{
  if (getpid () != owner)
    return;
  int err = errno;
  for (struct tempfile *t = registry; t; t = t->next)
    if (t->is_dir)
      remove_tree (AT_FDCWD, t->path, 0);
    else
      unlink (t->path);
  errno = err;
}

static void
on_signal (int sig)
{
  pid_t child = running_child;
  if (child > 0 && getpid () == owner)
    {
      /* The child leads a process group of its own (tempfile.h), which
	 the commands it started share: GCC's driver dies from the signal
	 without stopping its lto1, as or collect2, which would otherwise
	 write their files after the removal.  As their subreaper we get
	 those whose parent died, and wait for every one of the group.  */
      int status;
      if (kill (-child, sig) != 0)
	kill (child, sig);
      while (waitpid (child, &status, 0) < 0 && errno == EINTR)
	;
      while (waitpid (-child, &status, 0) > 0 || errno == EINTR)
	;
    }
  remove_all ();
  signal (sig, SIG_DFL);
  raise (sig);
}

void
ok_tempfile_catch_signals (void (*handler) (int))
{
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals;
       i++)
    {
      struct sigaction sa, old;
      /* Respect a signal the parent told us to ignore (nohup).  */
      if (sigaction (cleanup_signals[i], NULL, &old) == 0
	  && old.sa_handler == SIG_IGN)
	continue;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = handler;
      sigemptyset (&sa.sa_mask);
      sigaction (cleanup_signals[i], &sa, NULL);
    }
}

static void
install_handlers (void)
{
  if (owner)
    return;
  owner = getpid ();
  /* The commands a recorded child started and left behind become ours,
     so that a cleanup signal can wait for them (on_signal).  Linux only;
     elsewhere the signal still reaches them through their group.  */
#ifdef PR_SET_CHILD_SUBREAPER
  prctl (PR_SET_CHILD_SUBREAPER, 1);
#endif
  atexit (remove_all);
  ok_tempfile_catch_signals (on_signal);
}

static const char *
add (char *path, int is_dir)
{
  struct tempfile *t = xmalloc (sizeof *t);
  sigset_t all, old;

  install_handlers ();
  t->path = path;
  t->is_dir = is_dir;
  /* Block signals while linking the node in, so a handler never sees a
     half-updated list.  */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  t->next = registry;
  registry = t;
  sigprocmask (SIG_SETMASK, &old, NULL);
  return path;
}

/* Create a file (or a directory, when IS_DIR) under $TMPDIR (or /tmp)
   whose name ends in SUFFIX, register it, and return its name.  Signals
   are blocked from the creation until it is registered, so that no
   signal can leave an unregistered one behind.  Failure is fatal.  */
static const char *
create (const char *suffix, int is_dir)
{
  const char *dir = getenv ("TMPDIR");
  sigset_t all, old;
  int made;

  if (!dir || !*dir)
    dir = "/tmp";
  char *path = xasprintf ("%s/okXXXXXX%s", dir, suffix);

  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  if (is_dir)
    made = mkdtemp (path) != NULL;
  else
    {
      int fd = mkstemps (path, strlen (suffix));
      made = fd >= 0;
      if (made)
	close (fd);
    }
  int err = errno;
  if (made)
    add (path, is_dir);
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (!made)
    ok_fatal ("cannot create a temporary %s in '%s': %s",
	      is_dir ? "directory" : "file", dir, strerror (err));
  return path;
}

const char *
ok_tempfile_create (const char *suffix)
{
  return create (suffix ? suffix : "", 0);
}

const char *
ok_tempdir_create (void)
{
  return create ("", 1);
}
