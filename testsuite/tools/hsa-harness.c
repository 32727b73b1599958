/* Unit tests of the HSA backend of libgomp-plugin-gcn.so.1, over the fake
   HSA runtime (testsuite/fakehsa), without libgomp or a GPU.

   Usage: hsa-harness PLUGIN.so FAKE-HSA.so OURS.so [GCCS.so]

   OURS.so and GCCS.so are shared libraries with OpenMP target regions,
   built by offloadkit.gcn/gcn.exp from image.c through our gcn mkoffload
   (-march=gfx900,gfx906: two real code objects from Debian's amdgcn accel
   compiler) and through GCC's own (gfx906, GCC's image format).  This
   program defines GOMP_offload_register_ver, which their constructors
   call when they are dlopened (it is linked with -rdynamic), and so gets
   their real descriptors; it plays libgomp's part for the plugin through
   tools/gomp-standin.c, with OFFLOADKIT_HSA_LIBRARY pointing at the fake.
   The fake records what the plugin asked the runtime to do (dispatch
   packets with their kernarg bytes, allocations, executables, queues,
   signals), which the checks read through its fakehsa_* functions.
   Prints one "PASS: name", "FAIL: name" or "UNSUPPORTED: name" line per
   check (offloadkit.gcn/gcn.exp turns them into DejaGnu results) and exits
   with 1 if any check failed.

   Covered: device counts and silence without a kernel driver, without a
   runtime, without GPU agents; HSA agents before emulated devices; the
   image choice by ISA (gfx900 and gfx906 agents, an ISA no image has,
   one GCC 12 cannot build for);
   the address table (kernels, variable addresses and sizes, a `static'
   variable and a `link' one, which only the code object's variable
   table leads to, __gomp_device_num holding the device number); images
   in GCC's own format; refused images (truncated, corrupt ELF, wrong
   machine, wrong descriptor magic, version, device type or image format,
   variable size mismatch, no or a too small .offload_var_table, missing
   kernel); copies; dispatch packets (kernel object,
   grid, work-group, segment sizes, kernarg contents) for several
   teams/threads settings; async_run completions; several host threads on
   two devices; each runtime call failed in turn along a whole session
   (one clear error from the plugin or a documented work-around, no
   crash, nothing leaked); a faulting kernel (the queue's error callback);
   device printf's buffer (a new kernel-argument block, an overflow);
   fini_device waiting for a running kernel; the fake itself (it must
   refuse what the runtime refuses, or "no invalid runtime call" proves
   nothing).

   What the device computes is not checked: kernels do not run.  Checks
   that need a fresh plugin run in forked children.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gomp-abi.h"
#include "gomp-standin.h"
#include "harness-common.h"
#include "offload-desc.h"

static const char *plugin_path, *ours_path, *gccs_path;

/* ------------------------------------------------------------------ */
/* Descriptors, as the test libraries' constructors register them.  */

struct reg
{
  unsigned version;
  const void *host_table;
  int type;
  const void *target_data;
};
static struct reg regs[4];
static int nregs;

void GOMP_offload_register_ver (unsigned, const void *, int, const void *);
void GOMP_offload_unregister_ver (unsigned, const void *, int, const void *);

void
GOMP_offload_register_ver (unsigned version, const void *host_table,
			   int type, const void *target_data)
{
  if (nregs < 4)
    regs[nregs++] = (struct reg) { version, host_table, type, target_data };
}

void
GOMP_offload_unregister_ver (unsigned version, const void *host_table,
			     int type, const void *target_data)
{
  (void) version;
  (void) host_table;
  (void) type;
  (void) target_data;
}

/* dlopen PATH and return what it registered, or NULL.  */
static const struct reg *
register_library (const char *path)
{
  int before = nregs;
  void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      fprintf (stderr, "hsa-harness: %s\n", dlerror ());
      return NULL;
    }
  /* Kept open: the descriptor lives in it.  */
  return nregs == before + 1 ? &regs[before] : NULL;
}

/* ------------------------------------------------------------------ */
/* The fake.  */

static int (*f_dispatch_count) (void);
static int (*f_dispatch_info) (int, void *, int *, char *, size_t, void *,
			       size_t);
static int (*f_symbol) (const char *, int, uintptr_t *, uint64_t *, int *,
			uint64_t *);

/* The AQL kernel-dispatch packet (64 bytes; our own declaration, as the
   fake's, from hsa.h).  */
struct packet
{
  uint16_t header, setup;
  uint16_t wg[3], reserved0;
  uint32_t grid[3];
  uint32_t private_size, group_size;
  uint64_t kernel_object;
  uint64_t kernarg_address;
  uint64_t reserved2;
  uint64_t completion_signal;
};

/* What is alive in the runtime, by leak kind.  */
struct census { long n[8]; };

static struct census
census (void)
{
  struct census c = { { 0 } };
  for (size_t i = 0; harness->leak_kinds[i] != NULL; i++)
    c.n[i] = f_outstanding (harness->leak_kinds[i]);
  return c;
}

/* Check that what is alive in the runtime is what was alive at BEFORE.  */
static bool
same_census (const struct census *before, const char *what)
{
  struct census now = census ();
  bool ok = true;
  for (size_t i = 0; harness->leak_kinds[i] != NULL; i++)
    if (now.n[i] != before->n[i])
      {
	fprintf (stderr, "  (%s: %ld %s alive, %ld before)\n", what,
		 now.n[i], harness->leak_kinds[i], before->n[i]);
	ok = false;
      }
  return ok;
}

/* ------------------------------------------------------------------ */
/* Images.  */

static const struct reg *ours, *gccs;
static const struct ok_openmp_target *our_desc;
static size_t nfuncs, nvars;

static bool
describe_ours (void)
{
  if (ours == NULL)
    return false;
  our_desc = ours->target_data;
  const struct ok_host_table *h = &our_desc->host;
  nfuncs = (size_t) (h->funcs_end - h->funcs);
  nvars = (size_t) (h->vars_end - h->vars) / 2;
  return our_desc->magic == OK_DESC_MAGIC && our_desc->num_targets >= 1;
}

/* The target descriptor of D for gfxARCH, or NULL.  */
static const struct ok_tgt_desc *
target_for (const struct ok_openmp_target *d, uint32_t arch)
{
  for (uint32_t i = 0; i < d->num_targets; i++)
    if (d->targets[i].arch == arch)
      return &d->targets[i];
  return NULL;
}

static struct ok_addr_pair *
load (int dev, const struct ok_openmp_target *d)
{
  return harness_load (dev, ours->version, d, nfuncs + nvars + 1);
}

/* A load that must fail with one error containing the NULL-terminated
   NEEDLES, leaving nothing behind in the runtime.  */
static void
bad_load (const char *name, int dev, const void *data, ...)
{
  struct census c = census ();
  long bad = bad_calls ();
  int e = errors_now ();
  struct ok_addr_pair *table;
  int n;
  va_list ap;
  va_start (ap, data);
  bool said = harness_refused_load (name, dev, ours->version, data, ap, &n,
				    &table);
  va_end (ap);
  if (!said)
    fprintf (stderr, "  (%d errors, last: %s)\n", errors_now () - e,
	     last_error ());
  checkf (said, "%s: one clear error", name);
  checkf (same_census (&c, name), "%s: nothing left in the runtime", name);
  char buf[256];
  snprintf (buf, sizeof buf, "%s: no invalid runtime call", name);
  check_no_bad_calls (buf, bad);
  harness_undo_load (n, table, dev, ours->version, data);
}

