/* Running subprocesses; see run-command.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "file-io.h"
#include "run-command.h"
#include "tempfile.h"

extern char **environ;

/* Quote a word only when a shell would otherwise split or expand it, so
   that -v output stays readable and can be pasted back into a shell.  */
static void
print_word (FILE *f, const char *w)
{
  if (*w && strspn (w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789-_=+,./:@%^") == strlen (w))
    {
      fputs (w, f);
      return;
    }
  fputc ('\'', f);
  for (; *w; w++)
    if (*w == '\'')
      fputs ("'\\''", f);
    else
      fputc (*w, f);
  fputc ('\'', f);
}

void
ok_print_argv (const char *const *argv)
{
  fflush (stdout);
  /* One write for the whole line: with concurrent jobs, a job started
     earlier may be writing to the same stderr, and stderr's stream is
     unbuffered (a write per word).  */
  char *line = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&line, &len);
  if (f == NULL)
    f = stderr;
  for (size_t i = 0; argv[i]; i++)
    {
      if (i)
	fputc (' ', f);
      print_word (f, argv[i]);
    }
  fputc ('\n', f);
  if (f != stderr && fclose (f) == 0)
    {
      fflush (stderr);
      for (size_t done = 0; done < len;)
	{
	  ssize_t n = write (STDERR_FILENO, line + done, len - done);
	  if (n <= 0 && errno != EINTR)
	    break;
	  if (n > 0)
	    done += (size_t) n;
	}
    }
  free (line);
  fflush (stderr);
}

/* Report that NAME could not be started: posix_spawnp returned ERR.  */
static void
report_spawn_error (const char *name, int err)
{
  if (err == ENOENT)
    ok_error ("cannot run '%s': command not found", name);
  else
    ok_error ("cannot run '%s': %s", name, strerror (err));
}

/* Report that NAME was killed by signal SIG.  */
static void
report_signal (const char *name, int sig)
{
  const char *desc = sigabbrev_np (sig);
  ok_error ("'%s' was killed by signal %d (SIG%s: %s)", name, sig,
	    desc ? desc : "?", strsignal (sig));
}

/* "TMPDIR=DIR" for every command (ok_run_set_tmpdir), or NULL.  */
static char *child_tmpdir;

void
ok_run_set_tmpdir (const char *dir)
{
  free (child_tmpdir);
  child_tmpdir = dir ? xasprintf ("TMPDIR=%s", dir) : NULL;
}

/* Whether the environment entry ENTRY ("NAME=VALUE") sets NAME.  */
static int
sets_variable (const char *entry, const char *name)
{
  size_t len = strlen (name);
  return strncmp (entry, name, len) == 0 && entry[len] == '=';
}

/* A copy of environ without the variables named in UNSET, with the
   TMPDIR of ok_run_set_tmpdir and the "NAME=VALUE" entries of SET.  */
static char **
child_environment (const char *const *unset, const char *const *set)
{
  size_t n = 0, k = 0, nset = 0;
  while (environ[n])
    n++;
  while (set && set[nset])
    nset++;
  char **env = xmalloc ((n + nset + 2) * sizeof *env);
  for (size_t i = 0; i < n; i++)
    {
      int drop = child_tmpdir && sets_variable (environ[i], "TMPDIR");
      for (size_t u = 0; unset && unset[u]; u++)
	drop |= sets_variable (environ[i], unset[u]);
      for (size_t u = 0; u < nset; u++)
	{
	  size_t len = strcspn (set[u], "=");
	  drop |= strncmp (environ[i], set[u], len + 1) == 0;
	}
      if (!drop)
	env[k++] = environ[i];
    }
  if (child_tmpdir)
    env[k++] = child_tmpdir;
  for (size_t u = 0; u < nset; u++)
    env[k++] = (char *) set[u];
  env[k] = NULL;
  return env;
}

/* Start CMD.  With RECORD, the child is ok_tempfile_set_child's until
   finish_command (a cleanup signal is passed on to it and waits for it);
   without, it is on its own.  Return 0, with its pid in *PID and, with
   CMD->out, the read end of its standard output in *OUT_FD (else -1);
   or -1 after reporting why it could not be started.  */
static int
start_command (const struct ok_command *cmd, int record, pid_t *pid,
	       int *out_fd)
{
  const char *name = cmd->argv[0];
  posix_spawn_file_actions_t actions;
  int pipefd[2] = { -1, -1 };
  int err;

  if (ok_verbose && !cmd->quiet)
    ok_print_argv (cmd->argv);

  posix_spawn_file_actions_init (&actions);
  if (cmd->out)
    {
      if (pipe2 (pipefd, O_CLOEXEC) < 0)
	{
	  ok_error ("cannot run '%s': %s", name, strerror (errno));
	  posix_spawn_file_actions_destroy (&actions);
	  return -1;
	}
      posix_spawn_file_actions_adddup2 (&actions, pipefd[1], STDOUT_FILENO);
      if (cmd->err_to_out)
	posix_spawn_file_actions_adddup2 (&actions, pipefd[1],
					  STDERR_FILENO);
    }
  char **env = child_environment (cmd->unset_env, cmd->set_env);
  fflush (NULL);
  /* Until the child is recorded, a cleanup signal waits; the child itself
     starts with our usual mask.  */
  sigset_t old_mask;
  posix_spawnattr_t attr;
  ok_tempfile_block_signals (&old_mask);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, &old_mask);
  /* A recorded child leads a process group of its own, which a cleanup
     signal reaches whole (ok_tempfile_set_child).  */
  if (record)
    posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK
			    | (record ? POSIX_SPAWN_SETPGROUP : 0));
  /* glibc's posix_spawnp reports a failed exec (command not found, not
     executable) as its result, so no child ever runs half-started.  */
  err = posix_spawnp (pid, name, &actions, &attr, (char *const *) cmd->argv,
		      env);
  if (err == 0 && record)
    ok_tempfile_set_child (*pid);
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  posix_spawnattr_destroy (&attr);
  free (env);
  posix_spawn_file_actions_destroy (&actions);
  if (cmd->out)
    close (pipefd[1]);
  if (err != 0)
    {
      if (cmd->out)
	close (pipefd[0]);
      report_spawn_error (name, err);
      return -1;
    }
  *out_fd = pipefd[0];
  return 0;
}

