/* Temporary files that never outlive the program.

   Every file (or directory, with everything in it) made or registered
   here is removed when the program exits, whether normally, through
   ok_fatal, or because of SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGPIPE
   (the handler removes the files, then re-raises the signal so the parent
   sees the real cause of death).  Files the user asked to keep
   (-save-temps) are simply not registered.  */

#ifndef OFFLOADKIT_TEMPFILE_H
#define OFFLOADKIT_TEMPFILE_H

#include <signal.h>
#include <sys/types.h>

/* Create a new, empty file under $TMPDIR (or /tmp) whose name ends in
   SUFFIX (may be ""), register it for removal and return its name (owned
   by the registry).  Creation failure is fatal.  */
const char *ok_tempfile_create (const char *suffix);

/* Create a new, empty directory under $TMPDIR (or /tmp), private to the
   user, and register it: it is removed with whatever is in it then (the
   temporary files of commands that were killed before they could remove
   them, say).  Return its name (owned by the registry).  Creation failure
   is fatal.  */
const char *ok_tempdir_create (void);

/* While PID (a child writing some of the registered files) runs, a
   cleanup signal is first passed on to it, and it is waited for, so that
   it cannot create a file again after the removal.  0 when none runs.
   PID must lead a process group of its own (the commands it starts are
   in it): the signal goes to the whole group, and every process of the
   group is waited for, those its parent left behind included (the
   program is their subreaper, on Linux), before the removal.  */
void ok_tempfile_set_child (pid_t pid);

/* Block the cleanup signals, storing the previous mask in OLD (unless
   NULL): between starting a child and ok_tempfile_set_child, a handler
   would remove the files while the child goes on writing them.  The
   child must be started with OLD as its mask, and OLD restored once it
   is recorded.  */
void ok_tempfile_block_signals (sigset_t *old);

/* Install HANDLER for each of the cleanup signals, except one that is
   ignored (nohup), so that a process of its own (ok_run_commands'
   runner) reacts to the same signals as the cleanup.  */
void ok_tempfile_catch_signals (void (*handler) (int));

#endif /* OFFLOADKIT_TEMPFILE_H */
