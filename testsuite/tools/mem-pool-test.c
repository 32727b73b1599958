/* Unit test of the device-memory pool (libgomp-plugin/mem-pool.c).

   Usage: mem-pool-test

   The pool runs over counting "device" operations that hand out host
   memory, so the test can write every block it gets and see overlaps, and
   can make an allocation fail on request.  It stands alone: libgomp's
   side is gomp-standin.c, and it defines the plugin identity the pool's
   messages name.  Prints one "PASS: name" or "FAIL: name" line per check
   (mem-pool.exp turns them into DejaGnu results) and exits with 1 if any
   check failed.  */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-standin.h"
#include "mem-pool.h"
#include "plugin-core.h"

/* The plugin's name, which the pool's messages give.  */
static const struct ok_backend *const no_backends[] = { NULL };
const struct ok_plugin ok_plugin = { .name = "test",
				     .backends = no_backends };

/* ------------------------------------------------------------------ */
/* The counting "device".  */

struct dev
{
  pthread_mutex_t lock;
  size_t allocs, frees, bad_frees;
  size_t live;			/* Allocations not freed.  */
  size_t live_bytes;
  int fail;			/* Fail this many next allocations.  */
  bool misalign;		/* Hand out addresses 16 bytes off.  */
  void *last;			/* What the last allocation returned.  */
  size_t last_size;
};

#define DEV_INIT { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, 0, false, \
		   NULL, 0 }

/* Each allocation records its size and a magic just before the address it
   hands out, so that a free of something else is caught.  */
#define DEV_MAGIC 0x6f6b706f6f6cull
#define DEV_HEAD 256

static void *
dev_alloc (void *ctx, size_t size)
{
  struct dev *d = ctx;
  pthread_mutex_lock (&d->lock);
  if (d->fail > 0)
    {
      d->fail--;
      pthread_mutex_unlock (&d->lock);
      GOMP_PLUGIN_error ("test device: out of memory (%zu bytes)", size);
      return NULL;
    }
  pthread_mutex_unlock (&d->lock);
  size_t n = DEV_HEAD + ((size + 255) & ~(size_t) 255) + 256;
  char *base = aligned_alloc (256, n);
  if (base == NULL)
    {
      GOMP_PLUGIN_error ("test device: host out of memory");
      return NULL;
    }
  char *p = base + DEV_HEAD + (d->misalign ? 16 : 0);
  uint64_t head[2] = { DEV_MAGIC, size };
  memcpy (p - sizeof head, head, sizeof head);
  pthread_mutex_lock (&d->lock);
  d->allocs++;
  d->live++;
  d->live_bytes += size;
  d->last = p;
  d->last_size = size;
  pthread_mutex_unlock (&d->lock);
  return p;
}

static bool
dev_free (void *ctx, void *ptr)
{
  struct dev *d = ctx;
  char *p = ptr;
  uint64_t head[2];
  memcpy (head, p - sizeof head, sizeof head);
  if (head[0] != DEV_MAGIC)
    {
      pthread_mutex_lock (&d->lock);
      d->bad_frees++;
      pthread_mutex_unlock (&d->lock);
      GOMP_PLUGIN_error ("test device: bad free of %p", ptr);
      return false;
    }
  head[0] = 0;
  memcpy (p - sizeof head, head, sizeof head);
  pthread_mutex_lock (&d->lock);
  d->frees++;
  d->live--;
  d->live_bytes -= head[1];
  pthread_mutex_unlock (&d->lock);
  free (p - DEV_HEAD - ((uintptr_t) p % 256));
  return true;
}

static const struct ok_mem_pool_ops dev_ops = { dev_alloc, dev_free };

static size_t
class_size (size_t size)
{
  size_t c = 256;
  while (c < size)
    c *= 2;
  return c;
}

/* ok_mem_pool_new over D; NULL, with a failed check "WHAT: new pool",
   when it cannot make the pool.  */
