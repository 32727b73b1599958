/* hsa-harness: OpenACC on a GCN device, as GCC's gcn plugin
   (libgomp/plugin/plugin-gcn.c of GCC 12 to 16) runs it: the plugin
   offers OpenACC; the launch dimensions (the compiler's static ones
   first, then libgomp's, then GCC's defaults: 4 gangs per compute unit
   of 8 workers, or 32 wavefronts per compute unit shared out), the
   dispatch geometry (gangs, 64, workers) and kernel arguments of the
   image's device code; async queues, each with an HSA queue and a
   thread of its own, that keep their entries' order, wait for each
   other's placeholders (serialize) and call libgomp's callbacks on their
   thread; the properties; the profiling events of a launch.  The
   harness plays libgomp 14's part, whose launches pass the device
   address of the argument block, and libgomp 12's, whose launches pass
   the arguments' addresses in host memory.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <acc_prof.h>

#include "hsa-harness.h"

struct goacc_asyncqueue;
union acc_prop
{
  size_t val;
  const char *ptr;
};

static void *(*acc_thread_data) (int);
static void (*acc_exec) (void (*) (void *), size_t, void **, void **,
			 unsigned *, void *);
static void (*acc_async_exec) (void (*) (void *), size_t, void **, void **,
			       unsigned *, void *,
			       struct goacc_asyncqueue *);
static struct goacc_asyncqueue *(*acc_construct) (int);
static bool (*acc_destruct) (struct goacc_asyncqueue *);
static int (*acc_test) (struct goacc_asyncqueue *);
static bool (*acc_synchronize) (struct goacc_asyncqueue *);
static bool (*acc_serialize) (struct goacc_asyncqueue *,
			      struct goacc_asyncqueue *);
static void (*acc_callback) (struct goacc_asyncqueue *, void (*) (void *),
			     void *);
static bool (*acc_host2dev) (int, void *, const void *, size_t,
			     struct goacc_asyncqueue *);
static bool (*acc_dev2host) (int, void *, const void *, size_t,
			     struct goacc_asyncqueue *);
static union acc_prop (*acc_property) (int, int);
static uint64_t (*f_dispatch_queue) (int);

static bool
acc_syms (void)
{
  return (standin_plugin_sym ("GOMP_OFFLOAD_openacc_create_thread_data",
			      &acc_thread_data)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_exec", &acc_exec)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_exec",
				 &acc_async_exec)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_construct",
				 &acc_construct)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_destruct",
				 &acc_destruct)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_test", &acc_test)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_synchronize",
				 &acc_synchronize)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_serialize",
				 &acc_serialize)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_queue_callback",
				 &acc_callback)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_host2dev",
				 &acc_host2dev)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_async_dev2host",
				 &acc_dev2host)
	  && standin_plugin_sym ("GOMP_OFFLOAD_openacc_get_property",
				 &acc_property));
}

/* Run FN synchronously with TV as its argument block in dimensions G, W,
   V (0: the plugin's choice); the dispatch it made.  */
static bool
acc_run (void *fn, void *tv, unsigned g, unsigned w, unsigned v,
	 struct dispatch *d)
{
  unsigned dims[3] = { g, w, v };
  void *host = NULL;
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, acc_exec ((void (*) (void *)) fn, 1, &host,
					(void **) tv, dims, NULL));
  int after = f_dispatch_count ();
  if (fatal || after != before + 1)
    {
      fprintf (stderr, "  (exec: %s)\n", fatal ? last_error ()
	       : "not one dispatch");
      return false;
    }
  return get_dispatch (after - 1, d);
}

/* Queue FN on Q as acc_run runs it.  */
static bool
acc_queue_run (struct goacc_asyncqueue *q, void *fn, void *tv, unsigned g,
	       unsigned w)
{
  unsigned dims[3] = { g, w, 0 };
  void *host = NULL;
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, acc_async_exec ((void (*) (void *)) fn, 1,
					      &host, (void **) tv, dims, NULL,
					      q));
  if (fatal)
    fprintf (stderr, "  (async exec: %s)\n", last_error ());
  return !fatal;
}

