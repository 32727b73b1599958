/* A growable string for the plugins' messages and events; see
   text-buf.h.  */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text-buf.h"

void
ok_tb_init (struct ok_tbuf *b)
{
  b->s = b->small;
  b->len = 0;
  b->cap = sizeof b->small;
  b->heap = false;
  b->s[0] = '\0';
}

void
ok_tb_free (struct ok_tbuf *b)
{
  if (b->heap)
    free (b->s);
}

/* Room for N more bytes and the NUL; false if there is none.  */
static bool
ok_tb_reserve (struct ok_tbuf *b, size_t n)
{
  if (b->len + n < b->cap)
    return true;
  size_t cap = b->cap * 2;
  while (cap <= b->len + n)
    cap *= 2;
  char *s = b->heap ? realloc (b->s, cap) : malloc (cap);
  if (s == NULL)
    return false;
  if (!b->heap)
    memcpy (s, b->s, b->len + 1);
  b->s = s;
  b->cap = cap;
  b->heap = true;
  return true;
}

void
ok_tb_printf (struct ok_tbuf *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n >= b->cap - b->len)
    {
      if (!ok_tb_reserve (b, (size_t) n))
	{
	  /* vsnprintf wrote what fitted.  */
	  b->len = b->cap - 1;
	  return;
	}
      va_start (ap, fmt);
      vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
      va_end (ap);
    }
  b->len += (size_t) n;
}

void
ok_tb_putc (struct ok_tbuf *b, char c)
{
  if (!ok_tb_reserve (b, 1))
    return;
  b->s[b->len++] = c;
  b->s[b->len] = '\0';
}

/* S for an INFO line: control characters, which could end the line or
   disturb a terminal, become '?'.  */
void
ok_tb_plain (struct ok_tbuf *b, const char *s)
{
  for (; *s != '\0'; s++)
    {
      unsigned char c = (unsigned char) *s;
      ok_tb_putc (b, c < 0x20 || c == 0x7f ? '?' : (char) c);
    }
}

/* The length of the valid UTF-8 sequence at S (1 to 4), or 0 if S does
   not start one (overlong forms, surrogates and code points above
   U+10FFFF are not valid).  */
static size_t
utf8_len (const unsigned char *s)
{
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;	/* Range of the second byte.  */
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      n = 3;
      if (c == 0xe0)
	lo = 0xa0;
      else if (c == 0xed)
	hi = 0x9f;
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      n = 4;
      if (c == 0xf0)
	lo = 0x90;
      else if (c == 0xf4)
	hi = 0x8f;
    }
  else
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return n;
}

/* S as a JSON string, quotes included.  Quotes, backslashes and control
   characters are escaped, valid UTF-8 is kept, and any other byte
   becomes the code point of the same value (\u00XX, as if Latin-1), so
   the file is valid JSON whatever a kernel name holds.  */
void
ok_tb_json (struct ok_tbuf *b, const char *s)
{
  ok_tb_putc (b, '"');
  const unsigned char *u = (const unsigned char *) s;
  while (*u != '\0')
    {
      unsigned char c = *u;
      size_t n;
      if (c == '"' || c == '\\')
	{
	  ok_tb_putc (b, '\\');
	  ok_tb_putc (b, (char) c);
	  u++;
	}
      else if (c < 0x20 || c == 0x7f)
	{
	  ok_tb_printf (b, "\\u%04x", c);
	  u++;
	}
      else if (c < 0x80)
	{
	  ok_tb_putc (b, (char) c);
	  u++;
	}
      else if ((n = utf8_len (u)) > 0)
	for (; n > 0; n--)
	  ok_tb_putc (b, (char) *u++);
      else
	{
	  ok_tb_printf (b, "\\u%04x", c);
	  u++;
	}
    }
  ok_tb_putc (b, '"');
}

bool
ok_write_all (int fd, const char *s, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, s, n);
      if (w < 0 && errno == EINTR)
	continue;
      if (w <= 0)
	return false;
      s += w;
      n -= (size_t) w;
    }
  return true;
}

