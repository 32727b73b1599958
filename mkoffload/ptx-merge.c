/* Merging library modules before ptxas; see ptx-merge.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ptx-merge.h"
#include "ptx-parse.h"

/* A declaration in a module's head, such as the
   ".extern .shared .u8 __nvptx_lowlat_pool[];" that libgomp's team.c of
   GCC 15 and newer writes there as inline assembler: its TEXT with blanks
   made one (none next to '[', ']' and ';'), and the name it declares.  */
struct head_decl
{
  char *text;
  const char *name;
  size_t name_len;
};

/* One module, parsed.  */
struct member
{
  const char *text;
  size_t number;		/* In the link, for renamed statics.  */
  struct mko_ptx_ent *ents;
  size_t nents;
  const char *head_end;
  char *preamble;		/* Its .version, .target, .address_size.  */
  unsigned max_file;		/* Its highest .file number.  */
  size_t ndefs;			/* Function definitions.  */
  struct mko_ptx_names renames;	/* Its static names beginning with '$'.  */
  struct head_decl *hdecls;
  size_t nhdecls;
};

/* What a group knows of a name (a function or variable, by its name in
   the group: a renamed static's new name).  */
struct sym
{
  char *name;
  bool func, defined, plain_static, emitted, head_emitted;
  char *sig;			/* A function's prototype, normalised.  */
  char *head;			/* Its declaration in a member's head.  */
  const struct member *def_member;	/* Where the group defines it.  */
  const struct mko_ptx_ent *def;
};

/* Names to syms, open addressing.  */
struct table
{
  struct sym *v;
  size_t n;
  size_t *slots;		/* Index + 1, 0 for free.  */
  size_t nslots;
};

static uint64_t
name_hash (const char *s, size_t len)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) s[i]) * 1099511628211ull;
  return h;
}

static struct sym *
table_find (const struct table *t, const char *name, size_t len)
{
  if (!t->nslots)
    return NULL;
  for (size_t i = name_hash (name, len) & (t->nslots - 1);;
       i = (i + 1) & (t->nslots - 1))
    {
      if (!t->slots[i])
	return NULL;
      struct sym *s = &t->v[t->slots[i] - 1];
      if (strlen (s->name) == len && memcmp (s->name, name, len) == 0)
	return s;
    }
}

static struct sym *
table_add (struct table *t, const char *name, size_t len)
{
  struct sym *s = table_find (t, name, len);
  if (s)
    return s;
  if ((t->n + 1) * 2 > t->nslots)
    {
      size_t nslots = t->nslots ? t->nslots * 2 : 64;
      size_t *slots = xcalloc (nslots, sizeof *slots);
      for (size_t k = 0; k < t->n; k++)
	{
	  size_t i = name_hash (t->v[k].name, strlen (t->v[k].name))
		     & (nslots - 1);
	  while (slots[i])
	    i = (i + 1) & (nslots - 1);
	  slots[i] = k + 1;
	}
      free (t->slots);
      t->slots = slots;
      t->nslots = nslots;
    }
  t->v = xrealloc (t->v, (t->n + 1) * sizeof *t->v);
  s = &t->v[t->n];
  *s = (struct sym) { .name = xstrndup (name, len) };
  size_t i = name_hash (name, len) & (t->nslots - 1);
  while (t->slots[i])
    i = (i + 1) & (t->nslots - 1);
  t->slots[i] = ++t->n;
  return s;
}

static void
table_free (struct table *t)
{
  for (size_t k = 0; k < t->n; k++)
    {
      free (t->v[k].name);
      free (t->v[k].sig);
      free (t->v[k].head);
    }
  free (t->v);
  free (t->slots);
  *t = (struct table) { 0 };
}

static bool
blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The directive at P (after blanks), when it is WORD followed by a
   blank; else NULL.  */
