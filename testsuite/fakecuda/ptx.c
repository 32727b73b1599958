/* The fake libcuda's PTX reader: `.version', `.target sm_NN' (not newer
   than the device), balanced braces, `.entry' kernels with their
   parameters, .maxntid/.reqntid and .maxnreg, and `.global'/`.const'
   variables with their size and simple initialisers (numbers, and
   symbols in 64-bit ones: fk_symbol_address).  See image.h.  */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* The newest PTX ISA version (10 * major + minor) that the JIT of a
   CUDA driver of version DRIVER (1000 * major + 10 * minor) reads: the
   CUDA release that introduced each ISA version, from the release history
   in NVIDIA's PTX ISA manual.  */
int
fk_ptx_isa_max (int driver)
{
  static const struct { int cuda, isa; } first[] = {
    { 3000, 20 }, { 3010, 21 }, { 3020, 22 }, { 4000, 23 }, { 4010, 30 },
    { 5000, 31 }, { 5050, 32 }, { 6000, 40 }, { 6050, 41 }, { 7000, 42 },
    { 7050, 43 }, { 8000, 50 }, { 9000, 60 }, { 9010, 61 }, { 9020, 62 },
    { 10000, 63 }, { 10010, 64 }, { 10020, 65 }, { 11000, 70 },
    { 11010, 71 }, { 11020, 72 }, { 11030, 73 }, { 11040, 74 },
    { 11050, 75 }, { 11060, 76 }, { 11070, 77 }, { 11080, 78 },
    { 12000, 80 }, { 12010, 81 }, { 12020, 82 }, { 12030, 83 },
    { 12040, 84 }, { 12050, 85 }, { 12070, 86 }, { 12080, 87 },
    { 12090, 88 }, { 13000, 90 }, { 13010, 91 },
  };
  int isa = 10;
  for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
    if (driver >= first[i].cuda)
      isa = first[i].isa;
  return isa;
}

/* A PTX token: a word (directive, identifier, number) or one punctuation
   character.  */
struct fk_tok
{
  const char *s;
  size_t len;
  int line;
};

static bool
fk_word_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	 || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%'
	 || c == '.';
}

/* Whether C starts a PTX identifier (not a number).  */
static bool
fk_symbol_start (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
	 || c == '$' || c == '%';
}

/* Split TEXT[0, LEN) into tokens, without comments and strings.  */
static struct fk_tok *
fk_tokenize (const char *text, size_t len, size_t *ntok)
{
  size_t cap = 256, n = 0;
  struct fk_tok *t = malloc (cap * sizeof *t);
  int line = 1;
  size_t i = 0;
  while (t != NULL && i < len)
    {
      char c = text[i];
      if (c == '\n')
	{
	  line++;
	  i++;
	  continue;
	}
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
	{
	  i++;
	  continue;
	}
      if (c == '/' && i + 1 < len && text[i + 1] == '/')
	{
	  while (i < len && text[i] != '\n')
	    i++;
	  continue;
	}
      if (c == '/' && i + 1 < len && text[i + 1] == '*')
	{
	  i += 2;
	  while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/'))
	    line += text[i++] == '\n';
	  i += 2;
	  continue;
	}
      if (c == '"')
	{
	  i++;
	  while (i < len && text[i] != '"' && text[i] != '\n')
	    i += text[i] == '\\' ? 2 : 1;
	  i++;
	  continue;
	}
      if (n == cap)
	{
	  cap *= 2;
	  struct fk_tok *nt = realloc (t, cap * sizeof *t);
	  if (nt == NULL)
	    {
	      free (t);
	      return NULL;
	    }
	  t = nt;
	}
      size_t start = i;
      if (fk_word_char (c))
	while (i < len && fk_word_char (text[i]))
	  i++;
      else
	i++;
      t[n++] = (struct fk_tok) { text + start, i - start, line };
    }
  *ntok = n;
  return t;
}

static bool
fk_tok_is (const struct fk_tok *t, const char *s)
{
  return t->len == strlen (s) && memcmp (t->s, s, t->len) == 0;
}

/* From the '{' at T[*I] (of N tokens), move *I to the matching '}'; false,
   *I at N, when there is none.  */
