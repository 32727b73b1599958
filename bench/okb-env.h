/* The environment of a command the timing drivers (spawn-timer.c,
   link-timer.c) start: theirs, with -s NAME=VALUE set and -u NAME
   removed.  Header-only, like okb-util.h: each driver stays one
   translation unit that run.sh and link.sh compile alone.  */

#ifndef OKB_ENV_H
#define OKB_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Does the environment entry E name the variable NAME (NAME may be
   "NAME=VALUE")?  */
static inline int
okb_same_name (const char *e, const char *name)
{
  size_t len = strcspn (name, "=");
  return strncmp (e, name, len) == 0 && e[len] == '=';
}

/* Ours without the UNSET names and the SET ones, then the SET entries
   ("NAME=VALUE").  On a failure to allocate, says so as PROG and exits
   with STATUS.  */
static inline char **
okb_make_env (char **set, int nset, char **unset, int nunset,
	      const char *prog, int status)
{
  int n = 0;
  while (environ[n])
    n++;
  char **env = calloc (n + nset + 1, sizeof *env);
  if (!env)
    {
      perror (prog);
      exit (status);
    }
  int k = 0;
  for (int i = 0; i < n; i++)
    {
      int drop = 0;
      for (int j = 0; j < nset && !drop; j++)
	drop = okb_same_name (environ[i], set[j]);
      for (int j = 0; j < nunset && !drop; j++)
	drop = okb_same_name (environ[i], unset[j]);
      if (!drop)
	env[k++] = environ[i];
    }
  for (int j = 0; j < nset; j++)
    env[k++] = set[j];
  env[k] = NULL;
  return env;
}

#endif /* OKB_ENV_H */