static const char *
directive (const char *p, const char *end, const char *word)
{
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  size_t l = strlen (word);
  if ((size_t) (end - p) > l && strncmp (p, word, l) == 0
      && (p[l] == ' ' || p[l] == '\t'))
    return p + l;
  return NULL;
}

/* The highest .file number in [P, END).  */
static unsigned
max_file_in (const char *p, const char *end)
{
  unsigned max = 0;
  for (; p < end; p = mko_next_line (p))
    {
      const char *d = directive (p, end, ".file");
      if (d)
	{
	  unsigned long v = strtoul (d, NULL, 10);
	  if (v > max && v < 1000000)
	    max = (unsigned) v;
	}
    }
  return max;
}

/* A function's prototype in E (a declaration or a definition): its text
   after the linkage, up to the ';' or the body, blanks made one.  */
static char *
prototype (const struct mko_ptx_ent *e)
{
  struct mko_text t = { 0 };
  const char *p = e->body + e->linkage_len, *end = e->body_end;
  for (; p < end && *p != '{' && *p != ';'; p++)
    {
      if (blank (*p))
	{
	  if (t.len && t.s[t.len - 1] != ' ')
	    mko_puts (&t, " ");
	}
      else
	mko_put (&t, p, 1);
    }
  while (t.len && t.s[t.len - 1] == ' ')
    t.s[--t.len] = '\0';
  if (!t.s)
    mko_puts (&t, "");
  return t.s;
}

/* Copy [P, END) of M to T: its .file and .loc numbers moved up by
   FILE_OFF, its names in M->renames renamed.  */
static void
put_fixed (struct mko_text *t, const struct member *m, const char *p,
	   const char *end, unsigned file_off)
{
  bool line_start = p == m->text || p[-1] == '\n';
  while (p < end)
    {
      if (line_start)
	{
	  line_start = false;
	  const char *d = directive (p, end, ".loc");
	  if (!d)
	    d = directive (p, end, ".file");
	  if (d && file_off)
	    {
	      while (d < end && (*d == ' ' || *d == '\t'))
		d++;
	      char *num_end;
	      unsigned long v = strtoul (d, &num_end, 10);
	      if (num_end > d && num_end <= end)
		{
		  mko_put (t, p, (size_t) (d - p));
		  char buf[32];
		  snprintf (buf, sizeof buf, "%lu", v + file_off);
		  mko_puts (t, buf);
		  p = num_end;
		  continue;
		}
	    }
	}
      if (mko_ptx_ident_start (*p)
	  && !(p > m->text && (mko_ptx_ident_char (p[-1]) || p[-1] == '.'
			       || p[-1] == '%')))
	{
	  const char *s = p++;
	  while (p < end && mko_ptx_ident_char (*p))
	    p++;
	  mko_put (t, s, (size_t) (p - s));
	  if (*s == '$'
	      && mko_ptx_find_name (&m->renames, s, (size_t) (p - s)) >= 0)
	    {
	      char buf[32];
	      snprintf (buf, sizeof buf, "$ok%zu", m->number);
	      mko_puts (t, buf);
	    }
	  continue;
	}
      if (*p == '\n')
	line_start = true;
      mko_put (t, p, 1);
      p++;
    }
}

/* E's name in the group, malloc'd.  */
static char *
group_name (const struct member *m, const char *name, size_t len)
{
  if (*name == '$' && mko_ptx_find_name (&m->renames, name, len) >= 0)
    return xasprintf ("%.*s$ok%zu", (int) len, name, m->number);
  return xstrndup (name, len);
}

/* The head declaration [Q, E) (a line of M's head, without its
   surrounding blanks) added to M: ".extern ... NAME[...];".  False when
   it is not one.  */
