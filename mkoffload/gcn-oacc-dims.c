/* The OpenACC launch dimensions of an amdgcn link: GCC's amdgcn back end
   writes them only into its assembler output, one ";; OPENACC-DIMS:" line
   per OpenACC function (GCC's own gcn mkoffload reads them there too), so
   for -fopenacc target-gcn.c has the accel compiler write assembler and
   reads it here before assembling it.  */

#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "file-io.h"
#include "gcn-oacc-dims.h"

#define DIMS_MARK ";; OPENACC-DIMS:"

/* Parse LINE (up to END), which has DIMS_MARK at MARK, as the amdgcn back
   end writes it for an OpenACC function (gcn_hsa_declare_function_name,
   GCC 12 to 16: "\t;; OPENACC-DIMS: %d, %d, %d : %s", gang, worker,
   vector, name) into *D and its name into *NAME (malloc'd).  Return 0,
   or -1 after reporting one error about ASM_FILE's line LINENO.  */
static int
parse_dims_line (const char *asm_file, size_t lineno, const char *mark,
		 const char *end, struct ok_oacc_dims *d, char **name)
{
  static const char *const axis[3] = { "gang", "worker", "vector" };
  const char *p = mark + strlen (DIMS_MARK);
  for (int k = 0; k < 3; k++)
    {
      p += strspn (p, " \t");
      if (k > 0)
	{
	  if (p >= end || *p != ',')
	    goto malformed;
	  p++;
	  p += strspn (p, " \t");
	}
      char *e;
      long v = strtol (p, &e, 10);
      if (e == p || e > end || (*p != '-' && (*p < '0' || *p > '9')))
	goto malformed;
      if (v < 0 || v > UINT16_MAX)
	{
	  ok_error ("'%s', line %zu: OpenACC %s size %ld is not 0 to %u",
		    asm_file, lineno, axis[k], v, (unsigned) UINT16_MAX);
	  return -1;
	}
      d->dim[k] = (uint16_t) v;
      p = e;
    }
  p += strspn (p, " \t");
  if (p >= end || *p != ':')
    goto malformed;
  p++;
  p += strspn (p, " \t");
  const char *e = end;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
    e--;
  if (e == p || memchr (p, ' ', e - p) || memchr (p, '\t', e - p))
    goto malformed;
  d->flags = OK_OACC_FN;
  *name = xstrndup (p, e - p);
  return 0;
malformed:
  ok_error ("'%s', line %zu: malformed OpenACC dimensions '%.*s', expected"
	    " '" DIMS_MARK " GANG, WORKER, VECTOR : NAME'", asm_file, lineno,
	    (int) (end - mark), mark);
  return -1;
}

/* OpenACC: the launch dimensions of CTX's functions from the ";;
   OPENACC-DIMS:" lines of ASM_FILE, in function-table order, in *DIMS
   (malloc'd; NULL when no function has any: an OpenMP program's
   functions have none).  Return 0, or -1 after reporting one error.  */
int
mko_gcn_read_dims (struct mko_ctx *ctx, const char *asm_file,
		   struct ok_oacc_dims **dims)
{
  size_t len;
  const char *why;
  char *text = ok_read_file (asm_file, &len, &why);
  *dims = NULL;
  if (!text)
    {
      ok_error ("cannot read '%s': %s", asm_file, why);
      return -1;
    }
  struct ok_oacc_dims *v = xcalloc (ctx->func_names.n + 1, sizeof *v);
  int any = 0, rc = 0;
  size_t lineno = 1;
  for (const char *line = text; rc == 0 && line < text + len; lineno++)
    {
      const char *end = memchr (line, '\n', text + len - line);
      if (!end)
	end = text + len;
      const char *p = line + strspn (line, " \t");
      if (end - p >= (ptrdiff_t) strlen (DIMS_MARK)
	  && strncmp (p, DIMS_MARK, strlen (DIMS_MARK)) == 0)
	{
	  struct ok_oacc_dims d = { { 0 }, 0 };
	  char *name;
	  rc = parse_dims_line (asm_file, lineno, p, end, &d, &name);
	  /* A function outside the table (none is expected) has nothing
	     to launch.  */
	  for (size_t i = 0; rc == 0 && i < ctx->func_names.n; i++)
	    if (strcmp (ctx->func_names.v[i], name) == 0)
	      {
		v[i] = d;
		any = 1;
	      }
	  if (rc == 0)
	    free (name);
	}
      line = end + 1;
    }
  free (text);
  if (rc == 0 && any)
    *dims = v;
  else
    free (v);
  return rc;
}
