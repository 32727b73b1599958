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
   line and exit status 1.  */

#include "config.h"

#include <stdio.h>

#include "diag.h"
#include "gcn-code-object.h"

int
main (int argc, char **argv)
{
  int rc = 0;
  ok_set_progname ("gcn-dump");
  if (argc < 2)
    {
      fprintf (stderr, "usage: gcn-dump CODE-OBJECT...\n");
      return 2;
    }
  for (int i = 1; i < argc; i++)
    {
      struct ok_gcn_code_object co;
      if (ok_gcn_read_code_object_file (argv[i], &co) < 0)
	{
	  rc = 1;
	  continue;
	}
      printf ("object %s arch %#x mach %#x\n", argv[i], (unsigned) co.arch,
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
    }
  if (fflush (stdout) != 0 || ferror (stdout))
    rc = 1;
  return rc;
}