static struct ok_mem_pool *
new_pool (const char *what, struct dev *d, size_t max_small,
	  size_t chunk_size)
{
  struct ok_mem_pool *pool = ok_mem_pool_new (&dev_ops, d, max_small,
					      chunk_size);
  if (pool == NULL)
    {
      char name[128];
      snprintf (name, sizeof name, "%s: new pool", what);
      check (name, false);
    }
  return pool;
}

/* ------------------------------------------------------------------ */
/* Single-threaded checks.  */

static void
test_basics (void)
{
  struct dev d = DEV_INIT;
  struct ok_mem_pool *pool = ok_mem_pool_new (&dev_ops, &d, 4096, 65536);
  check ("new pool", pool != NULL);
  if (pool == NULL)
    return;
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("new pool holds nothing", st.chunks == 0 && st.chunk_bytes == 0
	 && st.small_in_use == 0 && st.large_in_use == 0 && d.allocs == 0);

  static const size_t sizes[] = { 1, 100, 255, 256, 257, 1000, 2048, 4095,
				  4096 };
  void *p[sizeof sizes / sizeof sizes[0]];
  bool aligned = true, nonnull = true;
  size_t expect = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    {
      p[i] = ok_mem_pool_alloc (pool, sizes[i]);
      nonnull &= p[i] != NULL;
      aligned &= (uintptr_t) p[i] % 256 == 0;
      expect += class_size (sizes[i]);
    }
  check ("small allocations succeed", nonnull);
  check ("blocks are aligned to 256 bytes", aligned);
  ok_mem_pool_stats (pool, &st);
  check ("small blocks come from one chunk", st.chunks == 1
	 && st.chunk_bytes == 65536 && d.allocs == 1);
  check ("stats count the small bytes in use", st.small_in_use == expect);

  /* Reuse: a freed block comes back for a request of its class.  */
  void *q = p[1];
  check ("free of a small block", ok_mem_pool_free (pool, q));
  void *r = ok_mem_pool_alloc (pool, 200);
  check ("a freed block is reused for its class", r == q);
  void *s = ok_mem_pool_alloc (pool, 200);
  check ("a second request gets another block", s != NULL && s != q);

  /* Frees the pool must refuse, without calling the device.  */
  int e0 = errors_now ();
  size_t f0 = d.frees;
  check ("free of another small block", ok_mem_pool_free (pool, s));
  check ("double free of a small block is refused",
	 !ok_mem_pool_free (pool, s) && errors_now () == e0 + 1
	 && strstr (last_error (), "freed already") != NULL
	 && strncmp (last_error (), "offloadkit-test: ", 17) == 0);
  int local;
  check ("free of an unknown pointer is refused",
	 !ok_mem_pool_free (pool, &local) && errors_now () == e0 + 2);
  /* In GCC's plugin's words, whole (libgomp's lib-11.c).  */
  check ("free of a pointer inside a block is refused",
	 !ok_mem_pool_free (pool, (char *) p[8] + 256)
	 && errors_now () == e0 + 3
	 && strcmp (last_error (), "invalid device address") == 0);
  check ("refused frees reach no device", d.frees == f0 && d.bad_frees == 0);
  check ("free of NULL does nothing", ok_mem_pool_free (pool, NULL)
	 && errors_now () == e0 + 3);

  /* Forwarded requests.  */
  size_t a0 = d.allocs;
  void *big = ok_mem_pool_alloc (pool, 4097);
  check ("a large request is forwarded", big != NULL && big == d.last
	 && d.last_size == 4097 && d.allocs == a0 + 1);
  ok_mem_pool_stats (pool, &st);
  check ("stats count the forwarded bytes", st.large_in_use == 4097);
  e0 = errors_now ();
  check ("free of a pointer inside a forwarded allocation is refused",
	 !ok_mem_pool_free (pool, (char *) big + 4000)
	 && errors_now () == e0 + 1
	 && strcmp (last_error (), "invalid device address") == 0
	 && d.frees == f0);
  check ("free of a forwarded allocation reaches the device",
	 ok_mem_pool_free (pool, big) && d.frees == f0 + 1);
  ok_mem_pool_stats (pool, &st);
  check ("stats after the forwarded free", st.large_in_use == 0);
  e0 = errors_now ();
  check ("double free of a forwarded allocation is refused",
	 !ok_mem_pool_free (pool, big) && errors_now () == e0 + 1
	 && d.frees == f0 + 1 && d.bad_frees == 0);

  /* Empty requests.  */
  void *z1 = ok_mem_pool_alloc (pool, 0);
  void *z2 = ok_mem_pool_alloc (pool, 0);
  check ("size 0 gives distinct blocks", z1 != NULL && z2 != NULL
	 && z1 != z2);
  check ("size 0 blocks can be freed", ok_mem_pool_free (pool, z1)
	 && ok_mem_pool_free (pool, z2));

  /* Leave some blocks and a forwarded allocation to destroy.  */
  check ("a forwarded allocation left for destroy",
	 ok_mem_pool_alloc (pool, 100000) != NULL);
  check ("destroy succeeds", ok_mem_pool_destroy (pool));
  check ("destroy returns everything", d.live == 0 && d.live_bytes == 0
	 && d.allocs == d.frees && d.bad_frees == 0);
}