static bool
acc_geometry_is (const struct dispatch *d, unsigned gangs, unsigned workers)
{
  bool ok = (d->p.grid[0] == gangs && d->p.grid[1] == 64
	     && d->p.grid[2] == workers && d->p.wg[0] == 1
	     && d->p.wg[1] == 64 && d->p.wg[2] == workers
	     && (d->p.setup & 3) == 3);
  if (!ok)
    fprintf (stderr, "  (grid %u,%u,%u work-group %u,%u,%u; want %u,64,%u"
	     " and 1,64,%u)\n", d->p.grid[0], d->p.grid[1], d->p.grid[2],
	     d->p.wg[0], d->p.wg[1], d->p.wg[2], gangs, workers, workers);
  return ok;
}

/* Libgomp's callbacks: how many ran, in which order, on which thread.  */
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static int cb_calls, cb_seq[8];
static pthread_t cb_thread;

static void
record_cb (void *data)
{
  pthread_mutex_lock (&cb_lock);
  if (cb_calls < 8)
    cb_seq[cb_calls] = *(int *) data;
  cb_calls++;
  cb_thread = pthread_self ();
  pthread_mutex_unlock (&cb_lock);
}

static int
cb_count (void)
{
  pthread_mutex_lock (&cb_lock);
  int n = cb_calls;
  pthread_mutex_unlock (&cb_lock);
  return n;
}

static void
pause_100ms (void)
{
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
}

/* The geometry and the kernel arguments of launches without a queue.  */
static void
acc_launches (void *fn, void *tv, const struct ok_tgt_desc *td)
{
  struct dispatch d;
  /* The fake's agents have 60 compute units.  */
  check ("no dimensions: 240 gangs (4 per CU) of 8 workers",
	 acc_run (fn, tv, 0, 0, 0, &d) && acc_geometry_is (&d, 240, 8));
  bool v3 = tgt_is_v3 (td);
  char kd[160];
  snprintf (kd, sizeof kd, "%s.kd", td->func_names[0]);
  uint64_t extra = 0;
  f_symbol (kd, 0, NULL, NULL, NULL, &extra);
  uint32_t own_lds = (uint32_t) (extra >> 32);
  if (v3)
    check ("kernel arguments of GCC 13+'s device code: the argument block,"
	   " output, heap, arenas and stacks for 240 gangs of 8 workers",
	   v3_args_are (&d, tv, 240, 8, 64 * 1024, 32 * 1024,
			v3_lds (240, own_lds)));
  else
    check ("kernel arguments of GCC 12's device code: the argument block,"
	   " then the output, heap and arena pointers",
	   d.nkargs >= 5 && d.kargs[0] == (uintptr_t) tv
	   && d.kargs[2] == d.p.kernarg_address + V2_OUTPUT
	   && d.kargs[3] != 0 && d.kargs[4] != 0
	   && d.p.group_size == own_lds);
  check ("5 gangs of 2 workers, vector 32: as asked, 64 lanes",
	 acc_run (fn, tv, 5, 2, 32, &d) && acc_geometry_is (&d, 5, 2));
  check ("4 workers: 8 gangs per CU",
	 acc_run (fn, tv, 0, 4, 0, &d) && acc_geometry_is (&d, 480, 4));
  check ("10 gangs: 1920 wavefronts shared out, at most 16 workers",
	 acc_run (fn, tv, 10, 0, 0, &d) && acc_geometry_is (&d, 10, 16));
  check ("1000 gangs: 1 worker each",
	 acc_run (fn, tv, 1000, 0, 0, &d) && acc_geometry_is (&d, 1000, 1));
  check ("3 gangs of 40 workers: 16 wavefronts",
	 acc_run (fn, tv, 3, 40, 0, &d) && acc_geometry_is (&d, 3, 16));
  check ("64 workers: a gang per CU, not none",
	 acc_run (fn, tv, 0, 64, 0, &d) && acc_geometry_is (&d, 60, 16));
  if (v3)
    check ("1000 gangs: arenas and stacks for all of them",
	   acc_run (fn, tv, 1000, 0, 0, &d)
	   && v3_args_are (&d, tv, 1000, 1, 64 * 1024, 32 * 1024,
			   v3_lds (1000, own_lds)));
}

