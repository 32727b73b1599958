/* cuda-harness: OpenACC on the CUDA backend, through libgomp's
   GOMP_OFFLOAD_openacc_* entry points: the capability, launches and their
   geometry (dimensions fixed by the compiler, given by libgomp, or chosen
   by the plugin as GCC's plugin does, GOMP_OPENACC_DIM's), GCC's resource
   checks, queues (order, joins, callbacks, copies, frees inside
   callbacks), the synchronous copies waiting for the queues, properties
   and CUDA handles.  Plays libgomp 12 (the stand-in's default), whose
   launches pass the argument block's pieces.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <acc_prof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda-harness.h"
#include "gcc-nvptx-image.h"

/* The entry points, looked up in the plugin.  */
static void *(*acc_thread_data) (int);
static void (*acc_exec) (void (*) (void *), size_t, void **, void **,
			 unsigned *, void *);
static void (*acc_async_exec) (void (*) (void *), size_t, void **, void **,
			       unsigned *, void *, void *);
static void *(*acc_construct) (int);
static bool (*acc_destruct) (void *);
static int (*acc_test) (void *);
static bool (*acc_synchronize) (void *);
static bool (*acc_serialize) (void *, void *);
static void (*acc_callback) (void *, void (*) (void *), void *);
static bool (*acc_host2dev) (int, void *, const void *, size_t, void *);
static bool (*acc_dev2host) (int, void *, const void *, size_t, void *);
union acc_prop_value
{
  void *ptr;
  uintptr_t val;
};
static union acc_prop_value (*acc_property) (int, int);
static void *(*acc_cuda_device) (void);
static void *(*acc_cuda_context) (void);
static void *(*acc_cuda_stream) (void *);
static int (*acc_cuda_set_stream) (void *, void *);

static bool
acc_entries (void)
{
  bool ok = true;
#define ACC_SYM(var, name) \
  ok &= standin_plugin_sym ("GOMP_OFFLOAD_openacc_" name, &var)
  ACC_SYM (acc_thread_data, "create_thread_data");
  ACC_SYM (acc_exec, "exec");
  ACC_SYM (acc_async_exec, "async_exec");
  ACC_SYM (acc_construct, "async_construct");
  ACC_SYM (acc_destruct, "async_destruct");
  ACC_SYM (acc_test, "async_test");
  ACC_SYM (acc_synchronize, "async_synchronize");
  ACC_SYM (acc_serialize, "async_serialize");
  ACC_SYM (acc_callback, "async_queue_callback");
  ACC_SYM (acc_host2dev, "async_host2dev");
  ACC_SYM (acc_dev2host, "async_dev2host");
  ACC_SYM (acc_property, "get_property");
  ACC_SYM (acc_cuda_device, "cuda_get_current_device");
  ACC_SYM (acc_cuda_context, "cuda_get_current_context");
  ACC_SYM (acc_cuda_stream, "cuda_get_stream");
  ACC_SYM (acc_cuda_set_stream, "cuda_set_stream");
#undef ACC_SYM
  return ok;
}

/* The image: three OpenACC regions.  A_STATIC's dimensions are fixed by
   the compiler (4 gangs, 2 workers, vector 32), A_DYNAMIC's are left to
   run time, A_SMALL (at most 64 threads a block) has only its gangs
   fixed.  */
#define ACC_NFUNCS 3
static void acc_host_static (void *v) { (void) v; }
static void acc_host_dynamic (void *v) { (void) v; }
static void acc_host_small (void *v) { (void) v; }
static void *const acc_funcs[] = { (void *) acc_host_static,
				   (void *) acc_host_dynamic,
				   (void *) acc_host_small };
static const char *const acc_names[ACC_NFUNCS] = { "a_static", "a_dynamic",
						   "a_small" };
static const struct ok_oacc_dims acc_dims[ACC_NFUNCS] = {
  { { 4, 2, 32 }, OK_OACC_FN }, { { 0, 0, 0 }, OK_OACC_FN },
  { { 1, 0, 0 }, OK_OACC_FN } };
