/* Response files: "@FILE" on a command line stands for the arguments
   written in FILE, as with GCC and its tools (lto-wrapper passes long
   argument lists to mkoffload this way).  */

#ifndef OFFLOADKIT_ARGV_EXPAND_H
#define OFFLOADKIT_ARGV_EXPAND_H

#include <stddef.h>

/* Replace each "@FILE" of *ARGCP, *ARGVP (after argv[0]) by the arguments
   FILE contains, recursively.  In FILE, arguments are separated by white
   space; single or double quotes group characters (including spaces)
   into one argument and may produce an empty one; a backslash makes the
   next character literal.  The new vector is malloc'd and NULL-terminated.
   Return 0, or -1 after reporting one error ("cannot read response file
   'FILE': REASON", or nesting too deep).  */
int ok_expand_argv (int *argcp, char ***argvp);

/* The text of a response file that stands for ARGV (NULL-terminated):
   one argument a line, a backslash before each white-space character,
   quote and backslash, "" for an empty argument.  ok_expand_argv reads
   it back as ARGV, and so do GCC's driver and libiberty's expandargv.
   Malloc'd, NUL-terminated; its length in *LENP.  */
char *ok_response_file_text (const char *const *argv, size_t *lenp);

#endif /* OFFLOADKIT_ARGV_EXPAND_H */