/* The launch events a profiling tool gets.  */
static void
acc_profiling (void *fn, void *tv, const struct ok_tgt_desc *td,
	       struct goacc_asyncqueue *q)
{
  struct dispatch d;
  standin_acc_prof = true;
  standin_acc_events_reset ();
  bool ran = acc_run (fn, tv, 0, 0, 0, &d);
  struct standin_acc_events ev = standin_acc_events_now ();
  check ("profiling: a launch start and end event, the kernel's name, the"
	 " dimensions chosen (240, 8, 64)",
	 ran && ev.count[acc_ev_enqueue_launch_start] == 1
	 && ev.count[acc_ev_enqueue_launch_end] == 1
	 && strcmp (ev.kernel, td->func_names[0]) == 0
	 && ev.dims[0] == 240 && ev.dims[1] == 8 && ev.dims[2] == 64);
  standin_acc_events_reset ();
  ran = acc_queue_run (q, fn, tv, 6, 0) && acc_synchronize (q);
  ev = standin_acc_events_now ();
  check ("profiling: a queued launch's events on the thread that queued it",
	 ran && ev.count[acc_ev_enqueue_launch_start] == 1
	 && ev.count[acc_ev_enqueue_launch_end] == 1
	 && ev.dims[0] == 6 && ev.dims[1] == 16);
  standin_acc_prof = false;
}

/* Async queues: their own HSA queues and threads, order, joins,
   callbacks, copies.  */