/* ------------------------------------------------------------------ */
/* Dispatches.  */

struct dispatch
{
  struct packet p;
  int agent;
  char kernel[128];
  uint64_t kargs[6];
  int nkargs;
};

static bool
get_dispatch (int i, struct dispatch *d)
{
  memset (d, 0, sizeof *d);
  int n = f_dispatch_info (i, &d->p, &d->agent, d->kernel, sizeof d->kernel,
			   d->kargs, sizeof d->kargs);
  d->nkargs = n > 0 ? (n - 1) / 8 : 0;
  return n > 0;
}

/* Run function FN of a loaded image on DEV; the dispatch it made (the
   last one, after any others the run made).  */
static bool
run_one (int dev, void *fn, void *tgt_vars, void **args, struct dispatch *d)
{
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, p_run (dev, fn, tgt_vars, args));
  int after = f_dispatch_count ();
  if (fatal || after == before)
    {
      fprintf (stderr, "  (run: %s)\n", fatal ? last_error () : "no dispatch");
      return false;
    }
  return get_dispatch (after - 1, d);
}

static bool
geometry_is (const struct dispatch *d, unsigned teams, unsigned threads)
{
  bool ok = (d->p.grid[0] == teams && d->p.grid[1] == 64
	     && d->p.grid[2] == threads && d->p.wg[0] == 1
	     && d->p.wg[1] == 64 && d->p.wg[2] == threads);
  if (!ok)
    fprintf (stderr, "  (grid %u,%u,%u work-group %u,%u,%u; want %u,64,%u "
	     "and 1,64,%u)\n", d->p.grid[0], d->p.grid[1], d->p.grid[2],
	     d->p.wg[0], d->p.wg[1], d->p.wg[2], teams, threads, threads);
  return ok;
}

/* ------------------------------------------------------------------ */
/* Children.  */

static void
child_zero_silent (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

/* A child that loads the plugin only, without the fake: the runtime it
   finds by its own rules (none usable without /dev/kfd).  */
static bool
open_plugin_only (void)
{
  unsetenv ("OFFLOADKIT_HSA_LIBRARY");
  return standin_open_plugin (plugin_path);
}

static void
child_system_runtime (void)
{
  child_zero_silent ();
  standin_close_plugin ();
}

static bool
have_no_kfd (void)
{
  return access ("/dev/kfd", F_OK) != 0;
}

static void
child_init_fails (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("at most one error, naming hsa_init",
	 errors_now () == 0 || error_says (0, "hsa_init", NULL));
}

static void
child_two_and_emulated (void)
{
  check ("3 devices (2 HSA, then 1 emulated)", p_get_num_devices () == 3);
  check ("no error", errors_now () == 0);
  bool init = p_init_device (0) && p_init_device (1) && p_init_device (2);
  check ("init all", init);
  if (!init)
    return;
  long allocs = f_calls ("hsa_memory_allocate");
  void *p = p_alloc (2, 1 << 20);
  check ("emulated device memory does not come from the runtime",
	 p != NULL && f_calls ("hsa_memory_allocate") == allocs);
  p_free (2, p);
  /* The image choice: gfx906 on device 0, gfx900 on device 1.  The fake
     refuses a code object for another machine, so loading on both
     proves the choice.  */
  for (int dev = 0; dev < 2; dev++)
    {
      struct ok_addr_pair *t = load (dev, our_desc);
      checkf (t != NULL, "device %d (%s): the image for its ISA loads", dev,
	      dev == 0 ? "gfx906" : "gfx900");
      free (t);
      if (t != NULL)
	p_unload_image (dev, ours->version, our_desc);
    }
  check ("fini all", p_fini_device (0) && p_fini_device (1)
	 && p_fini_device (2));
  check_no_leaks ("after fini");
}

static void
child_no_matching_isa (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  bad_load ("gfx900+gfx906 image on a gfx908 agent", 0, our_desc, "gfx908",
	    NULL);
  check ("the error advises -march=gfx908",
	 strstr (last_error (), "-march=gfx908") != NULL);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* An agent GCC 12 cannot build for: the error says so rather than advise
   an -march that mkoffload and GCC refuse.  */
static void
child_unbuildable_isa (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  bad_load ("gfx900+gfx906 image on a gfx90a agent", 0, our_desc, "gfx90a",
	    "GCC 12 cannot generate code", NULL);
  check ("the error advises no -march",
	 strstr (last_error (), "-march=") == NULL);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* One runtime call made to fail (FAKEHSA_FAIL in the child's
   environment) along a whole session: init, load, copies, a run, an
   async run, unload, fini.  The first failure must be one clear error
   naming the call; nothing may crash or leak.  */
static const char *fail_sym;
static int fail_nth;

static void
child_session_with_failure (void)
{
  int e0 = errors_now ();
  volatile bool fatal = false;
  bool ok = p_get_num_devices () == 1;
  if (ok)
    ok = p_init_device (0);
  struct ok_addr_pair *t = NULL;
  bool loaded = false;
  if (ok)
    {
      t = load (0, our_desc);
      loaded = t != NULL;
      ok = loaded;
    }
  void *mem = NULL;
  if (ok)
    {
      mem = p_alloc (0, 4096);
      ok = mem != NULL;
    }
  int x = 42, y = 0;
  if (ok)
    ok = p_host2dev (0, mem, &x, sizeof x) && p_dev2host (0, &y, mem, sizeof y);
  if (ok)
    {
      STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) t[0].start, mem, NULL));
      ok = !fatal;
    }
  if (ok)
    {
      completions_reset ();
      int token;
      STANDIN_CATCH_FATAL (fatal, p_async_run (0, (void *) t[0].start, mem,
					       NULL, &token));
      if (!fatal)
	wait_completions (1, 10);
      ok = !fatal && completions_now () == 1;
    }
  if (mem != NULL)
    p_free (0, mem);
  if (loaded)
    p_unload_image (0, ours->version, our_desc);
  free (t);
  /* fini_device even after a failed init: libgomp would not call it, but
     it must not crash either.  */
  p_fini_device (0);

  long calls = f_calls (fail_sym);
  if (calls < fail_nth)
    {
      unsupported ("the call was not made that often");
      return;
    }
  if (ok && errors_now () == e0)
    /* The plugin had another way: the ISA from the agent's name, a
       default compute-unit count.  */
    check ("worked around, the session completed", true);
  else
    {
      check ("the failure was reported", errors_now () > e0);
      check ("the error comes from the plugin and says what failed",
	     errors_now () > e0
	     && strstr (last_error (), "offloadkit-gcn: ") != NULL);
    }
  bool teardown = (strstr (fail_sym, "free") != NULL
		   || strstr (fail_sym, "destroy") != NULL);
  if (!teardown)
    check_no_leaks ("after fini");
}

/* A kernel faults (FAKEHSA_FAIL=kernel_dispatch@2: the first dispatch is
   the image's constructor): the run must end in one clear error naming
   the kernel, without hanging, and the device must still shut down.  */
