/* Pieces shared by the harnesses that drive a real-device plugin over a
   fake vendor runtime (cuda-harness over fakecuda, hsa-harness over
   fakehsa): the table of areas that main walks, loading the fake and the
   plugin, children with a fresh plugin, the fake's test-control queries
   and the checks made of them, image loads that must succeed or fail, a
   worker that hammers the plugin from several threads, and the end of a
   session.  Checks print through gomp-standin's check.  */

#ifndef OFFLOADKIT_HARNESS_COMMON_H
#define OFFLOADKIT_HARNESS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gomp-abi.h"

#pragma GCC visibility push(hidden)

/* ---- The harness and its areas.  */

/* One query function of a fake: its NAME and the function pointer to
   set.  */
struct harness_sym
{
  const char *name;
  void *fnp;
};

/* What a harness drives.  */
struct harness
{
  const char *program;		/* "cuda-harness", in messages.  */
  const char *plugin_path;
  const char *fake_path;
  /* The environment variable that points the plugin at its vendor
     library, set to FAKE_PATH before the plugin loads.  */
  const char *library_var;
  /* The fake's queries: PREFIX_fail, _gate, _calls, _outstanding and
     _bad_calls (fake-common.h) into the f_* pointers below, and the
     harness's own (NULL-ended).  */
  const char *fake_prefix;
  const struct harness_sym *fake_syms;
  const char *fake_who;		/* "driver", "runtime": in messages.  */
  /* The kinds of object nothing may be left of (for check_no_leaks),
     NULL-ended.  */
  const char *const *leak_kinds;
  /* Environment changes for this process's plugin (name, value pairs,
     NULL-terminated; a NULL value unsets).  */
  const char *const *env;
};

/* Where an area's checks run.  */
enum harness_where
{
  /* In a forked child, over a fresh fake and plugin.  */
  HARNESS_CHILD,
  /* In this process, before it loads the plugin (FN may fork children
     of its own).  */
  HARNESS_UNLOADED,
  /* In this process, over the plugin it loads once (with the harness's
     ENV) before the first of these areas.  */
  HARNESS_LOADED
};

/* One area of checks.  */
struct harness_area
{
  /* A child's: the prefix of its check names.  Elsewhere it names the
     area for the reader only.  */
  const char *name;
  void (*fn) (void);
  enum harness_where where;
  /* A child's environment changes (as struct harness's ENV; NULL: none),
     whether it must print nothing on stderr, and (NULL: harness_open)
     what loads the fake and the plugin in it.  */
  const char *const *env;
  bool stderr_empty;
  bool (*open) (void);
  /* When set and false, the area is skipped: said UNSUPPORTED with the
     text UNSUPPORTED when that is set, silently otherwise.  */
  bool (*can_run) (void);
  const char *unsupported;
};

/* A NULL-ended list of strings: environment changes, leak kinds.  */
#define HARNESS_LIST(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* The fields of a struct harness_area of each kind; CAN_RUN and
   UNSUPPORTED may follow.  */
#define AREA_CHILD(name_, fn_, env_, stderr_empty_) \
  .name = (name_), .fn = (fn_), .where = HARNESS_CHILD, .env = (env_), \
  .stderr_empty = (stderr_empty_)
#define AREA_UNLOADED(name_, fn_) \
  .name = (name_), .fn = (fn_), .where = HARNESS_UNLOADED
#define AREA_LOADED(name_, fn_) \
  .name = (name_), .fn = (fn_), .where = HARNESS_LOADED

/* Children about the harness's library variable naming something else
   than the fake: child_named_missing runs with it naming
   HARNESS_MISSING_LIBRARY; harness_open_fifo_library is the open hook of
   child_named_fifo, which it points at a FIFO nobody writes.  Either way
   the plugin has no devices and says why, once, never waiting.  */
#define HARNESS_MISSING_LIBRARY "/nonexistent/libdriver.so.1"
void child_named_missing (void);
bool harness_open_fifo_library (void);
void child_named_fifo (void);
/* Both as entries of a table of areas, for the library variable VAR (a
   string literal).  */
#define HARNESS_NAMED_LIBRARY_AREAS(var) \
  { AREA_CHILD ("missing " var, child_named_missing, \
		HARNESS_LIST (var, HARNESS_MISSING_LIBRARY), false) }, \
  { AREA_CHILD (var " naming a FIFO", child_named_fifo, NULL, false), \
    .open = harness_open_fifo_library }

/* The harness being run, set by harness_run.  */
extern const struct harness *harness;

/* Walk AREAS (N of them) of H in order, then unload the plugin; the
   program's exit status (check_summary's, or 2, said on stderr, when this
   process could not load the fake and the plugin for the HARNESS_LOADED
   areas: the rest are then skipped).  */
