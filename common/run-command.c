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
  for (size_t i = 0; argv[i]; i++)
    {
      if (i)
	fputc (' ', stderr);
      print_word (stderr, argv[i]);
    }
  fputc ('\n', stderr);
  fflush (stderr);
}

/* A copy of environ without the variables named in UNSET.  */
static char **
child_environment (const char *const *unset)
{
  size_t n = 0, k = 0;
  while (environ[n])
    n++;
  char **env = xmalloc ((n + 1) * sizeof *env);
  for (size_t i = 0; i < n; i++)
    {
      int drop = 0;
      for (size_t u = 0; unset && unset[u]; u++)
	{
	  size_t len = strlen (unset[u]);
	  if (strncmp (environ[i], unset[u], len) == 0
	      && environ[i][len] == '=')
	    drop = 1;
	}
      if (!drop)
	env[k++] = environ[i];
    }
  env[k] = NULL;
  return env;
}

int
ok_run_command (const struct ok_command *cmd)
{
  const char *name = cmd->argv[0];
  posix_spawn_file_actions_t actions;
  int pipefd[2] = { -1, -1 };
  pid_t pid;
  int status, err;

  if (ok_verbose && !cmd->quiet)
    ok_print_argv (cmd->argv);

  posix_spawn_file_actions_init (&actions);
  if (cmd->out)
    {
      if (pipe2 (pipefd, O_CLOEXEC) < 0)
	{
	  ok_error ("cannot run '%s': %s", name, strerror (errno));
	  return -1;
	}
      posix_spawn_file_actions_adddup2 (&actions, pipefd[1], STDOUT_FILENO);
    }
  char **env = child_environment (cmd->unset_env);
  fflush (NULL);
  /* Until the child is recorded, a cleanup signal waits; the child itself
     starts with our usual mask.  */
  sigset_t old_mask;
  posix_spawnattr_t attr;
  ok_tempfile_block_signals (&old_mask);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, &old_mask);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK);
  /* glibc's posix_spawnp reports a failed exec (command not found, not
     executable) as its result, so no child ever runs half-started.  */
  err = posix_spawnp (&pid, name, &actions, &attr, (char *const *) cmd->argv,
		      env);
  if (err == 0)
    ok_tempfile_set_child (pid);
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
      if (err == ENOENT)
	ok_error ("cannot run '%s': command not found", name);
      else
	ok_error ("cannot run '%s': %s", name, strerror (err));
      return -1;
    }
  if (cmd->out)
    {
      *cmd->out = ok_read_fd (pipefd[0], cmd->out_len);
      close (pipefd[0]);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
	ok_tempfile_set_child (0);
	ok_error ("cannot wait for '%s': %s", name, strerror (errno));
	return -1;
      }
  ok_tempfile_set_child (0);
  if (WIFSIGNALED (status))
    {
      int sig = WTERMSIG (status);
      const char *desc = sigabbrev_np (sig);
      ok_error ("'%s' was killed by signal %d (SIG%s: %s)", name, sig,
		desc ? desc : "?", strsignal (sig));
      return -1;
    }
  return WEXITSTATUS (status);
}

int
ok_run_argv (const char *const *argv, const char *const *unset_env)
{
  struct ok_command cmd = { .argv = argv, .unset_env = unset_env };
  int rc = ok_run_command (&cmd);
  if (rc > 0)
    ok_error ("'%s' exited with status %d", argv[0], rc);
  return rc == 0 ? 0 : -1;
}