static void
child_kernel_fault (void)
{
  check ("1 device", p_get_num_devices () == 1 && p_init_device (0));
  struct ok_addr_pair *t = load (0, our_desc);
  check ("loads", t != NULL);
  if (t == NULL)
    return;
  const struct ok_tgt_desc *td = target_for (our_desc, 0x906);
  int e = errors_now ();
  volatile bool fatal;
  void *mem = p_alloc (0, 64);
  STANDIN_CATCH_FATAL (fatal, p_run (0, (void *) t[0].start, mem, NULL));
  check ("the run fails", fatal || errors_now () > e);
  check ("the error names the kernel and the status",
	 errors_now () > e && strstr (last_error (), td->func_names[0]) != NULL
	 && strstr (last_error (), "HSA_STATUS_ERROR_EXCEPTION") != NULL);
  if (errors_now () > e)
    fprintf (stderr, "  (error: %s)\n", last_error ());
  p_free (0, mem);
  p_unload_image (0, ours->version, our_desc);
  free (t);
  p_fini_device (0);
}

/* Device printf's buffer in the kernel arguments, from the exit word on
   (struct gcn_kernargs of libgomp-plugin/hsa-internal.h: GCC 12's
   layout).  */
struct print_entry
{
  int written;
  char msg[128];
  int type;
  union
  {
    int64_t ivalue;
    double dvalue;
    char text[128];
  } u;
};

struct print_buf
{
  int return_value;
  unsigned int next_output;
  struct print_entry queue[1024];
  unsigned int consumed;
};

/* The device claims entry 0 and writes it only after the host has polled
   for a while: a stale `written' would have been printed by then.  */
static void
print_late (struct print_buf *pb)
{
  __atomic_store_n (&pb->next_output, 1, __ATOMIC_RELEASE);
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  struct print_entry *e = &pb->queue[0];
  e->msg[0] = '\0';
  e->type = 2;
  strcpy (e->u.text, "fresh");
  __atomic_store_n (&e->written, 1, __ATOMIC_RELEASE);
}

/* Three entries written and left unread, then the device's index below
   what the host consumed, as when it wraps around: the host can only
   report the overflow.  (Only the host writes `consumed'; while
   next_output is 0 it reads nothing.)  */
static void
print_overflow (struct print_buf *pb)
{
  for (int i = 0; i < 3; i++)
    {
      struct print_entry *e = &pb->queue[i];
      e->msg[0] = '\0';
      e->type = 2;
      strcpy (e->u.text, "stale");
      __atomic_store_n (&e->written, 1, __ATOMIC_RELEASE);
    }
  __atomic_store_n (&pb->consumed, 5, __ATOMIC_RELEASE);
  __atomic_store_n (&pb->next_output, 3, __ATOMIC_RELEASE);
}

/* An asynchronous launch of FN on device 0, held by the gate while DEVICE
   plays the device's part in PB; what the plugin printed in OUT.  */
static bool
print_launch (void *fn, struct print_buf *pb,
	      void (*device) (struct print_buf *), char *out, size_t outlen)
{
  out[0] = '\0';
  char path[] = "/tmp/hsa-harness-XXXXXX";
  int fd = mkstemp (path);
  if (fd < 0)
    return false;
  unlink (path);
  fflush (stdout);
  int saved = dup (1);
  dup2 (fd, 1);
  completions_reset ();
  f_gate (1);
  int token;
  p_async_run (0, fn, NULL, NULL, &token);
  device (pb);
  f_gate (0);
  wait_completions (1, 10);
  fflush (stdout);
  dup2 (saved, 1);
  close (saved);
  ssize_t n = pread (fd, out, outlen - 1, 0);
  close (fd);
  out[n > 0 ? n : 0] = '\0';
  return completions_now () == 1;
}

static bool
print_all_clear (const struct print_buf *pb)
{
  for (int i = 0; i < 1024; i++)
    if (pb->queue[i].written != 0)
      return false;
  return true;
}

/* The plugin clears the print entries when it allocates a kernel-argument
   block (the fake fills fresh memory with 0xa5) and leaves them clear
   after each launch, an overflowed one too; a fresh plugin, so that the
   block is a new one.  */
static void
child_print_buffer (void)
{
  check ("1 device", p_get_num_devices () == 1 && p_init_device (0));
  struct ok_addr_pair *t = load (0, our_desc);
  check ("loads", t != NULL);
  if (t == NULL)
    return;
  void *fn = (void *) t[0].start;
  struct dispatch d;
  bool ran = run_one (0, fn, NULL, NULL, &d);
  check ("a run", ran);
  if (ran)
    {
      /* The block the run used, reused by the next.  */
      struct print_buf *pb
	= (struct print_buf *) ((unsigned char *) (uintptr_t)
				d.p.kernarg_address + 40);
      char out[512];
      bool ok = print_launch (fn, pb, print_late, out, sizeof out);
      if (strcmp (out, "fresh\n") != 0)
	fprintf (stderr, "  (printed: '%s')\n", out);
      check ("a new block: only what the device wrote is printed",
	     ok && strcmp (out, "fresh\n") == 0);
      ok = print_launch (fn, pb, print_overflow, out, sizeof out);
      check ("an overflow is reported",
	     ok && strcmp (out, "GCN print buffer overflowed.\n") == 0);
      check ("after an overflow every entry is clear", print_all_clear (pb));
      ok = print_launch (fn, pb, print_late, out, sizeof out);
      if (strcmp (out, "fresh\n") != 0)
	fprintf (stderr, "  (printed: '%s')\n", out);
      check ("after an overflow: nothing stale printed",
	     ok && strcmp (out, "fresh\n") == 0);
    }
  p_unload_image (0, ours->version, our_desc);
  free (t);
  check ("fini", p_fini_device (0));
}

/* The fake itself must refuse what the runtime refuses, or the "no
   invalid runtime call" checks prove nothing.  */
/* The fake's function NAME.  */
#define hsa(name) harness_fake_fn (name)

static uint64_t agents_seen[4];
static int nagents_seen;
static uint64_t regions_seen[4];
static int nregions_seen;

static int
collect_agent (uint64_t a, void *data)
{
  (void) data;
  if (nagents_seen < 4)
    agents_seen[nagents_seen++] = a;
  return 0;
}

static int
collect_region (uint64_t r, void *data)
{
  (void) data;
  if (nregions_seen < 4)
    regions_seen[nregions_seen++] = r;
  return 0;
}

