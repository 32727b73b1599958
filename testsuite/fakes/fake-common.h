/* Helpers shared by the test doubles of vendor runtimes (fakecuda,
   fakehsa): a log file, a record of invalid calls, per-symbol call counts
   and failure injection from a FAKE*_FAIL=sym[@N][=ERR],... spec, the
   test-control queries both fakes export, records of what they saw, the
   registries of live handles and of device memory blocks, and the leak
   counts and report.

   Each fake keeps its own declarations of the API it imitates (they are
   independent of the plugin's on purpose); only this bookkeeping, which
   knows nothing of any API, is shared.  Unless said otherwise these
   functions do not lock: callers hold their fake's lock.  */

#ifndef OFFLOADKIT_FAKE_COMMON_H
#define OFFLOADKIT_FAKE_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One armed failure: call NTH of SYM (0: every call) returns ERR (-1: the
   fake's default error for SYM).  */
struct fake_fail
{
  int sym;
  long nth;
  int err;
};

#define FAKE_MAX_FAILS 32

/* Not exported: the fakes' dynamic symbols are the API they imitate and
   their own fake*_ queries.  */
#pragma GCC visibility push(hidden)

/* A fake's core state: the table of its exported symbols' names NAMES
   (COUNT of them, by their enum's index), its one lock LOCK and the
   condition variable COND its waiters wait on.  FAKE_DECLARE_CORE
   declares them (in the fake's header), FAKE_DEFINE_CORE defines them,
   NAMES from the fake's X-macro list of its symbols, LIST.  */
#define FAKE_DECLARE_CORE(names, count, lock, cond) \
  extern const char *const names[count]; \
  extern pthread_mutex_t lock; \
  extern pthread_cond_t cond
#define FAKE_SYM_NAME(s) #s,
#define FAKE_DEFINE_CORE(names, count, list, lock, cond) \
  const char *const names[count] = { list (FAKE_SYM_NAME) }; \
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; \
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER

struct fake_state
{
  /* Set by the fake.  */
  const char *tag;		/* "fakecuda": prefixes stderr messages.  */
  const char *fail_var;		/* "FAKECUDA_FAIL": named in messages.  */
  const char *const *sym_names;	/* Exported symbols, by index.  */
  int nsyms;
  long *calls_total;		/* NSYMS counters each.  */
  long *calls_since_spec;
  int max_fails;		/* At most FAKE_MAX_FAILS.  */
  size_t item_max;		/* Longest spec item + 1.  */
  bool v2_alias;		/* "name" also means "name_v2".  */
  /* ERR given as a name (NULL: numbers only); -1 if unknown.  */
  int (*err_by_name) (const char *name);
  pthread_mutex_t *lock;	/* The fake's one lock.  */
  void (*configure) (void);	/* Reads the environment, once.  */

  /* State.  */
  int log_fd;			/* -1: no log.  */
  struct fake_fail fails[FAKE_MAX_FAILS];
  int num_fails;
  long bad_calls;		/* Invalid calls seen.  */
  char last_bad[512];		/* The last one, "sym: message".  */
};

