/* Test tool of gcn-mkoffload.exp: runs the GCN code-object reader
   (common/gcn-code-object.c) on each FILE and prints what it found:
     object FILE arch A mach M
     kernel NAME sgprs S vgprs V group G private P kernarg K
     devfn NAME   (a device function the function table names: an
                   ancestor region's, for reverse offload)
     func I NAME
     vartable at-table|elsewhere  (only when a global .offload_var_table
                                   symbol exists)
     var I NAME size S link L
   (kernels in symbol-table order, functions and variables in host-table
   order).  A file the reader rejects gets its one "gcn-dump: error: ..."
   line and exit status 1.

   gcn-dump --each FILE... reads each FILE in a process of its own, as
   "gcn-dump FILE" would, and prints one line per file instead:
     each FILE status S errors E
   S is the status that run ended with (128 + N when signal N ended it:
   a crash, or SIGALRM after 60 seconds: a hang), E how many lines of its
   output begin "gcn-dump: error: ".  The tests read thousands of damaged
   code objects: a process each, without a program start each.  */

#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "gcn-code-object.h"

/* What the reader finds in FILE, printed; 1 when it rejects FILE.  */
static int
dump_one (const char *file)
{
  struct ok_gcn_code_object co;
  if (ok_gcn_read_code_object_file (file, &co) < 0)
    return 1;
  printf ("object %s arch %#x mach %#x\n", file, (unsigned) co.arch,
	  (unsigned) co.mach);
  for (size_t k = 0; k < co.num_kernels; k++)
    {
      const struct ok_kernel_info *ki = &co.kernels[k].info;
      if (ki->flags & OK_KINFO_DEVICE_FN)
	{
	  printf ("devfn %s\n", co.kernels[k].name);
	  continue;
	}
      printf ("kernel %s sgprs %u vgprs %u group %u private %u"
	      " kernarg %u\n", co.kernels[k].name, (unsigned) ki->sgprs,
	      (unsigned) ki->vgprs, (unsigned) ki->group_segment_size,
	      (unsigned) ki->private_segment_size,
	      (unsigned) ki->kernarg_size);
    }
  for (size_t f = 0; f < co.num_funcs; f++)
    printf ("func %zu %s\n", f, co.kernels[co.funcs[f]].name);
  if (co.has_var_table_sym)
    printf ("vartable %s\n", co.var_table_sym == co.var_table_addr
	    ? "at-table" : "elsewhere");
  for (size_t v = 0; v < co.num_vars; v++)
    printf ("var %zu %s size %llu link %d\n", v, co.vars[v].name,
	    (unsigned long long) co.vars[v].size, co.vars[v].link);
  ok_gcn_code_object_free (&co);
  return 0;
}

/* The --each line of FILE: run dump_one on it in a child whose output
   comes back through a pipe.  Returns 0, or 1 when the child could not be
   run.  */
static int
dump_in_child (const char *file)
{
  int fds[2];
  if (pipe (fds) < 0)
    {
      ok_error ("pipe: %s", strerror (errno));
      return 1;
    }
  fflush (stdout);
  pid_t pid = fork ();
  if (pid < 0)
    {
      ok_error ("fork: %s", strerror (errno));
      close (fds[0]);
      close (fds[1]);
      return 1;
    }
  if (pid == 0)
    {
      close (fds[0]);
      if (dup2 (fds[1], 1) < 0 || dup2 (fds[1], 2) < 0)
	_exit (127);
      close (fds[1]);
      alarm (60);
      int rc = dump_one (file);
      if (fflush (stdout) != 0)
	rc = 1;
      _exit (rc);
    }
  close (fds[1]);

  /* Count the lines that begin with the error prefix as they come.  */
  static const char prefix[] = "gcn-dump: error: ";
  size_t col = 0;		/* Characters of PREFIX the line matched.  */
  bool matching = true;		/* The line so far is a part of PREFIX.  */
  unsigned errors = 0;
  char buf[4096];
  ssize_t n;
  while ((n = read (fds[0], buf, sizeof buf)) != 0)
    {
      if (n < 0)
	{
	  if (errno == EINTR)
	    continue;
	  break;
	}
      for (ssize_t i = 0; i < n; i++)
	if (buf[i] == '\n')
	  {
	    col = 0;
	    matching = true;
	  }
	else if (matching && buf[i] != prefix[col])
	  matching = false;
	else if (matching && ++col == sizeof prefix - 1)
	  {
	    errors++;
	    matching = false;
	  }
    }
  close (fds[0]);

  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
	ok_error ("waitpid: %s", strerror (errno));
	return 1;
      }
  int code = WIFEXITED (status) ? WEXITSTATUS (status)
	     : 128 + WTERMSIG (status);
  printf ("each %s status %d errors %u\n", file, code, errors);
  return 0;
}

int
main (int argc, char **argv)
{
  int rc = 0;
  ok_set_progname ("gcn-dump");
  bool each = argc > 1 && strcmp (argv[1], "--each") == 0;
  if (argc < 2 + each)
    {
      fprintf (stderr, "usage: gcn-dump [--each] CODE-OBJECT...\n");
      return 2;
    }
  for (int i = 1 + each; i < argc; i++)
    if ((each ? dump_in_child (argv[i]) : dump_one (argv[i])) != 0)
      rc = 1;
  if (fflush (stdout) != 0 || ferror (stdout))
    rc = 1;
  return rc;
}