static void
child_fake_selftest (void)
{
  check ("hsa_init", hsa ("hsa_init") () == 0);
  hsa ("hsa_iterate_agents") (collect_agent, NULL);
  check ("a CPU agent and a GPU agent", nagents_seen == 2);
  if (nagents_seen != 2)
    return;
  uint64_t gpu = agents_seen[1];	/* The CPU agent comes first.  */
  hsa ("hsa_agent_iterate_regions") (gpu, collect_region, NULL);
  check ("three GPU regions", nregions_seen == 3);
  uint32_t flags = 0;
  hsa ("hsa_region_get_info") (regions_seen[0], 1, &flags);
  check ("the first is the kernarg region", (flags & 1) != 0);
  void *karg = NULL, *mem = NULL;
  hsa ("hsa_memory_allocate") (regions_seen[0], 4096, &karg);
  hsa ("hsa_memory_allocate") (regions_seen[1], 4096, &mem);
  long bad = bad_calls ();
  char buf[16];
  check ("a copy leaving its block is refused",
	 hsa ("hsa_memory_copy") ((char *) mem + 4090, buf, sizeof buf) != 0
	 && bad_calls () == bad + 1);
  check ("freeing what was not allocated is refused",
	 hsa ("hsa_memory_free") (buf) != 0 && bad_calls () == bad + 2);

  /* A gfx900 code object on the gfx906 agent.  */
  const struct ok_tgt_desc *t900 = target_for (our_desc, 0x900);
  const struct ok_tgt_desc *t906 = target_for (our_desc, 0x906);
  uint64_t exe = 0, reader = 0, reader906 = 0;
  hsa ("hsa_executable_create_alt") (0, 0, NULL, &exe);
  hsa ("hsa_code_object_reader_create_from_memory")
    (t900->image_start, (size_t) (t900->image_end - t900->image_start),
     &reader);
  check ("a gfx900 code object on a gfx906 agent: "
	 "HSA_STATUS_ERROR_INVALID_ISA",
	 hsa ("hsa_executable_load_agent_code_object") (exe, gpu, reader,
							NULL, NULL)
	 == 0x100f);
  hsa ("hsa_code_object_reader_create_from_memory")
    (t906->image_start, (size_t) (t906->image_end - t906->image_start),
     &reader906);
  check ("the gfx906 one loads",
	 hsa ("hsa_executable_load_agent_code_object") (exe, gpu, reader906,
							NULL, NULL) == 0
	 && hsa ("hsa_executable_freeze") (exe, NULL) == 0);
  uint64_t vsym = 0;
  check ("a static variable's local symbol is not found by name",
	 hsa ("hsa_executable_get_symbol_by_name") (exe, "hidden", &gpu,
						    &vsym) != 0);
  check ("the global label .offload_var_table is found by name",
	 hsa ("hsa_executable_get_symbol_by_name") (exe, ".offload_var_table",
						    &gpu, &vsym) == 0);
  char kd[160];
  snprintf (kd, sizeof kd, "%s.kd", t906->func_names[0]);
  uintptr_t obj = 0;
  uint64_t priv = 0, extra = 0;
  check ("its kernel has a descriptor",
	 f_symbol (kd, 0, &obj, &priv, NULL, &extra) && obj != 0);

  /* Dispatch packets through a queue.  */
  struct q
  {
    uint32_t type, features;
    void *base;
    uint64_t doorbell;
    uint32_t size, reserved;
    uint64_t id;
  } *queue = NULL;
  hsa ("hsa_queue_create") (gpu, 64u, 0u, NULL, NULL, 0u, 0u, &queue);
  check ("a queue", queue != NULL);
  if (queue == NULL)
    return;
  uint64_t sig = 0;
  hsa ("hsa_signal_create") ((int64_t) 1, 0u, NULL, &sig);
  typedef uint64_t (*add_fn) (void *, uint64_t);
  typedef void (*store_fn) (uint64_t, int64_t);
  typedef int64_t (*load_fn) (uint64_t);
  add_fn add;
  store_fn ring;
  load_fn sload;
  void *a = dlsym (fake, "hsa_queue_add_write_index_relaxed");
  void *r = dlsym (fake, "hsa_signal_store_relaxed");
  void *l = dlsym (fake, "hsa_signal_load_relaxed");
  memcpy (&add, &a, sizeof a);
  memcpy (&ring, &r, sizeof r);
  memcpy (&sload, &l, sizeof l);
  for (int round = 0; round < 2; round++)
    {
      uint64_t idx = add (queue, 1);
      struct packet *p = (struct packet *) queue->base + (idx & 63);
      memset ((char *) p + 4, 0, sizeof *p - 4);
      p->wg[0] = 1, p->wg[1] = 64, p->wg[2] = 4;
      p->grid[0] = 2, p->grid[1] = 64, p->grid[2] = 4;
      p->private_size = (uint32_t) priv;
      p->group_size = (uint32_t) (extra >> 32);
      p->kernel_object = round == 0 ? obj : obj + 8;
      p->kernarg_address = (uintptr_t) karg;
      p->completion_signal = sig;
      bad = bad_calls ();
      __atomic_store_n ((uint32_t *) p, 2u | (3u << 16), __ATOMIC_RELEASE);
      ring (queue->doorbell, (int64_t) idx);
      if (round == 0)
	check ("a well-formed dispatch: recorded, signal decremented, "
	       "no invalid call",
	       sload (sig) == 0 && bad_calls () == bad);
      else
	check ("a dispatch of no loaded kernel object is an invalid call",
	       bad_calls () > bad);
    }
  hsa ("hsa_signal_destroy") (sig);
  hsa ("hsa_queue_destroy") (queue);
  hsa ("hsa_executable_destroy") (exe);
  hsa ("hsa_code_object_reader_destroy") (reader);
  hsa ("hsa_code_object_reader_destroy") (reader906);
  hsa ("hsa_memory_free") (karg);
  hsa ("hsa_memory_free") (mem);
  check_no_leaks ("the fake after cleanup");
}

/* ------------------------------------------------------------------ */
/* The main process's tests (devices 0: gfx906, 1: gfx900).  */

static struct ok_addr_pair *tab0, *tab1;