static bool
add_head_decl (struct member *m, const char *q, const char *e)
{
  /* One declaration of one name: "a[], b[]" or two statements on the
     line would declare names this does not see.  */
  size_t len = (size_t) (e - q);
  if (!directive (q, e, ".extern") || e[-1] != ';' || memchr (q, ',', len)
      || memchr (q, ';', len - 1) || memchr (q, '/', len))
    return false;
  const char *n = e - 1;
  while (n > q && blank (n[-1]))
    n--;
  if (n > q && n[-1] == ']')
    {
      while (n > q && n[-1] != '[')
	n--;
      if (n == q)
	return false;
      n--;
      while (n > q && blank (n[-1]))
	n--;
    }
  const char *name_end = n;
  while (n > q && mko_ptx_ident_char (n[-1]))
    n--;
  if (n == name_end || !mko_ptx_ident_start (*n) || *n == '$')
    return false;
  struct mko_text t = { 0 };
  for (const char *p = q; p < e; p++)
    if (!blank (*p))
      {
	if (p > q && blank (p[-1]) && t.len && !strchr ("[];", *p)
	    && t.s[t.len - 1] != '[')
	  mko_puts (&t, " ");
	mko_put (&t, p, 1);
      }
  m->hdecls = xrealloc (m->hdecls, (m->nhdecls + 1) * sizeof *m->hdecls);
  m->hdecls[m->nhdecls++] = (struct head_decl) {
    .text = t.s, .name = n, .name_len = (size_t) (name_end - n) };
  return true;
}

/* Parse TEXT into M; false when it cannot be merged whatever the group
   (see ptx-merge.h).  */
static bool
parse_member (struct member *m, const char *text, size_t number)
{
  *m = (struct member) { .text = text, .number = number };
  if (!mko_ptx_parse (text, true, &m->ents, &m->nents, &m->head_end))
    return false;
  /* The head: the preamble's directives, .file lines, comments.  */
  struct mko_text pre = { 0 };
  for (const char *p = text; p < m->head_end; p = mko_next_line (p))
    {
      const char *e = mko_line_end (p);
      if (e > m->head_end)
	e = m->head_end;
      const char *q = p;
      while (q < e && blank (*q))
	q++;
      if (q == e || (q[0] == '/' && q + 1 < e && q[1] == '/')
	  || directive (q, e, ".file"))
	continue;
      while (e > q && blank (e[-1]))
	e--;
      if (add_head_decl (m, q, e))
	continue;
      if (!directive (q, e, ".version") && !directive (q, e, ".target")
	  && !directive (q, e, ".address_size"))
	{
	  free (pre.s);
	  return false;
	}
      mko_put (&pre, q, (size_t) (e - q));
      mko_puts (&pre, "\n");
    }
  if (!pre.s)
    return false;
  m->preamble = pre.s;
  m->max_file = max_file_in (text, m->head_end);
  for (size_t i = 0; i < m->nents; i++)
    {
      const struct mko_ptx_ent *e = &m->ents[i];
      if (e->entry)
	return false;
      unsigned f = max_file_in (e->body_end, e->end);
      if (f > m->max_file)
	m->max_file = f;
      if (e->kind == MKO_PTX_FUNC_DEF)
	m->ndefs++;
      if ((e->kind == MKO_PTX_FUNC_DEF || e->kind == MKO_PTX_VAR_DEF)
	  && e->linkage == 's' && e->name[0] == '$')
	mko_ptx_add_name (&m->renames, e->name, e->name_len);
    }
  return mko_ptx_sort_names (&m->renames);
}

static void
free_member (struct member *m)
{
  free (m->ents);
  free (m->preamble);
  for (size_t i = 0; i < m->nhdecls; i++)
    free (m->hdecls[i].text);
  free (m->hdecls);
  mko_ptx_free_names (&m->renames);
}

/* The identifiers of a variable definition's initialiser, each passed
   to FN with ARG; stop and return true when FN does.  */
