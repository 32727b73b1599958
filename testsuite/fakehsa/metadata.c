/* The AMDGPU metadata note of a code object, read as the HSA runtime
   reads it for what this fake needs: each kernel's ".symbol" and
   ".kernarg_segment_size".  Written from the vendors' facts, apart from
   offloadkit's own reader (mkoffload/util/gcn-metadata.c), so that the
   fake can catch that reader's mistakes:
   - LLVM's AMDGPUUsage, "Code Object V3 Metadata" and later: the note
     (type NT_AMDGPU_METADATA, 32, owner "AMDGPU") holds one MessagePack
     map; its key "amdhsa.kernels" holds an array of one map per kernel,
     whose ".symbol" is a string and ".kernarg_segment_size" an unsigned
     integer, in any order among the other keys;
   - the MessagePack specification (msgpack/spec.md): the formats below,
     lengths and numbers big-endian.  */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fake-hsa.h"

/* Nesting deeper than this is refused (the metadata needs 4).  */
#define FH_MP_DEPTH 64

struct fh_mp
{
  const unsigned char *p, *end;
};

/* What an object is, once its header is read.  */
enum fh_mp_type
{
  FH_MP_BAD,			/* Truncated or a reserved byte (0xc1).  */
  FH_MP_UINT,
  FH_MP_STR,
  FH_MP_ARRAY,
  FH_MP_MAP,
  FH_MP_OTHER			/* Read whole: nil, bool, int, float, bin, ext.  */
};

static bool
fh_mp_take (struct fh_mp *m, size_t n, const unsigned char **at)
{
  if ((size_t) (m->end - m->p) < n)
    return false;
  if (at != NULL)
    *at = m->p;
  m->p += n;
  return true;
}

/* An N-byte big-endian number, N of 1, 2, 4 or 8.  */
static bool
fh_mp_be (struct fh_mp *m, size_t n, uint64_t *v)
{
  const unsigned char *b;
  if (!fh_mp_take (m, n, &b))
    return false;
  *v = 0;
  for (size_t i = 0; i < n; i++)
    *v = (*v << 8) | b[i];
  return true;
}

/* Read the header of the next object.  Strings: *V is the length and
   *BYTES the bytes, which are consumed.  Arrays and maps: *V is the
   number of elements (pairs for a map), which follow.  Unsigned
   integers: *V is the value.  Anything else is consumed whole.  */
static enum fh_mp_type
fh_mp_head (struct fh_mp *m, uint64_t *v, const unsigned char **bytes)
{
  const unsigned char *t;
  if (!fh_mp_take (m, 1, &t))
    return FH_MP_BAD;
  unsigned c = *t;
  uint64_t n;
  /* The single-byte forms.  */
  if (c <= 0x7f)
    {
      *v = c;
      return FH_MP_UINT;
    }
  if (c >= 0xe0)
    return FH_MP_OTHER;		/* Negative fixint.  */
  if ((c & 0xf0) == 0x80)
    {
      *v = c & 0x0f;
      return FH_MP_MAP;
    }
  if ((c & 0xf0) == 0x90)
    {
      *v = c & 0x0f;
      return FH_MP_ARRAY;
    }
  if ((c & 0xe0) == 0xa0)
    {
      *v = c & 0x1f;
      return fh_mp_take (m, *v, bytes) ? FH_MP_STR : FH_MP_BAD;
    }
  switch (c)
    {
    case 0xc0: case 0xc2: case 0xc3:	/* nil, false, true.  */
      return FH_MP_OTHER;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:	/* uint 8 to 64.  */
      return fh_mp_be (m, (size_t) 1 << (c - 0xcc), v) ? FH_MP_UINT
							: FH_MP_BAD;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3:	/* int 8 to 64.  */
      return fh_mp_take (m, (size_t) 1 << (c - 0xd0), NULL) ? FH_MP_OTHER
							     : FH_MP_BAD;
    case 0xca:			/* float 32.  */
      return fh_mp_take (m, 4, NULL) ? FH_MP_OTHER : FH_MP_BAD;
    case 0xcb:			/* float 64.  */
      return fh_mp_take (m, 8, NULL) ? FH_MP_OTHER : FH_MP_BAD;
    case 0xd9: case 0xda: case 0xdb:	/* str 8, 16, 32.  */
      if (!fh_mp_be (m, (size_t) 1 << (c - 0xd9), v))
	return FH_MP_BAD;
      return fh_mp_take (m, *v, bytes) ? FH_MP_STR : FH_MP_BAD;
    case 0xc4: case 0xc5: case 0xc6:	/* bin 8, 16, 32.  */
      return (fh_mp_be (m, (size_t) 1 << (c - 0xc4), &n)
	      && fh_mp_take (m, n, NULL)) ? FH_MP_OTHER : FH_MP_BAD;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
      /* fixext 1 to 16: a type byte and 2^(C - 0xd4) bytes.  */
      return fh_mp_take (m, 1 + ((size_t) 1 << (c - 0xd4)), NULL)
	     ? FH_MP_OTHER : FH_MP_BAD;
    case 0xc7: case 0xc8: case 0xc9:	/* ext 8, 16, 32.  */
      return (fh_mp_be (m, (size_t) 1 << (c - 0xc7), &n)
	      && fh_mp_take (m, 1 + n, NULL)) ? FH_MP_OTHER : FH_MP_BAD;
    case 0xdc: case 0xdd:		/* array 16, 32.  */
      return fh_mp_be (m, c == 0xdc ? 2 : 4, v) ? FH_MP_ARRAY : FH_MP_BAD;
    case 0xde: case 0xdf:		/* map 16, 32.  */
      return fh_mp_be (m, c == 0xde ? 2 : 4, v) ? FH_MP_MAP : FH_MP_BAD;
    default:			/* 0xc1, never used.  */
      return FH_MP_BAD;
    }
}

