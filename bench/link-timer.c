/* Timing driver for the link benchmark (link.sh): runs one command (a
   whole link, say) with posix_spawn, no shell, and reports its wall time
   (CLOCK_MONOTONIC, from just before the spawn to wait4 returning) and
   the peak memory of its largest single process: ru_maxrss of wait4's
   rusage, which on Linux is the largest of the process's own peak
   resident set and those of all the descendants it (and they, in turn)
   waited for.  --check-maxrss verifies that on the machine at hand.

   Usage: link-timer [-t TIMEOUT] [-o LOG] [-s NAME=VALUE]... [-u NAME]...
			-- PROGRAM [ARG...]
	  link-timer --check-maxrss MIB
   PROGRAM is run once, in a process group of its own, with standard
   input from /dev/null and its output to LOG (default: /dev/null); -s
   sets and -u removes an environment variable.  After TIMEOUT seconds
   (default 600; 0: none) the group gets SIGTERM, and SIGKILL 5 seconds
   later.  Prints one line

     okb-link status=STATUS wall-s=SECONDS maxrss-mib=MIB

   with STATUS ok, exit:N, signal:N or timeout, and exits 0 (ok), 1 (the
   command failed), 124 (timeout), or 2 (bad usage, or it could not be
   started).

   --check-maxrss MIB starts a copy of itself that forks a child that
   forks a grandchild, which touches MIB MiB and exits; each waits for its
   own.  Prints

     okb-maxrss-check alloc-mib=MIB reported-mib=R ok|FAILED

   and exits 0 when the peak reported to the top (R) is at least MIB.  */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "okb-env.h"
#include "okb-util.h"

#define MAX_VARS 64
#define KILL_GRACE 5


static volatile sig_atomic_t alarmed, interrupted;

static void
usage (void)
{
  fprintf (stderr, "usage: link-timer [-t TIMEOUT] [-o LOG] [-s NAME=VALUE]..."
	   " [-u NAME]... -- PROGRAM [ARG...]\n"
	   "       link-timer --check-maxrss MIB\n");
  exit (2);
}

static void
on_alarm (int sig)
{
  (void) sig;
  alarmed = 1;
}

static void
on_interrupt (int sig)
{
  interrupted = sig;
}

/* Signal handlers without SA_RESTART, so that wait4 returns EINTR.  */
static void
install_handlers (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sigemptyset (&sa.sa_mask);
  sa.sa_handler = on_alarm;
  sigaction (SIGALRM, &sa, NULL);
  sa.sa_handler = on_interrupt;
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
}

/* Wait for PID, the leader of its own process group; past TIMEOUT
   seconds (0: never) or on SIGINT, SIGTERM or SIGHUP, end the group:
   SIGTERM first, SIGKILL KILL_GRACE seconds later.  Sets *ENDED when it
   had to.  Returns wait4's result.  */
static pid_t
wait_group (pid_t pid, unsigned timeout, int *status, struct rusage *ru,
	    int *ended)
{
  int sent = 0;		/* 0: nothing, 1: SIGTERM, 2: SIGKILL.  */
  *ended = 0;
  alarm (timeout);
  for (;;)
    {
      if ((alarmed || interrupted) && sent == 0)
	{
	  *ended = 1;
	  kill (-pid, SIGTERM);
	  sent = 1;
	  alarmed = 0;
	  alarm (KILL_GRACE);
	}
      else if (alarmed && sent == 1)
	{
	  kill (-pid, SIGKILL);
	  sent = 2;
	}
      pid_t r = wait4 (pid, status, 0, ru);
      if (r >= 0 || errno != EINTR)
	{
	  alarm (0);
	  /* What is left of the group (the leader has gone) goes too.  */
	  if (sent)
	    kill (-pid, SIGKILL);
	  return r;
	}
    }
}

/* --check-maxrss, in the spawned copy: fork a child that forks a
   grandchild that touches MIB MiB; wait for each.  Returns an exit
   status.  */
static int
alloc_tree (int mib, int depth)
{
  if (depth == 0)
    {
      size_t n = (size_t) mib << 20;
      char *p = malloc (n);
      if (!p)
	return 1;
      for (size_t i = 0; i < n; i += 4096)
	p[i] = 1;
      /* Keep it touched until exit.  */
      return p[n - 4096] == 1 ? 0 : 1;
    }
  pid_t pid = fork ();
  if (pid < 0)
    return 1;
  if (pid == 0)
    _exit (alloc_tree (mib, depth - 1));
  int st;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return 1;
  return WIFEXITED (st) ? WEXITSTATUS (st) : 1;
}

