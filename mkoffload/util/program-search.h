/* Finding the programs a tool runs, as GCC's driver finds its helpers.  */

#ifndef OFFLOADKIT_PROGRAM_SEARCH_H
#define OFFLOADKIT_PROGRAM_SEARCH_H

/* Look for PROG in the ':'-separated directory list DIRS (an empty entry
   means the current directory, as in PATH); PROG itself when it has a
   '/'.  A malloc'd path of an executable regular file, or NULL.  */
char *ok_search_path (const char *prog, const char *dirs);

/* Find PROG like GCC finds its helpers: PROG itself when it has a '/',
   else in the directory of COLLECT_GCC, the COMPILER_PATH entries and
   PATH, in that order.  NULL when it is nowhere executable.  */
char *ok_find_program (const char *prog);

#endif