static bool
fk_skip_block (const struct fk_tok *t, size_t n, size_t *i)
{
  int depth = 0;
  for (; *i < n; (*i)++)
    if (fk_tok_is (&t[*i], "{"))
      depth++;
    else if (fk_tok_is (&t[*i], "}") && --depth == 0)
      return true;
  return false;
}

/* Bytes of a PTX fundamental type directive, 0 if T is none.  */
static size_t
fk_type_size (const struct fk_tok *t)
{
  static const struct { const char *n; size_t s; } types[] = {
    { ".u8", 1 }, { ".s8", 1 }, { ".b8", 1 }, { ".pred", 1 },
    { ".u16", 2 }, { ".s16", 2 }, { ".b16", 2 }, { ".f16", 2 },
    { ".u32", 4 }, { ".s32", 4 }, { ".b32", 4 }, { ".f32", 4 },
    { ".u64", 8 }, { ".s64", 8 }, { ".b64", 8 }, { ".f64", 8 },
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (fk_tok_is (t, types[i].n))
      return types[i].s;
  return 0;
}

static unsigned long long
fk_tok_ull (const struct fk_tok *t, bool *ok)
{
  char buf[64];
  if (t->len == 0 || t->len >= sizeof buf)
    {
      *ok = false;
      return 0;
    }
  memcpy (buf, t->s, t->len);
  buf[t->len] = '\0';
  char *end;
  errno = 0;
  unsigned long long v = strtoull (buf, &end, 0);
  *ok = errno == 0 && *end == '\0';
  return v;
}

/* Store the initialiser tokens T[0, N) of a global of elements of ESIZE
   bytes (float if IS_FLOAT) into G->init, as far as they are plain
   numbers.  */
static void
fk_parse_init (struct fk_global *g, const struct fk_tok *t, size_t n,
	       size_t esize, bool is_float)
{
  if (g->size == 0 || esize == 0)
    return;
  g->init = calloc (1, g->size);
  if (g->init == NULL)
    return;
  size_t off = 0;
  bool neg = false;
  for (size_t i = 0; i < n && off + esize <= g->size; i++)
    {
      if (fk_tok_is (&t[i], "{") || fk_tok_is (&t[i], "}")
	  || fk_tok_is (&t[i], ","))
	continue;
      if (fk_tok_is (&t[i], "-"))
	{
	  neg = true;
	  continue;
	}
      char buf[64];
      if (t[i].len >= sizeof buf)
	return;
      memcpy (buf, t[i].s, t[i].len);
      buf[t[i].len] = '\0';
      unsigned long long bits;
      char *end;
      if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D'
			      || buf[1] == 'f' || buf[1] == 'F'))
	{
	  /* PTX's exact float forms: 0dHHHHHHHHHHHHHHHH, 0fHHHHHHHH.  */
	  bits = strtoull (buf + 2, &end, 16);
	  if (*end != '\0')
	    return;
	}
      else if (is_float || strpbrk (buf, ".eE") != NULL)
	{
	  double d = strtod (buf, &end);
	  if (*end != '\0')
	    return;
	  if (neg)
	    d = -d;
	  if (esize == 4)
	    {
	      float f = (float) d;
	      uint32_t u;
	      memcpy (&u, &f, 4);
	      bits = u;
	    }
	  else
	    memcpy (&bits, &d, 8);
	  neg = false;
	}
      else if (esize == 8 && fk_symbol_start (buf[0]))
	/* A function's or variable's address: the linker's, which the
	   fake makes up (GCC's mkoffload writes its tables of functions
	   this way).  */
	bits = fk_symbol_address (buf);
      else
	{
	  errno = 0;
	  bits = strtoull (buf, &end, 0);
	  if (*end != '\0' || errno != 0)
	    return;	/* generic() and the like: leave the rest zero.  */
	  if (neg)
	    bits = -bits;
	  neg = false;
	}
      memcpy (g->init + off, &bits, esize);	/* Little-endian host.  */
      off += esize;
    }
}

