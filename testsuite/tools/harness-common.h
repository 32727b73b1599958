/* Pieces shared by the harnesses that drive a real-device plugin over a
   fake vendor runtime (cuda-harness over fakecuda, hsa-harness over
   fakehsa): the environment of a child, the checks of the fake's
   counters, and a worker that hammers the plugin from several threads.
   The fake's query functions come in as pointers, since each harness
   dlopens its own fake.  */

#ifndef OFFLOADKIT_HARNESS_COMMON_H
#define OFFLOADKIT_HARNESS_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* One query function of a fake: its NAME and the function pointer to
   set.  */
struct harness_sym
{
  const char *name;
  void *fnp;
};

/* dlopens the fake runtime at FAKE_PATH (locally: the plugin's dlopen of
   the same path then gets this instance), then the plugin at PLUGIN_PATH
   (standin_open_plugin), and looks up the fake's SYMS (ended by a NULL
   name); *FAKE gets the fake's handle.  False, said on stderr after
   "PROGRAM: ", if any step fails.  */
bool harness_open (const char *program, const char *fake_path, void **fake,
		   const char *plugin_path, const struct harness_sym *syms);

/* Apply ENV: name, value pairs, NULL-terminated; a NULL value unsets.  */
void harness_apply_env (const char *const *env);

/* Runs FN in a forked child (standin_in_child with NAME and STDERR_EMPTY)
   with the environment changes ENV: ENV is applied, OPEN loads the fake
   and the plugin (false: the child could not start), ENV is applied again
   (OPEN may set a variable a test sets otherwise), then FN runs.  */
void harness_in_child (const char *name, const char *const *env,
		       bool (*open) (void), void (*fn) (void),
		       bool stderr_empty);

/* Check NAME: the fake saw no invalid call since BEFORE (a BAD_CALLS
   count); else say how many on stderr, "invalid WHO calls".  */
void harness_check_no_bad_calls (const char *name, long before,
				 long (*bad_calls) (const char **last),
				 const char *who);

/* One check per kind of KINDS: "WHAT: no KIND left (N)".  */
void harness_check_no_leaks (const char *what, const char *const *kinds,
			     size_t nkinds,
			     long (*outstanding) (const char *kind));

/* Six host threads hammering the plugin at once: thread I runs FNS[I] 40
   times on device I % 2, each time on 256 bytes of its own holding the
   round number, copied in and read back (threads 4 and 5 use p_async_run
   every other round).  Checks "threads: every copy round trip right" and
   "threads: 40 async completions" (the completions are reset first).  */
void harness_hammer_threads (void *const fns[6]);

/* Checks that p_fini_device (0) waits for a kernel still running: with
   the fake's gate closed (GATE, the fake's fake*_gate), FN runs
   asynchronously and a thread opens the gate 300 ms later, while device 0
   is finalised: "fini device 0", "fini waited for the running kernel's
   completion".  */
void harness_check_fini_waits (void *fn, void (*gate) (int));

#pragma GCC visibility pop

#endif
