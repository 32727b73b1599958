/* Diagnostics and allocation helpers for offloadkit's command-line tools.

   Every message is one line on stderr, "PROG: error: ...", so that users
   (and tests) can tell exactly which tool failed and why.  Allocation
   failures end the program through ok_fatal, so callers never check for
   NULL.  */

#ifndef OFFLOADKIT_DIAG_H
#define OFFLOADKIT_DIAG_H

#include <stdarg.h>
#include <stddef.h>

#define OK_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* Nonzero when the tool should describe what it does (-v).  */
extern int ok_verbose;

/* Set the name that prefixes every message (not argv[0]: a tool may be
   installed under another name, e.g. accel/nvptx-none/mkoffload).  */
void ok_set_progname (const char *name);
const char *ok_progname (void);

/* "PROG: error: MSG".  Counts errors; see ok_error_count.  */
void ok_error (const char *fmt, ...) OK_PRINTF (1, 2);
void ok_verror (const char *fmt, va_list ap) OK_PRINTF (1, 0);
/* ok_error, then exit (1); atexit handlers (temporary files) still run.  */
void ok_fatal (const char *fmt, ...) OK_PRINTF (1, 2)
  __attribute__ ((noreturn));
/* "PROG: warning: MSG".  */
void ok_warning (const char *fmt, ...) OK_PRINTF (1, 2);
/* "PROG: MSG", only when ok_verbose.  */
void ok_inform (const char *fmt, ...) OK_PRINTF (1, 2);
unsigned ok_error_count (void);

/* Allocation that cannot fail: on exhaustion they call ok_fatal.  */
void *xmalloc (size_t size);
void *xcalloc (size_t n, size_t size);
void *xrealloc (void *ptr, size_t size);
char *xstrdup (const char *s);
char *xstrndup (const char *s, size_t n);
char *xasprintf (const char *fmt, ...) OK_PRINTF (1, 2);

#endif /* OFFLOADKIT_DIAG_H */