/* Every block gets a pattern of its own over its class size; any overlap
   between blocks shows as a changed pattern.  */
static void
fill (void *p, size_t n, unsigned tag)
{
  unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    c[i] = (unsigned char) (tag * 31 + i);
}

static bool
intact (const void *p, size_t n, unsigned tag)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != (unsigned char) (tag * 31 + i))
      return false;
  return true;
}

static void
test_many (void)
{
  struct dev d = DEV_INIT;
  struct ok_mem_pool *pool = new_pool ("many blocks", &d, 8192, 32768);
  if (pool == NULL)
    return;
  enum { N = 2000 };
  static void *p[N];
  static size_t sz[N];
  unsigned seed = 12345;
  bool ok = true;
  for (int i = 0; i < N; i++)
    {
      seed = seed * 1103515245u + 12345u;
      sz[i] = (seed >> 8) % 8193;
      p[i] = ok_mem_pool_alloc (pool, sz[i]);
      if (p[i] == NULL || (uintptr_t) p[i] % 256 != 0)
	ok = false;
      else
	fill (p[i], class_size (sz[i] ? sz[i] : 1), (unsigned) i);
    }
  check ("many blocks: all allocated and aligned", ok);
  bool whole = true;
  for (int i = 0; ok && i < N; i++)
    whole &= intact (p[i], class_size (sz[i] ? sz[i] : 1), (unsigned) i);
  check ("many blocks: no two overlap", ok && whole);
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("many blocks: carved from several chunks", st.chunks > 10
	 && st.chunks == d.allocs && st.chunk_bytes == st.chunks * 32768);

  /* Free every other one and take as many again: no new chunk.  */
  for (int i = 0; i < N; i += 2)
    ok &= ok_mem_pool_free (pool, p[i]);
  size_t chunks = st.chunks;
  for (int i = 0; i < N; i += 2)
    {
      p[i] = ok_mem_pool_alloc (pool, sz[i]);
      if (p[i] == NULL)
	ok = false;
      else
	fill (p[i], class_size (sz[i] ? sz[i] : 1), (unsigned) i);
    }
  ok_mem_pool_stats (pool, &st);
  check ("many blocks: freed blocks are reused", ok && st.chunks == chunks);
  for (int i = 0; ok && i < N; i++)
    whole &= intact (p[i], class_size (sz[i] ? sz[i] : 1), (unsigned) i);
  check ("many blocks: still no overlap after reuse", ok && whole);
  for (int i = 0; i < N; i++)
    ok &= ok_mem_pool_free (pool, p[i]);
  ok_mem_pool_stats (pool, &st);
  check ("many blocks: all freed", ok && st.small_in_use == 0);
  check ("many blocks: destroy", ok_mem_pool_destroy (pool)
	 && d.live == 0 && d.allocs == d.frees);
}