static void
acc_queues (void *fn, void *tv, const struct ok_tgt_desc *td)
{
  long queues = f_outstanding ("queue");
  struct goacc_asyncqueue *q1 = acc_construct (0), *q2 = acc_construct (0);
  check ("two queues, each with an HSA queue of its own",
	 q1 != NULL && q2 != NULL && f_outstanding ("queue") == queues + 2);
  if (q1 == NULL || q2 == NULL)
    return;
  check ("a new queue is idle", acc_test (q1) == 1);

  struct dispatch sync, d1, d2;
  bool ran = acc_run (fn, tv, 1, 1, 0, &sync);
  int before = f_dispatch_count ();
  ran &= acc_queue_run (q1, fn, tv, 3, 0) && acc_queue_run (q1, fn, tv, 5, 1);
  ran &= acc_synchronize (q1);
  ran &= f_dispatch_count () == before + 2;
  ran &= get_dispatch (before, &d1) && get_dispatch (before + 1, &d2);
  check ("a queue's launches: in order, with their dimensions",
	 ran && acc_geometry_is (&d1, 3, 16) && acc_geometry_is (&d2, 5, 1)
	 && acc_test (q1) == 1);
  uint64_t qid = f_dispatch_queue (before);
  check ("a queue's launches: on its own HSA queue, not the device's",
	 ran && qid != 0 && f_dispatch_queue (before + 1) == qid
	 && f_dispatch_queue (before - 1) != qid);

  /* Nothing after a pending kernel on the same queue runs before it.  */
  unsigned char pattern[64], back[64];
  for (int i = 0; i < 64; i++)
    pattern[i] = (unsigned char) (i * 3 + 1);
  memset (back, 0, sizeof back);
  void *buf = p_alloc (0, 64);
  int tags[3] = { 1, 2, 3 };
  cb_calls = 0;
  f_gate (1);
  bool queued = (buf != NULL && p_host2dev (0, buf, pattern, 64)
		 && acc_queue_run (q1, fn, tv, 2, 2)
		 && acc_dev2host (0, back, buf, 64, q1));
  acc_callback (q1, record_cb, &tags[0]);
  /* And the other queue, ordered after what q1 has so far.  */
  queued &= acc_serialize (q1, q2);
  acc_callback (q2, record_cb, &tags[1]);
  pause_100ms ();
  unsigned char zero[64] = { 0 };
  check ("behind a running kernel: no copy, no callback, the queue busy",
	 queued && memcmp (back, zero, 64) == 0 && cb_count () == 0
	 && acc_test (q1) == 0);
  check ("serialize: the later queue waits for the first's kernel",
	 queued && cb_count () == 0 && acc_test (q2) == 0);
  f_gate (0);
  bool done = acc_synchronize (q2) && acc_synchronize (q1);
  pthread_mutex_lock (&cb_lock);
  bool cb_ok = cb_calls == 2 && cb_seq[0] == 1 && cb_seq[1] == 2
	       && !pthread_equal (cb_thread, pthread_self ());
  pthread_mutex_unlock (&cb_lock);
  check ("after the kernel: the copy, then the callbacks, in order, on"
	 " the queues' threads",
	 done && memcmp (back, pattern, 64) == 0 && cb_ok
	 && acc_test (q1) == 1 && acc_test (q2) == 1);

  /* A host-to-device copy queued behind another queue's copy.  It takes
     the source's bytes of the moment of the call, as CUDA does from
     pageable memory (libgomp queues uploads from temporaries on its own
     stack): the host's later change of the source does not reach the
     device, though the copy runs after the gated kernel.  */
  unsigned char other[64], sent[64];
  memset (other, 0x5a, sizeof other);
  memcpy (sent, other, sizeof sent);
  memset (back, 0, sizeof back);
  f_gate (1);
  queued = (acc_queue_run (q2, fn, tv, 1, 1)
	    && acc_host2dev (0, buf, other, 64, q2));
  memset (other, 0x11, sizeof other);
  queued = (queued && acc_serialize (q2, q1)
	    && acc_dev2host (0, back, buf, 64, q1));
  acc_callback (q1, record_cb, &tags[2]);
  pause_100ms ();
  check ("serialize: copies on the later queue wait too",
	 queued && cb_count () == 2 && memcmp (back, zero, 64) == 0);
  f_gate (0);
  check ("serialize: then the later queue sees the first's copy, of the"
	 " source's bytes at the call",
	 acc_synchronize (q1) && memcmp (back, sent, 64) == 0
	 && cb_count () == 3);
  p_free (0, buf);

  acc_profiling (fn, tv, td, q1);
  check ("destruct: both queues and their HSA queues go",
	 acc_destruct (q1) && acc_destruct (q2)
	 && f_outstanding ("queue") == queues);
}

/* The queue a test's exit handler destroys, as libgomp's does.  */
static struct goacc_asyncqueue *exit_queue;

static void
destroy_exit_queue (void)
{
  acc_destruct (exit_queue);
}

/* A queued kernel calls exit: the program ends with its status, without
   waiting for the queue's thread, which is the one ending it (libgomp's
   exit handler destroys the queues).  */
