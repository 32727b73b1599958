/* peak-rss FILE COMMAND [ARG...]: run COMMAND (searched in PATH, no
   shell), wait for it, write to FILE the peak resident set size, in KiB,
   of the largest single process of its whole tree (wait4's ru_maxrss
   covers the command and every descendant it waited for: a compiler
   driver and the tools it runs), and exit with its status (128 + N
   when signal N killed it; 127 when it could not be started).
   check-libgomp.sh measures its links with it.  */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: peak-rss FILE COMMAND [ARG...]\n");
      return 2;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "peak-rss: fork: %s\n", strerror (errno));
      return 127;
    }
  if (pid == 0)
    {
      execvp (argv[2], argv + 2);
      fprintf (stderr, "peak-rss: cannot run '%s': %s\n", argv[2],
	       strerror (errno));
      _exit (127);
    }
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      {
	fprintf (stderr, "peak-rss: wait4: %s\n", strerror (errno));
	return 127;
      }
  FILE *f = fopen (argv[1], "w");
  if (f == NULL || fprintf (f, "%ld\n", ru.ru_maxrss) < 0 || fclose (f) != 0)
    {
      fprintf (stderr, "peak-rss: cannot write '%s': %s\n", argv[1],
	       strerror (errno));
      return 127;
    }
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