static bool
initialiser_names (const struct mko_ptx_ent *e,
		   bool (*fn) (const char *, size_t, void *), void *arg)
{
  const char *p = e->body;
  while (p < e->body_end && *p != '=')
    p++;
  for (; p < e->body_end; p++)
    if (mko_ptx_ident_start (*p) && !mko_ptx_ident_char (p[-1]) && p[-1] != '.'
	&& p[-1] != '%')
      {
	const char *s = p;
	while (p < e->body_end && mko_ptx_ident_char (*p))
	  p++;
	if (fn (s, (size_t) (p - s), arg))
	  return true;
      }
  return false;
}

/* A group being made.  */
struct group
{
  struct table syms;
  /* Names an initialiser names before the group defines them: a
     variable of such a name defined later would come after its use.  */
  struct table init_refs;
  const char *preamble;
  struct member **members;
  size_t nmembers, ndefs;
};

struct later_var
{
  const struct member *m;
  size_t from;			/* Entities after this one.  */
};

/* Whether NAME is a variable that M defines after entity FROM.  */
static bool
defined_later (const char *name, size_t len, void *arg)
{
  const struct later_var *lv = arg;
  for (size_t i = lv->from + 1; i < lv->m->nents; i++)
    {
      const struct mko_ptx_ent *e = &lv->m->ents[i];
      if (e->kind == MKO_PTX_VAR_DEF && e->name_len == len
	  && memcmp (e->name, name, len) == 0)
	return true;
    }
  return false;
}

/* Whether M can join G.  */
static bool
fits (const struct group *g, const struct member *m)
{
  if (g->preamble && strcmp (g->preamble, m->preamble) != 0)
    return false;
  /* A head declaration only of a name the group knows from no entity,
     and from no other head declaration (the member's own included) but
     the same one.  */
  for (size_t i = 0; i < m->nhdecls; i++)
    {
      const struct head_decl *h = &m->hdecls[i];
      for (size_t k = 0; k < i; k++)
	if (m->hdecls[k].name_len == h->name_len
	    && memcmp (m->hdecls[k].name, h->name, h->name_len) == 0
	    && strcmp (m->hdecls[k].text, h->text) != 0)
	  return false;
      struct sym *s = table_find (&g->syms, h->name, h->name_len);
      if (s && (!s->head || strcmp (s->head, h->text) != 0 || s->func
		|| s->sig || s->defined))
	return false;
    }
  for (size_t i = 0; i < m->nents; i++)
    {
      const struct mko_ptx_ent *e = &m->ents[i];
      if (e->name[0] == '$'
	  && mko_ptx_find_name (&m->renames, e->name, e->name_len) >= 0)
	continue;
      bool func = e->kind == MKO_PTX_FUNC_DECL || e->kind == MKO_PTX_FUNC_DEF;
      bool def = e->kind == MKO_PTX_FUNC_DEF || e->kind == MKO_PTX_VAR_DEF;
      struct sym *s = table_find (&g->syms, e->name, e->name_len);
      if (def && e->linkage == 's' && s)
	return false;
      if (e->kind == MKO_PTX_VAR_DEF
	  && table_find (&g->init_refs, e->name, e->name_len))
	return false;
      if (e->kind == MKO_PTX_VAR_DEF)
	{
	  struct later_var lv = { m, i };
	  if (initialiser_names (e, defined_later, &lv))
	    return false;
	}
      if (!s)
	continue;
      if (s->head || s->plain_static || s->func != func
	  || (def && s->defined))
	return false;
      if (func && s->sig)
	{
	  char *sig = prototype (e);
	  bool same = strcmp (sig, s->sig) == 0;
	  free (sig);
	  if (!same)
	    return false;
	}
    }
  return true;
}

static bool
note_init_ref (const char *name, size_t len, void *arg)
{
  struct group *g = arg;
  struct sym *s = table_find (&g->syms, name, len);
  if (!s || !s->defined)
    table_add (&g->init_refs, name, len);
  return false;
}

