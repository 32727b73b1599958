/* The top-level entities of a PTX module as GCC's nvptx back end writes
   it, for the passes that rewrite modules before ptxas (ptx-split.h,
   ptx-prune.h).

   Every top-level entity (a function's or variable's declaration or
   definition) follows a comment line "// BEGIN [GLOBAL ]FUNCTION
   DECL|DEF: NAME" or "// BEGIN [GLOBAL ]VAR DECL|DEF: NAME", except an
   OpenMP kernel: GCC writes the .entry that calls NAME$impl after the
   function before it, with no line of its own.  The text before the
   first entity (the preamble, perhaps a .file) is the module's head.  A
   module that holds anything else at the top level (an .alias, a .file
   unless allowed, a "// BEGIN" line of another kind) is not parsed: the
   passes then leave it as it is.  */

#ifndef OFFLOADKIT_PTX_PARSE_H
#define OFFLOADKIT_PTX_PARSE_H

#include <stdbool.h>
#include <stddef.h>

enum mko_ptx_kind
{
  MKO_PTX_FUNC_DECL, MKO_PTX_FUNC_DEF, MKO_PTX_VAR_DECL, MKO_PTX_VAR_DEF
};

/* One top-level entity: the comment line that introduces it (START; for
   an unmarked kernel START is BODY), the entity itself from BODY to
   BODY_END (its ';' or closing '}'), then comments and blank lines up to
   END, where the next entity starts.  */
struct mko_ptx_ent
{
  enum mko_ptx_kind kind;
  const char *name;		/* NAME_LEN long, in the module's text.  */
  size_t name_len;
  const char *start, *body, *body_end, *end;
  /* The linkage directive that starts BODY: 'v' .visible, 'w' .weak,
     'e' .extern, 's' none (static); LINKAGE_LEN its length with the
     blank after it.  */
  char linkage;
  size_t linkage_len;
  bool entry;			/* A kernel (.entry).  */
};

/* Parse MODULE (NUL-terminated).  FILES: whether .file directives may
   stand between entities (they are then in the trailing text of the
   entity before them, from BODY_END to END).  Return true, with its
   entities in order in *ENTS (malloc'd; *NENTS of them) and the end of
   its head in *HEAD_END; false, *ENTS NULL, when it cannot be parsed
   (see above).  */
bool mko_ptx_parse (const char *module, bool files,
		    struct mko_ptx_ent **ents, size_t *nents,
		    const char **head_end);

/* A growing NUL-terminated text; { 0 } is empty.  */
struct mko_text
{
  char *s;
  size_t len, cap;
};

void mko_put (struct mko_text *t, const char *s, size_t n);
void mko_puts (struct mko_text *t, const char *s);

/* A set of names (pointers into texts, with their lengths): add them,
   sort once, then look them up.  */
struct mko_ptx_names
{
  const char **v;
  size_t *len;
  size_t n;
};

void mko_ptx_add_name (struct mko_ptx_names *n, const char *name,
		       size_t len);
/* Sort N; false when a name occurs twice.  */
bool mko_ptx_sort_names (struct mko_ptx_names *n);
/* The index of NAME in sorted N, or -1.  */
long mko_ptx_find_name (const struct mko_ptx_names *n, const char *name,
			size_t len);
void mko_ptx_free_names (struct mko_ptx_names *n);

/* Whether C can start a PTX identifier (a name, or a register's after
   its '%'), and whether it can be in one.  */
static inline bool
mko_ptx_ident_start (char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'
	 || c == '$';
}

static inline bool
mko_ptx_ident_char (char c)
{
  return mko_ptx_ident_start (c) || (c >= '0' && c <= '9');
}

/* The end of the line that starts at P (its '\n', or the NUL), and the
   start of the next one.  */
const char *mko_line_end (const char *p);
const char *mko_next_line (const char *p);

#endif /* OFFLOADKIT_PTX_PARSE_H */
