/* The top-level entities of a PTX module; see ptx-parse.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ptx-parse.h"

#define BEGIN_MARK "// BEGIN "

void
mko_put (struct mko_text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap)
    {
      t->cap = (t->len + n + 1) * 2;
      t->s = xrealloc (t->s, t->cap);
    }
  memcpy (t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

void
mko_puts (struct mko_text *t, const char *s)
{
  mko_put (t, s, strlen (s));
}

static int
cmp_name (const char *a, size_t alen, const char *b, size_t blen)
{
  int c = memcmp (a, b, alen < blen ? alen : blen);
  return c ? c : (alen > blen) - (alen < blen);
}

long
mko_ptx_find_name (const struct mko_ptx_names *n, const char *name,
		   size_t len)
{
  size_t lo = 0, hi = n->n;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      int c = cmp_name (name, len, n->v[mid], n->len[mid]);
      if (c == 0)
	return (long) mid;
      if (c < 0)
	hi = mid;
      else
	lo = mid + 1;
    }
  return -1;
}

void
mko_ptx_add_name (struct mko_ptx_names *n, const char *name, size_t len)
{
  n->v = xrealloc (n->v, (n->n + 1) * sizeof *n->v);
  n->len = xrealloc (n->len, (n->n + 1) * sizeof *n->len);
  n->v[n->n] = name;
  n->len[n->n] = len;
  n->n++;
}

/* A name and its length, for sorting.  */
struct name_pair
{
  const char *v;
  size_t len;
};

static int
cmp_pair (const void *a, const void *b)
{
  const struct name_pair *x = a, *y = b;
  return cmp_name (x->v, x->len, y->v, y->len);
}

bool
mko_ptx_sort_names (struct mko_ptx_names *n)
{
  struct name_pair *p = xcalloc (n->n ? n->n : 1, sizeof *p);
  for (size_t i = 0; i < n->n; i++)
    p[i] = (struct name_pair) { n->v[i], n->len[i] };
  qsort (p, n->n, sizeof *p, cmp_pair);
  bool unique = true;
  for (size_t i = 0; i < n->n; i++)
    {
      n->v[i] = p[i].v;
      n->len[i] = p[i].len;
      if (i > 0 && cmp_pair (&p[i - 1], &p[i]) == 0)
	unique = false;
    }
  free (p);
  return unique;
}

void
mko_ptx_free_names (struct mko_ptx_names *n)
{
  free (n->v);
  free (n->len);
}

const char *
mko_line_end (const char *p)
{
  const char *e = strchr (p, '\n');
  return e ? e : p + strlen (p);
}

const char *
mko_next_line (const char *p)
{
  const char *e = mko_line_end (p);
  return *e ? e + 1 : e;
}

/* Parse the "// BEGIN ..." line at P into E's kind and name; false when
   it introduces anything else.  */
static bool
parse_mark (const char *p, struct mko_ptx_ent *e)
{
  static const struct { const char *text; enum mko_ptx_kind kind; } marks[] = {
    { "GLOBAL FUNCTION DECL: ", MKO_PTX_FUNC_DECL },
    { "FUNCTION DECL: ", MKO_PTX_FUNC_DECL },
    { "GLOBAL FUNCTION DEF: ", MKO_PTX_FUNC_DEF },
    { "FUNCTION DEF: ", MKO_PTX_FUNC_DEF },
    { "GLOBAL VAR DECL: ", MKO_PTX_VAR_DECL },
    { "GLOBAL VAR DEF: ", MKO_PTX_VAR_DEF },
    { "VAR DEF: ", MKO_PTX_VAR_DEF },
  };
  p += strlen (BEGIN_MARK);
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    {
      size_t l = strlen (marks[i].text);
      if (strncmp (p, marks[i].text, l) != 0)
	continue;
      const char *name = p + l;
      const char *end = mko_line_end (name);
      while (end > name && (end[-1] == ' ' || end[-1] == '\r'))
	end--;
      if (end == name)
	return false;
      e->kind = marks[i].kind;
      e->name = name;
      e->name_len = (size_t) (end - name);
      return true;
    }
  return false;
}

/* Where E's entity ends: after the '}' closing a function definition,
   after the ';' of anything else; NULL when it does not end before
   E->END.  Braces inside initialisers balance; comments are skipped.  */
static const char *
entity_end (const struct mko_ptx_ent *e)
{
  int depth = 0;
  bool opened = false;
  for (const char *p = e->body; p < e->end; p++)
    {
      if (p[0] == '/' && p + 1 < e->end && p[1] == '/')
	{
	  p = mko_line_end (p);
	  if (p >= e->end)
	    break;
	  continue;
	}
      if (*p == '{')
	{
	  depth++;
	  opened = true;
	}
      else if (*p == '}')
	{
	  if (--depth < 0)
	    return NULL;
	  if (depth == 0 && e->kind == MKO_PTX_FUNC_DEF && opened)
	    return p + 1;
	}
      else if (*p == ';' && depth == 0 && e->kind != MKO_PTX_FUNC_DEF)
	return p + 1;
    }
  return NULL;
}

/* Fill E's linkage, and for a function whether it is a kernel, from the
   text at E->BODY; false when it is not what E->KIND says.  */