static void
join (struct group *g, struct member *m)
{
  if (!g->preamble)
    g->preamble = m->preamble;
  g->members = xrealloc (g->members, (g->nmembers + 1) * sizeof *g->members);
  g->members[g->nmembers++] = m;
  g->ndefs += m->ndefs;
  for (size_t i = 0; i < m->nhdecls; i++)
    {
      const struct head_decl *h = &m->hdecls[i];
      struct sym *s = table_add (&g->syms, h->name, h->name_len);
      if (!s->head)
	s->head = xstrdup (h->text);
    }
  for (size_t i = 0; i < m->nents; i++)
    {
      const struct mko_ptx_ent *e = &m->ents[i];
      char *name = group_name (m, e->name, e->name_len);
      struct sym *s = table_add (&g->syms, name, strlen (name));
      free (name);
      s->func = e->kind == MKO_PTX_FUNC_DECL || e->kind == MKO_PTX_FUNC_DEF;
      if (e->kind == MKO_PTX_FUNC_DEF || e->kind == MKO_PTX_VAR_DEF)
	{
	  s->defined = true;
	  s->plain_static = e->linkage == 's' && e->name[0] != '$';
	  s->def_member = m;
	  s->def = e;
	}
      if (s->func && (!s->sig || e->kind == MKO_PTX_FUNC_DEF))
	{
	  free (s->sig);
	  s->sig = prototype (e);
	}
      if (e->kind == MKO_PTX_VAR_DEF)
	initialiser_names (e, note_init_ref, g);
    }
}

/* The text of group G.  */
static char *
group_text (struct group *g)
{
  struct mko_text t = { 0 };
  mko_puts (&t, "// BEGIN PREAMBLE\n");
  mko_puts (&t, g->preamble);
  unsigned *off = xcalloc (g->nmembers, sizeof *off);
  for (size_t k = 1; k < g->nmembers; k++)
    off[k] = off[k - 1] + g->members[k - 1]->max_file;

  /* .file lines.  */
  for (size_t k = 0; k < g->nmembers; k++)
    {
      const struct member *m = g->members[k];
      for (size_t i = 0; i <= m->nents; i++)
	{
	  const char *p = i ? m->ents[i - 1].body_end : m->text;
	  const char *end = i ? m->ents[i - 1].end : m->head_end;
	  for (; p < end; p = mko_next_line (p))
	    if (directive (p, end, ".file"))
	      {
		const char *e = mko_line_end (p);
		put_fixed (&t, m, p, e < end ? e : end, off[k]);
		mko_puts (&t, "\n");
	      }
	}
    }

  /* The members' head declarations, each once.  */
  for (size_t k = 0; k < g->nmembers; k++)
    {
      const struct member *m = g->members[k];
      for (size_t i = 0; i < m->nhdecls; i++)
	{
	  const struct head_decl *h = &m->hdecls[i];
	  struct sym *s = table_find (&g->syms, h->name, h->name_len);
	  if (s->head_emitted)
	    continue;
	  s->head_emitted = true;
	  mko_puts (&t, h->text);
	  mko_puts (&t, "\n");
	}
    }

  /* Declarations: a function's prototype, from its definition where the
     group has one; a variable's when the group does not define it.  */
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < g->nmembers; k++)
      {
	const struct member *m = g->members[k];
	for (size_t i = 0; i < m->nents; i++)
	  {
	    const struct mko_ptx_ent *e = &m->ents[i];
	    bool func = e->kind == MKO_PTX_FUNC_DECL
			|| e->kind == MKO_PTX_FUNC_DEF;
	    if (func != (pass == 0))
	      continue;
	    char *name = group_name (m, e->name, e->name_len);
	    struct sym *s = table_find (&g->syms, name, strlen (name));
	    free (name);
	    if (s->emitted || (!func && s->defined))
	      continue;
	    s->emitted = true;
	    if (func && s->defined)
	      {
		const struct mko_ptx_ent *d = s->def;
		const struct member *dm = s->def_member;
		mko_puts (&t, d->linkage == 's' ? "// BEGIN FUNCTION DECL: "
			  : "// BEGIN GLOBAL FUNCTION DECL: ");
		put_fixed (&t, dm, d->name, d->name + d->name_len, 0);
		mko_puts (&t, "\n");
		const char *end = d->body;
		while (end < d->body_end && *end != '{')
		  end++;
		while (end > d->body && blank (end[-1]))
		  end--;
		put_fixed (&t, dm, d->body, end, 0);
		mko_puts (&t, ";\n");
	      }
	    else if (e->kind == MKO_PTX_FUNC_DECL || e->kind == MKO_PTX_VAR_DECL)
	      {
		put_fixed (&t, m, e->start, e->body_end, off[k]);
		mko_puts (&t, "\n");
	      }
	  }
      }

  /* Definitions: the variables', then the functions'.  */
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < g->nmembers; k++)
      {
	const struct member *m = g->members[k];
	for (size_t i = 0; i < m->nents; i++)
	  {
	    const struct mko_ptx_ent *e = &m->ents[i];
	    if (e->kind == (pass == 0 ? MKO_PTX_VAR_DEF : MKO_PTX_FUNC_DEF))
	      {
		put_fixed (&t, m, e->start, e->body_end, off[k]);
		mko_puts (&t, "\n");
	      }
	  }
      }
  free (off);
  return t.s;
}

