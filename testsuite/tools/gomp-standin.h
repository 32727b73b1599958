/* libgomp's side of the plugin interface, for the test programs that
   drive a plugin (or a piece of one) without libgomp: plugin-harness,
   cuda-harness, mem-pool-test and offloadkit.trace/odd-names.

   gomp-standin.c defines the GOMP_PLUGIN_* callbacks a plugin binds to
   (programs that dlopen a plugin are linked with -rdynamic so that it
   finds them) and records what they were told: the errors, the last debug
   message, the async completions.  A test expecting GOMP_PLUGIN_fatal
   catches it with STANDIN_CATCH_FATAL; any other fatal error ends the
   program with status 2.  It loads the plugin and finds its
   GOMP_OFFLOAD_* entry points as libgomp does.  And it has the checks'
   output: one "PASS: name", "FAIL: name" or "UNSUPPORTED: name" line
   each, which the .exp files turn into DejaGnu results, and checks run
   in forked children.  */

#ifndef OFFLOADKIT_GOMP_STANDIN_H
#define OFFLOADKIT_GOMP_STANDIN_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "gomp-abi.h"

/* Everything below stays out of the dynamic symbol table (-rdynamic
   exports the program's globals), so that only the GOMP_PLUGIN_* callbacks
   can bind to the plugin.  */
#pragma GCC visibility push(hidden)

/* Names the program in the messages and temporary files; call first.  */
void standin_init (const char *program);

/* Show debug messages and errors on stderr as they come (the harnesses
   set it from HARNESS_VERBOSE).  Errors only: standin_show_errors.  */
extern bool standin_verbose;
extern bool standin_show_errors;

/* ---- Checks.  */

/* Prints a PASS or FAIL line for NAME, after standin_check_prefix.  */
void check (const char *name, bool ok);
void unsupported (const char *name);
/* The FAIL lines printed so far.  */
extern int check_failures;
/* Starts the check names of a child (standin_in_child sets it).  */
extern const char *standin_check_prefix;
/* Prints the "# N failures" summary; the program's exit status.  */
int check_summary (void);

/* Runs BODY (ARG) in a forked child, with stderr going to a file and
   "NAME: " before its check names; BODY returns false if it could not
   start (exit status 3).  Then checks "NAME: child exited normally" and,
   with STDERR_EMPTY, "NAME: nothing printed"; a child whose own checks
   failed counts one failure here.  What the child printed on stderr goes
   to the log when it fails or prints.  */
void standin_in_child (const char *name, bool (*body) (void *), void *arg,
		       bool stderr_empty);

/* ---- The plugin.  */

/* Its GOMP_OFFLOAD_* entry points (libgomp's names, "p_" for
   "GOMP_OFFLOAD_"), set by standin_open_plugin.  */
extern unsigned (*p_version) (void);
extern const char *(*p_get_name) (void);
extern unsigned (*p_get_caps) (void);
extern int (*p_get_type) (void);
/* get_num_devices and load_image take the arguments of libgomp 14+
   (a requires mask; a reverse-offload table and a host table of indirect
   functions), and the macros below call them as libgomp does for a
   program without requirements or indirect functions: 0 and two NULLs,
   which a plugin loaded as libgomp 12's or 13's ignores as those do.  */
extern int (*p_get_num_devices) (unsigned);
#define p_get_num_devices() ((p_get_num_devices) (0))
extern bool (*p_init_device) (int);
extern bool (*p_fini_device) (int);
extern int (*p_load_image) (int, unsigned, const void *,
			    struct ok_addr_pair **, uint64_t **, uint64_t *);
#define p_load_image(dev, version, data, table) \
  ((p_load_image) ((dev), (version), (data), (table), NULL, NULL))
extern bool (*p_unload_image) (int, unsigned, const void *);
/* p_load_image as libgomp 14 and newer call it, with a reverse-offload
   table to fill and no host table of indirect functions; checks that the
   plugin clears the reverse-offload table.  */
int standin_load_image_14 (int dev, unsigned version, const void *data,
			   struct ok_addr_pair **table);
extern void *(*p_alloc) (int, size_t);
extern bool (*p_free) (int, void *);
extern bool (*p_host2dev) (int, void *, const void *, size_t);
extern bool (*p_dev2host) (int, void *, const void *, size_t);
extern bool (*p_dev2dev) (int, void *, const void *, size_t);
extern void (*p_run) (int, void *, void *, void **);
extern void (*p_async_run) (int, void *, void *, void **, void *);

/* dlopens the plugin at PATH and looks up every entry point; false, with
   what is missing said on stderr, if any step fails.  */
bool standin_open_plugin (const char *path);
void standin_close_plugin (void);
/* Looks NAME up in the open plugin (an optional entry point); false,
   silently, when it has none.  */
bool standin_plugin_sym (const char *name, void *fnp);
/* Looks NAME up in HANDLE (a dlopen result) into the function pointer at
   FNP; false, said on stderr, when it is missing.  */
bool standin_sym (void *handle, const char *name, void *fnp);

/* ---- What the callbacks recorded.  */

/* The number of GOMP_PLUGIN_error calls so far, and the last message.  */
int errors_now (void);
const char *last_error (void);
/* Whether exactly one error was reported since BEFORE (an errors_now
   value) and it contains every one of the NULL-terminated strings.  */
bool error_says (int before, ...) __attribute__ ((sentinel));
bool verror_says (int before, va_list needles);
/* The last GOMP_PLUGIN_debug message.  */
const char *last_debug (void);

/* GOMP_PLUGIN_target_task_completion calls since the last reset, the
   async_data of the last one and the thread it came from.  */