static bool
parse_linkage (struct mko_ptx_ent *e)
{
  const char *p = e->body;
  static const struct { const char *word; char linkage; } links[] = {
    { ".visible ", 'v' }, { ".weak ", 'w' }, { ".extern ", 'e' },
  };
  e->linkage = 's';
  e->linkage_len = 0;
  for (size_t i = 0; i < sizeof links / sizeof *links; i++)
    if (strncmp (p, links[i].word, strlen (links[i].word)) == 0)
      {
	e->linkage = links[i].linkage;
	e->linkage_len = strlen (links[i].word);
      }
  p += e->linkage_len;
  if (e->kind == MKO_PTX_FUNC_DECL || e->kind == MKO_PTX_FUNC_DEF)
    {
      e->entry = strncmp (p, ".entry ", 7) == 0;
      if (!e->entry && strncmp (p, ".func ", 6) != 0
	  && strncmp (p, ".func(", 6) != 0)
	return false;
    }
  else if (*p != '.' || strncmp (p, ".common ", 8) == 0)
    return false;
  /* A definition that says .extern is no definition this parser
     knows.  */
  return !(e->linkage == 'e'
	   && (e->kind == MKO_PTX_FUNC_DEF || e->kind == MKO_PTX_VAR_DEF));
}

/* The name a function definition's header at E->BODY declares (after
   its linkage, .entry or .func and a return parameter list), into
   E->NAME; false when there is none.  */
static bool
parse_def_name (struct mko_ptx_ent *e)
{
  const char *p = e->body + e->linkage_len;
  p += e->entry ? 7 : 5;
  while (*p == ' ')
    p++;
  if (*p == '(')
    {
      const char *close = strchr (p, ')');
      if (close == NULL)
	return false;
      p = close + 1;
      while (*p == ' ')
	p++;
    }
  size_t n = strcspn (p, " (\n\r\t");
  e->name = p;
  e->name_len = n;
  return n > 0;
}

/* Skip blanks and comment lines from P, not past END; .file lines too
   when FILES.  */
static const char *
skip_comments (const char *p, const char *end, bool files)
{
  while (p < end)
    {
      if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
	p++;
      else if ((p[0] == '/' && p + 1 < end && p[1] == '/')
	       || (files && strncmp (p, ".file ", 6) == 0))
	p = mko_next_line (p);
      else
	break;
    }
  return p < end ? p : end;
}

/* Add to *ENTS (*NENTS of them) the entities of the block [START, END)
   that "// BEGIN" line START introduces as MARK says: its own, then the
   function definitions that follow it without a line of their own (GCC
   writes an OpenMP kernel, the .entry that calls NAME$impl, after the
   function before that one).  False when the block holds anything
   else (but .file lines when FILES).  */
static bool
add_block (const struct mko_ptx_ent *mark, const char *end, bool files,
	   struct mko_ptx_ent **ents, size_t *nents)
{
  struct mko_ptx_ent e = *mark;
  e.end = end;
  e.body = mko_next_line (e.start);
  for (;;)
    {
      e.body_end = entity_end (&e);
      if (e.body_end == NULL || !parse_linkage (&e))
	return false;
      if (e.start == e.body && !parse_def_name (&e))
	return false;
      *ents = xrealloc (*ents, (*nents + 1) * sizeof **ents);
      (*ents)[(*nents)++] = e;
      const char *p = skip_comments (e.body_end, end, files);
      if (p == end)
	{
	  (*ents)[*nents - 1].end = end;
	  return true;
	}
      (*ents)[*nents - 1].end = p;
      /* An unmarked function definition.  */
      e = (struct mko_ptx_ent) { .kind = MKO_PTX_FUNC_DEF, .start = p,
				 .body = p, .end = end };
    }
}

bool
mko_ptx_parse (const char *module, bool files, struct mko_ptx_ent **ents,
	       size_t *nents, const char **head_end)
{
  *ents = NULL;
  *nents = 0;
  *head_end = module + strlen (module);
  /* The top-level blocks, each from its "// BEGIN" line to the next
     one; depth counts the braces of function bodies and initialisers.  */
  struct mko_ptx_ent *marks = NULL;
  size_t nmarks = 0;
  int depth = 0;
  bool ok = true;
  for (const char *p = module; ok && *p; p = mko_next_line (p))
    {
      if (depth == 0 && strncmp (p, BEGIN_MARK, strlen (BEGIN_MARK)) == 0)
	{
	  if (strncmp (p, BEGIN_MARK "PREAMBLE", 17) == 0)
	    ok = nmarks == 0;
	  else
	    {
	      struct mko_ptx_ent e = { .start = p };
	      ok = parse_mark (p, &e);
	      if (nmarks == 0)
		*head_end = p;
	      marks = xrealloc (marks, (nmarks + 1) * sizeof *marks);
	      marks[nmarks++] = e;
	    }
	}
      const char *end = mko_line_end (p);
      for (const char *q = p; q < end; q++)
	{
	  if (q[0] == '/' && q[1] == '/')
	    break;
	  if (*q == '{')
	    depth++;
	  else if (*q == '}' && --depth < 0)
	    ok = false;
	}
    }
  const char *module_end = module + strlen (module);
  for (size_t i = 0; ok && i < nmarks; i++)
    ok = add_block (&marks[i], i + 1 < nmarks ? marks[i + 1].start
					       : module_end, files, ents, nents);
  free (marks);
  if (!ok || depth != 0)
    {
      free (*ents);
      *ents = NULL;
      *nents = 0;
      *head_end = module_end;
      return false;
    }
  return true;
}
