/* Splitting a large PTX module; see ptx-split.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ptx-split.h"

#define BEGIN_MARK "// BEGIN "

enum ent_kind { ENT_FUNC_DECL, ENT_FUNC_DEF, ENT_VAR_DECL, ENT_VAR_DEF };

/* One top-level entity: the comment line that introduces it (START),
   the entity itself from BODY to BODY_END (its ';' or closing '}'), then
   comments and blank lines up to END.  */
struct ent
{
  enum ent_kind kind;
  const char *name;		/* In the comment line, NAME_LEN long.  */
  size_t name_len;
  const char *start, *body, *body_end, *end;
  /* The linkage directive that starts BODY: 'v' .visible, 'w' .weak,
     'e' .extern, 's' none (static); LINKAGE_LEN its length with the
     blank after it.  */
  char linkage;
  size_t linkage_len;
  bool entry;			/* A kernel (.entry).  */
  size_t chunk;			/* FUNC_DEF: the chunk defining it.  */
  bool declared;		/* FUNC_DEF: a FUNC_DECL names it.  */
};

/* A growing text.  */
struct text
{
  char *s;
  size_t len, cap;
};

static void
put (struct text *t, const char *s, size_t n)
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

static void
puts_ (struct text *t, const char *s)
{
  put (t, s, strlen (s));
}

/* Names, sorted, for binary search.  */
struct names
{
  const char **v;
  size_t *len;
  size_t n;
};

static int
cmp_name (const char *a, size_t alen, const char *b, size_t blen)
{
  int c = memcmp (a, b, alen < blen ? alen : blen);
  return c ? c : (alen > blen) - (alen < blen);
}

/* The index of NAME in N, or -1.  */
static long
find_name (const struct names *n, const char *name, size_t len)
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

static void
add_name (struct names *n, const char *name, size_t len)
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

/* Sort N; false when a name occurs twice.  */
static bool
sort_names (struct names *n)
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

static void
free_names (struct names *n)
{
  free (n->v);
  free (n->len);
}

/* The end of the line that starts at P (its '\n', or the NUL).  */
static const char *
line_end (const char *p)
{
  const char *e = strchr (p, '\n');
  return e ? e : p + strlen (p);
}

static const char *
next_line (const char *p)
{
  const char *e = line_end (p);
  return *e ? e + 1 : e;
}

/* Parse the "// BEGIN ..." line at P into E's kind and name; false when
   it introduces anything else.  */