static int
check_maxrss (const char *mibs)
{
  char self[4096];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    {
      perror ("link-timer: /proc/self/exe");
      return 2;
    }
  self[n] = 0;
  char *argv[] = { self, (char *) "--alloc-tree", (char *) mibs, NULL };
  pid_t pid;
  int err = posix_spawn (&pid, self, NULL, NULL, argv, environ);
  if (err != 0)
    {
      fprintf (stderr, "link-timer: cannot start %s: %s\n", self,
	       strerror (err));
      return 2;
    }
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      {
	perror ("link-timer: wait4");
	return 2;
      }
  int mib = atoi (mibs);
  double got = ru.ru_maxrss / 1024.0;
  int ok = WIFEXITED (status) && WEXITSTATUS (status) == 0 && got >= mib;
  printf ("okb-maxrss-check alloc-mib=%d reported-mib=%.1f %s\n", mib, got,
	  ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

int
main (int argc, char **argv)
{
  unsigned timeout = 600;
  const char *log = "/dev/null";
  int nset = 0, nunset = 0, i;
  char *set[MAX_VARS], *unset[MAX_VARS];

  if (argc == 3 && strcmp (argv[1], "--check-maxrss") == 0
      && atoi (argv[2]) > 0)
    return check_maxrss (argv[2]);
  if (argc == 3 && strcmp (argv[1], "--alloc-tree") == 0)
    return alloc_tree (atoi (argv[2]), 2);

  for (i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--") == 0)
	{
	  i++;
	  break;
	}
      if (i + 1 >= argc)
	usage ();
      if (strcmp (a, "-t") == 0)
	{
	  char *end;
	  long t = strtol (argv[++i], &end, 10);
	  if (*end || t < 0 || t > 1000000)
	    usage ();
	  timeout = t;
	}
      else if (strcmp (a, "-o") == 0)
	log = argv[++i];
      else if (strcmp (a, "-s") == 0 && nset < MAX_VARS
	       && strchr (argv[i + 1], '='))
	set[nset++] = argv[++i];
      else if (strcmp (a, "-u") == 0 && nunset < MAX_VARS)
	unset[nunset++] = argv[++i];
      else
	usage ();
    }
  if (i >= argc)
    usage ();

  char **cmd = argv + i;
  char **env = okb_make_env (set, nset, unset, nunset, "link-timer", 2);
  install_handlers ();

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, log,
				    O_WRONLY | O_CREAT | O_TRUNC, 0666);
  posix_spawn_file_actions_adddup2 (&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init (&attr);
  posix_spawnattr_setpgroup (&attr, 0);
  /* The child starts with default handlers and no signals blocked.  */
  sigset_t none, dflt;
  sigemptyset (&none);
  sigemptyset (&dflt);
  sigaddset (&dflt, SIGALRM);
  sigaddset (&dflt, SIGINT);
  sigaddset (&dflt, SIGTERM);
  sigaddset (&dflt, SIGHUP);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &dflt);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP
			    | POSIX_SPAWN_SETSIGMASK
			    | POSIX_SPAWN_SETSIGDEF);

  long long t0 = okb_now_ns ();
  pid_t pid;
  int err = posix_spawnp (&pid, cmd[0], &fa, &attr, cmd, env);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  if (err != 0)
    {
      fprintf (stderr, "link-timer: cannot start %s: %s\n", cmd[0],
	       strerror (err));
      return 2;
    }

  int status, ended;
  struct rusage ru;
  if (wait_group (pid, timeout, &status, &ru, &ended) < 0)
    {
      perror ("link-timer: wait4");
      kill (-pid, SIGKILL);
      return 2;
    }
  long long t1 = okb_now_ns ();

  char st[32];
  int rc;
  if (ended && !interrupted)
    {
      snprintf (st, sizeof st, "timeout");
      rc = 124;
    }
  else if (WIFEXITED (status))
    {
      if (WEXITSTATUS (status) == 0)
	snprintf (st, sizeof st, "ok");
      else
	snprintf (st, sizeof st, "exit:%d", WEXITSTATUS (status));
      rc = WEXITSTATUS (status) == 0 ? 0 : 1;
    }
  else
    {
      snprintf (st, sizeof st, "signal:%d", WTERMSIG (status));
      rc = 1;
    }
  printf ("okb-link status=%s wall-s=%.3f maxrss-mib=%.1f\n", st,
	  (t1 - t0) / 1e9, ru.ru_maxrss / 1024.0);
  free (env);
  fflush (stdout);
  if (interrupted)
    {
      /* Die of the same signal, so that the caller's shell sees it.  */
      signal (interrupted, SIG_DFL);
      raise (interrupted);
    }
  return rc;
}
