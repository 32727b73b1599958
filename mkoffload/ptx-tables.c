/* The module of function tables for the nvptx device code of GCC 13 and
   newer; see ptx-tables.h.

   As GCC 13 to 16's gcc/config/nvptx/mkoffload.cc (process) writes it:

   - $offload_func_table, when the program requires reverse_offload and
     has functions (GCC 13 and newer): one entry per FUNC_MAP line, in
     host-table order; the functions of `target device (ancestor: 1)'
     regions, which the nvptx back end names "...$nohost" (or
     "...$nohost$N") and makes visible, by name, every other one 0.
     libgomp gets it from the plugin as the reverse-offload table and
     maps the address a device asks for back to the host function;
   - $offload_ind_func_table (GCC 14 and newer): one entry per
     IND_FUNC_MAP line, in the order of libgomp's host table of
     `declare target indirect' functions; the plugin pairs the two into
     the device's map of indirect calls.

   Each function a table names is declared .extern, the declaration
   copied from the line after "// BEGIN GLOBAL FUNCTION DECL: NAME" in the
   linked modules, so that the module links with the one defining it
   (the plugin's JIT link, or nvlink for the cubins).

   What differs from GCC's module, and why:

   - .address_size 64, which GCC's module lacks.  Every module the nvptx
     back end writes has it (nvptx_file_start), so this one says the same
     as those it is linked with, whatever a tool would assume without it.
     CUDA 13's ptxas compiles the module to the same object with or
     without it (it only does 64-bit: ".address_size 32" is "32-Bit
     compilation is no longer supported").
   - .version and .target both come from the module with this link's
     "//:" lines, whose code the tables point into.  GCC takes them from
     the last module with function map lines for $offload_func_table, but
     from the file's last module, a library module when there are several,
     for $offload_ind_func_table.
   - One module for both tables, and its text on lines of its own (GCC's
     strings run its directives together on one line).
   - For sm_30 PTX and reverse offload, GCC's mkoffload warns that
     reverse offload requires sm_35 and leaves the nvptx image out.  The
     tables are written whatever the .target here: sm_30 PTX runs only
     JIT-compiled or ahead of time for a newer GPU (current CUDA releases
     support no older one), and the plugin, like GCC's, does not ask a
     device's architecture before it serves reverse offload.

   GCC's workaround of its PR 108098 is kept: a module with no function
   had its function addresses compiled to 0 by older CUDA JIT compilers,
   so the module has an empty one.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "gomp-abi.h"
#include "ptx-parse.h"
#include "ptx-tables.h"

#define DECL_MARK "// BEGIN GLOBAL FUNCTION DECL: "

int
mko_ptx_has_maps (const char *module)
{
  return strncmp (module, "//:", 3) == 0 || strstr (module, "\n//:") != NULL;
}

/* Whether NAME is the device function of a reverse-offload region, as
   GCC's mkoffload tells them.  */
static int
is_nohost (const char *name)
{
  size_t len = strlen (name);
  return (len >= 7 && strcmp (name + len - 7, "$nohost") == 0)
	 || strstr (name, "$nohost$") != NULL;
}

/* The end of the line at P (its '\n' or the text's NUL).  */
static const char *
line_end (const char *p)
{
  const char *e = strchr (p, '\n');
  return e ? e : p + strlen (p);
}

/* The rest of MODULE's line whose first word is DIRECTIVE (".version",
   ".target"), from its next word on, malloc'd; NULL when MODULE has no
   such line.  */