static const char acc_ptx[] =
  "// Written for offloadkit's cuda-harness.\n"
  ".version 7.0\n"
  ".target sm_90\n"
  ".address_size 64\n"
  ".visible .entry a_static (.param .u64 %in_ar0)\n"
  "{\n"
  "  ret;\n"
  "}\n"
  ".visible .entry a_dynamic (.param .u64 %in_ar0)\n"
  "{\n"
  "  ret;\n"
  "}\n"
  ".visible .entry a_small (.param .u64 %in_ar0)\n"
  "  .maxntid 64, 1, 1\n"
  "{\n"
  "  ret;\n"
  "}\n";

static struct ok_tgt_desc acc_tgt;
static struct ok_openmp_target acc_desc;
static struct ok_addr_pair acc_tab[ACC_NFUNCS + 1];

static bool
acc_load (void)
{
  acc_tgt = (struct ok_tgt_desc) {
    .device_type = OK_GOMP_DEVICE_NVIDIA_PTX, .image_format = OK_IMAGE_PTX,
    .image_start = (const unsigned char *) acc_ptx,
    .image_end = (const unsigned char *) acc_ptx + sizeof acc_ptx,
    .num_funcs = ACC_NFUNCS, .func_names = acc_names,
    .oacc_dims = acc_dims };
  acc_desc = (struct ok_openmp_target) {
    .host = { acc_funcs, acc_funcs + ACC_NFUNCS, NULL, NULL },
    .magic = OK_DESC_MAGIC, .desc_version = OK_DESC_VERSION,
    .dev_version = OK_DEV_VERSION, .num_targets = 1, .targets = &acc_tgt };
  struct ok_addr_pair *t = harness_load (0, version, &acc_desc,
					 ACC_NFUNCS + 1);
  if (t == NULL)
    return false;
  memcpy (acc_tab, t, sizeof acc_tab);
  free (t);
  return true;
}

static void (*acc_fn (int i)) (void *)
{
  return (void (*) (void *)) (uintptr_t) acc_tab[i].start;
}

/* The last launch, when there is a new one since BEFORE launches.  */
static bool
acc_last_launch (int before, struct launch *l)
{
  int n = f_launch_count ();
  return n == before + 1 && get_launch (n - 1, l);
}

/* Run region I synchronously with DIMS and one argument, device address
   ARG; whether it launched, into *L.  */
static bool
acc_run (int i, unsigned d0, unsigned d1, unsigned d2, void *arg,
	 struct launch *l)
{
  unsigned dims[3] = { d0, d1, d2 };
  void *host = NULL;
  int before = f_launch_count ();
  acc_exec (acc_fn (i), 1, &host, &arg, dims, NULL);
  return acc_last_launch (before, l);
}

static bool
geometry (const struct launch *l, unsigned gangs, unsigned workers,
	  unsigned vector)
{
  return (l->grid[0] == gangs && l->grid[1] == 1 && l->grid[2] == 1
	  && l->block[0] == vector && l->block[1] == workers
	  && l->block[2] == 1);
}

