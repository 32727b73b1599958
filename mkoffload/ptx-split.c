/* Splitting a large PTX module; see ptx-split.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ptx-parse.h"
#include "ptx-split.h"

/* E as its defining chunk writes it: a static one made .visible.  */
static void
put_defining (struct mko_text *t, const struct mko_ptx_ent *e)
{
  mko_put (t, e->start, (size_t) (e->body - e->start));
  if (e->linkage == 's')
    mko_puts (t, ".visible ");
  mko_put (t, e->body, (size_t) (e->body_end - e->body));
  mko_puts (t, "\n");
}

/* E as an extern declaration: its linkage replaced by .extern, and its
   text cut before a function's body or a variable's initialiser.  */
static void
put_extern (struct mko_text *t, const struct mko_ptx_ent *e)
{
  mko_put (t, e->start, (size_t) (e->body - e->start));
  mko_puts (t, ".extern ");
  const char *p = e->body + e->linkage_len;
  const char *end = e->body_end - 1;	/* The ';' or the '}'.  */
  int depth = 0;
  for (const char *q = p; q < end; q++)
    {
      if (*q == '{' && e->kind == MKO_PTX_FUNC_DEF)
	{
	  end = q;
	  break;
	}
      if (*q == '{')
	depth++;
      else if (*q == '}')
	depth--;
      else if (*q == '=' && depth == 0 && e->kind == MKO_PTX_VAR_DEF)
	{
	  end = q;
	  break;
	}
    }
  while (end > p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t'
		     || end[-1] == '\r'))
    end--;
  mko_put (t, p, (size_t) (end - p));
  mko_puts (t, ";\n");
}

/* The names OTHERS define as global functions or variables.  */
static void
global_defs (char *const *others, size_t nothers, struct mko_ptx_names *out)
{
  static const char *const marks[] = {
    "// BEGIN GLOBAL FUNCTION DEF: ", "// BEGIN GLOBAL VAR DEF: "
  };
  for (size_t m = 0; m < nothers; m++)
    for (const char *p = others[m]; *p; p = mko_next_line (p))
      for (size_t k = 0; k < 2; k++)
	if (strncmp (p, marks[k], strlen (marks[k])) == 0)
	  {
	    const char *name = p + strlen (marks[k]);
	    const char *end = mko_line_end (name);
	    while (end > name && (end[-1] == ' ' || end[-1] == '\r'))
	      end--;
	    mko_ptx_add_name (out, name, (size_t) (end - name));
	  }
  mko_ptx_sort_names (out);
}

size_t
mko_ptx_split (const char *module, char *const *others, size_t nothers,
	       size_t max_defs, char ***chunks)
{
  *chunks = NULL;
  struct mko_ptx_ent *ents = NULL;
  size_t nents = 0, ndefs = 0, nchunks = 0;
  const char *head_end;
  struct mko_ptx_names defs = { 0 }, globals = { 0 };

  bool ok = mko_ptx_parse (module, false, &ents, &nents, &head_end);
  for (size_t i = 0; ok && i < nents; i++)
    if (ents[i].kind == MKO_PTX_FUNC_DEF)
      {
	ndefs++;
	mko_ptx_add_name (&defs, ents[i].name, ents[i].name_len);
      }
  if (!ok || ndefs <= max_defs || max_defs == 0
      || !mko_ptx_sort_names (&defs))
    goto out;

  /* A static function or variable made .visible must not meet a global
     one of the same name in another module.  */
  global_defs (others, nothers, &globals);
  for (size_t i = 0; i < nents; i++)
    if ((ents[i].kind == MKO_PTX_FUNC_DEF || ents[i].kind == MKO_PTX_VAR_DEF)
	&& ents[i].linkage == 's'
	&& mko_ptx_find_name (&globals, ents[i].name, ents[i].name_len) >= 0)
      goto out;

  /* Consecutive definitions to each chunk, as evenly as possible.  */
  nchunks = (ndefs + max_defs - 1) / max_defs;
  size_t per = (ndefs + nchunks - 1) / nchunks;
  size_t *def_chunk = xcalloc (defs.n, sizeof *def_chunk);
  size_t *ent_chunk = xcalloc (nents, sizeof *ent_chunk);
  bool *def_entry = xcalloc (defs.n, sizeof *def_entry);
  bool *def_declared = xcalloc (defs.n, sizeof *def_declared);
  for (size_t i = 0, k = 0; i < nents; i++)
    if (ents[i].kind == MKO_PTX_FUNC_DEF)
      {
	ent_chunk[i] = k++ / per;
	long d = mko_ptx_find_name (&defs, ents[i].name, ents[i].name_len);
	def_chunk[d] = ent_chunk[i];
	def_entry[d] = ents[i].entry;
      }
  for (size_t i = 0; i < nents; i++)
    if (ents[i].kind == MKO_PTX_FUNC_DECL)
      {
	long d = mko_ptx_find_name (&defs, ents[i].name, ents[i].name_len);
	if (d >= 0)
	  def_declared[d] = true;
      }

  *chunks = xcalloc (nchunks, sizeof **chunks);
  for (size_t c = 0; c < nchunks; c++)
    {
      struct mko_text t = { 0 };
      mko_put (&t, module, (size_t) (head_end - module));
      for (size_t i = 0; i < nents; i++)
	{
	  const struct mko_ptx_ent *e = &ents[i];
	  long d = (e->kind == MKO_PTX_FUNC_DECL || e->kind == MKO_PTX_FUNC_DEF)
		   ? mko_ptx_find_name (&defs, e->name, e->name_len) : -1;
	  switch (e->kind)
	    {
	    case MKO_PTX_FUNC_DECL:
	      if (d < 0)
		mko_put (&t, e->start, (size_t) (e->end - e->start));
	      else if (def_chunk[d] == c)
		put_defining (&t, e);
	      else if (!def_entry[d])
		put_extern (&t, e);
	      break;
	    case MKO_PTX_FUNC_DEF:
	      if (ent_chunk[i] == c)
		put_defining (&t, e);
	      else if (!def_declared[d] && !e->entry)
		put_extern (&t, e);
	      break;
	    case MKO_PTX_VAR_DECL:
	      mko_put (&t, e->start, (size_t) (e->end - e->start));
	      break;
	    case MKO_PTX_VAR_DEF:
	      if (c == 0)
		put_defining (&t, e);
	      else
		put_extern (&t, e);
	      break;
	    }
	}
      (*chunks)[c] = t.s;
    }
  free (def_chunk);
  free (ent_chunk);
  free (def_entry);
  free (def_declared);

 out:
  free (ents);
  mko_ptx_free_names (&defs);
  mko_ptx_free_names (&globals);
  return *chunks ? nchunks : 0;
}
