/* The map of `declare target indirect' functions in either of its forms
   (indirect-map.h): the flat list, or the hash table of GCC 16's
   libgomp/hashtab.h built as GCC 16's plugin-nvptx.c and plugin-gcn.c
   build it (create_target_indirect_map), so that the device code's
   htab_find finds every function.  */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "indirect-map.h"

/* The hash table's header, as GCC 16's device code reads it (its struct
   htab before the entries).  */
struct ind_htab_header
{
  uint64_t size;
  uint64_t n_elements;
  uint64_t n_deleted;
  uint32_t size_prime_index;
  uint32_t pad;
};
_Static_assert (sizeof (struct ind_htab_header) == 32,
		"the header of GCC's struct htab is 32 bytes");
_Static_assert (sizeof (struct ok_ind_pair) == 16,
		"an entry is GCC's unsigned __int128");

/* The sizes a table may have, indexed by size_prime_index: the primes of
   libgomp's hashtab.h, whose table the device code indexes.  */
static const uint32_t ind_htab_primes[] = {
  7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 32749,
  65521, 131071, 262139, 524287, 1048573, 2097143, 4194301, 8388593,
  16777213, 33554393, 67108859, 134217689, 268435399, 536870909,
  1073741789, 2147483647, 0xfffffffbu
};

/* A hash table being built: SIZE entries, N of them used.  */
struct ind_htab
{
  unsigned prime_index;
  uint64_t size, n;
  struct ok_ind_pair *e;
};

/* hashtab.h's higher_prime_index: the first prime not below N (N is at
   most OK_IND_MAX * 2, far below the last).  */
static unsigned
ind_htab_prime_index (uint64_t n)
{
  unsigned i = 0;
  while (ind_htab_primes[i] < n)
    i++;
  return i;
}

static bool
ind_htab_create (struct ind_htab *h, uint64_t n)
{
  h->prime_index = ind_htab_prime_index (n);
  h->size = ind_htab_primes[h->prime_index];
  h->n = 0;
  h->e = calloc (h->size, sizeof *h->e);
  return h->e != NULL;
}

/* The slot of HOST in H: its entry, or the empty one where it goes.  The
   device's htab_find probes the same way: hash modulo the size, then
   steps of 1 + hash modulo (size - 2), which reach every slot of a
   prime-sized table.  Unlike GCC 16's host-side htab_eq, which compares
   an entry with itself, so that a colliding function overwrites the
   first, entries are told apart by their host address.  */
static struct ok_ind_pair *
ind_htab_slot (const struct ind_htab *h, uint64_t host)
{
  uint32_t hash = (uint32_t) (host ^ (host >> 32));
  uint64_t i = hash % h->size;
  uint64_t step = 1 + hash % (h->size - 2);
  while (h->e[i].host != 0 && h->e[i].host != host)
    {
      i += step;
      if (i >= h->size)
	i -= h->size;
    }
  return &h->e[i];
}

static void
ind_htab_put (struct ind_htab *h, struct ok_ind_pair p)
{
  struct ok_ind_pair *slot = ind_htab_slot (h, p.host);
  if (slot->host == 0)
    h->n++;
  *slot = p;
}

/* Insert P as hashtab.h's htab_find_slot does, growing H first when it is
   three quarters full, so that the table has the size GCC 16's plugins
   give it.  */
static bool
ind_htab_insert (struct ind_htab *h, struct ok_ind_pair p)
{
  if (h->size * 3 <= h->n * 4)
    {
      struct ind_htab bigger;
      uint64_t n = h->n;
      bool grow = n * 2 > h->size || (n * 8 < h->size && h->size > 32);
      if (!ind_htab_create (&bigger, grow ? n * 2 : h->size - 1))
	return false;
      for (uint64_t i = 0; i < h->size; i++)
	if (h->e[i].host != 0)
	  ind_htab_put (&bigger, h->e[i]);
      free (h->e);
      *h = bigger;
    }
  ind_htab_put (h, p);
  return true;
}

static void *
ind_hash_map (const struct ok_ind_pair *p, size_t n, size_t *bytes)
{
  struct ind_htab h;
  if (!ind_htab_create (&h, n))
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (!ind_htab_insert (&h, p[i]))
      {
	free (h.e);
	return NULL;
      }
  struct ind_htab_header hdr = { .size = h.size, .n_elements = h.n,
				 .size_prime_index = h.prime_index };
  *bytes = sizeof hdr + h.size * sizeof *h.e;
  unsigned char *map = malloc (*bytes);
  if (map != NULL)
    {
      memcpy (map, &hdr, sizeof hdr);
      memcpy (map + sizeof hdr, h.e, h.size * sizeof *h.e);
    }
  free (h.e);
  return map;
}

/* The pairs, then a 0 host address: 2 N + 1 words, as GCC 14's plugins
   write them.  */
static void *
ind_flat_map (const struct ok_ind_pair *p, size_t n, size_t *bytes)
{
  *bytes = n * sizeof *p + sizeof (uint64_t);
  unsigned char *map = malloc (*bytes);
  if (map != NULL)
    {
      memcpy (map, p, n * sizeof *p);
      memset (map + n * sizeof *p, 0, sizeof (uint64_t));
    }
  return map;
}

void *
ok_ind_map_build (enum ok_ind_form form, const struct ok_ind_pair *pairs,
		  size_t n, size_t *bytes)
{
  if (n > OK_IND_MAX)
    return NULL;
  return (form == OK_IND_HASH ? ind_hash_map (pairs, n, bytes)
	  : ind_flat_map (pairs, n, bytes));
}

const char *
ok_ind_form_name (enum ok_ind_form form)
{
  return form == OK_IND_HASH ? "hash table" : "flat";
}
