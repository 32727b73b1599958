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

   gcn-dump --damage FILE OFFSET:BYTE... reads FILE once and, for each
   OFFSET:BYTE, reads in a process of its own a copy of it with the byte
   at OFFSET set to BYTE (both decimal), through the reader's entry point
   for bytes in memory (which the one for files calls), and prints one
   line per change instead of the findings:
     damage OFFSET:BYTE status S errors E
   S is the status that run ended with (128 + N when signal N ended it:
   a crash, or SIGALRM after 60 seconds: a hang), E how many lines of its
   output begin "gcn-dump: error: ".  The tests read thousands of damaged
   code objects: a fork each, not a program start and a copy of the file
   written each.  */

#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "file-io.h"
#include "gcn-code-object.h"

/* Print what the reader found in FILE, CO, and free it.  */
static void
print_code_object (const char *file, struct ok_gcn_code_object *co)
{
  printf ("object %s arch %#x mach %#x\n", file, (unsigned) co->arch,
	  (unsigned) co->mach);
  for (size_t k = 0; k < co->num_kernels; k++)
    {
      const struct ok_kernel_info *ki = &co->kernels[k].info;
      if (ki->flags & OK_KINFO_DEVICE_FN)
	{
	  printf ("devfn %s\n", co->kernels[k].name);
	  continue;
	}
      printf ("kernel %s sgprs %u vgprs %u group %u private %u"
	      " kernarg %u\n", co->kernels[k].name, (unsigned) ki->sgprs,
	      (unsigned) ki->vgprs, (unsigned) ki->group_segment_size,
	      (unsigned) ki->private_segment_size,
	      (unsigned) ki->kernarg_size);
    }
  for (size_t f = 0; f < co->num_funcs; f++)
    printf ("func %zu %s\n", f, co->kernels[co->funcs[f]].name);
  if (co->has_var_table_sym)
    printf ("vartable %s\n", co->var_table_sym == co->var_table_addr
	    ? "at-table" : "elsewhere");
  for (size_t v = 0; v < co->num_vars; v++)
    printf ("var %zu %s size %llu link %d\n", v, co->vars[v].name,
	    (unsigned long long) co->vars[v].size, co->vars[v].link);
  ok_gcn_code_object_free (co);
}

/* What the reader finds in FILE, printed; 1 when it rejects FILE.  */
static int
dump_one (const char *file)
{
  struct ok_gcn_code_object co;
  if (ok_gcn_read_code_object_file (file, &co) < 0)
    return 1;
  print_code_object (file, &co);
  return 0;
}

/* The same for FILE's SIZE bytes at BUF, the byte at OFF set to BYTE
   (BUF is the child's own copy).  */
static int
dump_damaged (const char *file, unsigned char *buf, size_t size, size_t off,
	      unsigned byte)
{
  struct ok_gcn_code_object co;
  buf[off] = byte;
  if (ok_gcn_read_code_object (file, buf, size, &co) < 0)
    return 1;
  print_code_object (file, &co);
  return 0;
}

/* The --damage line of CHANGE (OFFSET:BYTE) to FILE's SIZE bytes at
   BUF: dump_damaged run in a child whose output comes back through a
   pipe.  Returns 0, or 1 when the child could not be run.  */
static int
dump_in_child (const char *file, unsigned char *buf, size_t size,
	       const char *change)
{
  char *end;
  errno = 0;
  unsigned long long off = strtoull (change, &end, 10);
  unsigned long byte = 0;
  if (end == change || *end != ':' || errno != 0 || off >= size
      || (byte = strtoul (end + 1, &end, 10)) > 255 || *end != '\0')
    {
      ok_error ("'%s': expected OFFSET:BYTE, an offset in the file (of %zu"
		" bytes) and a byte (0 to 255)", change, size);
      return 1;
    }

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
      int rc = dump_damaged (file, buf, size, off, byte);
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
  char out[4096];
  ssize_t n;
  while ((n = read (fds[0], out, sizeof out)) != 0)
    {
      if (n < 0)
	{
	  if (errno == EINTR)
	    continue;
	  break;
	}
      for (ssize_t i = 0; i < n; i++)
	if (out[i] == '\n')
	  {
	    col = 0;
	    matching = true;
	  }
	else if (matching && out[i] != prefix[col])
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
  printf ("damage %s status %d errors %u\n", change, code, errors);
  return 0;
}

int
main (int argc, char **argv)
{
  int rc = 0;
  ok_set_progname ("gcn-dump");
  bool damage = argc > 1 && strcmp (argv[1], "--damage") == 0;
  if (argc < 2 + 2 * damage)
    {
      fprintf (stderr, "usage: gcn-dump CODE-OBJECT...\n"
	       "       gcn-dump --damage CODE-OBJECT OFFSET:BYTE...\n");
      return 2;
    }
  if (damage)
    {
      size_t size;
      const char *why;
      unsigned char *buf = (unsigned char *) ok_read_file (argv[2], &size,
							   &why);
      if (!buf)
	{
	  ok_error ("cannot read '%s': %s", argv[2], why);
	  return 1;
	}
      for (int i = 3; i < argc; i++)
	if (dump_in_child (argv[2], buf, size, argv[i]) != 0)
	  rc = 1;
      free (buf);
    }
  else
    for (int i = 1; i < argc; i++)
      if (dump_one (argv[i]) != 0)
	rc = 1;
  if (fflush (stdout) != 0 || ferror (stdout))
    rc = 1;
  return rc;
}
