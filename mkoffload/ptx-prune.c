/* Leaving out unreachable functions before ptxas; see ptx-prune.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ptx-parse.h"
#include "ptx-prune.h"

/* One module, parsed or not.  */
struct module
{
  const char *text;
  bool parsed;
  struct mko_ptx_ent *ents;
  size_t nents;
  const char *head_end;
};

/* The function definitions of all parsed modules.  A static function's
   name may be defined in several modules, a .weak one too: the names are
   what is reached, so that all of them stay whenever one is reached (a
   few functions too many at worst).  */
struct graph
{
  struct mko_ptx_names names;	/* Sorted, unique.  */
  bool *reached;		/* For each name.  */
  size_t *stack, nstack;	/* Names reached, their bodies not read.  */
  /* Each name's definitions: a chain from FIRST[NAME] through NEXT over
     the definitions DEF_ENT (SIZE_MAX ends it).  */
  size_t *first, *next;
  const struct mko_ptx_ent **def_ent;
};

static void
reach (struct graph *g, long d)
{
  if (d < 0 || g->reached[d])
    return;
  g->reached[d] = true;
  g->stack[g->nstack++] = (size_t) d;
}

/* Reach every function that [P, END) names: each identifier, but the
   ones of registers (%r1) and the names of "// BEGIN" lines (a
   declaration or definition names itself there).  */
static void
reach_names (struct graph *g, const char *p, const char *end)
{
  while (p < end)
    {
      if (p[0] == '/' && p + 1 < end && p[1] == '/'
	  && strncmp (p, "// BEGIN ", 9) == 0)
	p = mko_next_line (p);
      else if (*p == '%' || mko_ptx_ident_char (*p))
	{
	  const char *s = p++;
	  while (p < end && mko_ptx_ident_char (*p))
	    p++;
	  if (mko_ptx_ident_start (*s))
	    reach (g, mko_ptx_find_name (&g->names, s, (size_t) (p - s)));
	}
      else
	p++;
    }
}

/* Whether E, a function's declaration or definition, is of a function
   that is defined and not reached.  */
static bool
unreached (const struct graph *g, const struct mko_ptx_ent *e)
{
  long d = mko_ptx_find_name (&g->names, e->name, e->name_len);
  return d >= 0 && !g->reached[d];
}

size_t
mko_ptx_prune (char *const *modules, size_t n, char ***pruned,
	       size_t *ndefs)
{
  struct module *mods = xcalloc (n ? n : 1, sizeof *mods);
  struct graph g = { 0 };
  size_t ndef_ents = 0;

  for (size_t m = 0; m < n; m++)
    {
      struct module *mod = &mods[m];
      mod->text = modules[m];
      mod->parsed = mko_ptx_parse (mod->text, true, &mod->ents,
				   &mod->nents, &mod->head_end);
      for (size_t i = 0; i < mod->nents; i++)
	if (mod->ents[i].kind == MKO_PTX_FUNC_DEF)
	  {
	    mko_ptx_add_name (&g.names, mod->ents[i].name,
			      mod->ents[i].name_len);
	    ndef_ents++;
	  }
    }
  *ndefs = ndef_ents;

  /* The names, unique.  */
  mko_ptx_sort_names (&g.names);
  size_t k = 0;
  for (size_t i = 0; i < g.names.n; i++)
    if (k == 0 || g.names.len[k - 1] != g.names.len[i]
	|| memcmp (g.names.v[k - 1], g.names.v[i], g.names.len[i]) != 0)
      {
	g.names.v[k] = g.names.v[i];
	g.names.len[k++] = g.names.len[i];
      }
  g.names.n = k;
  size_t nn = g.names.n ? g.names.n : 1;
  g.reached = xcalloc (nn, sizeof *g.reached);
  g.stack = xcalloc (nn, sizeof *g.stack);
  g.first = xmalloc (nn * sizeof *g.first);
  for (size_t i = 0; i < g.names.n; i++)
    g.first[i] = SIZE_MAX;
  g.next = xcalloc (ndef_ents ? ndef_ents : 1, sizeof *g.next);
  g.def_ent = xcalloc (ndef_ents ? ndef_ents : 1, sizeof *g.def_ent);
  size_t j = 0;
  for (size_t m = 0; m < n; m++)
    for (size_t i = 0; i < mods[m].nents; i++)
      if (mods[m].ents[i].kind == MKO_PTX_FUNC_DEF)
	{
	  const struct mko_ptx_ent *e = &mods[m].ents[i];
	  size_t d = (size_t) mko_ptx_find_name (&g.names, e->name,
						 e->name_len);
	  g.def_ent[j] = e;
	  g.next[j] = g.first[d];
	  g.first[d] = j++;
	}

  /* The roots: the kernels, and whatever the text outside function
     bodies names (the initialisers of variables, the markers after the
     declarations); all of a module that is not parsed.  */
  for (size_t m = 0; m < n; m++)
    {
      const struct module *mod = &mods[m];
      if (!mod->parsed)
	{
	  reach_names (&g, mod->text, mod->text + strlen (mod->text));
	  continue;
	}
      reach_names (&g, mod->text, mod->head_end);
      for (size_t i = 0; i < mod->nents; i++)
	{
	  const struct mko_ptx_ent *e = &mod->ents[i];
	  if (e->kind == MKO_PTX_FUNC_DEF && e->entry)
	    reach_names (&g, e->start, e->end);
	  else if (e->kind == MKO_PTX_VAR_DECL || e->kind == MKO_PTX_VAR_DEF)
	    reach_names (&g, e->body, e->end);
	  else
	    reach_names (&g, e->body_end, e->end);
	}
    }

  /* What the bodies of reached functions name.  */
  while (g.nstack)
    {
      size_t d = g.stack[--g.nstack];
      for (size_t i = g.first[d]; i != SIZE_MAX; i = g.next[i])
	reach_names (&g, g.def_ent[i]->body, g.def_ent[i]->body_end);
    }

  /* Each module without its unreached definitions, and without the
     declarations that only a definition in the same module may follow
     (not .extern); the comments and .file lines after them stay.  */
  size_t removed = 0;
  *pruned = xcalloc (n ? n : 1, sizeof **pruned);
  for (size_t m = 0; m < n; m++)
    {
      const struct module *mod = &mods[m];
      size_t gone = 0;
      for (size_t i = 0; i < mod->nents; i++)
	if (mod->ents[i].kind == MKO_PTX_FUNC_DEF
	    && unreached (&g, &mod->ents[i]))
	  gone++;
      if (gone == 0)
	continue;
      removed += gone;
      struct mko_text t = { 0 };
      mko_put (&t, mod->text, (size_t) (mod->head_end - mod->text));
      for (size_t i = 0; i < mod->nents; i++)
	{
	  const struct mko_ptx_ent *e = &mod->ents[i];
	  bool drop = (e->kind == MKO_PTX_FUNC_DEF
		       || (e->kind == MKO_PTX_FUNC_DECL && e->linkage != 'e'))
		      && unreached (&g, e);
	  if (drop)
	    mko_put (&t, e->body_end, (size_t) (e->end - e->body_end));
	  else
	    mko_put (&t, e->start, (size_t) (e->end - e->start));
	}
      (*pruned)[m] = t.s;
    }

  for (size_t m = 0; m < n; m++)
    free (mods[m].ents);
  free (mods);
  mko_ptx_free_names (&g.names);
  free (g.reached);
  free (g.stack);
  free (g.first);
  free (g.next);
  free (g.def_ent);
  return removed;
}