/* The rest of a chunk too small for a request is not lost.  */
static void
test_chunk_rest (void)
{
  struct dev d = DEV_INIT;
  /* 10000 rounds up to 10240: two 4096 blocks leave 2048.  */
  struct ok_mem_pool *pool = new_pool ("chunk rest", &d, 4096, 10000);
  if (pool == NULL)
    return;
  char *a = ok_mem_pool_alloc (pool, 4096);
  char *b = ok_mem_pool_alloc (pool, 4096);
  char *c = ok_mem_pool_alloc (pool, 4096);
  check ("chunk rest: a third block needs a new chunk",
	 a != NULL && b == a + 4096 && c != NULL && d.allocs == 2);
  char *r = ok_mem_pool_alloc (pool, 2000);
  check ("chunk rest: the old chunk's rest serves a smaller request",
	 r == a + 8192 && d.allocs == 2);
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("chunk rest: chunk size rounded to 256", st.chunk_bytes == 2 * 10240);
  check ("chunk rest: destroy", ok_mem_pool_destroy (pool) && d.live == 0);
}

static void
test_failures (void)
{
  struct dev d = DEV_INIT;
  struct ok_mem_pool *pool = new_pool ("failures", &d, 1024, 4096);
  if (pool == NULL)
    return;
  int e0 = errors_now ();
  d.fail = 1;
  check ("a failed chunk allocation gives NULL",
	 ok_mem_pool_alloc (pool, 100) == NULL && errors_now () == e0 + 1);
  void *p = ok_mem_pool_alloc (pool, 100);
  check ("the pool works after a failed chunk allocation", p != NULL
	 && d.allocs == 1);
  d.fail = 1;
  check ("a failed forwarded allocation gives NULL",
	 ok_mem_pool_alloc (pool, 5000) == NULL && errors_now () == e0 + 2);
  void *q = ok_mem_pool_alloc (pool, 5000);
  check ("forwarding works after a failure", q != NULL);
  check ("failures: frees", ok_mem_pool_free (pool, p)
	 && ok_mem_pool_free (pool, q));
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("failures: stats", st.small_in_use == 0 && st.large_in_use == 0
	 && st.chunks == 1);
  check ("failures: destroy", ok_mem_pool_destroy (pool) && d.live == 0
	 && d.allocs == d.frees);

  /* A device whose memory is not 256-aligned cannot back the pool.  */
  struct dev m = DEV_INIT;
  m.misalign = true;
  pool = ok_mem_pool_new (&dev_ops, &m, 1024, 4096);
  e0 = errors_now ();
  check ("a misaligned chunk is refused", pool != NULL
	 && ok_mem_pool_alloc (pool, 10) == NULL && errors_now () == e0 + 1
	 && strstr (last_error (), "aligned") != NULL && m.live == 0);
  check ("misaligned: destroy", pool != NULL && ok_mem_pool_destroy (pool)
	 && m.allocs == m.frees);
}

