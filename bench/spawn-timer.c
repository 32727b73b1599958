/* Timing driver for the start-up benchmark: starts a program RUNS times
   with posix_spawn (after WARMUP untimed runs) and measures, with the
   monotonic clock, from just before the spawn to
     - the end of its first target region: the program prints
       "okb-end-ns N", the monotonic clock read right after that region
       (the clock is system-wide, so the two readings compare);
     - its exit (waitpid returning).
   No shell is involved, so nothing but the program is timed.

   Usage: spawn-timer [-n RUNS] [-w WARMUP] [-s NAME=VALUE]... [-u NAME]...
			-- PROGRAM [ARG...]
   -s sets and -u removes an environment variable of the runs (e.g.
   -s CUDA_CACHE_DISABLE=1 for cold starts).  Prints

     okb-first-region-ms median=... min=... max=... runs=N
     okb-exit-ms median=... min=... max=...
     okb-on-device K/N          (runs whose region ran on a device)

   and exits 1 if a run fails (non-zero exit, or no okb-end-ns line; its
   output is shown), 2 on bad usage.  */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "okb-env.h"
#include "okb-util.h"

#define MAX_RUNS 1000
#define MAX_VARS 64


static void
usage (void)
{
  fprintf (stderr, "usage: spawn-timer [-n RUNS] [-w WARMUP] "
	   "[-s NAME=VALUE]... [-u NAME]... -- PROGRAM [ARG...]\n");
  exit (2);
}

/* Run ARGV once.  Returns 0 and sets *END_MS (to the first-region mark;
   -1 if none) and *EXIT_MS, *ON_DEVICE; -1 when the run failed.  */
static int
run_once (char **argv, char **env, double *end_ms, double *exit_ms,
	  int *on_device)
{
  int fds[2];
  if (pipe (fds) != 0)
    {
      perror ("spawn-timer: pipe");
      return -1;
    }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, fds[1], 1);
  posix_spawn_file_actions_addclose (&fa, fds[0]);
  posix_spawn_file_actions_addclose (&fa, fds[1]);

  long long t0 = okb_now_ns ();
  pid_t pid;
  int err = posix_spawn (&pid, argv[0], &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy (&fa);
  close (fds[1]);
  if (err != 0)
    {
      fprintf (stderr, "spawn-timer: cannot start %s: %s\n", argv[0],
	       strerror (err));
      close (fds[0]);
      return -1;
    }

  /* Collect the output (small) until the child closes it.  */
  char out[4096];
  size_t len = 0;
  for (;;)
    {
      ssize_t r = read (fds[0], out + len, sizeof out - 1 - len);
      if (r < 0 && errno == EINTR)
	continue;
      if (r <= 0)
	break;
      len += r;
      if (len == sizeof out - 1)
	{
	  /* Keep reading so the child never blocks; drop the rest.  */
	  char sink[4096];
	  while (read (fds[0], sink, sizeof sink) > 0)
	    ;
	  break;
	}
    }
  out[len] = 0;
  close (fds[0]);

  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
	perror ("spawn-timer: waitpid");
	return -1;
      }
  long long t2 = okb_now_ns ();

  const char *mark = strstr (out, "okb-end-ns ");
  const char *dev = strstr (out, "okb-on-device ");
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || !mark)
    {
      fprintf (stderr, "spawn-timer: %s failed (%s %d); its output:\n%s",
	       argv[0], WIFEXITED (status) ? "exit status" : "signal",
	       WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status),
	       out);
      return -1;
    }
  long long t1 = atoll (mark + strlen ("okb-end-ns "));
  *end_ms = (t1 - t0) / 1e6;
  *exit_ms = (t2 - t0) / 1e6;
  *on_device = dev && atoi (dev + strlen ("okb-on-device ")) == 1;
  return 0;
}

int
main (int argc, char **argv)
{
  int runs = 10, warmup = 0, nset = 0, nunset = 0, i;
  char *set[MAX_VARS], *unset[MAX_VARS];

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
      if (strcmp (a, "-n") == 0)
	runs = atoi (argv[++i]);
      else if (strcmp (a, "-w") == 0)
	warmup = atoi (argv[++i]);
      else if (strcmp (a, "-s") == 0 && nset < MAX_VARS
	       && strchr (argv[i + 1], '='))
	set[nset++] = argv[++i];
      else if (strcmp (a, "-u") == 0 && nunset < MAX_VARS)
	unset[nunset++] = argv[++i];
      else
	usage ();
    }
  if (i >= argc || runs < 1 || runs > MAX_RUNS || warmup < 0)
    usage ();

  char **cmd = argv + i;
  char **env = okb_make_env (set, nset, unset, nunset, "spawn-timer", 1);
  static double end_ms[MAX_RUNS], exit_ms[MAX_RUNS];
  int on_device = 0;
  for (int r = 0; r < warmup + runs; r++)
    {
      double e, x;
      int dev;
      if (run_once (cmd, env, &e, &x, &dev) != 0)
	return 1;
      if (r < warmup)
	continue;
      end_ms[r - warmup] = e;
      exit_ms[r - warmup] = x;
      on_device += dev;
    }
  double lo = okb_min (end_ms, runs), hi = okb_max (end_ms, runs);
  printf ("okb-first-region-ms median=%.2f min=%.2f max=%.2f runs=%d\n",
	  okb_median (end_ms, runs), lo, hi, runs);
  lo = okb_min (exit_ms, runs);
  hi = okb_max (exit_ms, runs);
  printf ("okb-exit-ms median=%.2f min=%.2f max=%.2f\n",
	  okb_median (exit_ms, runs), lo, hi);
  printf ("okb-on-device %d/%d\n", on_device, runs);
  free (env);
  return 0;
}
