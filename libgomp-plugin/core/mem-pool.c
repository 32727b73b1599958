/* The small-allocation pool (see mem-pool.h).

   Device memory is never touched: everything the pool knows about a block
   lives on the host.

   - Size classes: class K holds blocks of 256 << K bytes, up to the
     smallest power of two that is at least MAX_SMALL.  Every block starts
     at a multiple of 256 bytes from a chunk's start, and chunks are
     256-aligned, so every block is too.
   - Chunks are carved from the front, a block of the class asked for at a
     time.  When the rest of the current chunk is too small, it is cut
     into free blocks of the largest classes that fit, so nothing is lost,
     and a new chunk is obtained.
   - Each class has a stack of its free blocks' addresses.  Its capacity
     is reserved when a block of the class is carved, so that freeing never
     needs memory and cannot fail for lack of it.
   - A hash table (open addressing, linear probing) maps every address
     the pool gave out to what it is: a small block (free or in use, and
     its class) or a forwarded allocation (and its size).  Small blocks
     stay in it for the pool's life; forwarded ones leave when freed.

   One mutex guards the pool.  Chunks are obtained under it (a second
   thread needing one waits for the first instead of obtaining another);
   forwarded allocations and frees call OPS without it.  */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem-pool.h"
#include "plugin-core.h"

#define POOL_MIN_SHIFT 8		/* Class 0: 256 bytes.  */
#define POOL_ALIGN ((uintptr_t) 1 << POOL_MIN_SHIFT)
/* Class 39 holds 128 TiB blocks: larger MAX_SMALLs are cut to that.  */
#define POOL_MAX_CLASSES 40

enum pool_state
{
  POOL_EMPTY,			/* A free hash slot.  */
  POOL_SMALL_FREE,
  POOL_SMALL_USED,
  POOL_LARGE
};

struct pool_entry
{
  uintptr_t addr;
  size_t size;			/* Forwarded allocations: what was asked.  */
  unsigned char state;		/* enum pool_state.  */
  unsigned char cls;		/* Small blocks: the class.  */
};

/* A growable array of addresses.  */
struct pool_vec
{
  uintptr_t *v;
  size_t n, cap;
};

struct ok_mem_pool
{
  const struct ok_mem_pool_ops *ops;
  void *ctx;
  size_t max_small;		/* 0: forward everything.  */
  size_t chunk_size;
  unsigned num_classes;

  pthread_mutex_t lock;
  /* The rest of the current chunk: [CUR, CUR + LEFT).  */
  uintptr_t cur;
  size_t left;
  struct pool_vec chunks;	/* Bases, as OPS->alloc returned them.  */
  struct pool_vec free_blocks[POOL_MAX_CLASSES];
  size_t carved[POOL_MAX_CLASSES];	/* Blocks of each class.  */

  struct pool_entry *table;
  size_t table_cap;		/* A power of two.  */
  size_t table_used;

  struct ok_mem_pool_stats stats;
};

static void
pool_out_of_memory (void)
{
  ok_error ("device memory pool: out of host memory");
}

static size_t
pool_class_size (unsigned cls)
{
  return (size_t) POOL_ALIGN << cls;
}

/* The class for SIZE bytes, 0 < SIZE <= the largest class size.  */
static unsigned
pool_class_of (size_t size)
{
  unsigned cls = 0;
  while (pool_class_size (cls) < size)
    cls++;
  return cls;
}

/* Make room in VEC for N elements in all; false when out of memory.  */
static bool
pool_vec_reserve (struct pool_vec *vec, size_t n)
{
  if (n <= vec->cap)
    return true;
  size_t cap = vec->cap ? vec->cap : 16;
  while (cap < n)
    cap *= 2;
  uintptr_t *v = realloc (vec->v, cap * sizeof *v);
  if (v == NULL)
    return false;
  vec->v = v;
  vec->cap = cap;
  return true;
}

