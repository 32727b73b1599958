/* Scanning the AMDGPU metadata note; see gcn-metadata.h.

   Only as much MessagePack as is needed to walk any well-formed document:
   every item's header is decoded so that it can be skipped, and strings,
   unsigned integers, maps and arrays are looked at.  Format facts from the
   MessagePack specification (big-endian lengths and values).  */

#include "config.h"

#include <string.h>

#include "gcn-metadata.h"

/* Items nest at most this deep (the metadata needs 4).  */
#define MAX_DEPTH 32

struct cursor
{
  const unsigned char *p, *end;
};

enum kind { K_UINT, K_STR, K_MAP, K_ARRAY, K_OTHER };

struct item
{
  enum kind kind;
  uint64_t n;			/* K_UINT: value; K_MAP, K_ARRAY: count.  */
  const unsigned char *str;	/* K_STR: bytes (N of them).  */
};

/* Take an N-byte big-endian number; -1 when the input ends first.  */
static int
take_be (struct cursor *c, unsigned n, uint64_t *v)
{
  if ((size_t) (c->end - c->p) < n)
    return -1;
  *v = 0;
  for (unsigned i = 0; i < n; i++)
    *v = *v << 8 | *c->p++;
  return 0;
}

/* Skip N payload bytes.  */
static int
take_bytes (struct cursor *c, uint64_t n, const unsigned char **at)
{
  if ((uint64_t) (c->end - c->p) < n)
    return -1;
  if (at)
    *at = c->p;
  c->p += n;
  return 0;
}

/* Decode one item's header (and the payload of scalars and strings).  */
static int
next_item (struct cursor *c, struct item *it)
{
  uint64_t v;
  if (c->p >= c->end)
    return -1;
  unsigned b = *c->p++;
  it->kind = K_OTHER;
  it->n = 0;
  it->str = NULL;
  if (b <= 0x7f)
    {
      it->kind = K_UINT;
      it->n = b;
      return 0;
    }
  if (b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
    return 0;			/* Negative fixint, nil, false, true.  */
  if ((b & 0xf0) == 0x80 || (b & 0xf0) == 0x90)
    {
      it->kind = (b & 0xf0) == 0x80 ? K_MAP : K_ARRAY;
      it->n = b & 0x0f;
      return 0;
    }
  if ((b & 0xe0) == 0xa0)
    {
      it->kind = K_STR;
      it->n = b & 0x1f;
      return take_bytes (c, it->n, &it->str);
    }
  switch (b)
    {
    case 0xcc: case 0xcd: case 0xce: case 0xcf:	/* uint 8-64 */
      it->kind = K_UINT;
      return take_be (c, 1u << (b - 0xcc), &it->n);
    case 0xd0: case 0xd1: case 0xd2: case 0xd3:	/* int 8-64 */
      return take_be (c, 1u << (b - 0xd0), &v);
    case 0xca: return take_bytes (c, 4, NULL);		/* float 32 */
    case 0xcb: return take_bytes (c, 8, NULL);		/* float 64 */
    case 0xd9: case 0xda: case 0xdb:			/* str 8-32 */
      it->kind = K_STR;
      if (take_be (c, 1u << (b - 0xd9), &it->n) < 0)
	return -1;
      return take_bytes (c, it->n, &it->str);
    case 0xc4: case 0xc5: case 0xc6:			/* bin 8-32 */
      if (take_be (c, 1u << (b - 0xc4), &v) < 0)
	return -1;
      return take_bytes (c, v, NULL);
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: /* fixext */
      return take_bytes (c, 1 + (1u << (b - 0xd4)), NULL);
    case 0xc7: case 0xc8: case 0xc9:			/* ext 8-32 */
      if (take_be (c, 1u << (b - 0xc7), &v) < 0)
	return -1;
      return take_bytes (c, v + 1, NULL);
    case 0xdc: case 0xdd:				/* array 16, 32 */
      it->kind = K_ARRAY;
      return take_be (c, b == 0xdc ? 2 : 4, &it->n);
    case 0xde: case 0xdf:				/* map 16, 32 */
      it->kind = K_MAP;
      return take_be (c, b == 0xde ? 2 : 4, &it->n);
    default:						/* 0xc1: never used */
      return -1;
    }
}

/* Skip the rest of an item whose header IT was just read.  */
static int
skip_rest (struct cursor *c, const struct item *it, int depth)
{
  if (it->kind != K_MAP && it->kind != K_ARRAY)
    return 0;
  if (depth >= MAX_DEPTH)
    return -1;
  uint64_t n = it->n;
  /* Each element takes at least one byte: a bound on bogus counts.  */
  if (n > (uint64_t) (c->end - c->p))
    return -1;
  if (it->kind == K_MAP)
    n *= 2;
  for (uint64_t i = 0; i < n; i++)
    {
      struct item sub;
      if (next_item (c, &sub) < 0 || skip_rest (c, &sub, depth + 1) < 0)
	return -1;
    }
  return 0;
}

static int
is_key (const struct item *it, const char *key)
{
  return it->kind == K_STR && it->n == strlen (key)
	 && memcmp (it->str, key, it->n) == 0;
}

/* One kernel map, whose header K was just read.  */
static int
scan_kernel (struct cursor *c, const struct item *k, ok_gcn_metadata_fn fn,
	     void *arg)
{
  if (k->kind != K_MAP)
    return skip_rest (c, k, 2);
  /* First pass: find .symbol; second: report the integers.  */
  const unsigned char *start = c->p;
  const unsigned char *sym = NULL;
  size_t symlen = 0;
  for (int pass = 0; pass < 2; pass++)
    {
      c->p = start;
      for (uint64_t i = 0; i < k->n; i++)
	{
	  struct item key, val;
	  if (next_item (c, &key) < 0 || skip_rest (c, &key, 3) < 0
	      || next_item (c, &val) < 0)
	    return -1;
	  if (pass == 0 && is_key (&key, ".symbol") && val.kind == K_STR)
	    {
	      sym = val.str;
	      symlen = val.n;
	    }
	  else if (pass == 1 && sym && key.kind == K_STR
		   && val.kind == K_UINT)
	    fn ((const char *) sym, symlen, (const char *) key.str, key.n,
		val.n, arg);
	  if (skip_rest (c, &val, 3) < 0)
	    return -1;
	}
    }
  return 0;
}

int
ok_gcn_metadata_scan (const unsigned char *desc, size_t len,
		      ok_gcn_metadata_fn fn, void *arg)
{
  struct cursor c = { desc, desc + len };
  struct item top;
  if (next_item (&c, &top) < 0)
    return -1;
  if (top.kind != K_MAP)
    return skip_rest (&c, &top, 0);
  for (uint64_t i = 0; i < top.n; i++)
    {
      struct item key, val;
      if (next_item (&c, &key) < 0 || skip_rest (&c, &key, 1) < 0
	  || next_item (&c, &val) < 0)
	return -1;
      if (is_key (&key, "amdhsa.kernels") && val.kind == K_ARRAY)
	{
	  if (val.n > (uint64_t) (c.end - c.p))
	    return -1;
	  for (uint64_t k = 0; k < val.n; k++)
	    {
	      struct item kern;
	      if (next_item (&c, &kern) < 0
		  || scan_kernel (&c, &kern, fn, arg) < 0)
		return -1;
	    }
	}
      else if (skip_rest (&c, &val, 1) < 0)
	return -1;
    }
  return 0;
}