static void
acc_exit_on_queue (void *fn, void *tv, const struct ok_tgt_desc *td)
{
  unsigned out = output_offset (tgt_is_v3 (td));
  fflush (NULL);
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* A hang fails the check rather than the harness.  */
      alarm (10);
      struct dispatch d;
      exit_queue = acc_construct (0);
      if (exit_queue == NULL || !acc_run (fn, tv, 1, 1, 0, &d))
	_exit (90);
      atexit (destroy_exit_queue);
      /* The queued launch reuses the kernel-argument block of the one
	 before; the device writes its exit word once it is dispatched.  */
      unsigned char *ka = (unsigned char *) (uintptr_t) d.p.kernarg_address;
      f_gate (1);
      if (!acc_queue_run (exit_queue, fn, tv, 1, 1))
	_exit (91);
      pause_100ms ();
      unsigned word = 0xffff0003u;
      memcpy (ka + out, &word, 4);
      f_gate (0);
      acc_synchronize (exit_queue);
      _exit (92);
    }
  int st = 0;
  bool ok = pid > 0 && waitpid (pid, &st, 0) == pid;
  if (ok && !(WIFEXITED (st) && WEXITSTATUS (st) == 3))
    fprintf (stderr, "  (child: %s %d)\n", WIFEXITED (st) ? "exit" : "signal",
	     WIFEXITED (st) ? WEXITSTATUS (st) : WTERMSIG (st));
  check ("exit (3) in a queued kernel: the program exits with 3",
	 ok && WIFEXITED (st) && WEXITSTATUS (st) == 3);
}

/* The compiler's static dimensions, from our mkoffload's descriptor
   (version 3): they take priority over libgomp's.  */
static void
acc_static_dims (void *tv)
{
  if (our_desc->desc_version < 3)
    {
      unsupported ("static OpenACC dimensions (a descriptor of version"
		   " 2)");
      return;
    }
  struct ok_oacc_dims *od = calloc (nfuncs, sizeof *od);
  static struct ok_tgt_desc targets[4];
  static struct ok_openmp_target copy;
  if (od == NULL)
    return;
  od[0] = (struct ok_oacc_dims) { { 7, 3, 0 }, OK_OACC_FN };
  for (size_t i = 1; i < nfuncs; i++)
    od[i] = (struct ok_oacc_dims) { { 0, 2, 0 }, OK_OACC_FN };
  copy = *our_desc;
  for (uint32_t i = 0; i < our_desc->num_targets && i < 4; i++)
    {
      targets[i] = *ok_desc_target_at (our_desc, i);
      targets[i].oacc_dims = od;
    }
  copy.targets = targets;
  struct ok_addr_pair *t = load (0, &copy);
  check ("an image with static OpenACC dimensions loads", t != NULL);
  if (t != NULL)
    {
      struct dispatch d;
      check ("static dimensions 7, 3: as fixed",
	     acc_run ((void *) t[0].start, tv, 0, 0, 0, &d)
	     && acc_geometry_is (&d, 7, 3));
      check ("static dimensions 7, 3 over libgomp's 20, 5",
	     acc_run ((void *) t[0].start, tv, 20, 5, 0, &d)
	     && acc_geometry_is (&d, 7, 3));
      if (nfuncs > 1)
	check ("static workers 2, libgomp's 9 gangs",
	       acc_run ((void *) t[1].start, tv, 9, 0, 0, &d)
	       && acc_geometry_is (&d, 9, 2));
      p_unload_image (0, ours->version, &copy);
      free (t);
    }
  free (od);
}

/* GCC's own target data (gcn_image_desc of GCC 12's to 16's
   plugin-gcn.c): the kernels' oacc_dims.  */
struct gcc_kernel
{
  const char *name;
  int oacc_dims[3];
  int sgpr_count, vgpr_count;
};

struct gcc_image
{
  const void *code;
  unsigned kernel_count;
  struct gcc_kernel *kernels;
  unsigned counts[2];		/* GCC 14+: indirect functions first.  */
};

/* The static dimensions of an image in GCC's own format, from its
   kernels' oacc_dims.  */