int harness_run (const struct harness *h, const struct harness_area *areas,
		 size_t n);

/* Set the harness's library variable, dlopen the fake (locally: the
   plugin's dlopen of the same path then gets this instance), then the
   plugin (standin_open_plugin), and look up the fake's queries.  False,
   said on stderr, if any step fails.  */
bool harness_open (void);

/* Run FN in a forked child with the environment changes ENV
   (standin_in_child with NAME and STDERR_EMPTY): ENV is applied, OPEN
   (NULL: harness_open) loads the fake and the plugin (false: the child
   could not start), ENV is applied again (OPEN may set a variable that
   ENV sets otherwise), then FN runs.  */
void harness_in_child (const char *name, const char *const *env,
		       bool (*open) (void), void (*fn) (void),
		       bool stderr_empty);

/* ---- The fake.  */

/* Its dlopen handle and the queries every fake has, set by
   harness_open.  */
extern void *fake;
extern int (*f_fail) (const char *spec);
extern void (*f_gate) (int closed);
extern long (*f_calls) (const char *sym);
extern long (*f_outstanding) (const char *kind);
extern long (*f_bad_calls) (const char **last);

/* One of the functions the fake imitates, NAME, for a test that calls it
   directly; the program aborts, saying why, when the fake lacks it.  */
typedef int (*harness_fn) ();
harness_fn harness_fake_fn (const char *name);

/* The invalid calls the fake has seen so far.  */
long bad_calls (void);

/* Check NAME: the fake saw no invalid call since BEFORE (a bad_calls
   count); else say how many on stderr.  */
void check_no_bad_calls (const char *name, long before);

/* One check per leak kind: "WHAT: no KIND left (N)".  */
void check_no_leaks (const char *what);

/* ---- Checks.  */

/* check, with the name made by printf's FMT.  */
void checkf (bool ok, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Target arguments for run and async_run: num_teams N, thread_limit N.  */
#define ARG_TEAMS(n) \
  (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_NUM_TEAMS \
			| ((uintptr_t) (n) << OK_GOMP_TARGET_ARG_VALUE_SHIFT))
#define ARG_LIMIT(n) \
  (void *) (uintptr_t) (OK_GOMP_TARGET_ARG_THREAD_LIMIT \
			| ((uintptr_t) (n) << OK_GOMP_TARGET_ARG_VALUE_SHIFT))

/* Play libgomp 14 (offloadkit_standin_libgomp_gcc) and check what it
   first sees of the plugin: "version 3", and "2 devices" for a program
   without requirements.  */
void harness_libgomp14 (void);

/* ---- Image loads.  */

/* Load DATA (registered with VER) on DEV; its table, which must have
   EXPECT entries, or NULL (said on stderr; a load of the wrong size is
   undone).  */
struct ok_addr_pair *harness_load (int dev, unsigned ver, const void *data,
				   size_t expect);

/* The start of a load that must fail: load DATA (VER) on DEV and check
   "NAME: load_image returns -1".  Returns whether exactly one error came
   of it, containing every one of NEEDLES (NULL-ended).  *N and *TABLE get
   what load_image gave, for harness_undo_load after the caller's own
   checks.  */
bool harness_refused_load (const char *name, int dev, unsigned ver,
			   const void *data, va_list needles, int *n,
			   struct ok_addr_pair **table);

/* Unload DATA (VER) from DEV again if the load that should have failed
   gave N > 0 entries in TABLE.  */
void harness_undo_load (int n, struct ok_addr_pair *table, int dev,
			unsigned ver, const void *data);

/* ---- Sessions.  */

/* Six host threads hammering the plugin at once: thread I runs FNS[I] 40
   times on device I % 2, each time on 256 bytes of its own holding the
   round number, copied in and read back (threads 4 and 5 use p_async_run
   every other round).  Checks "threads: every copy round trip right" and
   "threads: 40 async completions" (the completions are reset first).  */
void harness_hammer_threads (void *const fns[6]);

/* The end of a session on two devices: p_fini_device (0) must wait for
   kernel FN still running (with the fake's gate closed, FN runs
   asynchronously and a thread opens the gate 300 ms later: "fini device
   0", "fini waited for the running kernel's completion"; FN NULL: just
   "fini device 0"); then "fini device 1", nothing left "after fini";
   then device 0 once more, LOAD loading an image on it: "init again",
   "load again", "fini again", nothing left "after the second fini".  */
void harness_check_fini (void *fn, struct ok_addr_pair *(*load) (int dev));

#pragma GCC visibility pop

#endif