/* Skip one whole object whose header is already read as TYPE with count
   or value V.  */
static bool
fh_mp_skip_rest (struct fh_mp *m, enum fh_mp_type type, uint64_t v,
		 int depth)
{
  if (type == FH_MP_BAD)
    return false;
  if (type != FH_MP_ARRAY && type != FH_MP_MAP)
    return true;
  if (depth >= FH_MP_DEPTH)
    return false;
  uint64_t items = type == FH_MP_MAP ? 2 * v : v;
  /* Each element takes a byte at least: a count beyond the bytes left
     is a lie, and would loop for long.  */
  if (items > (uint64_t) (m->end - m->p))
    return false;
  for (uint64_t i = 0; i < items; i++)
    {
      uint64_t w;
      const unsigned char *b;
      enum fh_mp_type t = fh_mp_head (m, &w, &b);
      if (!fh_mp_skip_rest (m, t, w, depth + 1))
	return false;
    }
  return true;
}

static bool
fh_mp_is (const unsigned char *b, uint64_t n, const char *s)
{
  return n == strlen (s) && memcmp (b, s, n) == 0;
}

/* One kernel's map, whose header (N pairs) is read: its ".symbol" and
   ".kernarg_segment_size", the latter to FN when it has both.  */
static bool
fh_mp_kernel (struct fh_mp *m, uint64_t n, fh_kernarg_fn fn, void *arg)
{
  const unsigned char *symbol = NULL;
  uint64_t symlen = 0, kernarg = 0;
  bool have_kernarg = false;
  if (n > (uint64_t) (m->end - m->p))
    return false;
  for (uint64_t i = 0; i < n; i++)
    {
      uint64_t kl, v;
      const unsigned char *key, *b;
      enum fh_mp_type kt = fh_mp_head (m, &kl, &key);
      if (kt != FH_MP_STR)
	{
	  if (!fh_mp_skip_rest (m, kt, kl, 2))
	    return false;
	  key = NULL;
	}
      enum fh_mp_type vt = fh_mp_head (m, &v, &b);
      if (key != NULL && vt == FH_MP_STR && fh_mp_is (key, kl, ".symbol"))
	{
	  symbol = b;
	  symlen = v;
	}
      else if (key != NULL && vt == FH_MP_UINT
	       && fh_mp_is (key, kl, ".kernarg_segment_size"))
	{
	  kernarg = v;
	  have_kernarg = true;
	}
      else if (!fh_mp_skip_rest (m, vt, v, 2))
	return false;
    }
  if (symbol != NULL && have_kernarg)
    fn ((const char *) symbol, (size_t) symlen, kernarg, arg);
  return true;
}

int
fh_metadata_kernargs (const unsigned char *desc, size_t len,
		      fh_kernarg_fn fn, void *arg)
{
  struct fh_mp m = { desc, desc + len };
  uint64_t n;
  const unsigned char *b;
  enum fh_mp_type t = fh_mp_head (&m, &n, &b);
  if (t != FH_MP_MAP)
    return fh_mp_skip_rest (&m, t, n, 0) ? 0 : -1;
  if (n > len)
    return -1;
  for (uint64_t i = 0; i < n; i++)
    {
      uint64_t kl, v;
      const unsigned char *key, *vb;
      enum fh_mp_type kt = fh_mp_head (&m, &kl, &key);
      if (kt != FH_MP_STR && !fh_mp_skip_rest (&m, kt, kl, 1))
	return -1;
      enum fh_mp_type vt = fh_mp_head (&m, &v, &vb);
      if (kt == FH_MP_STR && vt == FH_MP_ARRAY
	  && fh_mp_is (key, kl, "amdhsa.kernels"))
	{
	  if (v > (uint64_t) (m.end - m.p))
	    return -1;
	  for (uint64_t k = 0; k < v; k++)
	    {
	      uint64_t e;
	      const unsigned char *eb;
	      enum fh_mp_type et = fh_mp_head (&m, &e, &eb);
	      if (et == FH_MP_MAP ? !fh_mp_kernel (&m, e, fn, arg)
		  : !fh_mp_skip_rest (&m, et, e, 2))
		return -1;
	    }
	}
      else if (!fh_mp_skip_rest (&m, vt, v, 1))
	return -1;
    }
  return 0;
}