static void
test_acc_launches (void)
{
  void *arg = p_alloc (0, 64);
  struct launch l;
  bool ok = acc_run (0, 0, 0, 0, arg, &l);
  check ("openacc: launch with the compiler's dimensions", ok);
  check ("openacc: grid (4, 1, 1), block (32, 2, 1)",
	 ok && geometry (&l, 4, 2, 32));
  check ("openacc: synchronous launch on the legacy stream",
	 ok && l.stream == 0);
  /* libgomp 12 passes the argument's device address: the kernel's one
     parameter is a block holding it.  */
  void *block = ok ? (void *) (uintptr_t) l.params[0] : NULL;
  void *in_block = NULL;
  check ("openacc: the parameter is a block of the argument addresses",
	 block != NULL
	 && p_dev2host (0, &in_block, block, sizeof in_block)
	 && in_block == arg);

  ok = acc_run (1, 8, 4, 64, arg, &l);
  check ("openacc: dimensions given at the launch: grid 8, block (64, 4)",
	 ok && geometry (&l, 8, 4, 64));
  ok = acc_run (0, 99, 9, 128, arg, &l);
  check ("openacc: the compiler's dimensions win over the launch's",
	 ok && geometry (&l, 4, 2, 32));

  /* Chosen as GCC's nvptx_exec does with the driver's advice (the fake:
     blocks of 1024 threads, 2 a multiprocessor, 4 multiprocessors):
     gangs 2 * 8 * (1024 / 32), workers 1024 / 32, a warp's vector.  */
  ok = acc_run (1, 0, 0, 0, arg, &l);
  check ("openacc: chosen dimensions: 512 gangs, 32 workers, vector 32",
	 ok && geometry (&l, 512, 32, 32));
  ok = acc_run (1, 0, 8, 0, arg, &l);
  check ("openacc: chosen gangs and vector, 8 workers given",
	 ok && geometry (&l, 512, 8, 32));
  standin_acc_default_dims[0] = 16;
  standin_acc_default_dims[1] = 2;
  ok = acc_run (1, 0, 0, 0, arg, &l);
  standin_acc_default_dims[0] = standin_acc_default_dims[1] = 0;
  check ("openacc: GOMP_OPENACC_DIM=16:2 gives 16 gangs of 2 workers",
	 ok && geometry (&l, 16, 2, 32));
  ok = acc_run (2, 0, 0, 0, arg, &l);
  check ("openacc: the driver's advice within a kernel's 64 threads",
	 ok && l.grid[0] == 1 && l.block[0] == 32 && l.block[1] == 2);

  /* GCC's resource checks, in its words; nothing launched.  */
  int errs = errors_now ();
  int before = f_launch_count ();
  volatile bool fatal;
  unsigned dims[3] = { 0, 4, 32 };
  void *host = NULL;
  STANDIN_CATCH_FATAL (fatal, acc_exec (acc_fn (2), 1, &host, &arg, dims,
					NULL));
  check ("openacc: too many threads for the kernel: fatal", fatal);
  check ("openacc: too many threads: GCC's message",
	 error_says (errs, "The Nvidia accelerator has insufficient"
		     " resources to launch 'a_small' with num_workers = 4"
		     " and vector_length = 32; recompile the program with"
		     " 'num_workers = x and vector_length = y' on that"
		     " offloaded region or '-fopenacc-dim=:x:y' where"
		     " x * y <= 64.", NULL));
  errs = errors_now ();
  unsigned dims2[3] = { 1, 16, 64 };
  STANDIN_CATCH_FATAL (fatal, acc_exec (acc_fn (1), 1, &host, &arg, dims2,
					NULL));
  check ("openacc: 16 workers of vector 64: fatal", fatal);
  check ("openacc: too many barriers: GCC's message",
	 error_says (errs, "insufficient barrier resources to launch"
		     " 'a_dynamic' with num_workers = 16 and vector_length ="
		     " 64", "where x <= 15", "'-fopenacc-dim=::32'", NULL));
  check ("openacc: refused launches start nothing",
	 f_launch_count () == before);

  /* Profiling: the launch events around the kernel.  */
  standin_acc_prof = true;
  standin_acc_events_reset ();
  ok = acc_run (0, 0, 0, 0, arg, &l);
  struct standin_acc_events ev = standin_acc_events_now ();
  standin_acc_prof = false;
  check ("openacc: launch start and end events",
	 ok && ev.count[acc_ev_enqueue_launch_start] == 1
	 && ev.count[acc_ev_enqueue_launch_end] == 1);
  check ("openacc: the events name the kernel and its dimensions",
	 strcmp (ev.kernel, "a_static") == 0 && ev.dims[0] == 4
	 && ev.dims[1] == 2 && ev.dims[2] == 32
	 && ev.device_api == acc_device_api_cuda);
  p_free (0, arg);
}

/* Callbacks.  */

struct acc_cb
{
  int ran;
  pthread_t thread;
  void *free_ptr;		/* Device memory to free in it.  */
  bool freed;
};

static void
acc_cb_fn (void *data)
{
  struct acc_cb *cb = data;
  cb->thread = pthread_self ();
  if (cb->free_ptr != NULL)
    cb->freed = p_free (0, cb->free_ptr);
  __atomic_store_n (&cb->ran, 1, __ATOMIC_RELEASE);
}