static char *
module_directive (const char *module, const char *directive)
{
  size_t n = strlen (directive);
  for (const char *line = module; *line;)
    {
      const char *p = line + strspn (line, " \t");
      const char *eol = line_end (line);
      if (strncmp (p, directive, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
	{
	  p += n;
	  p += strspn (p, " \t");
	  const char *e = eol;
	  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
	    e--;
	  if (e > p)
	    return xstrndup (p, e - p);
	}
      line = *eol ? eol + 1 : eol;
    }
  return NULL;
}

/* The prototype of the function NAME as the line after its
   "// BEGIN GLOBAL FUNCTION DECL: NAME" in MODULES (NMODULES of them)
   gives it, from its ".func" on, without the linkage directives before
   it (.visible, .weak, .extern), e.g. ".func (.param .u32 %value_out) f
   (.param .u32 %in_ar0);"; malloc'd, NULL when there is none.  */
static char *
find_prototype (char *const *modules, size_t nmodules, const char *name)
{
  size_t len = strlen (name);
  for (size_t m = 0; m < nmodules; m++)
    for (const char *p = modules[m]; (p = strstr (p, DECL_MARK)); p++)
      {
	const char *n = p + strlen (DECL_MARK);
	if ((p != modules[m] && p[-1] != '\n') || strncmp (n, name, len) != 0
	    || n[len] != '\n')
	  continue;
	const char *decl = n + len + 1;
	const char *eol = line_end (decl);
	const char *f = decl;
	/* Skip the linkage directives: words that begin with '.' other
	   than .func.  */
	while (f < eol && *f == '.' && strncmp (f, ".func", 5) != 0)
	  {
	    f += strcspn (f, " \t\n");
	    f += strspn (f, " \t");
	  }
	const char *e = eol;
	while (e > f && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
	  e--;
	if (f < e && strncmp (f, ".func", 5) == 0
	    && (f[5] == ' ' || f[5] == '\t' || f[5] == '(') && e[-1] == ';')
	  return xstrndup (f, e - f);
      }
  return NULL;
}

/* Whether IN's modules declare the function NAME local to its module
   ("// BEGIN FUNCTION DECL: NAME").  */
static int
is_local (const struct mko_ptx_tables_in *in, const char *name)
{
  char *mark = xasprintf ("// BEGIN FUNCTION DECL: %s\n", name);
  int found = 0;
  for (size_t m = 0; m < in->nmodules && !found; m++)
    found = strstr (in->modules[m], mark) != NULL;
  free (mark);
  return found;
}

/* Declare each function of NAMES (N of them) that WANT accepts (all
   when it is NULL) .extern in T.  Return 0, or -1 after reporting that
   one has no declaration in IN's modules.  */
static int
add_declarations (struct mko_text *t, const struct mko_ptx_tables_in *in,
		  const char *const *names, size_t n,
		  int (*want) (const char *), const char *table)
{
  for (size_t i = 0; i < n; i++)
    {
      if (want && !want (names[i]))
	continue;
      char *proto = find_prototype (in->modules, in->nmodules, names[i]);
      if (!proto)
	{
	  /* GCC 14's nvptx back end declares a static function so, and
	     its mkoffload fails the same way.  */
	  const char *local = is_local (in, names[i])
			      ? " (it is local to its module: a static"
				" function?)" : "";
	  ok_error ("'%s': no declaration of function '%s' (a line \""
		    DECL_MARK "%s\" followed by its .func prototype) to"
		    " copy into the PTX module of %s%s", in->ptx, names[i],
		    names[i], table, local);
	  return -1;
	}
      mko_puts (t, ".extern ");
      mko_puts (t, proto);
      mko_puts (t, "\n");
      free (proto);
    }
  return 0;
}

/* The definition of the table VAR in T: an entry per name of NAMES (N
   of them), the name when WANT accepts it (or WANT is NULL), else 0.  */
static void
add_table (struct mko_text *t, const char *var, const char *const *names,
	   size_t n, int (*want) (const char *))
{
  mko_puts (t, ".visible .global .align 8 .u64 ");
  mko_puts (t, var);
  mko_puts (t, "[] = {");
  for (size_t i = 0; i < n; i++)
    {
      mko_puts (t, i ? ",\n\t" : "\n\t");
      mko_puts (t, !want || want (names[i]) ? names[i] : "0");
    }
  mko_puts (t, "};\n");
}

int
mko_ptx_tables (const struct mko_ctx *ctx,
		const struct mko_ptx_tables_in *in, char **module)
{
  *module = NULL;
  /* GCC 12's device code has no use for either table (its libgomp
     never asks for the reverse-offload one), and only GCC 14's and newer
     has indirect functions.  */
  int rev = OK_GCC_HAS_REVERSE_OFFLOAD (ctx->gcc_version)
	    && (ctx->omp_requires & OK_GOMP_REQUIRES_REVERSE_OFFLOAD) != 0
	    && ctx->func_names.n > 0;
  int ind = (OK_GCC_HAS_INDIRECT_FUNCS (ctx->gcc_version)
	     && in->ind_names->n > 0);
  if (!rev && !ind)
    return 0;

  size_t maps = in->nmodules;
  for (size_t m = 0; m < in->nmodules; m++)
    if (mko_ptx_has_maps (in->modules[m]))
      maps = m;
  char *version = NULL, *target = NULL;
  if (maps < in->nmodules)
    {
      version = module_directive (in->modules[maps], ".version");
      target = module_directive (in->modules[maps], ".target");
    }
  if (!version || !target)
    {
      if (maps < in->nmodules)
	ok_error ("'%s': PTX module %zu of %zu, which has the map lines,"
		  " has no %s directive for the PTX module of function"
		  " tables", in->ptx, maps + 1, in->nmodules,
		  version ? ".target" : ".version");
      else
	ok_error ("'%s': no PTX module has map lines", in->ptx);
      free (version);
      free (target);
      return -1;
    }

  struct mko_text t = { 0 };
  mko_puts (&t, "// Function tables of this link for the device code of"
	    " GCC 13 and newer\n// (reverse offload, indirect calls),"
	    " as GCC's nvptx mkoffload appends them.\n.version ");
  mko_puts (&t, version);
  mko_puts (&t, "\n.target ");
  mko_puts (&t, target);
  mko_puts (&t, "\n.address_size 64\n"
	    "// Older CUDA JIT compilers gave a module without code 0 for"
	    " the addresses\n// of functions (GCC's PR 108098).\n"
	    ".func __dummy$func ( );\n"
	    ".func __dummy$func ( )\n{\n}\n");
  free (version);
  free (target);

  int rc = 0;
  if (rev)
    {
      rc = add_declarations (&t, in, ctx->func_names.v, ctx->func_names.n,
			     is_nohost, "reverse-offload functions");
      if (rc == 0)
	add_table (&t, "$offload_func_table", ctx->func_names.v,
		   ctx->func_names.n, is_nohost);
    }
  if (ind && rc == 0)
    {
      rc = add_declarations (&t, in, in->ind_names->v, in->ind_names->n,
			     NULL, "indirect functions");
      if (rc == 0)
	add_table (&t, "$offload_ind_func_table", in->ind_names->v,
		   in->ind_names->n, NULL);
    }
  if (rc < 0)
    {
      free (t.s);
      return -1;
    }
  ok_inform ("'%s': a PTX module of function tables appended (%s%s%s)",
	     in->ptx, rev ? "reverse offload" : "",
	     rev && ind ? ", " : "", ind ? "indirect functions" : "");
  *module = t.s;
  return 0;
}