static bool
parse_mark (const char *p, struct ent *e)
{
  static const struct { const char *text; enum ent_kind kind; } marks[] = {
    { "GLOBAL FUNCTION DECL: ", ENT_FUNC_DECL },
    { "FUNCTION DECL: ", ENT_FUNC_DECL },
    { "GLOBAL FUNCTION DEF: ", ENT_FUNC_DEF },
    { "FUNCTION DEF: ", ENT_FUNC_DEF },
    { "GLOBAL VAR DECL: ", ENT_VAR_DECL },
    { "GLOBAL VAR DEF: ", ENT_VAR_DEF },
    { "VAR DEF: ", ENT_VAR_DEF },
  };
  p += strlen (BEGIN_MARK);
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    {
      size_t l = strlen (marks[i].text);
      if (strncmp (p, marks[i].text, l) != 0)
	continue;
      const char *name = p + l;
      const char *end = line_end (name);
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
entity_end (const struct ent *e)
{
  int depth = 0;
  bool opened = false;
  for (const char *p = e->body; p < e->end; p++)
    {
      if (p[0] == '/' && p + 1 < e->end && p[1] == '/')
	{
	  p = line_end (p);
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
	  if (depth == 0 && e->kind == ENT_FUNC_DEF && opened)
	    return p + 1;
	}
      else if (*p == ';' && depth == 0 && e->kind != ENT_FUNC_DEF)
	return p + 1;
    }
  return NULL;
}

/* Fill E's linkage, and for a function whether it is a kernel, from the
   text at E->BODY; false when it is not what E->KIND says.  */
static bool
parse_linkage (struct ent *e)
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
  if (e->kind == ENT_FUNC_DECL || e->kind == ENT_FUNC_DEF)
    {
      e->entry = strncmp (p, ".entry ", 7) == 0;
      if (!e->entry && strncmp (p, ".func ", 6) != 0
	  && strncmp (p, ".func(", 6) != 0)
	return false;
    }
  else if (*p != '.' || strncmp (p, ".common ", 8) == 0)
    return false;
  /* A definition that says .extern is no definition this splitter
     knows.  */
  return !(e->linkage == 'e'
	   && (e->kind == ENT_FUNC_DEF || e->kind == ENT_VAR_DEF));
}

/* The name a function definition's header at E->BODY declares (after
   its linkage, .entry or .func and a return parameter list), into
   E->NAME; false when there is none.  */
static bool
parse_def_name (struct ent *e)
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

/* Skip blanks and comment lines from P, not past END.  */
static const char *
skip_comments (const char *p, const char *end)
{
  while (p < end)
    {
      if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
	p++;
      else if (p[0] == '/' && p + 1 < end && p[1] == '/')
	p = next_line (p);
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
   else.  */
static bool
add_block (const struct ent *mark, const char *end, struct ent **ents,
	   size_t *nents)
{
  struct ent e = *mark;
  e.end = end;
  e.body = next_line (e.start);
  for (;;)
    {
      e.body_end = entity_end (&e);
      if (e.body_end == NULL || !parse_linkage (&e))
	return false;
      if (e.start == e.body && !parse_def_name (&e))
	return false;
      *ents = xrealloc (*ents, (*nents + 1) * sizeof **ents);
      (*ents)[(*nents)++] = e;
      const char *p = skip_comments (e.body_end, end);
      if (p == end)
	{
	  (*ents)[*nents - 1].end = end;
	  return true;
	}
      (*ents)[*nents - 1].end = p;
      /* An unmarked function definition.  */
      e = (struct ent) { .kind = ENT_FUNC_DEF, .start = p, .body = p,
			 .end = end };
    }
}

/* E as its defining chunk writes it: a static one made .visible.  */
static void
put_defining (struct text *t, const struct ent *e)
{
  put (t, e->start, (size_t) (e->body - e->start));
  if (e->linkage == 's')
    puts_ (t, ".visible ");
  put (t, e->body, (size_t) (e->body_end - e->body));
  puts_ (t, "\n");
}

/* E as an extern declaration: its linkage replaced by .extern, and its
   text cut before a function's body or a variable's initialiser.  */
static void
put_extern (struct text *t, const struct ent *e)
{
  put (t, e->start, (size_t) (e->body - e->start));
  puts_ (t, ".extern ");
  const char *p = e->body + e->linkage_len;
  const char *end = e->body_end - 1;	/* The ';' or the '}'.  */
  int depth = 0;
  for (const char *q = p; q < end; q++)
    {
      if (*q == '{' && e->kind == ENT_FUNC_DEF)
	{
	  end = q;
	  break;
	}
      if (*q == '{')
	depth++;
      else if (*q == '}')
	depth--;
      else if (*q == '=' && depth == 0 && e->kind == ENT_VAR_DEF)
	{
	  end = q;
	  break;
	}
    }
  while (end > p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t'
		     || end[-1] == '\r'))
    end--;
  put (t, p, (size_t) (end - p));
  puts_ (t, ";\n");
}

/* The names OTHERS define as global functions or variables.  */
static void
global_defs (char *const *others, size_t nothers, struct names *out)
{
  static const char *const marks[] = {
    BEGIN_MARK "GLOBAL FUNCTION DEF: ", BEGIN_MARK "GLOBAL VAR DEF: "
  };
  for (size_t m = 0; m < nothers; m++)
    for (const char *p = others[m]; *p; p = next_line (p))
      for (size_t k = 0; k < 2; k++)
	if (strncmp (p, marks[k], strlen (marks[k])) == 0)
	  {
	    const char *name = p + strlen (marks[k]);
	    const char *end = line_end (name);
	    while (end > name && (end[-1] == ' ' || end[-1] == '\r'))
	      end--;
	    add_name (out, name, (size_t) (end - name));
	  }
  sort_names (out);
}

size_t
mko_ptx_split (const char *module, char *const *others, size_t nothers,
	       size_t max_defs, char ***chunks)
{
  *chunks = NULL;
  struct ent *ents = NULL;
  size_t nents = 0, ndefs = 0, nchunks = 0;
  const char *head_end = NULL;
  struct names defs = { 0 }, globals = { 0 };
  bool ok = true;

  /* The top-level blocks, each from its "// BEGIN" line to the next
   one; depth counts the braces of function bodies and initialisers.  */
  struct ent *marks = NULL;
  size_t nmarks = 0;
  int depth = 0;
  for (const char *p = module; ok && *p; p = next_line (p))
    {
      if (depth == 0 && strncmp (p, BEGIN_MARK, strlen (BEGIN_MARK)) == 0)
	{
	  if (strncmp (p, BEGIN_MARK "PREAMBLE", 17) == 0)
	    ok = nmarks == 0;
	  else
	    {
	      struct ent e = { .start = p };
	      ok = parse_mark (p, &e);
	      if (nmarks == 0)
		head_end = p;
	      marks = xrealloc (marks, (nmarks + 1) * sizeof *marks);
	      marks[nmarks++] = e;
	    }
	}
      const char *end = line_end (p);
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
					       : module_end, &ents, &nents);
  free (marks);
  for (size_t i = 0; ok && i < nents; i++)
    if (ents[i].kind == ENT_FUNC_DEF)
      {
	ndefs++;
	add_name (&defs, ents[i].name, ents[i].name_len);
      }
  if (!ok || depth != 0 || ndefs <= max_defs || max_defs == 0
      || !sort_names (&defs))
    goto out;

  /* A static function or variable made .visible must not meet a global
     one of the same name in another module.  */
  global_defs (others, nothers, &globals);
  for (size_t i = 0; i < nents; i++)
    if ((ents[i].kind == ENT_FUNC_DEF || ents[i].kind == ENT_VAR_DEF)
	&& ents[i].linkage == 's'
	&& find_name (&globals, ents[i].name, ents[i].name_len) >= 0)
      goto out;

  /* Consecutive definitions to each chunk, as evenly as possible.  */
  nchunks = (ndefs + max_defs - 1) / max_defs;
  size_t per = (ndefs + nchunks - 1) / nchunks;
  size_t *def_chunk = xcalloc (defs.n, sizeof *def_chunk);
  bool *def_entry = xcalloc (defs.n, sizeof *def_entry);
  bool *def_declared = xcalloc (defs.n, sizeof *def_declared);
  for (size_t i = 0, k = 0; i < nents; i++)
    if (ents[i].kind == ENT_FUNC_DEF)
      {
	ents[i].chunk = k++ / per;
	long d = find_name (&defs, ents[i].name, ents[i].name_len);
	def_chunk[d] = ents[i].chunk;
	def_entry[d] = ents[i].entry;
      }
  for (size_t i = 0; i < nents; i++)
    if (ents[i].kind == ENT_FUNC_DECL)
      {
	long d = find_name (&defs, ents[i].name, ents[i].name_len);
	if (d >= 0)
	  def_declared[d] = true;
      }

  *chunks = xcalloc (nchunks, sizeof **chunks);
  for (size_t c = 0; c < nchunks; c++)
    {
      struct text t = { 0 };
      put (&t, module, (size_t) (head_end - module));
      for (size_t i = 0; i < nents; i++)
	{
	  const struct ent *e = &ents[i];
	  long d = (e->kind == ENT_FUNC_DECL || e->kind == ENT_FUNC_DEF)
		   ? find_name (&defs, e->name, e->name_len) : -1;
	  switch (e->kind)
	    {
	    case ENT_FUNC_DECL:
	      if (d < 0)
		put (&t, e->start, (size_t) (e->end - e->start));
	      else if (def_chunk[d] == c)
		put_defining (&t, e);
	      else if (!def_entry[d])
		put_extern (&t, e);
	      break;
	    case ENT_FUNC_DEF:
	      if (e->chunk == c)
		put_defining (&t, e);
	      else if (!def_declared[d] && !e->entry)
		put_extern (&t, e);
	      break;
	    case ENT_VAR_DECL:
	      put (&t, e->start, (size_t) (e->end - e->start));
	      break;
	    case ENT_VAR_DEF:
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
  free (def_entry);
  free (def_declared);

 out:
  free (ents);
  free_names (&defs);
  free_names (&globals);
  return *chunks ? nchunks : 0;
}
