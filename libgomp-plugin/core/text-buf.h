/* A growable string: lines and events are built in one, then written
   with one call (ok_write_all).  Escapes for INFO lines and JSON.  */

#ifndef OFFLOADKIT_TEXT_BUF_H
#define OFFLOADKIT_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* Starts on the stack; grows on the heap if needed.  A
   failed allocation truncates (a shorter event beats none).  */
struct ok_tbuf
{
  char *s;
  size_t len, cap;
  bool heap;
  char small[512];
};

void ok_tb_init (struct ok_tbuf *b);
void ok_tb_free (struct ok_tbuf *b);
void ok_tb_printf (struct ok_tbuf *b, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
void ok_tb_putc (struct ok_tbuf *b, char c);
/* S for an INFO line: control characters become '?'.  */
void ok_tb_plain (struct ok_tbuf *b, const char *s);
/* S as a JSON string, quotes included, valid whatever S holds.  */
void ok_tb_json (struct ok_tbuf *b, const char *s);

/* Write all N bytes of S to FD; false on an error.  */
bool ok_write_all (int fd, const char *s, size_t n);

#endif
