/* mkoffload's cache directory, shared by what is kept there: the objects
   and cubins ptxas and nvlink made (ptx-aot.c), and what those tools say
   about themselves (tool-answers.c).

   Entries are named by a hash of everything that makes them what they
   are, and written whole under a temporary name then renamed, so that
   links running at the same time never read half of one; a link reads
   an entry whole before it uses it.  */

#ifndef OFFLOADKIT_MKOFFLOAD_CACHE_H
#define OFFLOADKIT_MKOFFLOAD_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* 128-bit FNV-1a: not cryptographic, but the inputs are the user's own
   compilers and files, and 128 bits make an accidental collision
   negligible.  */
struct mko_hash
{
  unsigned __int128 h;
};

void mko_hash_init (struct mko_hash *h);
void mko_hash_bytes (struct mko_hash *h, const void *data, size_t len);
/* A string and its terminating NUL, so that "ab","c" and "a","bc"
   differ.  */
void mko_hash_str (struct mko_hash *h, const char *s);
/* The hash as 32 hexadecimal digits (malloc'd).  */
char *mko_hash_hex (const struct mko_hash *h);

/* The cache directory ($OFFLOADKIT_CACHE_DIR, else
   $XDG_CACHE_HOME/offloadkit, else ~/.cache/offloadkit), created (private
   to the user) when missing, malloc'd; NULL when caching is off
   (OFFLOADKIT_CACHE_DIR set empty), when there is no home for it, or
   when it cannot be created (said under -v).  */
char *mko_cache_dir (void);

/* The size the cache is kept under, in bytes: OFFLOADKIT_CACHE_SIZE (a
   number of bytes, or of KiB, MiB or GiB with the suffix K, M or G),
   else 256 MiB.  Return 0, or -1 after reporting one error for a
   malformed value.  Read before the cache is first written to, so that
   a link that fails on it leaves nothing there.  */
int mko_cache_limit (uint64_t *limit);

/* Store the LEN bytes of DATA as the entry DEST of the cache directory
   DIR, atomically.  The cleanup signals wait meanwhile: the temporary
   name is not one of ours to remove, and a signal between its creation
   and the rename would leave it in the cache for good.  0 when stored,
   -1 when not: a failure only loses the caching.  */
int mko_cache_put (const char *dir, const char *dest, const void *data,
		   size_t len);

#endif /* OFFLOADKIT_MKOFFLOAD_CACHE_H */
