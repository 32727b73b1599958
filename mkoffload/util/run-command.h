/* Running subprocesses from argument vectors (never through a shell).  */

#ifndef OFFLOADKIT_RUN_COMMAND_H
#define OFFLOADKIT_RUN_COMMAND_H

#include <stddef.h>
#include <sys/types.h>

struct ok_command
{
  /* NULL-terminated; ARGV[0] is searched in PATH unless it has a '/'.  */
  const char *const *argv;
  /* NULL-terminated names of environment variables the child must not
     see, or NULL.  */
  const char *const *unset_env;
  /* NULL-terminated "NAME=VALUE" entries added to the child's
     environment (replacing NAME's value there), or NULL.  */
  const char *const *set_env;
  /* When non-NULL, the child's standard output is collected here
     (NUL-terminated, malloc'd, length in *OUT_LEN when OUT_LEN is set)
     instead of being inherited.  */
  char **out;
  size_t *out_len;
  /* With OUT: the child's standard error goes there too, so that a tool's
     messages can be judged before they are shown.  */
  int err_to_out;
  /* Do not print the command line even with ok_verbose (probes).  */
  int quiet;
  /* ok_run_commands only: the indices (NAFTER of them, each lower than
     this command's own) of the commands of the same call that must have
     exited with 0 before this one starts, such as the compilations whose
     objects it links.  */
  const size_t *after;
  size_t nafter;
};

/* Give every command started from now on the environment variable
   TMPDIR=DIR (whatever ours is), or, when DIR is NULL, our own TMPDIR
   again.  DIR is copied.  */
void ok_run_set_tmpdir (const char *dir);

/* Run CMD and wait for it.  Return its exit status (0-255).  When it
   cannot be started or dies from a signal, report one error naming the
   command (and the signal) and return -1.  With ok_verbose, the command
   line is first printed to stderr.  */
int ok_run_command (const struct ok_command *cmd);

/* A command running in the background (ok_start_command) while the
   caller goes on: a question to a tool asked while a compiler runs, say.  */
struct ok_running
{
  char *name;			/* Its ARGV[0], for messages (malloc'd).  */
  pid_t pid;
  int out_fd;			/* The read end of its output, or -1.  */
  char **out;
  size_t *out_len;
  int writes_temps;
};

/* Start CMD and return at once: 0, with RUN set for ok_finish_command,
   or -1 after reporting why it could not be started.  With WRITES_TEMPS
   the child is, until ok_finish_command, the one that a cleanup signal
   is passed on to and waits for (ok_tempfile_set_child), as
   ok_run_command's are, in a process group of its own with the commands
   it starts: only one such child may run at a time, and no
   ok_run_command meanwhile.  Without, it must write no file that the
   cleanup removes.  With CMD->out its output goes through a pipe, which
   ok_finish_command reads; one that writes more than a pipe holds waits
   for that.  */
int ok_start_command (const struct ok_command *cmd, int writes_temps,
		      struct ok_running *run);

/* Collect RUN's output (into the CMD->out it was started with) and wait
   for it.  Return as ok_run_command.  */
int ok_finish_command (struct ok_running *run);

/* The same, as ok_run_checked: 0 when it exited with 0; otherwise -1
   after reporting one error.  */
int ok_finish_checked (struct ok_running *run);

/* Run CMD; 0 when it exited with 0; otherwise report one error ("'CMD'
   exited with status N") unless ok_run_command already did, and return
   -1.  */
int ok_run_checked (const struct ok_command *cmd);

/* Shorthand: run ARGV with inherited stdout; 0 when it exited with 0;
   otherwise report one error ("'CMD' exited with status N") unless
   ok_run_command already did, and return -1.  */
int ok_run_argv (const char *const *argv, const char *const *unset_env);

/* Status of a command ok_run_commands did not start, because another
   one had failed before its turn came (or before the commands it waits
   for were done).  */
#define OK_COMMAND_NOT_RUN (-2)

/* Run the N commands CMDS (whose OUT must be NULL), up to JOBS of them at
   a time (JOBS 0 means as many as there are online CPUs), and wait for
   all.  Whenever a slot is free, the command started is the first in
   CMDS's order not yet started whose AFTER commands have all exited
   with 0.  STATUS[I] gets the exit status of CMDS[I]
   (0-255), -1 when it could not be started or died from a signal
   (reported as by ok_run_command), or OK_COMMAND_NOT_RUN: once one fails,
   no further one is started.  Return 0, or -1 after reporting one error
   when the commands could not be run at all.

   With JOBS > 1 a forked runner process starts and waits for them, and
   is what ok_tempfile_set_child knows: a cleanup signal reaches it, and
   it passes the signal on to every running command and waits for them
   before dying from it, so that none writes a file after the cleanup.  */
int ok_run_commands (const struct ok_command *cmds, size_t n, unsigned jobs,
		     int *status);

/* Run the N commands CMDS with ok_run_commands, JOBS at a time (0: as
   many as there are online CPUs), and look at how they ended, in their
   order.
   Return 0 when all exited with 0; -1 when they could not be run, or the
   first failing one could not be started or died from a signal (already
   reported); 1 when the first failing one exited with a status > 0,
   stored in *EXIT_STATUS with its index in *FAILED: the caller reports
   that in its own words, saying what the command was for.  */
int ok_run_commands_checked (const struct ok_command *cmds, size_t n,
			     unsigned jobs, size_t *failed, int *exit_status);

/* Print ARGV to stderr as one line a shell would read back the same.  */
void ok_print_argv (const char *const *argv);

#endif /* OFFLOADKIT_RUN_COMMAND_H */