size_t
mko_ptx_merge (char *const *modules, const size_t *numbers, size_t n,
	       size_t max_defs, size_t min_groups,
	       struct mko_ptx_group **groups)
{
  *groups = NULL;
  struct member *ms = xcalloc (n ? n : 1, sizeof *ms);
  bool *ok = xcalloc (n ? n : 1, sizeof *ok);
  size_t total = 0, nok = 0;
  for (size_t i = 0; i < n; i++)
    {
      ok[i] = parse_member (&ms[i], modules[i], numbers[i])
	      && ms[i].ndefs <= max_defs;
      if (ok[i])
	{
	  total += ms[i].ndefs;
	  nok++;
	}
    }

  /* Consecutive modules to each group, their definitions shared out
     evenly.  */
  size_t want = max_defs ? (total + max_defs - 1) / max_defs : 1;
  if (want < min_groups)
    want = min_groups;
  if (want > nok)
    want = nok;
  size_t per = want ? (total + want - 1) / want : 0;
  size_t ngroups = 0;
  struct group *gs = NULL;
  struct group *g = NULL;
  for (size_t i = 0; i < n; i++)
    {
      if (!ok[i])
	continue;
      if (!g || (g->nmembers && g->ndefs + ms[i].ndefs > per))
	{
	  gs = xrealloc (gs, (ngroups + 1) * sizeof *gs);
	  g = &gs[ngroups++];
	  *g = (struct group) { 0 };
	}
      if (fits (g, &ms[i]))
	join (g, &ms[i]);
    }

  size_t nout = 0;
  for (size_t k = 0; k < ngroups; k++)
    {
      struct group *gr = &gs[k];
      if (gr->nmembers >= 2)
	{
	  *groups = xrealloc (*groups, (nout + 1) * sizeof **groups);
	  struct mko_ptx_group *out = &(*groups)[nout++];
	  out->text = group_text (gr);
	  out->nmembers = gr->nmembers;
	  out->members = xcalloc (gr->nmembers, sizeof *out->members);
	  for (size_t j = 0; j < gr->nmembers; j++)
	    out->members[j] = (size_t) (gr->members[j] - ms);
	}
      table_free (&gr->syms);
      table_free (&gr->init_refs);
      free (gr->members);
    }
  free (gs);
  for (size_t i = 0; i < n; i++)
    free_member (&ms[i]);
  free (ms);
  free (ok);
  return nout;
}

void
mko_ptx_free_groups (struct mko_ptx_group *groups, size_t n)
{
  for (size_t k = 0; k < n; k++)
    {
      free (groups[k].text);
      free (groups[k].members);
    }
  free (groups);
}
