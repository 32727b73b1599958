/* Temporary files that never outlive the program.

   Every file made or registered here is removed when the program exits,
   whether normally, through ok_fatal, or because of SIGINT, SIGTERM or
   SIGHUP (the handler removes the files, then re-raises the signal so the
   parent sees the real cause of death).  Files the user asked to keep
   (-save-temps) are simply not registered.  */

#ifndef OFFLOADKIT_TEMPFILE_H
#define OFFLOADKIT_TEMPFILE_H

#include <sys/types.h>

/* Create a new, empty file under $TMPDIR (or /tmp) whose name ends in
   SUFFIX (may be ""), register it for removal and return its name (owned
   by the registry).  Creation failure is fatal.  */
const char *ok_tempfile_create (const char *suffix);

/* Register PATH (copied), which a subprocess will create, for removal.  */
void ok_tempfile_register (const char *path);

/* While PID (a child writing some of the registered files) runs, a
   cleanup signal is first passed on to it, and it is waited for, so that
   it cannot create a file again after the removal.  0 when none runs.  */
void ok_tempfile_set_child (pid_t pid);

/* Remove every registered file now (also run at exit and on the signals
   above; only in the process that registered them, never in a child that
   was forked from it).  */
void ok_tempfile_cleanup (void);

#endif /* OFFLOADKIT_TEMPFILE_H */