void completions_reset (void);
int completions_now (void);
void *last_completion (void);
pthread_t completion_thread (void);
/* Waits up to SECONDS for N completions since the reset.  */
void wait_completions (int n, int seconds);

/* GOMP_PLUGIN_target_rev calls (reverse offload) since the last reset:
   the arguments of the last one, and up to 8 words of its address array
   as the stand-in read them from the device, through the plugin's copy
   callbacks when it plays libgomp 13, through GOMP_OFFLOAD_dev2host of
   device REV_DEVICE (set by the test, 0 by default) from 14.  */
struct standin_rev
{
  int calls;
  uint64_t fn, mapnum, devaddrs, sizes, kinds;
  int dev_num;
  uint64_t addrs[8];
  bool copied;			/* ADDRS were read.  */
};
void standin_rev_reset (void);
struct standin_rev standin_rev_now (void);
extern int standin_rev_device;
/* Called inside GOMP_PLUGIN_target_rev when set: what the host sees while
   libgomp serves a request.  */
extern void (*standin_rev_during) (void);

/* libgomp's GOMP_target_ext (the emulated device passes the calls it does
   not take on to it): the calls since the last reset, the last one's
   device and function.  It runs nothing.  */
struct standin_target_ext
{
  int calls;
  int device;
  void *fn;
};
void standin_target_ext_reset (void);
struct standin_target_ext standin_target_ext_now (void);

/* OpenACC: what GOMP_PLUGIN_acc_thread answers on this thread (the
   thread data the plugin's create_thread_data gave; NULL: the thread has
   no OpenACC device), and the profiling events the plugin dispatched
   through GOMP_PLUGIN_goacc_profiling_dispatch while STANDIN_ACC_PROF
   says a tool listens (GOMP_PLUGIN_goacc_thread then gives a thread
   with profiling state): how many of each acc_event_t, the last
   launch's kernel name (copied) and dimensions, the last data event's
   bytes and device pointer, and the device API the plugin said.  */
extern __thread void *standin_acc_tls;
extern bool standin_acc_prof;
/* What GOMP_PLUGIN_acc_default_dim answers (libgomp's GOMP_OPENACC_DIM):
   gang, worker, vector; 0 where unset.  */
extern int standin_acc_default_dims[3];
struct standin_acc_events
{
  int count[32];
  char kernel[64];
  unsigned long dims[3];
  unsigned long bytes;
  const void *device_ptr;
  int device_api;
};
void standin_acc_events_reset (void);
struct standin_acc_events standin_acc_events_now (void);

/* Where GOMP_PLUGIN_fatal jumps in this thread, when set.  */
extern __thread jmp_buf *standin_fatal_jump;

/* ---- libgomp 14+'s rectangular copies, GOMP_OFFLOAD_memcpy2d and
   GOMP_OFFLOAD_memcpy3d (looked up with standin_plugin_sym).  */
typedef int (*memcpy2d_fn) (int, int, size_t, size_t, void *, size_t, size_t,
			    size_t, const void *, size_t, size_t, size_t);
typedef int (*memcpy3d_fn) (int, int, size_t, size_t, size_t, void *, size_t,
			    size_t, size_t, size_t, size_t, const void *,
			    size_t, size_t, size_t, size_t, size_t);

/* The 3D copy as the harnesses check it: a 2 x 2 x 3 block of host
   array A (3 x 4 x 5) at (1, 1, 2) to the origin of a device array of
   2 x 3 x 4, and back to host array B (3 x 4 x 5) at (1, 2, 1).  */

/* A and B filled (A with 100 + i, B with -1), and the device array on
   DEV, allocated and filled with -7: returned.  */
int *standin_rect3d_start (int dev, int a[3][4][5], int b[3][4][5]);

/* The two copies with M3, between A, B and the device array DD on DEV:
   checks TO_DEVICE and TO_HOST, each one call that succeeds.  */
void standin_rect3d_copy (memcpy3d_fn m3, int dev, int a[3][4][5],
			  int b[3][4][5], int *dd, const char *to_device,
			  const char *to_host);

/* After both copies: checks "memcpy3d: every element" (of B) and
   "memcpy3d: device bytes outside the block untouched" (of DD on DEV).  */
void standin_rect3d_check (int dev, int a[3][4][5], int b[3][4][5],
			   const int *dd);

#pragma GCC visibility pop

/* Which GCC's libgomp the stand-in plays (12 to 16), for the plugin's
   ABI detection (libgomp-plugin/core/libgomp-abi.c), which looks this
   symbol up in the object that defines the GOMP_PLUGIN_* callbacks: 0,
   the default, leaves the plugin to its usual detection (GCC 12 here).
   Set it before the plugin's first entry point is called;
   standin_open_plugin sets it from the environment variable
   OFFLOADKIT_STANDIN_LIBGOMP when it is still 0.  */
extern int offloadkit_standin_libgomp_gcc;

/* Runs the statement after FATAL; sets FATAL, a volatile bool (it lives
   across setjmp), to whether the statement called GOMP_PLUGIN_fatal
   (which then does not return).  */
#define STANDIN_CATCH_FATAL(fatal, ...)				\
  do									\
    {									\
      jmp_buf standin_jb_;						\
      (fatal) = false;							\
      standin_fatal_jump = &standin_jb_;				\
      if (setjmp (standin_jb_) == 0)					\
	{								\
	  __VA_ARGS__;							\
	}								\
      else								\
	(fatal) = true;							\
      standin_fatal_jump = NULL;					\
    }									\
  while (0)

#endif /* OFFLOADKIT_GOMP_STANDIN_H */
