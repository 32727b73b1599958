/* `declare target indirect' functions (device code of GCC 14+, libgomp
   14+).

   A pointer to such a function, taken on the host, reaches device code
   as the host's address; the device code translates it
   (GOMP_target_map_indirect_ptr, GCC's libgomp/config/accel/
   target-indirect.c) through a map that the loader writes.  GCC's nvptx
   mkoffload gives the device code a table of the image's indirect
   functions, $offload_ind_func_table, 8 bytes per function, in the order
   of the host table that libgomp passes; libgomp passes no count, so the
   device table's size gives it.

   The map has one of two forms, chosen by the variable the image's
   device code has for it:

   - __gomp_indirect_addr_hmap (GCC 16): a pointer to a hash table built
     on the host, as GCC 16's plugin-nvptx.c builds it with libgomp's
     hashtab.h: a 32-byte header {size, n_elements, n_deleted as 64-bit
     words, size_prime_index as a 32-bit one}, then SIZE 16-byte entries
     {host address, device address} (GCC's unsigned __int128 host |
     device << 64 on little-endian machines), all-zero when empty; SIZE is
     a prime of hashtab.h's table, and an address is found by double
     hashing of (uint32_t) (host ^ host >> 32);
   - __gomp_indirect_addr_map (GCC 14 and 15, and GCC 16's fallback): a
     pointer to flat {host, device} pairs ending with a 0 host address,
     from which the device code builds its own hash table at its first
     launch.

   GCC 16's device code has both variables and uses the hash table when
   its pointer is set, so that one is written when the variable is
   there.  The map stays in device memory until the image is unloaded
   (GCC's plugin never frees it).  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"

#define CUDA_IND_TABLE_VAR "$offload_ind_func_table"
#define CUDA_IND_MAP_VAR "__gomp_indirect_addr_map"
#define CUDA_IND_HMAP_VAR "__gomp_indirect_addr_hmap"

/* More than any program has; a larger table is garbage.  */
#define CUDA_IND_MAX ((size_t) 1 << 24)

/* One entry of either form: a function's host and device addresses.  */
struct cuda_ind_pair
{
  uint64_t host, dev;
};

/* The hash table's header, as GCC 16's device code reads it (its struct
   htab before the entries, which are aligned to 16 bytes on the host
   and to 8 on the device: 32 bytes either way).  */
struct cuda_htab_header
{
  uint64_t size;
  uint64_t n_elements;
  uint64_t n_deleted;
  uint32_t size_prime_index;
  uint32_t pad;
};
_Static_assert (sizeof (struct cuda_htab_header) == 32,
		"the header of GCC's struct htab is 32 bytes");

/* The sizes a table may have, indexed by size_prime_index: the primes of
   libgomp's hashtab.h, whose table the device code indexes.  */
static const uint32_t cuda_htab_primes[] = {
  7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 32749,
  65521, 131071, 262139, 524287, 1048573, 2097143, 4194301, 8388593,
  16777213, 33554393, 67108859, 134217689, 268435399, 536870909,
  1073741789, 2147483647, 0xfffffffbu
};

/* A hash table being built: SIZE entries, N of them used.  */
struct cuda_htab
{
  unsigned prime_index;
  uint64_t size, n;
  struct cuda_ind_pair *e;
};

/* hashtab.h's higher_prime_index: the first prime not below N (N is at
   most CUDA_IND_MAX * 2, far below the last).  */
static unsigned
cuda_htab_prime_index (uint64_t n)
{
  unsigned i = 0;
  while (cuda_htab_primes[i] < n)
    i++;
  return i;
}

static bool
cuda_htab_create (struct cuda_htab *h, uint64_t n)
{
  h->prime_index = cuda_htab_prime_index (n);
  h->size = cuda_htab_primes[h->prime_index];
  h->n = 0;
  h->e = calloc (h->size, sizeof *h->e);
  return h->e != NULL;
}

/* The slot of HOST in H: its entry, or the empty one where it goes.  The
   device's htab_find probes the same way: hash modulo the size, then
   steps of 1 + hash modulo (size - 2), which reach every slot of a
   prime-sized table.  */