/* On error, describe it in ERR as "fake ptxas: ...".  */
CUresult
fk_parse_ptx (const char *text, size_t len, int device_sm,
	      struct fk_image *img, char *err, size_t errlen)
{
  size_t n;
  struct fk_tok *t = fk_tokenize (text, len, &n);
  if (t == NULL)
    {
      snprintf (err, errlen, "fake ptxas: out of memory");
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  CUresult res = CUDA_SUCCESS;
  bool version = false;
  size_t i = 0;
  while (i < n && res == CUDA_SUCCESS)
    {
      /* Line directives without a terminating ';'.  */
      if (fk_tok_is (&t[i], ".version"))
	{
	  version = true;
	  unsigned major = 0, minor = 0;
	  int max = fk_ptx_isa_max (fk_driver_version);
	  if (i + 1 < n && sscanf (t[i + 1].s, "%u.%u", &major, &minor) == 2
	      && major < 100 && minor < 10
	      && (int) (major * 10 + minor) > max)
	    {
	      snprintf (err, errlen, "fake ptxas: line %d: PTX ISA %u.%u is"
			" newer than a CUDA %d.%d driver's (%d.%d)",
			t[i].line, major, minor, fk_driver_version / 1000,
			fk_driver_version % 1000 / 10, max / 10, max % 10);
	      res = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	    }
	  i += 2;
	  continue;
	}
      if (fk_tok_is (&t[i], ".address_size"))
	{
	  i += 2;
	  continue;
	}
      if (fk_tok_is (&t[i], ".target"))
	{
	  i++;
	  for (; i < n; i++)
	    {
	      if (t[i].len > 3 && memcmp (t[i].s, "sm_", 3) == 0)
		{
		  int sm = atoi (t[i].s + 3);
		  if (sm > img->target_sm)
		    img->target_sm = sm;
		  if (sm > device_sm)
		    {
		      snprintf (err, errlen, "fake ptxas: line %d: .target"
				" sm_%d is newer than the device (sm_%d)",
				t[i].line, sm, device_sm);
		      res = CUDA_ERROR_INVALID_PTX;
		    }
		}
	      if (i + 1 < n && fk_tok_is (&t[i + 1], ","))
		i++;
	      else
		{
		  i++;
		  break;
		}
	    }
	  continue;
	}
      if (fk_tok_is (&t[i], ".file") || fk_tok_is (&t[i], ".loc"))
	{
	  /* Debug directives: a few numbers on one line.  */
	  int line = t[i].line;
	  i++;
	  while (i < n && t[i].line == line)
	    i++;
	  continue;
	}
      if (fk_tok_is (&t[i], "}"))
	{
	  snprintf (err, errlen, "fake ptxas: line %d: unbalanced '}'",
		    t[i].line);
	  res = CUDA_ERROR_INVALID_PTX;
	  break;
	}
      if (fk_tok_is (&t[i], "{"))
	{
	  /* A bare block at file scope: skip it.  */
	  if (!fk_skip_block (t, n, &i))
	    {
	      snprintf (err, errlen, "fake ptxas: unbalanced braces: '{' not"
			" closed at the end of the module");
	      res = CUDA_ERROR_INVALID_PTX;
	    }
	  i++;
	  continue;
	}

      /* One statement: up to ';' or, for a function or section, its
	 body.  */
      size_t s = i;
      bool is_func = false, is_entry = false, is_extern = false;
      bool is_var = false, is_section = false;
      while (i < n && !fk_tok_is (&t[i], ";"))
	{
	  if (fk_tok_is (&t[i], ".entry"))
	    is_func = is_entry = true;
	  else if (fk_tok_is (&t[i], ".func"))
	    is_func = true;
	  else if (fk_tok_is (&t[i], ".extern"))
	    is_extern = true;
	  else if (fk_tok_is (&t[i], ".section"))
	    is_section = true;
	  else if ((fk_tok_is (&t[i], ".global")
		    || fk_tok_is (&t[i], ".const")) && !is_func)
	    is_var = true;
	  if (fk_tok_is (&t[i], "{") && (is_func || is_section))
	    break;
	  if (fk_tok_is (&t[i], "{"))
	    {
	      /* An initialiser: skip to its end.  */
	      if (!fk_skip_block (t, n, &i))
		break;
	    }
	  i++;
	}
      size_t e = i;		/* T[e] is ';' or '{' (or the end).  */
      if (i >= n)
	{
	  if (is_func || is_section || e > s)
	    {
	      snprintf (err, errlen, "fake ptxas: line %d: statement not"
			" terminated (unbalanced braces?)",
			t[n > 0 ? n - 1 : 0].line);
	      res = CUDA_ERROR_INVALID_PTX;
	    }
	  break;
	}
      if (fk_tok_is (&t[i], "{"))
	{
	  /* Skip the body.  */
	  if (!fk_skip_block (t, n, &i))
	    {
	      snprintf (err, errlen, "fake ptxas: unbalanced braces: body of"
			" the statement at line %d not closed", t[s].line);
	      res = CUDA_ERROR_INVALID_PTX;
	      break;
	    }
	}
      i++;

      if (is_entry && !is_extern)
	{
	  size_t k = s;
	  while (k < e && !fk_tok_is (&t[k], ".entry"))
	    k++;
	  if (k + 1 >= e)
	    continue;
	  struct fk_func *f = fk_add_func (img, t[k + 1].s, t[k + 1].len);
	  if (f == NULL)
	    continue;
	  k += 2;
	  if (k < e && fk_tok_is (&t[k], "("))
	    {
	      for (; k < e && !fk_tok_is (&t[k], ")"); k++)
		if (fk_tok_is (&t[k], ".param") && f->nparams < 16)
		  {
		    size_t sz = 0, count = 1;
		    for (size_t m = k + 1; m < e && !fk_tok_is (&t[m], ",")
			 && !fk_tok_is (&t[m], ")"); m++)
		      {
			if (sz == 0)
			  sz = fk_type_size (&t[m]);
			if (fk_tok_is (&t[m], "[") && m + 1 < e)
			  {
			    bool ok;
			    unsigned long long c = fk_tok_ull (&t[m + 1], &ok);
			    if (ok)
			      count *= c;
			  }
		      }
		    f->param_size[f->nparams++] = sz * count;
		  }
	    }
	  for (; k < e; k++)
	    {
	      bool ok;
	      if (fk_tok_is (&t[k], ".maxnreg") && k + 1 < e)
		{
		  unsigned long long v = fk_tok_ull (&t[k + 1], &ok);
		  if (ok)
		    f->regs = (int) v;
		}
	      else if ((fk_tok_is (&t[k], ".maxntid")
			|| fk_tok_is (&t[k], ".reqntid")) && k + 1 < e)
		{
		  unsigned long long p = 1;
		  for (size_t m = k + 1; m < e; m += 2)
		    {
		      unsigned long long v = fk_tok_ull (&t[m], &ok);
		      if (!ok)
			break;
		      p *= v;
		      if (m + 1 >= e || !fk_tok_is (&t[m + 1], ","))
			break;
		    }
		  f->max_threads = (int) p;
		}
	    }
	}
      else if (is_var && !is_extern && !is_func)
	{
	  size_t esize = 0, k = s;
	  bool is_float = false;
	  for (; k < e; k++)
	    if ((esize = fk_type_size (&t[k])) != 0)
	      {
		is_float = t[k].s[1] == 'f';
		break;
	      }
	  if (esize == 0 || k + 1 >= e)
	    continue;
	  const struct fk_tok *name = &t[k + 1];
	  size_t count = 1, m = k + 2;
	  bool open = false;
	  while (m < e && fk_tok_is (&t[m], "["))
	    {
	      bool ok;
	      unsigned long long c = fk_tok_ull (&t[m + 1], &ok);
	      if (ok && m + 2 < e && fk_tok_is (&t[m + 2], "]"))
		{
		  count *= c;
		  m += 3;
		}
	      else
		{
		  open = true;	/* [] sized by the initialiser.  */
		  m += 2;
		}
	    }
	  size_t init_start = m;
	  if (open)
	    {
	      size_t vals = 0;
	      for (size_t q = m; q < e; q++)
		if (!fk_tok_is (&t[q], "{") && !fk_tok_is (&t[q], "}")
		    && !fk_tok_is (&t[q], ",") && !fk_tok_is (&t[q], "=")
		    && !fk_tok_is (&t[q], "-"))
		  vals++;
	      count = vals;
	    }
	  struct fk_global *g = fk_add_global (img, name->s, name->len,
					       esize * count);
	  if (g != NULL && init_start < e && fk_tok_is (&t[init_start], "="))
	    fk_parse_init (g, &t[init_start + 1], e - init_start - 1, esize,
			   is_float);
	}
    }
  if (res == CUDA_SUCCESS && !version)
    {
      snprintf (err, errlen, "fake ptxas: no .version directive: not PTX");
      res = CUDA_ERROR_INVALID_PTX;
    }
  free (t);
  return res;
}