/* The hash table.  The caller holds the lock.  */

static size_t
pool_hash (const struct ok_mem_pool *pool, uintptr_t addr)
{
  /* Low bits are zero for blocks; Fibonacci hashing spreads the rest.  */
  uint64_t h = (uint64_t) (addr >> POOL_MIN_SHIFT) * 0x9e3779b97f4a7c15ull;
  return (size_t) (h >> 32) & (pool->table_cap - 1);
}

/* The entry for ADDR, or NULL.  */
static struct pool_entry *
pool_lookup (struct ok_mem_pool *pool, uintptr_t addr)
{
  if (pool->table_cap == 0)
    return NULL;
  for (size_t i = pool_hash (pool, addr);; i = (i + 1) & (pool->table_cap - 1))
    {
      struct pool_entry *e = &pool->table[i];
      if (e->state == POOL_EMPTY)
	return NULL;
      if (e->addr == addr)
	return e;
    }
}

/* Put E, whose address is not in the table, in a table with room.  */
static void
pool_place (struct ok_mem_pool *pool, const struct pool_entry *e)
{
  size_t i = pool_hash (pool, e->addr);
  while (pool->table[i].state != POOL_EMPTY)
    i = (i + 1) & (pool->table_cap - 1);
  pool->table[i] = *e;
}

/* Add E; false when out of memory.  The table stays at most half full,
   so that probes stay short.  */
static bool
pool_insert (struct ok_mem_pool *pool, const struct pool_entry *e)
{
  if (2 * (pool->table_used + 1) > pool->table_cap)
    {
      size_t cap = pool->table_cap ? 2 * pool->table_cap : 64;
      struct pool_entry *old = pool->table;
      size_t old_cap = pool->table_cap;
      struct pool_entry *table = calloc (cap, sizeof *table);
      if (table == NULL)
	return false;
      pool->table = table;
      pool->table_cap = cap;
      for (size_t i = 0; i < old_cap; i++)
	if (old[i].state != POOL_EMPTY)
	  pool_place (pool, &old[i]);
      free (old);
    }
  pool_place (pool, e);
  pool->table_used++;
  return true;
}

/* Remove E from the table: the entries after it in its probe run move
   back where their probes would find them (no tombstones).  */
static void
pool_remove (struct ok_mem_pool *pool, struct pool_entry *e)
{
  size_t mask = pool->table_cap - 1;
  size_t hole = (size_t) (e - pool->table);
  for (size_t i = (hole + 1) & mask; pool->table[i].state != POOL_EMPTY;
       i = (i + 1) & mask)
    {
      size_t home = pool_hash (pool, pool->table[i].addr);
      /* Entry I may fill the hole unless its home lies cyclically in
	 (HOLE, I].  */
      bool stays = (hole <= i) ? (hole < home && home <= i)
			       : (hole < home || home <= i);
      if (!stays)
	{
	  pool->table[hole] = pool->table[i];
	  hole = i;
	}
    }
  pool->table[hole].state = POOL_EMPTY;
  pool->table_used--;
}

/* Small blocks.  The caller holds the lock.  */

/* Record a new block of class CLS at ADDR, in state STATE; false when
   out of memory (nothing recorded).  */
static bool
pool_new_block (struct ok_mem_pool *pool, uintptr_t addr, unsigned cls,
		enum pool_state state)
{
  /* Room for every block of the class on its free stack at once.  */
  if (!pool_vec_reserve (&pool->free_blocks[cls], pool->carved[cls] + 1))
    return false;
  struct pool_entry e = { .addr = addr, .size = 0,
			  .state = (unsigned char) state,
			  .cls = (unsigned char) cls };
  if (!pool_insert (pool, &e))
    return false;
  pool->carved[cls]++;
  if (state == POOL_SMALL_FREE)
    {
      struct pool_vec *fb = &pool->free_blocks[cls];
      fb->v[fb->n++] = addr;
    }
  return true;
}

