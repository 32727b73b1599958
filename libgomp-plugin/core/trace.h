/* What the plugins tell about their work when asked: OFFLOADKIT_INFO=1
   prints one line per event on stderr, OFFLOADKIT_PROFILE=FILE writes the
   same events to FILE as a Chrome trace (JSON object format, "traceEvents"
   of complete "X" events, one track per device), which Perfetto and
   chrome://tracing open.  Both may be set at once.

   Events: an image load (what was loaded, how, how long), a kernel launch
   (kernel name, grid, block, time), a transfer (direction, bytes, time).
   The core reports transfers; backends report their image loads and
   launches, since only they know kernel names and grids.

   Every function is safe to call from several threads at once, and costs
   one predictable branch when neither variable is set.  */

#ifndef OFFLOADKIT_TRACE_H
#define OFFLOADKIT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits of ok_trace_mode.  */
#define OK_TRACE_INFO 1u
#define OK_TRACE_PROFILE 2u

/* Set by ok_trace_init; 0 when tracing is off.  */
extern unsigned ok_trace_mode;

/* Read OFFLOADKIT_INFO and OFFLOADKIT_PROFILE, once (later calls return at
   once).  The core calls it before probing devices.  The profile file is
   created at the plugin's first event; one that cannot be created is
   reported then, once, with GOMP_PLUGIN_error, and no profile is written.
   The file is completed (closing brackets written, flushed) when the
   plugin is unloaded or the process exits.  */
void ok_trace_init (void);

/* Complete the profile now (the process is about to end without running
   its exit handlers, ok_end_program); later events are dropped.  */
void ok_trace_finish (void);

static inline bool
ok_trace_on (void)
{
  return __builtin_expect (ok_trace_mode != 0, 0);
}

/* Monotonic time in nanoseconds, for the START/END arguments below.  */
uint64_t ok_trace_now (void);

/* Directions of ok_trace_transfer.  */
enum ok_trace_dir
{
  OK_TRACE_H2D,
  OK_TRACE_D2H,
  OK_TRACE_D2D
};

/* Device ORD (its number within the plugin: libgomp's target id among
   the plugin's devices) loaded an image in [START, END]:
   BACKEND is the backend's name, WHAT says which image and how, e.g.
   "cubin sm_90" or "PTX, JIT-linked for sm_90"; NFUNCS and NVARS the
   number of functions and variables it maps.  */
void ok_trace_image (int ord, const char *backend, const char *what,
		     size_t nfuncs, size_t nvars, uint64_t start,
		     uint64_t end);

/* The plugin has N devices of BACKEND for this program: with the host's
   memory when USM (the program's requirements among unified shared
   memory and self maps) is not 0, else memory of their own; said at
   start-up (an INFO line; GOMP_DEBUG=1 too).  */
void ok_trace_memory (const char *backend, int n, unsigned usm);

/* Device ORD ran KERNEL with GRID blocks of BLOCK threads (x, y, z) in
   [START, END]; ASYNC for a target nowait region (END is when its
   completion was seen).  */
void ok_trace_launch (int ord, const char *backend, const char *kernel,
		      const unsigned grid[3], const unsigned block[3],
		      bool async, uint64_t start, uint64_t end);

/* Device ORD copied BYTES in direction DIR in [START, END].  */
void ok_trace_transfer (int ord, const char *backend, enum ok_trace_dir dir,
			size_t bytes, uint64_t start, uint64_t end);

#endif /* OFFLOADKIT_TRACE_H */
