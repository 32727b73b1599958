/* Helpers shared by the test doubles of vendor runtimes (fakecuda,
   fakehsa): a log file, a record of invalid calls, per-symbol call counts
   and failure injection from a FAKE*_FAIL=sym[@N][=ERR],... spec, and the
   leak report at exit.

   Each fake keeps its own declarations of the API it imitates (they are
   independent of the plugin's on purpose); only this bookkeeping, which
   knows nothing of any API, is shared.  None of these functions locks:
   callers hold their fake's lock, as they did before.  */

#ifndef OFFLOADKIT_FAKE_COMMON_H
#define OFFLOADKIT_FAKE_COMMON_H

#include <stdbool.h>
#include <stddef.h>

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

/* At exit: if environment variable CHECK_VAR is "1" and OUTSTANDING says
   some of KINDS are alive, say which on stderr and _exit (97).  */
void fake_check_leaks (const char *tag, const char *check_var,
		       const char *const *kinds, size_t nkinds,
		       long (*outstanding) (const char *kind));

#pragma GCC visibility pop

#endif