static struct cuda_ind_pair *
cuda_htab_slot (const struct cuda_htab *h, uint64_t host)
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
cuda_htab_put (struct cuda_htab *h, struct cuda_ind_pair p)
{
  struct cuda_ind_pair *slot = cuda_htab_slot (h, p.host);
  if (slot->host == 0)
    h->n++;
  *slot = p;
}

/* Insert P as hashtab.h's htab_find_slot does, growing H first when it is
   three quarters full, so that the table has the size GCC 16's plugin
   gives it.  */
static bool
cuda_htab_insert (struct cuda_htab *h, struct cuda_ind_pair p)
{
  if (h->size * 3 <= h->n * 4)
    {
      struct cuda_htab bigger;
      uint64_t n = h->n;
      bool grow = n * 2 > h->size || (n * 8 < h->size && h->size > 32);
      if (!cuda_htab_create (&bigger, grow ? n * 2 : h->size - 1))
	return false;
      for (uint64_t i = 0; i < h->size; i++)
	if (h->e[i].host != 0)
	  cuda_htab_put (&bigger, h->e[i]);
      free (h->e);
      *h = bigger;
    }
  cuda_htab_put (h, p);
  return true;
}

/* The map in hash-table form for the N pairs P: malloc'd, *BYTES long;
   NULL when out of memory.  */