static void
test_forward_only (void)
{
  struct dev d = DEV_INIT;
  struct ok_mem_pool *pool = new_pool ("forward only", &d, 0, 0);
  if (pool == NULL)
    return;
  void *a = ok_mem_pool_alloc (pool, 1);
  check ("max_small 0: a small request is forwarded", a != NULL
	 && a == d.last && d.allocs == 1);
  void *z1 = ok_mem_pool_alloc (pool, 0);
  void *z2 = ok_mem_pool_alloc (pool, 0);
  check ("max_small 0: size 0 gives distinct addresses", z1 != NULL
	 && z2 != NULL && z1 != z2 && d.allocs == 3);
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("max_small 0: no chunks", st.chunks == 0 && st.small_in_use == 0
	 && st.large_in_use == 3);
  check ("max_small 0: frees are forwarded", ok_mem_pool_free (pool, a)
	 && ok_mem_pool_free (pool, z1) && d.frees == 2);
  check ("max_small 0: destroy frees the rest",
	 ok_mem_pool_destroy (pool) && d.live == 0 && d.frees == 3);

  /* Many forwarded allocations freed in a scrambled order: the pool must
     find each one however its records were placed and moved.  */
  struct dev m = DEV_INIT;
  pool = ok_mem_pool_new (&dev_ops, &m, 0, 0);
  enum { N = 3000 };
  static void *p[N];
  bool ok = pool != NULL;
  for (int i = 0; ok && i < N; i++)
    ok = (p[i] = ok_mem_pool_alloc (pool, 1 + (size_t) i)) != NULL;
  unsigned seed = 99;
  for (int i = N - 1; ok && i > 0; i--)
    {
      seed = seed * 1103515245u + 12345u;
      int j = (int) ((seed >> 8) % (unsigned) (i + 1));
      void *t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
  for (int i = 0; ok && i < N; i++)
    ok = ok_mem_pool_free (pool, p[i]);
  check ("max_small 0: many frees in any order", ok && m.live == 0
	 && m.frees == N);
  check ("max_small 0: destroy after many", pool != NULL
	 && ok_mem_pool_destroy (pool) && m.allocs == m.frees);
}

/* ------------------------------------------------------------------ */
/* Threads.  */

struct worker
{
  struct ok_mem_pool *pool;
  unsigned id;
  bool ok;
};

static void *
worker_run (void *arg)
{
  struct worker *w = arg;
  enum { SLOTS = 64, ROUNDS = 20000 };
  void *p[SLOTS] = { 0 };
  size_t sz[SLOTS] = { 0 };
  unsigned seed = w->id * 7919u + 1;
  w->ok = true;
  for (int i = 0; i < ROUNDS; i++)
    {
      seed = seed * 1103515245u + 12345u;
      int s = (int) ((seed >> 16) % SLOTS);
      unsigned tag = w->id * 1000003u + (unsigned) s;
      if (p[s] != NULL)
	{
	  /* Another thread given the same block would have written it.  */
	  if (!intact (p[s], 64, tag) || !ok_mem_pool_free (w->pool, p[s]))
	    w->ok = false;
	  p[s] = NULL;
	}
      else
	{
	  /* Mostly small, sometimes forwarded.  */
	  sz[s] = (seed >> 4) % 64 == 0 ? 3000 : (seed >> 4) % 2048;
	  p[s] = ok_mem_pool_alloc (w->pool, sz[s]);
	  if (p[s] == NULL)
	    w->ok = false;
	  else
	    fill (p[s], 64, tag);
	}
    }
  for (int s = 0; s < SLOTS; s++)
    if (p[s] != NULL && !ok_mem_pool_free (w->pool, p[s]))
      w->ok = false;
  return NULL;
}

static void
test_threads (void)
{
  struct dev d = DEV_INIT;
  struct ok_mem_pool *pool = new_pool ("threads", &d, 2048, 65536);
  if (pool == NULL)
    return;
  enum { T = 4 };
  struct worker w[T];
  pthread_t th[T];
  int started = 0;
  for (int i = 0; i < T; i++)
    {
      w[i] = (struct worker) { pool, (unsigned) i + 1, false };
      if (pthread_create (&th[i], NULL, worker_run, &w[i]) == 0)
	started++;
      else
	break;
    }
  bool ok = started == T;
  for (int i = 0; i < started; i++)
    {
      pthread_join (th[i], NULL);
      ok &= w[i].ok;
    }
  check ("threads: concurrent allocations and frees", ok);
  struct ok_mem_pool_stats st;
  ok_mem_pool_stats (pool, &st);
  check ("threads: everything freed", st.small_in_use == 0
	 && st.large_in_use == 0 && d.live == st.chunks);
  check ("threads: destroy", ok_mem_pool_destroy (pool) && d.live == 0
	 && d.allocs == d.frees && d.bad_frees == 0);
}

int
main (void)
{
  standin_init ("mem-pool-test");
  standin_verbose = getenv ("MEM_POOL_TEST_VERBOSE") != NULL;
  test_basics ();
  test_many ();
  test_chunk_rest ();
  test_failures ();
  test_forward_only ();
  test_threads ();
  return check_summary ();
}