static bool
acc_cb_wait (struct acc_cb *cb)
{
  for (int i = 0; i < 1000 && !__atomic_load_n (&cb->ran, __ATOMIC_ACQUIRE);
       i++)
    {
      struct timespec ms = { 0, 10 * 1000 * 1000 };
      nanosleep (&ms, NULL);
    }
  return cb->ran;
}

static void
pause_ms (long ms)
{
  struct timespec t = { ms / 1000, ms % 1000 * 1000 * 1000 };
  nanosleep (&t, NULL);
}

static double
now_s (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void *
open_gate_later (void *arg)
{
  (void) arg;
  pause_ms (300);
  f_gate (0);
  return NULL;
}

static void
test_acc_queues (void)
{
  long streams = f_outstanding ("stream");
  void *q1 = acc_construct (0);
  void *q2 = acc_construct (0);
  check ("openacc: a queue is a stream of its own",
	 q1 != NULL && q2 != NULL && f_outstanding ("stream") == streams + 2);
  void *arg = p_alloc (0, 64);
  void *host = NULL;
  unsigned dims[3] = { 0, 0, 0 };

  /* Order: a launch held back by the gate keeps the queue busy, and the
     copy and callback queued after it waiting.  */
  int val = 42, got = 0;
  void *dval = p_alloc (0, sizeof val);
  p_host2dev (0, dval, &val, sizeof val);
  f_gate (1);
  int before = f_launch_count ();
  acc_async_exec (acc_fn (0), 1, &host, &arg, dims, NULL, q1);
  check ("openacc: copy queued behind the launch",
	 acc_dev2host (0, &got, dval, sizeof got, q1));
  struct launch l;
  bool ok = acc_last_launch (before, &l);
  check ("openacc: queued launch on the queue's stream",
	 ok && l.stream == (uintptr_t) acc_cuda_stream (q1));
  check ("openacc: the queue's stream is a blocking one (as GCC's)",
	 ok && l.stream_flags == 0);
  struct acc_cb cb = { 0 };
  acc_callback (q1, acc_cb_fn, &cb);
  pause_ms (200);
  check ("openacc: test says busy while the launch runs", acc_test (q1) == 0);
  check ("openacc: the callback waits for the launch", cb.ran == 0);
  check ("openacc: the copy waits for the launch", got == 0);
  /* Join: the later queue waits for the first's work so far.  */
  long events = f_outstanding ("event");
  check ("openacc: serialize", acc_serialize (q1, q2));
  check ("openacc: the joined queue waits for the first",
	 acc_test (q2) == 0);
  check ("openacc: no event left after a join",
	 f_outstanding ("event") == events);
  f_gate (0);
  check ("openacc: synchronize", acc_synchronize (q1));
  check ("openacc: the callback ran after the launch", acc_cb_wait (&cb));
  check ("openacc: the copy done by then", got == 42);
  /* A launch on a queue is one driver call (its dimensions chosen at the
     kernel's first launch; the context known from the last).  Without
     arguments: under libgomp 12, which passes their host addresses, a
     block of them is copied to the device first (and freed after).  */
  const char *const others[] = { "cuCtxGetCurrent", "cuCtxSetCurrent",
    "cuOccupancyMaxPotentialBlockSize", "cuStreamSynchronize",
    "cuStreamQuery", "cuEventRecord" };
  long other_calls[6], launch_calls = f_calls ("cuLaunchKernel");
  for (int i = 0; i < 6; i++)
    other_calls[i] = f_calls (others[i]);
  acc_async_exec (acc_fn (0), 0, NULL, NULL, dims, NULL, q1);
  bool one = f_calls ("cuLaunchKernel") == launch_calls + 1;
  for (int i = 0; i < 6; i++)
    if (f_calls (others[i]) != other_calls[i])
      {
	fprintf (stderr, "  (%ld more calls of %s)\n",
		 f_calls (others[i]) - other_calls[i], others[i]);
	one = false;
      }
  check ("openacc: a queued launch is one driver call", one);
  check ("openacc: synchronize after it", acc_synchronize (q1));
  p_free (0, dval);
  check ("openacc: on a thread of the driver's",
	 cb.ran && !pthread_equal (cb.thread, pthread_self ()));
  check ("openacc: test says done after", acc_test (q1) == 1
	 && acc_test (q2) == 1);

  /* A synchronous copy waits for the work queued so far, as on the
     legacy stream with GCC's plugin.  */
  f_gate (1);
  acc_async_exec (acc_fn (0), 1, &host, &arg, dims, NULL, q1);
  pthread_t opener;
  pthread_create (&opener, NULL, open_gate_later, NULL);
  int v = 7;
  double t0 = now_s ();
  ok = p_host2dev (0, arg, &v, sizeof v);
  double waited = now_s () - t0;
  pthread_join (opener, NULL);
  check ("openacc: synchronous copy waits for the queues",
	 ok && waited > 0.2);
  check ("openacc: synchronize after", acc_synchronize (q1));

  /* Copies on the queue.  */
  char in[100], out[100];
  for (int i = 0; i < 100; i++)
    in[i] = (char) i;
  memset (out, 0, sizeof out);
  void *buf = p_alloc (0, sizeof in);
  long h2d = f_calls ("cuMemcpyHtoDAsync_v2");
  long d2h = f_calls ("cuMemcpyDtoHAsync_v2");
  ok = (acc_host2dev (0, buf, in, sizeof in, q2)
	&& acc_dev2host (0, out, buf, sizeof out, q2)
	&& acc_synchronize (q2));
  check ("openacc: queued copies there and back",
	 ok && memcmp (in, out, sizeof in) == 0);
  check ("openacc: as asynchronous copies",
	 f_calls ("cuMemcpyHtoDAsync_v2") == h2d + 1
	 && f_calls ("cuMemcpyDtoHAsync_v2") == d2h + 1);
  p_free (0, buf);

  /* A free inside a callback (libgomp's unmapping callbacks do) may not
     call the driver: it is done by the next call from elsewhere.  */
  long mem = f_outstanding ("mem");
  int errs = errors_now ();
  struct acc_cb fcb = { 0 };
  fcb.free_ptr = p_alloc (0, 1 << 20);
  acc_callback (q1, acc_cb_fn, &fcb);
  check ("openacc: free inside a callback",
	 acc_cb_wait (&fcb) && fcb.freed && errors_now () == errs);
  void *again = p_alloc (0, 1 << 20);
  check ("openacc: the deferred free done at the next allocation",
	 again != NULL && f_outstanding ("mem") == mem + 1);
  p_free (0, again);

  /* CUDA handles.  */
  check ("openacc: the queue's stream", acc_cuda_stream (q1) != NULL
	 && acc_cuda_stream (q1) != acc_cuda_stream (q2));
  int (*stream_create) (void **, unsigned) = (int (*) (void **, unsigned))
    harness_fake_fn ("cuStreamCreate");
  void *mine = NULL;
  streams = f_outstanding ("stream");
  check ("openacc: acc_set_cuda_stream",
	 stream_create (&mine, 0) == 0 && acc_cuda_set_stream (q2, mine) == 1);
  check ("openacc: the queue's old stream destroyed, the new one its",
	 f_outstanding ("stream") == streams && acc_cuda_stream (q2) == mine);
  before = f_launch_count ();
  acc_async_exec (acc_fn (0), 1, &host, &arg, dims, NULL, q2);
  check ("openacc: launches go to the new stream",
	 acc_last_launch (before, &l) && l.stream == (uintptr_t) mine);

  streams = f_outstanding ("stream");
  check ("openacc: destruct", acc_destruct (q1) && acc_destruct (q2));
  check ("openacc: the queues' streams destroyed",
	 f_outstanding ("stream") == streams - 2);
  p_free (0, arg);
}

static void
test_acc_properties (void)
{
  union acc_prop_value v = acc_property (0, 1);
  check ("openacc: memory: the device's 8 GiB", v.val == (8ul << 30));
  size_t free0 = acc_property (0, 2).val;
  void *p = p_alloc (0, 16 << 20);
  size_t free1 = acc_property (0, 2).val;
  check ("openacc: free memory, less after an allocation",
	 free0 > 0 && free0 <= (8ul << 30) && free1 + (16 << 20) <= free0);
  p_free (0, p);
  const char *name = acc_property (0, 0x10001).ptr;
  check ("openacc: name", name != NULL && strstr (name, "Fake") != NULL);
  const char *vendor = acc_property (0, 0x10002).ptr;
  check ("openacc: vendor Nvidia", vendor != NULL
	 && strcmp (vendor, "Nvidia") == 0);
  const char *driver = acc_property (0, 0x10003).ptr;
  check ("openacc: driver as GCC says it",
	 driver != NULL && strcmp (driver, "CUDA Driver 13.0") == 0);
  check ("openacc: an unknown property has no value",
	 acc_property (0, 0x10004).ptr == NULL);

  int *cudev = acc_cuda_device ();
  check ("openacc: the thread's CUdevice", cudev != NULL && *cudev == 0);
  int (*ctx_get) (void **) = (int (*) (void **))
    harness_fake_fn ("cuCtxGetCurrent");
  void *cur = NULL;
  check ("openacc: its primary context",
	 acc_cuda_context () != NULL && ctx_get (&cur) == 0
	 && cur == acc_cuda_context ());
}

/* An image in GCC's own format: the dimensions of its function
   descriptors are the compiler's.  */
static void
test_acc_gcc_image (void)
{
  const unsigned gver = OK_GOMP_VERSION_PACK (1, OK_GCC_DEV_VERSION_NVPTX);
  struct ok_gcc_ptx_obj objs[1] = { { acc_ptx, sizeof acc_ptx } };
  static const struct ok_gcc_fn_launch fns[] = {
    { "a_static", { 6, 3, 32 } }, { "a_dynamic", { 0, 0, 0 } } };
  struct ok_gcc_nvptx_data g = { objs, 1, NULL, 0, fns, 2, 0 };
  struct ok_addr_pair *t = NULL;
  int n = p_load_image (0, gver, &g, &t);
  check ("openacc: GCC's image format loads", n == 3 && t != NULL);
  if (n != 3 || t == NULL)
    return;
  void *arg = p_alloc (0, 8);
  void *host = NULL;
  unsigned dims[3] = { 0, 0, 0 };
  struct launch l;
  int before = f_launch_count ();
  acc_exec ((void (*) (void *)) (uintptr_t) t[0].start, 1, &host, &arg,
	    dims, NULL);
  check ("openacc: GCC's image: its dimensions, grid 6, block (32, 3)",
	 acc_last_launch (before, &l) && geometry (&l, 6, 3, 32));
  before = f_launch_count ();
  unsigned given[3] = { 2, 5, 32 };
  acc_exec ((void (*) (void *)) (uintptr_t) t[1].start, 1, &host, &arg,
	    given, NULL);
  check ("openacc: GCC's image: dimensions left to run time",
	 acc_last_launch (before, &l) && geometry (&l, 2, 5, 32));
  p_free (0, arg);
  free (t);
  check ("openacc: GCC's image unloads", p_unload_image (0, gver, &g));
}

void
test_openacc (void)
{
  long bad = bad_calls ();
  check ("openacc: the nvptx plugin offers OpenACC on CUDA devices",
	 (p_get_caps () & OK_GOMP_CAP_OPENACC_200) != 0);
  if (!acc_entries () || !acc_load ())
    {
      check ("openacc: entry points and image", false);
      return;
    }
  standin_acc_tls = acc_thread_data (0);
  check ("openacc: thread data", standin_acc_tls != NULL);
  test_acc_launches ();
  test_acc_queues ();
  test_acc_properties ();
  test_acc_gcc_image ();
  standin_acc_tls = NULL;
  check ("openacc: unload", p_unload_image (0, version, &acc_desc));
  check_no_bad_calls ("openacc: no invalid driver calls", bad);
}

/* libgomp 13 and newer map the argument block themselves and pass its
   device address: the kernel's parameter is that address, and none
   (0) without arguments.  */
void
child_openacc14 (void)
{
  check ("init", p_get_num_devices () == 1 && p_init_device (0));
  if (!acc_entries () || !acc_load ())
    {
      check ("entry points and image", false);
      return;
    }
  standin_acc_tls = acc_thread_data (0);
  void *block = p_alloc (0, 16);
  unsigned dims[3] = { 0, 0, 0 };
  struct launch l;
  int before = f_launch_count ();
  acc_exec (acc_fn (0), 2, NULL, (void **) block, dims, NULL);
  check ("the parameter is libgomp's block",
	 acc_last_launch (before, &l) && l.params[0] == (uintptr_t) block
	 && geometry (&l, 4, 2, 32));
  before = f_launch_count ();
  acc_exec (acc_fn (0), 0, NULL, NULL, dims, NULL);
  check ("no arguments, no block",
	 acc_last_launch (before, &l) && l.params[0] == 0);
  void *q = acc_construct (0);
  before = f_launch_count ();
  acc_async_exec (acc_fn (1), 2, NULL, (void **) block, dims, NULL, q);
  check ("queued, the same",
	 acc_last_launch (before, &l) && l.params[0] == (uintptr_t) block
	 && l.stream == (uintptr_t) acc_cuda_stream (q));
  check ("queue done", acc_synchronize (q) && acc_destruct (q));
  p_free (0, block);
  standin_acc_tls = NULL;
  check ("unload", p_unload_image (0, version, &acc_desc));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* A driver older than CUDA 10 (the fake's libcuda-old.so.1, beside the
   fake): no cuLaunchHostFunc, no occupancy calculator.  */
bool
open_old_driver (void)
{
  static struct harness old;
  static char path[4096];
  const char *dir = strrchr (harness->fake_path, '/');
  int len = dir != NULL ? (int) (dir - harness->fake_path + 1) : 0;
  snprintf (path, sizeof path, "%.*slibcuda-old.so.1", len,
	    harness->fake_path);
  old = *harness;
  old.fake_path = path;
  harness = &old;
  return harness_open ();
}

/* Then callbacks are queued with cuStreamAddCallback, and the OpenACC
   dimensions left to the plugin are GCC's defaults from the device's
   limits (1024 threads a block, 2048 a multiprocessor, 4 of them):
   8 gangs, 32 workers, vector 32, within the kernel's threads.  */
void
child_openacc_old_driver (void)
{
  check ("init", p_get_num_devices () == 1 && p_init_device (0));
  if (!acc_entries () || !acc_load ())
    {
      check ("entry points and image", false);
      return;
    }
  standin_acc_tls = acc_thread_data (0);
  void *arg = p_alloc (0, 16);
  struct launch l;
  check ("chosen dimensions: 8 gangs, 32 workers, vector 32",
	 acc_run (1, 0, 0, 0, arg, &l) && geometry (&l, 8, 32, 32));
  check ("chosen within the kernel's 64 threads: 2 workers",
	 acc_run (2, 0, 0, 0, arg, &l) && geometry (&l, 1, 2, 32));
  standin_acc_default_dims[0] = 16;
  standin_acc_default_dims[1] = 64;
  check ("GOMP_OPENACC_DIM=16:64: 16 gangs, workers as the device allows",
	 acc_run (1, 0, 0, 0, arg, &l) && geometry (&l, 16, 32, 32));
  standin_acc_default_dims[0] = standin_acc_default_dims[1] = 0;

  void *q = acc_construct (0);
  long added = f_calls ("cuStreamAddCallback");
  struct acc_cb cb = { 0 };
  cb.free_ptr = p_alloc (0, 1 << 20);
  long mem = f_outstanding ("mem");
  int errs = errors_now ();
  acc_callback (q, acc_cb_fn, &cb);
  check ("callback through cuStreamAddCallback",
	 acc_cb_wait (&cb) && f_calls ("cuStreamAddCallback") == added + 1);
  check ("free inside it deferred", cb.freed && errors_now () == errs
	 && f_outstanding ("mem") == mem);
  check ("queue done", acc_synchronize (q) && acc_destruct (q));
  p_free (0, arg);
  standin_acc_tls = NULL;
  check ("unload", p_unload_image (0, version, &acc_desc));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}