static void
acc_gcc_static_dims (void *tv)
{
  if (gccs == NULL)
    {
      unsupported ("static OpenACC dimensions of GCC's image format (not"
		   " built)");
      return;
    }
  const struct ok_host_table *h = gccs->host_table;
  size_t nf = (size_t) (h->funcs_end - h->funcs);
  size_t nv = (size_t) (h->vars_end - h->vars) / 2;
  /* The same layout up to the kernels in every version; what follows
     is copied as it is.  */
  static struct gcc_image copy;
  copy = *(const struct gcc_image *) gccs->target_data;
  struct gcc_kernel *k = calloc (copy.kernel_count, sizeof *k);
  if (k == NULL)
    return;
  memcpy (k, copy.kernels, copy.kernel_count * sizeof *k);
  for (unsigned i = 0; i < copy.kernel_count; i++)
    {
      k[i].oacc_dims[0] = 6;
      k[i].oacc_dims[1] = 4;
      k[i].oacc_dims[2] = 64;
    }
  copy.kernels = k;
  struct ok_addr_pair *t = harness_load (0, gccs->version, &copy,
					 nf + nv + 1);
  check ("GCC's image with static OpenACC dimensions loads", t != NULL);
  if (t != NULL)
    {
      struct dispatch d;
      check ("GCC's image: static dimensions 6, 4 over libgomp's 2, 2",
	     acc_run ((void *) t[0].start, tv, 2, 2, 0, &d)
	     && acc_geometry_is (&d, 6, 4));
      p_unload_image (0, gccs->version, &copy);
      free (t);
    }
  free (k);
}

static void
acc_properties (void)
{
  union acc_prop v = acc_property (0, 1);	/* GOACC_PROPERTY_MEMORY */
  check ("property memory: the size of the device-memory region",
	 v.val == (size_t) 16 << 30);
  v = acc_property (0, 2);			/* GOACC_PROPERTY_FREE_MEMORY */
  check ("property free memory: none (nor in GCC's plugin)", v.val == 0);
  v = acc_property (0, 0x10001);
  check ("property name: the agent's", v.ptr != NULL
	 && strcmp (v.ptr, agent_name[0]) == 0);
  v = acc_property (0, 0x10002);
  check ("property vendor: AMD", v.ptr != NULL && strcmp (v.ptr, "AMD") == 0);
  v = acc_property (0, 0x10003);
  check ("property driver: the runtime's version, in GCC's words",
	 v.ptr != NULL && strcmp (v.ptr, "HSA Runtime 1.1") == 0);
}

/* A queue whose kernel faults, and a queue the runtime cannot make.  */
static void
acc_failures (void *fn, void *tv)
{
  int e = errors_now ();
  f_fail ("hsa_queue_create");
  struct goacc_asyncqueue *q = acc_construct (0);
  f_fail (NULL);
  check ("no HSA queue: no queue, one error",
	 q == NULL && error_says (e, "hsa_queue_create", NULL));
  q = acc_construct (0);
  if (q == NULL)
    return;
  e = errors_now ();
  f_fail ("kernel_dispatch");
  bool queued = acc_queue_run (q, fn, tv, 1, 1);
  bool synced = acc_synchronize (q);
  f_fail (NULL);
  check ("a queued kernel faults: the wait fails, one error",
	 queued && !synced && error_says (e, "did not complete", NULL));
}

void
child_openacc (void)
{
  offloadkit_standin_libgomp_gcc = 14;
  /* Through void (*) (void), which any function pointer may become.  */
  f_dispatch_queue = (uint64_t (*) (int)) (void (*) (void))
    harness_fake_fn ("fakehsa_dispatch_queue");
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  bool ok = num (0) == 1 && describe_ours () && p_init_device (0);
  check ("device 0 starts", ok);
  if (!ok)
    return;
  check ("the gcn plugin offers OpenACC with a GPU",
	 (p_get_caps () & OK_GOMP_CAP_OPENACC_200) != 0);
  check ("the OpenACC entry points", acc_syms ());
  if (acc_thread_data == NULL || acc_property == NULL)
    return;
  standin_acc_tls = acc_thread_data (0);
  check ("thread data", standin_acc_tls != NULL);
  acc_properties ();

  struct ok_addr_pair *t = load (0, our_desc);
  void *tv = p_alloc (0, 64);
  check ("image loads", t != NULL && tv != NULL);
  if (t == NULL || tv == NULL)
    return;
  long bad = bad_calls ();
  const struct ok_tgt_desc *td = target_for (our_desc, agent_arch[0]);
  void *fn = (void *) t[0].start;
  acc_launches (fn, tv, td);
  acc_queues (fn, tv, td);
  acc_exit_on_queue (fn, tv, td);
  p_unload_image (0, ours->version, our_desc);
  free (t);
  acc_static_dims (tv);
  acc_gcc_static_dims (tv);
  check_no_bad_calls ("no invalid runtime calls", bad);
  t = load (0, our_desc);
  if (t != NULL)
    acc_failures ((void *) t[0].start, tv);
  free (t);
}