/* Append one line to the log, if there is one.  */
void fake_log (struct fake_state *fs, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Record an invalid call of SYM (one the real runtime would refuse).  */
void fake_bad (struct fake_state *fs, int sym, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Open the log named by environment variable VAR, if set.  */
void fake_open_log (struct fake_state *fs, const char *var);

/* Index of symbol NAME (LEN bytes), or -1.  */
int fake_sym_lookup (const struct fake_state *fs, const char *name,
		     size_t len);

/* Replace the armed failures by SPEC (NULL: none) and start the @N counts
   again.  False on a bad spec (then none is armed).  */
bool fake_parse_fail (struct fake_state *fs, const char *spec);

/* Count a call of SYM; the failure armed for it, or NULL.  *NTH gets the
   call's number since the spec was set.  */
const struct fake_fail *fake_count_call (struct fake_state *fs, int sym,
					 long *nth);

/* ---- Test-control queries (fakecuda_*, fakehsa_*).  These lock.  */

/* Replace the armed failures by SPEC (NULL or "": none) and start the @N
   counts again; 0 if SPEC is bad.  */
int fake_control_fail (struct fake_state *fs, const char *spec);

/* Calls of exported symbol SYM so far; -1 for no such symbol.  */
long fake_control_calls (struct fake_state *fs, const char *sym);

/* Invalid calls seen so far; *LAST (if LAST is not NULL) the last one
   described.  */
long fake_control_bad_calls (struct fake_state *fs, const char **last);

/* Copy SIZE bytes of the fake's state at FROM to TO.  */
void fake_control_read (struct fake_state *fs, void *to, const void *from,
			size_t size);

/* ---- Records of what a fake saw (launches, dispatches), for the tests'
   queries.  */

struct fake_records
{
  void *items;
  size_t n, cap;
  size_t size;			/* Bytes of a record, set by the fake.  */
};

/* A new record, zeroed, after the others of R; NULL when out of memory.  */
void *fake_record_new (struct fake_records *r);

/* Record I of R, or NULL if there is none.  */
void *fake_record_get (const struct fake_records *r, long i);

/* Free R's records (at unload).  */
void fake_records_free (struct fake_records *r);

/* The number of R's records, read under the lock of FS.  */
int fake_control_records (struct fake_state *fs, const struct fake_records *r);

/* ---- Live handles.

   The handles a fake gives out (streams, events, modules, link states;
   executables, code object readers, signals, queues) are the addresses of
   its objects.  One registry per fake holds them all, each with its kind:
   an object is made and registered in one step, looked up by kind (a
   handle of another kind, or one already destroyed, is not found: the
   real runtime refuses those), unregistered and freed in one step, and
   counted per kind for the leak checks.  */

#define FAKE_MAX_KINDS 8

struct fake_handle
{
  void *obj;
  int kind;
};

struct fake_handles
{
  struct fake_handle *live;	/* In the order they were registered.  */
  size_t n, cap;
  long count[FAKE_MAX_KINDS];
};

/* A new object of SIZE bytes, zeroed, registered as a live handle of
   KIND; NULL when out of memory.  */
void *fake_handle_new (struct fake_handles *h, int kind, size_t size);

/* OBJ if it is a live handle of KIND, else NULL.  */
void *fake_handle_get (const struct fake_handles *h, int kind,
		       const void *obj);

/* Unregister the live handle OBJ of KIND and free it (what it points to
   is the caller's to free first); false if it is none.  */
bool fake_handle_free (struct fake_handles *h, int kind, void *obj);

/* The live handles of KIND, newest first: *POS starts at 0; NULL after
   the last.  The registry must not change during the walk.  */
void *fake_handle_next (const struct fake_handles *h, int kind,
			size_t *pos);

/* Walk the live handles of KIND, newest first, in VAR.  */
#define FAKE_HANDLES_EACH(h, kind, var) \
  for (size_t fake_pos_ = 0; \
       ((var) = fake_handle_next ((h), (kind), &fake_pos_)) != NULL; )

/* ---- Device memory blocks: host memory standing for the device's.

   Every block a fake hands out as device memory (allocations, loaded
   code, module globals) is registered with its kind and owner, so that an
   address can be checked against the live blocks: a copy or a free that
   leaves its block, or touches a freed one, is refused as the real
   runtime would.  */

struct fake_block
{
  uintptr_t base;
  size_t size;			/* Usable bytes.  */
  size_t mapped;		/* Bytes mmapped (0: from posix_memalign).  */
  int kind;
  void *owner;			/* The fake's: a context, a region.  */
};

struct fake_blocks
{
  struct fake_block *live;	/* Sorted by address.  */
  size_t n, cap;
  long count[FAKE_MAX_KINDS];
};

/* A new block of SIZE bytes (at least one), aligned to ALIGN (at most a
   page), of KIND for OWNER; NULL when out of memory.  */
void *fake_block_new (struct fake_blocks *b, size_t size, size_t align,
		      int kind, void *owner);

/* The live block containing ADDR (a block of size 0 owns its first
   address), or NULL.  */
struct fake_block *fake_block_find (const struct fake_blocks *b,
				    uintptr_t addr);

/* Free the live block of KIND starting exactly at ADDR, its record in
   *FREED when FREED is not NULL; false if there is none.  */
bool fake_block_free (struct fake_blocks *b, uintptr_t addr, int kind,
		      struct fake_block *freed);

/* ---- What the leak checks count.  */

/* One kind of object that fake*_outstanding counts: its NAME, and the
   handle kinds and block kinds it is made of (masks of FAKE_KIND).  */
struct fake_count
{
  const char *name;
  unsigned handles;
  unsigned blocks;
};

#define FAKE_KIND(kind) (1u << (kind))

/* The live objects of the kind named NAME in COUNTS (N of them), or -1
   if none is so named.  */
long fake_count_of (const struct fake_count *counts, size_t n,
		    const struct fake_handles *h, const struct fake_blocks *b,
		    const char *name);

/* A fake's *_outstanding query, under the lock of FS: fake_count_of's
   count of the kind NAME, or, for a name COUNTS lacks, the fake's own
   MORE (NAME) (-1 there too for an unknown kind).  */
long fake_control_count (struct fake_state *fs,
			 const struct fake_count *counts, size_t n,
			 const struct fake_handles *h,
			 const struct fake_blocks *b, const char *name,
			 long (*more) (const char *name));

/* At unload: free the tables of H and B once nothing is registered in
   them (what is, is the caller's leak, reported by the leak check).  */
void fake_tables_release (struct fake_handles *h, struct fake_blocks *b);

/* At exit: if environment variable CHECK_VAR is "1" and OUTSTANDING says
   some of KINDS are alive, say which on stderr and _exit (97).  */
void fake_check_leaks (const char *tag, const char *check_var,
		       const char *const *kinds, size_t nkinds,
		       long (*outstanding) (const char *kind));

#pragma GCC visibility pop

#endif
