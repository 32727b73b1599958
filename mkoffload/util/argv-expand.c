/* Response-file expansion; see argv-expand.h.  */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argv-expand.h"
#include "diag.h"
#include "file-io.h"

/* A response file naming itself would otherwise loop forever.  */
#define MAX_DEPTH 32

struct vec
{
  char **v;
  int n, cap;
};

static void
push (struct vec *vec, char *s)
{
  if (vec->n + 1 >= vec->cap)
    {
      vec->cap = vec->cap ? vec->cap * 2 : 16;
      vec->v = xrealloc (vec->v, vec->cap * sizeof *vec->v);
    }
  vec->v[vec->n++] = s;
  vec->v[vec->n] = NULL;
}

/* The characters that separate arguments, and those that quote.  */
static int
is_separator (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
	 || c == '\v';
}

static int
is_quoting (char c)
{
  return c == '\'' || c == '"' || c == '\\';
}

/* Split TEXT into arguments and append them to VEC.  */
static void
split (const char *text, struct vec *vec)
{
  const char *p = text;
  char *arg = xmalloc (strlen (text) + 1);

  for (;;)
    {
      while (is_separator (*p))
	p++;
      if (!*p)
	break;
      size_t len = 0;
      char quote = 0;
      for (; *p; p++)
	{
	  if (*p == '\\' && p[1])
	    arg[len++] = *++p;
	  else if (quote)
	    {
	      if (*p == quote)
		quote = 0;
	      else
		arg[len++] = *p;
	    }
	  else if (*p == '\'' || *p == '"')
	    quote = *p;
	  else if (is_separator (*p))
	    break;
	  else
	    arg[len++] = *p;
	}
      push (vec, xstrndup (arg, len));
    }
  free (arg);
}

static int
expand (char *arg, struct vec *out, int depth)
{
  if (arg[0] != '@' || arg[1] == '\0')
    {
      push (out, arg);
      return 0;
    }
  if (depth >= MAX_DEPTH)
    {
      ok_error ("cannot read response file '%s': nested too deeply",
		arg + 1);
      return -1;
    }
  const char *why;
  char *text = ok_read_file (arg + 1, NULL, &why);
  if (!text)
    {
      ok_error ("cannot read response file '%s': %s", arg + 1, why);
      return -1;
    }
  struct vec inner = { 0 };
  split (text, &inner);
  free (text);
  for (int i = 0; i < inner.n; i++)
    if (expand (inner.v[i], out, depth + 1) < 0)
      return -1;
  free (inner.v);
  return 0;
}

int
ok_expand_argv (int *argcp, char ***argvp)
{
  struct vec out = { 0 };
  char **argv = *argvp;
  int argc = *argcp;

  if (argc < 1)
    return 0;
  push (&out, argv[0]);
  for (int i = 1; i < argc; i++)
    if (expand (argv[i], &out, 0) < 0)
      return -1;
  *argcp = out.n;
  *argvp = out.v;
  return 0;
}

char *
ok_response_file_text (const char *const *argv, size_t *lenp)
{
  /* At worst every character is escaped; "" and the newline.  */
  size_t max = 1;
  for (size_t i = 0; argv[i]; i++)
    max += 2 * strlen (argv[i]) + 3;
  char *text = xmalloc (max), *q = text;
  for (size_t i = 0; argv[i]; i++)
    {
      /* An empty argument must still be one.  */
      if (!argv[i][0])
	{
	  *q++ = '"';
	  *q++ = '"';
	}
      for (const char *p = argv[i]; *p; p++)
	{
	  if (is_separator (*p) || is_quoting (*p))
	    *q++ = '\\';
	  *q++ = *p;
	}
      *q++ = '\n';
    }
  *q = '\0';
  *lenp = q - text;
  return text;
}