/* Read what the command NAME started as PID writes to OUT_FD (when not
   -1) into *OUT (and its length into *OUT_LEN, when not NULL), then wait
   for it; with RECORD, it was ok_tempfile_set_child's.  Return as
   ok_run_command.  */
static int
finish_command (const char *name, pid_t pid, int out_fd, char **out,
		size_t *out_len, int record)
{
  int status;
  if (out_fd >= 0)
    {
      *out = ok_read_fd (out_fd, out_len);
      close (out_fd);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
	if (record)
	  ok_tempfile_set_child (0);
	ok_error ("cannot wait for '%s': %s", name, strerror (errno));
	return -1;
      }
  if (record)
    ok_tempfile_set_child (0);
  if (WIFSIGNALED (status))
    {
      report_signal (name, WTERMSIG (status));
      return -1;
    }
  return WEXITSTATUS (status);
}

int
ok_run_command (const struct ok_command *cmd)
{
  pid_t pid;
  int fd;
  if (start_command (cmd, 1, &pid, &fd) < 0)
    return -1;
  return finish_command (cmd->argv[0], pid, fd, cmd->out, cmd->out_len, 1);
}

int
ok_start_command (const struct ok_command *cmd, int writes_temps,
		  struct ok_running *run)
{
  run->name = NULL;
  if (start_command (cmd, writes_temps, &run->pid, &run->out_fd) < 0)
    return -1;
  run->name = xstrdup (cmd->argv[0]);
  run->out = cmd->out;
  run->out_len = cmd->out_len;
  run->writes_temps = writes_temps;
  return 0;
}

/* RC, what ok_run_command returned for a command NAME, as
   ok_run_checked returns it: a status > 0 reported.  */
static int
checked_status (const char *name, int rc)
{
  if (rc > 0)
    ok_error ("'%s' exited with status %d", name, rc);
  return rc == 0 ? 0 : -1;
}

/* Finish RUN; with CHECKED as ok_finish_checked, else as
   ok_finish_command.  */
static int
finish_running (struct ok_running *run, int checked)
{
  int rc = finish_command (run->name, run->pid, run->out_fd, run->out,
			   run->out_len, run->writes_temps);
  if (checked)
    rc = checked_status (run->name, rc);
  free (run->name);
  run->name = NULL;
  return rc;
}

int
ok_finish_command (struct ok_running *run)
{
  return finish_running (run, 0);
}

int
ok_finish_checked (struct ok_running *run)
{
  return finish_running (run, 1);
}

int
ok_run_checked (const struct ok_command *cmd)
{
  return checked_status (cmd->argv[0], ok_run_command (cmd));
}