/* libgomp 12 passes each argument's device address (NULL: its host
   address) in host memory: the kernel gets a device block of them, which
   outlives a queued launch until the launch has run.  */
void
child_openacc_12 (void)
{
  offloadkit_standin_libgomp_gcc = 12;
  bool ok = p_get_num_devices () == 1 && describe_ours ()
	    && p_init_device (0) && acc_syms ();
  check ("device 0 starts", ok);
  if (!ok)
    return;
  standin_acc_tls = acc_thread_data (0);
  /* Registered as a program of GCC 12 registers it, whatever GCC built
     the test library: libgomp 12 takes library version 1 only.  */
  struct ok_addr_pair *t
    = harness_load (0, OK_GOMP_VERSION_PACK (1, OK_DEV_VERSION), our_desc,
		    nfuncs + nvars + 1);
  void *dp = p_alloc (0, 64);
  if (t == NULL || dp == NULL)
    {
      check ("image loads", false);
      return;
    }
  void *fn = (void *) t[0].start;
  int host_var;
  void *hostaddrs[2] = { NULL, &host_var };
  void *devaddrs[2] = { dp, NULL };
  unsigned dims[3] = { 2, 1, 0 };
  struct dispatch d;
  int before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, acc_exec ((void (*) (void *)) fn, 2,
					hostaddrs, devaddrs, dims, NULL));
  uint64_t block[2] = { 0, 0 };
  bool ran = !fatal && f_dispatch_count () == before + 1
	     && get_dispatch (before, &d);
  if (ran)
    p_dev2host (0, block, (void *) (uintptr_t) d.kargs[0], sizeof block);
  check ("a device block of the arguments' addresses: the device's, else"
	 " the host's",
	 ran && acc_geometry_is (&d, 2, 1) && block[0] == (uintptr_t) dp
	 && block[1] == (uintptr_t) &host_var);

  struct goacc_asyncqueue *q = acc_construct (0);
  if (q == NULL)
    return;
  /* A block larger than the pool's largest piece (64 KiB) is an
     allocation of its own; the team arenas are those of the launch
     before.  */
  enum { MANY = 10000 };
  void **many_host = calloc (MANY, sizeof (void *));
  void **many_dev = calloc (MANY, sizeof (void *));
  if (many_host == NULL || many_dev == NULL)
    return;
  long mem = f_outstanding ("mem");
  f_gate (1);
  before = f_dispatch_count ();
  STANDIN_CATCH_FATAL (fatal, acc_async_exec ((void (*) (void *)) fn, MANY,
					      many_host, many_dev, dims, NULL,
					      q));
  pause_100ms ();
  bool pending = !fatal && acc_test (q) == 0
		 && f_outstanding ("mem") == mem + 1;
  f_gate (0);
  bool done = acc_synchronize (q);
  ran = done && f_dispatch_count () == before + 1
	&& get_dispatch (before, &d);
  check ("queued: the block is made before the launch runs",
	 pending && ran && d.kargs[0] != 0);
  check ("queued: the block is freed once the launch has run",
	 acc_destruct (q) && f_outstanding ("mem") == mem);
  free (many_host);
  free (many_dev);
  p_free (0, dp);
  free (t);
}