/* Cut the rest of the current chunk into free blocks, largest first.  */
static void
pool_retire_rest (struct ok_mem_pool *pool)
{
  while (pool->left >= POOL_ALIGN)
    {
      unsigned cls = pool->num_classes - 1;
      while (pool_class_size (cls) > pool->left)
	cls--;
      if (!pool_new_block (pool, pool->cur, cls, POOL_SMALL_FREE))
	break;			/* Out of host memory: let the rest go.  */
      pool->cur += pool_class_size (cls);
      pool->left -= pool_class_size (cls);
    }
  pool->left = 0;
}

/* A new block of class CLS, in use; 0 after an error (reported).  */
static uintptr_t
pool_carve (struct ok_mem_pool *pool, unsigned cls)
{
  size_t size = pool_class_size (cls);
  if (pool->left < size)
    {
      if (!pool_vec_reserve (&pool->chunks, pool->chunks.n + 1))
	{
	  pool_out_of_memory ();
	  return 0;
	}
      void *chunk = pool->ops->alloc (pool->ctx, pool->chunk_size);
      if (chunk == NULL)
	return 0;		/* Reported by OPS.  */
      if ((uintptr_t) chunk % POOL_ALIGN != 0)
	{
	  ok_error ("device memory pool: a chunk at %p is not aligned to %u"
		    " bytes", chunk, (unsigned) POOL_ALIGN);
	  pool->ops->free (pool->ctx, chunk);
	  return 0;
	}
      pool_retire_rest (pool);
      pool->chunks.v[pool->chunks.n++] = (uintptr_t) chunk;
      pool->cur = (uintptr_t) chunk;
      pool->left = pool->chunk_size;
      pool->stats.chunks++;
      pool->stats.chunk_bytes += pool->chunk_size;
    }
  uintptr_t addr = pool->cur;
  if (!pool_new_block (pool, addr, cls, POOL_SMALL_USED))
    {
      pool_out_of_memory ();
      return 0;
    }
  pool->cur += size;
  pool->left -= size;
  return addr;
}

/* The interface.  */

struct ok_mem_pool *
ok_mem_pool_new (const struct ok_mem_pool_ops *ops, void *ctx,
		 size_t max_small, size_t chunk_size)
{
  struct ok_mem_pool *pool = calloc (1, sizeof *pool);
  if (pool == NULL)
    {
      pool_out_of_memory ();
      return NULL;
    }
  pool->ops = ops;
  pool->ctx = ctx;
  if (max_small > pool_class_size (POOL_MAX_CLASSES - 1))
    max_small = pool_class_size (POOL_MAX_CLASSES - 1);
  pool->max_small = max_small;
  if (max_small > 0)
    {
      pool->num_classes = pool_class_of (max_small) + 1;
      size_t largest = pool_class_size (pool->num_classes - 1);
      /* Whole blocks of 256 bytes, and at least one of the largest.  */
      if (chunk_size < largest)
	chunk_size = largest;
      if (chunk_size > SIZE_MAX - POOL_ALIGN)
	chunk_size = largest;
      chunk_size = (chunk_size + POOL_ALIGN - 1) & ~(size_t) (POOL_ALIGN - 1);
    }
  pool->chunk_size = chunk_size;
  pthread_mutex_init (&pool->lock, NULL);
  return pool;
}