static void
test_load (void)
{
  long bad = bad_calls ();
  tab0 = load (0, our_desc);
  check ("our image loads on device 0 (gfx906)", tab0 != NULL);
  tab1 = load (1, our_desc);
  check ("our image loads on device 1 (gfx900)", tab1 != NULL);
  if (tab0 == NULL)
    return;
  const struct ok_tgt_desc *td = target_for (our_desc, 0x906);
  check ("the descriptor has a gfx906 image with kernel info",
	 td != NULL && td->kernel_info != NULL && td->num_funcs == nfuncs
	 && td->num_vars == nvars);
  if (td == NULL)
    return;
  bool funcs_ok = true;
  for (size_t i = 0; i < nfuncs; i++)
    funcs_ok &= tab0[i].start != 0 && tab0[i].end >= tab0[i].start;
  check ("a non-zero entry per kernel", funcs_ok);
  bool vars_ok = nvars > 0;
  const struct ok_host_table *h = &our_desc->host;
  for (size_t i = 0; i < nvars; i++)
    {
      uintptr_t addr = 0;
      uint64_t size = 0;
      int kernel = 1;
      size_t host_size = (size_t) (uintptr_t) h->vars[2 * i + 1]
			 & ~OK_GOMP_LINK_BIT;
      /* A link variable is a pointer on the device (NAME.linkptr).  */
      if ((uintptr_t) h->vars[2 * i + 1] & OK_GOMP_LINK_BIT)
	host_size = sizeof (void *);
      const struct ok_addr_pair *e = &tab0[nfuncs + i];
      bool found = f_symbol (td->var_names[i], 0, &addr, &size, &kernel,
			     NULL);
      if (!found || kernel || e->start != addr || e->end - e->start != size
	  || size != host_size)
	{
	  fprintf (stderr, "  (variable %s: entry %#lx+%lu, runtime %#lx+%lu,"
		   " host size %zu)\n", td->var_names[i],
		   (unsigned long) e->start,
		   (unsigned long) (e->end - e->start), (unsigned long) addr,
		   (unsigned long) size, host_size);
	  vars_ok = false;
	}
    }
  check ("variables: the runtime's addresses and sizes, as big as on the "
	 "host", vars_ok);
  const struct ok_addr_pair *dn = &tab0[nfuncs + nvars];
  uintptr_t dn_addr = 0;
  uint64_t dn_size = 0;
  bool has_dn = f_symbol ("__gomp_device_num", 0, &dn_addr, &dn_size, NULL,
			  NULL);
  check ("__gomp_device_num: the last entry",
	 has_dn ? dn->start == dn_addr && dn->end - dn->start == dn_size
		: dn->start == 0 && dn->end == 0);
  /* libgomp writes the device number there itself, and insists on an
     int.  */
  if (has_dn)
    check ("__gomp_device_num: an int", dn->end - dn->start == sizeof (int));
  else
    unsupported ("__gomp_device_num: an int (the image has none)");
  /* Initial values of variables come from the code object.  */
  int counter = 0;
  for (size_t i = 0; i < nvars; i++)
    if (strcmp (td->var_names[i], "counter") == 0)
      {
	p_dev2host (0, &counter, (void *) tab0[nfuncs + i].start,
		    sizeof counter);
	check ("variable counter: initial value 7 on the device",
	       counter == 7);
      }
  /* A static variable: only the code object's variable table leads to
     it (the fake, like the runtime, does not load local symbols).  */
  bool has_hidden = false;
  for (size_t i = 0; i < nvars; i++)
    if (strncmp (td->var_names[i], "hidden", 6) == 0)
      {
	uintptr_t addr = 0;
	uint64_t size = 0;
	short v[3] = { 0, 0, 0 };
	has_hidden = true;
	check ("static variable hidden: the local symbol's address and"
	       " size (6 bytes)",
	       f_symbol (td->var_names[i], 0, &addr, &size, NULL, NULL)
	       && tab0[nfuncs + i].start == addr
	       && tab0[nfuncs + i].end == addr + 6 && size == 6);
	p_dev2host (0, v, (void *) tab0[nfuncs + i].start, sizeof v);
	check ("static variable hidden: initial value {3, 4, 5} on the"
	       " device", v[0] == 3 && v[1] == 4 && v[2] == 5);
      }
  check ("static variable hidden: in the descriptor", has_hidden);
  check_no_bad_calls ("load: no invalid runtime calls", bad);
}

static void
test_gcc_image (void)
{
  if (gccs == NULL)
    {
      unsupported ("image in GCC's format (not built)");
      return;
    }
  long bad = bad_calls ();
  const struct ok_host_table *h = gccs->host_table;
  size_t nf = (size_t) (h->funcs_end - h->funcs);
  size_t nv = (size_t) (h->vars_end - h->vars) / 2;
  check ("GCC's image: registered as device version 2",
	 gccs->type == OK_GOMP_DEVICE_GCN
	 && (gccs->version & 0xffff) == OK_GCC_DEV_VERSION_GCN);
  struct ok_addr_pair *t = harness_load (0, gccs->version, gccs->target_data,
					 nf + nv + 1);
  check ("GCC's image: loads, one entry per function and variable + 1",
	 t != NULL);
  if (t == NULL)
    return;
  bool sizes_ok = true;
  for (size_t i = 0; i < nv; i++)
    {
      uintptr_t hsize = (uintptr_t) h->vars[2 * i + 1];
      /* A link variable is a pointer on the device.  */
      if (hsize & OK_GOMP_LINK_BIT)
	hsize = sizeof (void *);
      sizes_ok &= t[nf + i].end - t[nf + i].start == hsize
		  && t[nf + i].start != 0;
    }
  check ("GCC's image: variables as big as on the host", sizes_ok);
  void *tv = p_alloc (0, 64);
  struct dispatch d;
  bool ran = run_one (0, (void *) t[0].start, tv, NULL, &d);
  check ("GCC's image: a kernel runs", ran);
  if (ran)
    check ("GCC's image: tgt_vars is the first kernel argument",
	   d.nkargs >= 1 && d.kargs[0] == (uintptr_t) tv);
  p_free (0, tv);
  free (t);
  check ("GCC's image: unload",
	 p_unload_image (0, gccs->version, gccs->target_data));
  check_no_bad_calls ("GCC's image: no invalid runtime calls", bad);
}

/* A copy of our descriptor whose gfx906 image is BYTES[0, SIZE), the
   only target.  */
struct variant
{
  struct ok_openmp_target d;
  struct ok_tgt_desc t;
  unsigned char *bytes;
  void **vars;
};

static void
variant_init (struct variant *v, const struct ok_tgt_desc *src)
{
  memset (v, 0, sizeof *v);
  v->d = *our_desc;
  v->t = *src;
  size_t size = (size_t) (src->image_end - src->image_start);
  v->bytes = malloc (size);
  memcpy (v->bytes, src->image_start, size);
  v->t.image_start = v->bytes;
  v->t.image_end = v->bytes + size;
  v->d.targets = &v->t;
  v->d.num_targets = 1;
}

static void
variant_free (struct variant *v)
{
  free (v->bytes);
  free (v->vars);
}

/* Set the st_size of every symbol NAME in the symbol tables of the
   ELF64 image BYTES[0, SIZE) to NEW_SIZE; the number changed.  */
static int
set_symbol_size (unsigned char *bytes, size_t size, const char *name,
		 uint64_t new_size)
{
  Elf64_Ehdr eh;
  if (size < sizeof eh)
    return 0;
  memcpy (&eh, bytes, sizeof eh);
  if (eh.e_shentsize != sizeof (Elf64_Shdr) || eh.e_shoff > size
      || (size - eh.e_shoff) / sizeof (Elf64_Shdr) < eh.e_shnum)
    return 0;
  int changed = 0;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh, str;
      memcpy (&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
      if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
	  || sh.sh_link >= eh.e_shnum || sh.sh_offset > size
	  || sh.sh_size > size - sh.sh_offset)
	continue;
      memcpy (&str, bytes + eh.e_shoff + sh.sh_link * sizeof str,
	      sizeof str);
      if (str.sh_offset > size || str.sh_size > size - str.sh_offset)
	continue;
      for (size_t k = 0; k + sizeof (Elf64_Sym) <= sh.sh_size;
	   k += sizeof (Elf64_Sym))
	{
	  Elf64_Sym sym;
	  unsigned char *at = bytes + sh.sh_offset + k;
	  memcpy (&sym, at, sizeof sym);
	  size_t len = strlen (name);
	  if (sym.st_name < str.sh_size && str.sh_size - sym.st_name > len
	      && memcmp (bytes + str.sh_offset + sym.st_name, name,
			 len + 1) == 0)
	    {
	      sym.st_size = new_size;
	      memcpy (at, &sym, sizeof sym);
	      changed++;
	    }
	}
    }
  return changed;
}