int
ok_run_argv (const char *const *argv, const char *const *unset_env)
{
  struct ok_command cmd = { .argv = argv, .unset_env = unset_env };
  return ok_run_checked (&cmd);
}

/* ---- Several commands at a time (ok_run_commands).  ----------------- */

/* In the runner process: the commands running now (0 = free slot), read
   by its signal handler, and which command each slot runs.  */
static volatile pid_t *pool_pids;
static size_t *pool_index;
static volatile size_t pool_slots;

/* Runner's handler: pass the signal on, wait until every command is gone,
   then die from it (it stays blocked until the handler returns).  Only
   async-signal-safe calls.  */
static void
pool_on_signal (int sig)
{
  for (size_t i = 0; i < pool_slots; i++)
    if (pool_pids[i] > 0)
      kill (pool_pids[i], sig);
  for (size_t i = 0; i < pool_slots; i++)
    if (pool_pids[i] > 0)
      {
	int st;
	while (waitpid (pool_pids[i], &st, 0) < 0 && errno == EINTR)
	  ;
      }
  signal (sig, SIG_DFL);
  raise (sig);
}

/* Whether CMD's AFTER commands have all exited with 0 (STATUS, as
   ok_run_commands fills it).  */
static int
command_ready (const struct ok_command *cmd, const int *status)
{
  for (size_t k = 0; k < cmd->nafter; k++)
    if (status[cmd->after[k]] != 0)
      return 0;
  return 1;
}

/* Start CMD in a free slot as command number INDEX; signals are blocked
   from the spawn until the pid is in its slot.  Return 0, or -1 after
   reporting why it could not be started.  */
static int
pool_start (const struct ok_command *cmd, size_t index,
	    posix_spawnattr_t *attr)
{
  if (ok_verbose && !cmd->quiet)
    ok_print_argv (cmd->argv);
  char **env = child_environment (cmd->unset_env, cmd->set_env);
  pid_t pid;
  fflush (NULL);
  int err = posix_spawnp (&pid, cmd->argv[0], NULL, attr,
			  (char *const *) cmd->argv, env);
  free (env);
  if (err != 0)
    {
      report_spawn_error (cmd->argv[0], err);
      return -1;
    }
  for (size_t s = 0; s < pool_slots; s++)
    if (pool_pids[s] == 0)
      {
	pool_index[s] = index;
	pool_pids[s] = pid;
	break;
      }
  return 0;
}

/* The runner's work; entered with the cleanup signals blocked, OLD_MASK
   being the mask the commands start with.  Fills STATUS.  */
static void
pool_run (const struct ok_command *cmds, size_t n, unsigned jobs,
	  int *status, const sigset_t *old_mask)
{
  pool_pids = xcalloc (jobs, sizeof *pool_pids);
  pool_index = xcalloc (jobs, sizeof *pool_index);
  pool_slots = jobs;
  /* The same signals as the parent's cleanup, which passes them on to
     us (we are its recorded child).  */
  ok_tempfile_catch_signals (pool_on_signal);

  posix_spawnattr_t attr;
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, old_mask);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK);

  /* FIRST: the first command not started yet.  */
  size_t first = 0, running = 0;
  int failed = 0;
  unsigned char *started = xcalloc (n ? n : 1, 1);
  for (size_t i = 0; i < n; i++)
    status[i] = OK_COMMAND_NOT_RUN;
  for (;;)
    {
      while (!failed && running < jobs)
	{
	  size_t i = first;
	  for (; i < n; i++)
	    if (!started[i] && command_ready (&cmds[i], status))
	      break;
	  if (i == n)
	    break;
	  started[i] = 1;
	  while (first < n && started[first])
	    first++;
	  if (pool_start (&cmds[i], i, &attr) < 0)
	    {
	      status[i] = -1;
	      failed = 1;
	    }
	  else
	    running++;
	}
      if (running == 0)
	break;

      /* Wait with the signals open: a signal now ends everything.  */
      int st;
      sigprocmask (SIG_SETMASK, old_mask, NULL);
      pid_t pid = waitpid (-1, &st, 0);
      int err = errno;
      ok_tempfile_block_signals (NULL);
      if (pid < 0)
	{
	  if (err == EINTR)
	    continue;
	  ok_error ("cannot wait for '%s': %s", cmds[0].argv[0],
		    strerror (err));
	  _exit (1);
	}
      size_t slot = 0;
      while (slot < jobs && pool_pids[slot] != pid)
	slot++;
      if (slot == jobs)
	continue;		/* Not one of ours.  */
      size_t i = pool_index[slot];
      pool_pids[slot] = 0;
      running--;
      if (WIFSIGNALED (st))
	{
	  report_signal (cmds[i].argv[0], WTERMSIG (st));
	  status[i] = -1;
	}
      else
	status[i] = WEXITSTATUS (st);
      if (status[i] != 0)
	failed = 1;
    }
  free (started);
  posix_spawnattr_destroy (&attr);
}