void *
ok_mem_pool_alloc (struct ok_mem_pool *pool, size_t size)
{
  /* A distinct address for an empty object: one byte's block.  */
  if (size == 0)
    size = 1;

  if (size > pool->max_small)
    {
      void *p = pool->ops->alloc (pool->ctx, size);
      if (p == NULL)
	return NULL;
      struct pool_entry e = { .addr = (uintptr_t) p, .size = size,
			      .state = POOL_LARGE };
      pthread_mutex_lock (&pool->lock);
      bool ok = pool_insert (pool, &e);
      if (ok)
	pool->stats.large_in_use += size;
      pthread_mutex_unlock (&pool->lock);
      if (!ok)
	{
	  pool_out_of_memory ();
	  pool->ops->free (pool->ctx, p);
	  return NULL;
	}
      return p;
    }

  unsigned cls = pool_class_of (size);
  uintptr_t addr;
  pthread_mutex_lock (&pool->lock);
  struct pool_vec *fb = &pool->free_blocks[cls];
  if (fb->n > 0)
    {
      addr = fb->v[--fb->n];
      pool_lookup (pool, addr)->state = POOL_SMALL_USED;
    }
  else
    addr = pool_carve (pool, cls);
  if (addr != 0)
    pool->stats.small_in_use += pool_class_size (cls);
  pthread_mutex_unlock (&pool->lock);
  return (void *) addr;
}

/* Whether ADDR lies inside a block in use or a forwarded allocation,
   after its start.  Only for the message of a refused free: it looks at
   every entry.  */
static bool
pool_inside (const struct ok_mem_pool *pool, uintptr_t addr)
{
  for (size_t i = 0; i < pool->table_cap; i++)
    {
      const struct pool_entry *e = &pool->table[i];
      size_t size = (e->state == POOL_SMALL_USED ? pool_class_size (e->cls)
		     : e->state == POOL_LARGE ? e->size : 0);
      if (addr > e->addr && addr - e->addr < size)
	return true;
    }
  return false;
}

bool
ok_mem_pool_free (struct ok_mem_pool *pool, void *ptr)
{
  if (ptr == NULL)
    return true;
  pthread_mutex_lock (&pool->lock);
  struct pool_entry *e = pool_lookup (pool, (uintptr_t) ptr);
  const char *why = NULL;
  if (e == NULL && pool_inside (pool, (uintptr_t) ptr))
    {
      pthread_mutex_unlock (&pool->lock);
      ok_inner_free_error (NULL, ptr);
      return false;
    }
  if (e == NULL)
    why = "the pool did not allocate it, or it was freed already";
  else if (e->state == POOL_SMALL_FREE)
    why = "it was freed already";
  else if (e->state == POOL_SMALL_USED)
    {
      e->state = POOL_SMALL_FREE;
      struct pool_vec *fb = &pool->free_blocks[e->cls];
      fb->v[fb->n++] = e->addr;	/* Reserved when carved.  */
      pool->stats.small_in_use -= pool_class_size (e->cls);
      pthread_mutex_unlock (&pool->lock);
      return true;
    }
  else
    {
      pool->stats.large_in_use -= e->size;
      pool_remove (pool, e);
      pthread_mutex_unlock (&pool->lock);
      return pool->ops->free (pool->ctx, ptr);
    }
  pthread_mutex_unlock (&pool->lock);
  ok_error ("cannot free device memory at %p: %s", ptr, why);
  return false;
}

void
ok_mem_pool_stats (struct ok_mem_pool *pool, struct ok_mem_pool_stats *stats)
{
  pthread_mutex_lock (&pool->lock);
  *stats = pool->stats;
  pthread_mutex_unlock (&pool->lock);
}

bool
ok_mem_pool_destroy (struct ok_mem_pool *pool)
{
  if (pool == NULL)
    return true;
  bool ok = true;
  for (size_t i = 0; i < pool->table_cap; i++)
    if (pool->table[i].state == POOL_LARGE
	&& !pool->ops->free (pool->ctx, (void *) pool->table[i].addr))
      ok = false;
  for (size_t i = 0; i < pool->chunks.n; i++)
    if (!pool->ops->free (pool->ctx, (void *) pool->chunks.v[i]))
      ok = false;
  for (unsigned c = 0; c < POOL_MAX_CLASSES; c++)
    free (pool->free_blocks[c].v);
  free (pool->chunks.v);
  free (pool->table);
  pthread_mutex_destroy (&pool->lock);
  free (pool);
  return ok;
}