static void
test_bad_images (void)
{
  const struct ok_tgt_desc *t906 = target_for (our_desc, 0x906);
  const struct ok_tgt_desc *t900 = target_for (our_desc, 0x900);
  if (t906 == NULL || t900 == NULL)
    {
      check ("bad images: gfx900 and gfx906 images to start from", false);
      return;
    }
  struct variant v;

  variant_init (&v, t906);
  v.t.image_end = v.t.image_start + 100;
  bad_load ("truncated code object (100 bytes)", 0, &v.d, NULL);
  v.t.image_end = v.t.image_start + 40;
  bad_load ("truncated code object (40 bytes)", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.bytes[1] = 'X';
  bad_load ("bad ELF magic", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.bytes[4] = 1;			/* ELFCLASS32.  */
  bad_load ("32-bit ELF", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.bytes[18] = 62;			/* e_machine: EM_X86_64.  */
  v.bytes[19] = 0;
  bad_load ("e_machine not EM_AMDGPU", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  /* e_shoff (offset 40, 8 bytes) far beyond the end.  */
  memset (v.bytes + 40, 0x7f, 6);
  bad_load ("section headers outside the image", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  /* e_phoff (offset 32) beyond the end.  */
  memset (v.bytes + 32, 0x7f, 6);
  bad_load ("program headers outside the image", 0, &v.d, NULL);
  variant_free (&v);

  /* Header fields the runtime's loader indexes by.  */
  Elf64_Ehdr eh;
  variant_init (&v, t906);
  memcpy (&eh, v.bytes, sizeof eh);
  eh.e_shstrndx = eh.e_shnum + 3;
  memcpy (v.bytes, &eh, sizeof eh);
  bad_load ("e_shstrndx out of range", 0, &v.d, "code object",
	    "section name table", NULL);
  variant_free (&v);

  variant_init (&v, t906);
  memcpy (&eh, v.bytes, sizeof eh);
  eh.e_shnum = 0;
  memcpy (v.bytes, &eh, sizeof eh);
  bad_load ("extended section numbering", 0, &v.d, "code object",
	    "extended section numbering", NULL);
  variant_free (&v);

  /* A gfx90a code object (EF_AMDGPU_MACH 0x3f) labelled gfx906: its
     machine is known, so the plugin refuses it for the gfx906 agent.  */
  variant_init (&v, t906);
  memcpy (&eh, v.bytes, sizeof eh);
  eh.e_flags = (eh.e_flags & ~0xffu) | 0x3fu;
  memcpy (v.bytes, &eh, sizeof eh);
  bad_load ("gfx90a code object labelled gfx906", 0, &v.d, "gfx90a", NULL);
  variant_free (&v);

  /* The gfx900 code object labelled gfx906: the ELF machine decides.  */
  variant_init (&v, t900);
  v.t.arch = 0x906;
  bad_load ("gfx900 code object labelled gfx906", 0, &v.d, NULL);
  variant_free (&v);

  /* Only a gfx900 image, on the gfx906 device.  */
  variant_init (&v, t900);
  bad_load ("only a gfx900 image for a gfx906 agent", 0, &v.d, "gfx906",
	    NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.d.magic ^= 1;
  bad_load ("wrong descriptor magic", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.d.desc_version = 99;
  bad_load ("wrong descriptor version", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.t.device_type = OK_GOMP_DEVICE_NVIDIA_PTX;
  v.d.num_targets = 1;
  bad_load ("nvptx device type only", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t906);
  v.t.image_format = OK_IMAGE_PTX;
  bad_load ("PTX image format for a gcn target", 0, &v.d, NULL);
  variant_free (&v);

  /* A variable whose host size differs from the code object's.  */
  if (nvars > 0)
    {
      variant_init (&v, t906);
      const struct ok_host_table *h = &our_desc->host;
      v.vars = malloc (2 * nvars * sizeof *v.vars);
      memcpy (v.vars, h->vars, 2 * nvars * sizeof *v.vars);
      v.vars[1] = (void *) ((uintptr_t) v.vars[1] + 4);
      v.d.host.vars = v.vars;
      v.d.host.vars_end = v.vars + 2 * nvars;
      char size[32];
      snprintf (size, sizeof size, "%lu", (unsigned long) (uintptr_t)
		v.vars[1]);
      bad_load ("variable size mismatch", 0, &v.d, t906->var_names[0],
		size, NULL);
      variant_free (&v);
    }

  /* A code object without the variable table's label (renamed in the
     string tables), then one whose label is too small (st_size 8 in the
     symbol tables).  */
  if (nvars > 0)
    {
      variant_init (&v, t906);
      size_t size = (size_t) (v.t.image_end - v.t.image_start);
      int renamed = 0;
      for (unsigned char *p = v.bytes;
	   (p = memmem (p, size - (size_t) (p - v.bytes),
			".offload_var_table", 19)) != NULL; p += 19)
	p[1] = 'Q', renamed++;
      check ("bad images: the variable table's label found", renamed > 0);
      bad_load ("no .offload_var_table", 0, &v.d, ".offload_var_table",
		"no global symbol", NULL);
      variant_free (&v);

      variant_init (&v, t906);
      char need[64];
      snprintf (need, sizeof need, "need %zu bytes", nvars * 16);
      check ("bad images: the variable table's label resized",
	     set_symbol_size (v.bytes, size, ".offload_var_table", 8) > 0);
      bad_load (".offload_var_table of 8 bytes", 0, &v.d,
		".offload_var_table", "found 8 bytes", need, NULL);
      variant_free (&v);
    }

  /* A kernel the code object does not have.  */
  {
    variant_init (&v, t906);
    const char **names = malloc (nfuncs * sizeof *names);
    memcpy (names, t906->func_names, nfuncs * sizeof *names);
    names[0] = "no_such_kernel";
    v.t.func_names = names;
    bad_load ("missing kernel", 0, &v.d, "no_such_kernel", NULL);
    free (names);
    variant_free (&v);
  }
}

static void
test_memory (void)
{
  long bad = bad_calls ();
  char src[1000], back[1000];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (char) (i * 7);
  void *a = p_alloc (0, sizeof src), *b = p_alloc (0, sizeof src);
  check ("alloc", a != NULL && b != NULL);
  if (a == NULL || b == NULL)
    return;
  memset (back, 0, sizeof back);
  check ("host2dev, dev2dev, dev2host round trip",
	 p_host2dev (0, a, src, sizeof src)
	 && p_dev2dev (0, b, a, sizeof src)
	 && p_dev2host (0, back, b, sizeof back)
	 && memcmp (src, back, sizeof src) == 0);
  check ("free", p_free (0, a) && p_free (0, b));
  void *big = p_alloc (1, (size_t) 64 << 20);
  check ("64 MiB on device 1", big != NULL && p_free (1, big));
  check_no_bad_calls ("memory: no invalid runtime calls", bad);
}

static void
test_launch (void)
{
  if (tab0 == NULL || tab1 == NULL)
    {
      check ("launch: images loaded", false);
      return;
    }
  long bad = bad_calls ();
  const struct ok_tgt_desc *td = target_for (our_desc, 0x906);
  void *tv = p_alloc (0, 64);
  struct dispatch d;
  for (size_t k = 0; k < nfuncs; k++)
    {
      bool ran = run_one (0, (void *) tab0[k].start, tv, NULL, &d);
      checkf (ran, "kernel %zu: dispatched", k);
      if (!ran)
	continue;
      char want[160];
      snprintf (want, sizeof want, "%s.kd", td->func_names[k]);
      uintptr_t obj = 0;
      uint64_t priv = 0, extra = 0;
      f_symbol (want, 0, &obj, &priv, NULL, &extra);
      checkf (strcmp (d.kernel, want) == 0 && d.p.kernel_object == obj,
	      "kernel %zu: the kernel object of %.100s", k, want);
      checkf (d.p.private_size == priv
	      && d.p.group_size == (uint32_t) (extra >> 32),
	      "kernel %zu: segment sizes of its descriptor", k);
      const struct ok_kernel_info *ki = &td->kernel_info[k];
      checkf (ki->private_segment_size == priv
	      && ki->group_segment_size == (uint32_t) (extra >> 32)
	      && ki->kernarg_size == (uint32_t) extra && ki->vgprs > 0
	      && ki->sgprs > 0,
	      "kernel %zu: mkoffload's kernel info agrees with the code"
	      " object", k);
      checkf ((d.p.header & 0xff) == 2 && (d.p.setup & 3) == 3
	      && d.p.completion_signal != 0,
	      "kernel %zu: a kernel-dispatch packet, 3 dimensions, a"
	      " completion signal", k);
      checkf (d.nkargs >= 5 && d.kargs[0] == (uintptr_t) tv
	      && d.kargs[2] == d.p.kernarg_address + 40 && d.kargs[3] != 0
	      && d.kargs[4] != 0,
	      "kernel %zu: kernargs: tgt_vars, then the output, heap and"
	      " arena pointers", k);
    }
  /* Geometry: one work-group per team, 64 lanes by one wavefront per
     thread.  The fake's agents have 60 compute units.  */
  void *fn = (void *) tab0[0].start;
  check ("defaults on gfx906: 60 teams (one per CU), 16 wavefronts",
	 run_one (0, fn, tv, NULL, &d) && geometry_is (&d, 60, 16));
  void *a1[] = { ARG_TEAMS (3), ARG_LIMIT (2), NULL };
  check ("num_teams 3, thread_limit 2",
	 run_one (0, fn, tv, a1, &d) && geometry_is (&d, 3, 2));
  void *a2[] = { ARG_TEAMS (5), NULL };
  check ("num_teams 5: 16 wavefronts",
	 run_one (0, fn, tv, a2, &d) && geometry_is (&d, 5, 16));
  void *a3[] = { ARG_LIMIT (4096), NULL };
  check ("thread_limit 4096: capped at 16 wavefronts",
	 run_one (0, fn, tv, a3, &d) && geometry_is (&d, 60, 16));
  void *a4[] = { ARG_LIMIT (1), NULL };
  check ("thread_limit 1: one wavefront",
	 run_one (0, fn, tv, a4, &d) && geometry_is (&d, 60, 1));
  check ("defaults on gfx900: 4 wavefronts (GCC's gfx900 workaround)",
	 run_one (1, (void *) tab1[0].start, tv, NULL, &d)
	 && geometry_is (&d, 60, 4) && d.agent == 1);
  /* The arena holds a slice per team; it must have grown for more.  */
  void *a5[] = { ARG_TEAMS (200), ARG_LIMIT (1), NULL };
  check ("num_teams 200",
	 run_one (0, fn, tv, a5, &d) && geometry_is (&d, 200, 1)
	 && d.kargs[4] != 0);
  p_free (0, tv);
  check_no_bad_calls ("launch: no invalid runtime calls", bad);
}

static void
test_async (void)
{
  if (tab0 == NULL)
    return;
  long bad = bad_calls ();
  completions_reset ();
  f_gate (1);
  int token;
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, p_async_run (0, (void *) tab0[0].start, NULL,
					   NULL, &token));
  check ("async_run returns while the kernel is pending",
	 !fatal && completions_now () == 0);
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  check ("no completion before the kernel completes",
	 completions_now () == 0);
  f_gate (0);
  wait_completions (1, 10);
  check ("async completion: once, with its async_data",
	 completions_now () == 1 && last_completion () == &token);
  check ("async completion: from another thread",
	 completions_now () == 1
	 && !pthread_equal (completion_thread (), pthread_self ()));
  check ("async: one dispatch", f_dispatch_count () == before + 1);
  check_no_bad_calls ("async: no invalid runtime calls", bad);
}



/* What the device runtime leaves in the kernel arguments' exit word
   (0xffff0000 | signal << 8 | status after exit or abort; anything else
   after a normal end) decides how the host goes on: exit with the status,
   abort for any signal, or carry on.  The fake runs nothing, so the word
   is written in the kernel arguments the plugin reuses, while the gate
   holds the kernel.  Each case in a child of its own.  */
static void
test_exit_values (void)
{
  static const struct
  {
    unsigned word;
    const char *name;
    bool sig;			/* The child must die of SIGABRT.  */
    int status;			/* Else its exit status.  */
  } cases[] = {
    { 0xffff0003u, "device exit(3): the program exits with 3", false, 3 },
    { 0xffff0b00u, "device killed by signal 11: abort", true, 0 },
    { 0xffff0600u, "device abort: abort", true, 0 },
    { 0xcafe0000u, "normal end: the region completes", false, 77 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      fflush (NULL);
      pid_t pid = fork ();
      if (pid == 0)
	{
	  struct dispatch d;
	  if (!run_one (1, (void *) tab1[0].start, NULL, NULL, &d))
	    _exit (90);
	  unsigned char *ka = (unsigned char *) (uintptr_t) d.p.kernarg_address;
	  completions_reset ();
	  f_gate (1);
	  int token;
	  p_async_run (1, (void *) tab1[0].start, NULL, NULL, &token);
	  memcpy (ka + 40, &cases[i].word, 4);
	  f_gate (0);
	  wait_completions (1, 10);
	  _exit (completions_now () == 1 ? 77 : 91);
	}
      int st = 0;
      bool ok = pid > 0 && waitpid (pid, &st, 0) == pid;
      if (cases[i].sig)
	ok = ok && WIFSIGNALED (st) && WTERMSIG (st) == SIGABRT;
      else
	ok = ok && WIFEXITED (st) && WEXITSTATUS (st) == cases[i].status;
      check (cases[i].name, ok);
    }
}
static void
test_threads (void)
{
  if (tab0 == NULL || tab1 == NULL)
    return;
  long bad = bad_calls ();
  int before = f_dispatch_count ();
  void *fns[6];
  for (int i = 0; i < 6; i++)
    fns[i] = (void *) (i % 2 == 0 ? tab0 : tab1)[0].start;
  harness_hammer_threads (fns);
  check ("threads: 240 dispatches", f_dispatch_count () == before + 240);
  int on1 = 0;
  for (int i = before; i < before + 240; i++)
    {
      struct dispatch d;
      get_dispatch (i, &d);
      on1 += d.agent == 1;
    }
  check ("threads: half the dispatches on device 1's agent", on1 == 120);
  check_no_bad_calls ("threads: no invalid runtime calls", bad);
}

/* The runtime calls failed in turn along a session, with how many of each
   to fail in turn (the first and, where a session makes several, a later
   one).  */
static const struct { const char *sym; int nth; } failures[] = {
  { "hsa_init", 1 },
  { "hsa_iterate_agents", 1 },
  { "hsa_agent_get_info", 1 }, { "hsa_agent_get_info", 3 },
  { "hsa_agent_iterate_isas", 1 },
  { "hsa_isa_get_info_alt", 1 },
  { "hsa_agent_iterate_regions", 1 },
  { "hsa_region_get_info", 1 },
  { "hsa_queue_create", 1 },
  { "hsa_memory_allocate", 1 }, { "hsa_memory_allocate", 2 },
  { "hsa_memory_allocate", 3 }, { "hsa_memory_allocate", 4 },
  { "hsa_memory_allocate", 5 },
  { "hsa_executable_create_alt", 1 },
  { "hsa_code_object_reader_create_from_memory", 1 },
  { "hsa_executable_load_agent_code_object", 1 },
  { "hsa_executable_freeze", 1 },
  { "hsa_executable_get_symbol_by_name", 1 },
  { "hsa_executable_get_symbol_by_name", 3 },
  { "hsa_executable_symbol_get_info", 1 },
  { "hsa_executable_symbol_get_info", 4 },
  { "hsa_memory_copy", 1 }, { "hsa_memory_copy", 2 },
  { "hsa_memory_copy", 3 },
  { "hsa_signal_create", 1 },
  { "hsa_memory_free", 1 },
  { "hsa_executable_destroy", 1 },
  { "hsa_code_object_reader_destroy", 1 },
  { "hsa_signal_destroy", 1 },
  { "hsa_queue_destroy", 1 },
};

static void
test_failures (void)
{
  for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++)
    {
      char spec[100], name[120];
      snprintf (spec, sizeof spec, "%s@%d", failures[i].sym,
		failures[i].nth);
      snprintf (name, sizeof name, "failed %s", spec);
      fail_sym = failures[i].sym;
      fail_nth = failures[i].nth;
      harness_in_child (name, HARNESS_ENV ("FAKEHSA_FAIL", spec), NULL,
			child_session_with_failure, false);
    }
}

/* The main process: devices 0 (gfx906) and 1 (gfx900).  */
static void
test_devices (void)
{
  check ("two HSA devices", p_get_num_devices () == 2);
  check ("no error", errors_now () == 0);
  check ("init devices", p_init_device (0) && p_init_device (1));
  check ("a queue per device", f_outstanding ("queue") == 2);
}

static struct ok_addr_pair *
load_our_image (int dev)
{
  return load (dev, our_desc);
}

/* fini_device waits for a kernel still running (on the kernel's signal,
   which the fake decrements only when the gate opens) and leaves nothing
   behind; a device starts again after it.  */
static void
test_fini (void)
{
  harness_check_fini (tab0 != NULL ? (void *) tab0[0].start : NULL,
		      load_our_image);
  free (tab0);
  free (tab1);
  check_no_bad_calls ("no invalid runtime calls at all", 0);
}

int
main (int argc, char **argv)
{
  if (argc < 4 || argc > 5)
    {
      fprintf (stderr, "usage: %s PLUGIN.so FAKE-HSA.so OURS.so [GCCS.so]\n",
	       argv[0]);
      return 2;
    }
  standin_init ("hsa-harness");
  standin_verbose = getenv ("HARNESS_VERBOSE") != NULL;
  plugin_path = argv[1];
  ours_path = argv[3];
  gccs_path = argc == 5 ? argv[4] : NULL;
  unsetenv ("OFFLOADKIT_EMULATE");
  unsetenv ("FAKEHSA_FAIL");
  unsetenv ("FAKEHSA_AGENTS");

  ours = register_library (ours_path);
  check ("our library registered one descriptor", ours != NULL);
  check ("our descriptor: OKIT magic, gcn device type",
	 describe_ours () && ours->type == OK_GOMP_DEVICE_GCN);
  if (our_desc == NULL)
    return check_summary ();
  check ("our descriptor: a gfx900 and a gfx906 image",
	 our_desc->num_targets == 2 && target_for (our_desc, 0x900) != NULL
	 && target_for (our_desc, 0x906) != NULL);
  if (gccs_path != NULL)
    gccs = register_library (gccs_path);

  static const struct harness_sym syms[] = {
    { "fakehsa_dispatch_count", &f_dispatch_count },
    { "fakehsa_dispatch_info", &f_dispatch_info },
    { "fakehsa_symbol", &f_symbol }, { NULL, NULL } };
  const struct harness h = {
    .program = "hsa-harness", .plugin_path = plugin_path,
    .fake_path = argv[2], .library_var = "OFFLOADKIT_HSA_LIBRARY",
    .fake_prefix = "fakehsa", .fake_syms = syms, .fake_who = "runtime",
    .leak_kinds = HARNESS_ENV ("mem", "code", "executable", "reader",
			       "queue", "signal"),
    .env = HARNESS_ENV ("FAKEHSA_AGENTS", "gfx906,gfx900"),
  };
  /* Device counts and errors with a fresh plugin each, then the main
     process.  */
  const struct harness_area areas[] = {
    { AREA_CHILD ("no /dev/kfd, the system's runtime", child_system_runtime,
		  NULL, true),
      .open = open_plugin_only, .can_run = have_no_kfd,
      .unsupported = "no /dev/kfd, the system's runtime (this machine has"
		     " one)" },
    { AREA_CHILD ("no GPU agent", child_zero_silent,
		  HARNESS_ENV ("FAKEHSA_AGENTS", "none"), true) },
    { AREA_CHILD ("empty FAKEHSA_AGENTS", child_zero_silent,
		  HARNESS_ENV ("FAKEHSA_AGENTS", ""), true) },
    { AREA_CHILD ("missing OFFLOADKIT_HSA_LIBRARY", child_zero_silent,
		  HARNESS_ENV ("OFFLOADKIT_HSA_LIBRARY",
			       "/nonexistent/libhsa-runtime64.so.1"), true) },
    { AREA_CHILD ("hsa_init fails", child_init_fails,
		  HARNESS_ENV ("FAKEHSA_FAIL", "hsa_init"), false) },
    { AREA_CHILD ("gfx906 + gfx900 + 1 emulated", child_two_and_emulated,
		  HARNESS_ENV ("FAKEHSA_AGENTS", "gfx906,gfx900",
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("gfx908 agent", child_no_matching_isa,
		  HARNESS_ENV ("FAKEHSA_AGENTS", "gfx908"), false) },
    { AREA_CHILD ("gfx90a agent", child_unbuildable_isa,
		  HARNESS_ENV ("FAKEHSA_AGENTS", "gfx90a"), false) },
    { AREA_UNLOADED ("failed runtime calls", test_failures) },
    { AREA_CHILD ("a kernel faults", child_kernel_fault,
		  HARNESS_ENV ("FAKEHSA_FAIL", "kernel_dispatch@2"), false) },
    { AREA_CHILD ("print buffer", child_print_buffer, NULL, true) },
    { AREA_CHILD ("the fake", child_fake_selftest, NULL, true) },
    { AREA_LOADED ("devices", test_devices) },
    { AREA_LOADED ("images", test_load) },
    { AREA_LOADED ("refused images", test_bad_images) },
    { AREA_LOADED ("GCC's image format", test_gcc_image) },
    { AREA_LOADED ("memory", test_memory) },
    { AREA_LOADED ("launches", test_launch) },
    { AREA_LOADED ("async", test_async) },
    { AREA_LOADED ("exit values", test_exit_values) },
    { AREA_LOADED ("threads", test_threads) },
    { AREA_LOADED ("fini", test_fini) },
  };
  return harness_run (&h, areas, sizeof areas / sizeof areas[0]);
}
