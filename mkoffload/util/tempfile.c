/* Temporary files removed on every exit path; see tempfile.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* Only async-signal-safe calls (unlink) here: it also runs from the
   signal handler.  Not in a child forked from the owner.  */
static void
remove_all (void)
{
  if (getpid () != owner)
    return;
  for (struct tempfile *t = registry; t; t = t->next)
    unlink (t->path);
}

static void
on_signal (int sig)
{
  pid_t child = running_child;
  if (child > 0 && getpid () == owner)
    {
      int status;
      kill (child, sig);
      while (waitpid (child, &status, 0) < 0 && errno == EINTR)
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
  atexit (remove_all);
  ok_tempfile_catch_signals (on_signal);
}

static const char *
add (char *path)
{
  struct tempfile *t = xmalloc (sizeof *t);
  sigset_t all, old;

  install_handlers ();
  t->path = path;
  /* Block signals while linking the node in, so a handler never sees a
     half-updated list.  */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  t->next = registry;
  registry = t;
  sigprocmask (SIG_SETMASK, &old, NULL);
  return path;
}

const char *
ok_tempfile_create (const char *suffix)
{
  const char *dir = getenv ("TMPDIR");
  sigset_t all, old;
  int fd;

  if (!dir || !*dir)
    dir = "/tmp";
  if (!suffix)
    suffix = "";
  char *path = xasprintf ("%s/okXXXXXX%s", dir, suffix);

  /* Register before the file exists, with signals blocked until both are
     done, so no signal can leave an unregistered file behind.  */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  fd = mkstemps (path, strlen (suffix));
  int err = errno;
  if (fd >= 0)
    {
      add (path);
      close (fd);
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (fd < 0)
    ok_fatal ("cannot create a temporary file in '%s': %s", dir,
	      strerror (err));
  return path;
}