/* Read exactly LEN bytes from FD; return how many were read.  */
static size_t
read_all (int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t r = read (fd, (char *) buf + got, len - got);
      if (r < 0 && errno == EINTR)
	continue;
      if (r <= 0)
	break;
      got += r;
    }
  return got;
}

int
ok_run_commands (const struct ok_command *cmds, size_t n, unsigned jobs,
		 int *status)
{
  /* A command waits only for earlier ones: in CMDS's order, one at a
     time, every command is ready when its turn comes.  */
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < cmds[i].nafter; k++)
      if (cmds[i].after[k] >= i)
	abort ();
  if (jobs == 0)
    {
      long ncpu = sysconf (_SC_NPROCESSORS_ONLN);
      jobs = ncpu > 0 ? (unsigned) ncpu : 1;
    }
  if (jobs > n)
    jobs = n;
  if (jobs <= 1)
    {
      /* One at a time: no runner process needed.  */
      int failed = 0;
      for (size_t i = 0; i < n; i++)
	if (failed)
	  status[i] = OK_COMMAND_NOT_RUN;
	else if ((status[i] = ok_run_command (&cmds[i])) != 0)
	  failed = 1;
      return 0;
    }

  /* The runner sends the statuses back through a pipe.  */
  int pipefd[2];
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    {
      ok_error ("cannot run '%s': %s", cmds[0].argv[0], strerror (errno));
      return -1;
    }
  fflush (NULL);
  sigset_t old_mask;
  ok_tempfile_block_signals (&old_mask);
  pid_t runner = fork ();
  if (runner == 0)
    {
      /* A process group of its own, which its commands share
	 (ok_tempfile_set_child); set on both sides of the fork, so that
	 it is set before either goes on.  */
      setpgid (0, 0);
      close (pipefd[0]);
      pool_run (cmds, n, jobs, status, &old_mask);
      size_t len = n * sizeof *status;
      const char *p = (const char *) status;
      while (len > 0)
	{
	  ssize_t w = write (pipefd[1], p, len);
	  if (w < 0 && errno == EINTR)
	    continue;
	  if (w <= 0)
	    _exit (1);
	  p += w;
	  len -= w;
	}
      fflush (NULL);
      /* Not exit: the atexit handlers (temporary files) are the
	 parent's.  */
      _exit (0);
    }
  int fork_errno = errno;
  if (runner > 0)
    {
      setpgid (runner, runner);
      ok_tempfile_set_child (runner);
    }
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  close (pipefd[1]);
  if (runner < 0)
    {
      close (pipefd[0]);
      ok_error ("cannot run '%s': %s", cmds[0].argv[0],
		strerror (fork_errno));
      return -1;
    }

  size_t got = read_all (pipefd[0], status, n * sizeof *status);
  close (pipefd[0]);
  int st;
  while (waitpid (runner, &st, 0) < 0)
    if (errno != EINTR)
      {
	ok_tempfile_set_child (0);
	ok_error ("cannot wait for '%s': %s", cmds[0].argv[0],
		  strerror (errno));
	return -1;
      }
  ok_tempfile_set_child (0);
  if (got != n * sizeof *status || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
    {
      /* Exit status 1: the runner has reported why.  */
      if (WIFSIGNALED (st))
	ok_error ("the process running '%s' was killed by signal %d",
		  cmds[0].argv[0], WTERMSIG (st));
      else if (!WIFEXITED (st) || WEXITSTATUS (st) != 1)
	ok_error ("the process running '%s' failed", cmds[0].argv[0]);
      return -1;
    }
  return 0;
}

int
ok_run_commands_checked (const struct ok_command *cmds, size_t n,
			 unsigned jobs, size_t *failed, int *exit_status)
{
  int *status = xmalloc ((n ? n : 1) * sizeof *status);
  int rc = ok_run_commands (cmds, n, jobs, status);
  /* Only the first failure in the order of the commands is looked at,
     so that the caller reports one error; later ones may not even have
     been started.  */
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (status[i] == -1)
      rc = -1;			/* Already reported.  */
    else if (status[i] > 0)
      {
	*failed = i;
	*exit_status = status[i];
	rc = 1;
      }
  free (status);
  return rc;
}