static void *
cuda_ind_hash_map (const struct cuda_ind_pair *p, size_t n, size_t *bytes)
{
  struct cuda_htab h;
  if (!cuda_htab_create (&h, n))
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (!cuda_htab_insert (&h, p[i]))
      {
	free (h.e);
	return NULL;
      }
  struct cuda_htab_header hdr = { .size = h.size, .n_elements = h.n,
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

/* The map in flat form: the pairs, then a 0 host address.  */
static void *
cuda_ind_flat_map (const struct cuda_ind_pair *p, size_t n, size_t *bytes)
{
  *bytes = (n + 1) * sizeof *p;
  struct cuda_ind_pair *map = calloc (n + 1, sizeof *p);
  if (map != NULL)
    memcpy (map, p, n * sizeof *p);
  return map;
}

/* The device's table of IMG's indirect functions: malloc'd into *DEV_FNS,
   *N of them (as many as EXPECT unless it is -1).  */
static bool
cuda_ind_read_table (struct cuda_device *dev, struct cuda_image *img,
		     long expect, uint64_t **dev_fns, size_t *n)
{
  CUdeviceptr p = 0;
  size_t bytes = 0;
  bool found;
  if (!cuda_module_global (dev, img->module, CUDA_IND_TABLE_VAR, &p, &bytes,
			   &found))
    return false;
  if (!found)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has `declare"
		    " target indirect' functions, but its device code has no"
		    " table of them (" CUDA_IND_TABLE_VAR ")");
      return false;
    }
  *n = bytes / sizeof (uint64_t);
  if (bytes == 0 || bytes % sizeof (uint64_t) != 0 || *n > CUDA_IND_MAX
      || (expect >= 0 && *n != (size_t) expect))
    {
      char want[64] = "a multiple of 8 bytes";
      if (expect >= 0)
	snprintf (want, sizeof want, "%ld functions, %zu bytes", expect,
		  (size_t) expect * sizeof (uint64_t));
      ok_dev_error (&dev->base, "cannot load offload image: its table of"
		    " `declare target indirect' functions ("
		    CUDA_IND_TABLE_VAR ") has %zu bytes, expected %s", bytes,
		    want);
      return false;
    }
  *dev_fns = malloc (bytes);
  if (*dev_fns == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  if (!cuda_dev2host (&dev->base, *dev_fns, (const void *) (uintptr_t) p,
		      bytes))
    {
      free (*dev_fns);
      return false;
    }
  return true;
}

/* Copy MAP (BYTES) to new device memory of IMG and store its address in
   the device variable at VAR.  */
static bool
cuda_ind_write (struct cuda_device *dev, struct cuda_image *img,
		const void *map, size_t bytes, CUdeviceptr var)
{
  void *d = cuda_mem_alloc (dev, bytes, "the map of `declare target"
			    " indirect' functions");
  if (d == NULL)
    return false;
  uint64_t addr = (uint64_t) (uintptr_t) d;
  if (!cuda_host2dev (&dev->base, d, map, bytes)
      || !cuda_host2dev (&dev->base, (void *) (uintptr_t) var, &addr,
			 sizeof addr))
    {
      ok_cuda.cuMemFree ((CUdeviceptr) addr);
      return false;
    }
  img->ind_map = (CUdeviceptr) addr;
  return true;
}

bool
cuda_indirect_load (struct cuda_device *dev, struct cuda_image *img,
		    const uint64_t *host_fns, long expect)
{
  if (host_fns == NULL && expect > 0)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has %ld"
		    " `declare target indirect' functions, but libgomp passed"
		    " no host table of them", expect);
      return false;
    }
  if (host_fns == NULL)
    return true;
  if (expect == 0)
    {
      ok_dev_error (&dev->base, "cannot load offload image: libgomp passed"
		    " a host table of `declare target indirect' functions,"
		    " but the image says it has none");
      return false;
    }

  /* The variable first: without it there is nothing to read the map.  */
  CUdeviceptr var = 0;
  size_t var_bytes = 0;
  bool hashed, flat = false;
  if (!cuda_module_global (dev, img->module, CUDA_IND_HMAP_VAR, &var,
			   &var_bytes, &hashed)
      || (!hashed && !cuda_module_global (dev, img->module, CUDA_IND_MAP_VAR,
					  &var, &var_bytes, &flat)))
    return false;
  const char *var_name = hashed ? CUDA_IND_HMAP_VAR : CUDA_IND_MAP_VAR;
  if (!hashed && !flat)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has `declare"
		    " target indirect' functions, but its device code has"
		    " neither " CUDA_IND_HMAP_VAR " nor " CUDA_IND_MAP_VAR
		    " (device code older than GCC 14's?)");
      return false;
    }
  if (var_bytes != sizeof (uint64_t))
    {
      ok_dev_error (&dev->base, "cannot load offload image: variable '%s'"
		    " has %zu bytes on the device, expected a pointer (8)",
		    var_name, var_bytes);
      return false;
    }

  uint64_t *dev_fns;
  size_t n;
  if (!cuda_ind_read_table (dev, img, expect, &dev_fns, &n))
    return false;
  struct cuda_ind_pair *pairs = malloc (n * sizeof *pairs);
  if (pairs == NULL)
    {
      free (dev_fns);
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  for (size_t i = 0; i < n; i++)
    {
      pairs[i].host = host_fns[i];
      pairs[i].dev = dev_fns[i];
      OK_DEBUG ("%s: indirect function %zu: host %#llx, device %#llx",
		dev->base.label, i, (unsigned long long) pairs[i].host,
		(unsigned long long) pairs[i].dev);
    }
  free (dev_fns);
  size_t bytes = 0;
  void *map = (hashed ? cuda_ind_hash_map (pairs, n, &bytes)
	       : cuda_ind_flat_map (pairs, n, &bytes));
  free (pairs);
  if (map == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  bool ok = cuda_ind_write (dev, img, map, bytes, var);
  free (map);
  if (ok)
    OK_DEBUG ("%s: map of %zu indirect functions (%s, %zu bytes) at %#llx",
	      dev->base.label, n, hashed ? "hash table" : "flat", bytes,
	      (unsigned long long) img->ind_map);
  return ok;
}

bool
cuda_indirect_unload (struct cuda_device *dev, struct cuda_image *img)
{
  if (img->ind_map == 0)
    return true;
  CUresult r = ok_cuda.cuMemFree (img->ind_map);
  img->ind_map = 0;
  return ok_dev_teardown_ok (&dev->base, r, "free the map of `declare"
			     " target indirect' functions", "cuMemFree");
}
