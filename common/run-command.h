/* Running subprocesses from argument vectors (never through a shell).  */

#ifndef OFFLOADKIT_RUN_COMMAND_H
#define OFFLOADKIT_RUN_COMMAND_H

#include <stddef.h>

struct ok_command
{
  /* NULL-terminated; ARGV[0] is searched in PATH unless it has a '/'.  */
  const char *const *argv;
  /* NULL-terminated names of environment variables the child must not
     see, or NULL.  */
  const char *const *unset_env;
  /* When non-NULL, the child's standard output is collected here
     (NUL-terminated, malloc'd, length in *OUT_LEN when OUT_LEN is set)
     instead of being inherited.  */
  char **out;
  size_t *out_len;
  /* Do not print the command line even with ok_verbose (probes).  */
  int quiet;
};

/* Run CMD and wait for it.  Return its exit status (0-255).  When it
   cannot be started or dies from a signal, report one error naming the
   command (and the signal) and return -1.  With ok_verbose, the command
   line is first printed to stderr.  */
int ok_run_command (const struct ok_command *cmd);

/* Shorthand: run ARGV with inherited stdout; 0 when it exited with 0;
   otherwise report one error ("'CMD' exited with status N") unless
   ok_run_command already did, and return -1.  */
int ok_run_argv (const char *const *argv, const char *const *unset_env);

/* Print ARGV to stderr as one line a shell would read back the same.  */
void ok_print_argv (const char *const *argv);

#endif /* OFFLOADKIT_RUN_COMMAND_H */
