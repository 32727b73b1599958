/* libgomp's side of the plugin interface for the test programs; see
   gomp-standin.h.  */

#include "gomp-standin.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <acc_prof.h>

static const char *program = "gomp-standin";
bool standin_verbose;
bool standin_show_errors;

void
standin_init (const char *name)
{
  program = name;
}

/* ------------------------------------------------------------------ */
/* Checks.  */

int check_failures;
const char *standin_check_prefix = "";

void
check (const char *name, bool ok)
{
  printf ("%s: %s%s\n", ok ? "PASS" : "FAIL", standin_check_prefix, name);
  fflush (stdout);
  if (!ok)
    check_failures++;
}

void
unsupported (const char *name)
{
  printf ("UNSUPPORTED: %s%s\n", standin_check_prefix, name);
  fflush (stdout);
}

int
check_summary (void)
{
  printf ("# %d failure%s\n", check_failures,
	  check_failures == 1 ? "" : "s");
  return check_failures ? 1 : 0;
}

void
standin_in_child (const char *name, bool (*body) (void *), void *arg,
		  bool stderr_empty)
{
  char errfile[256];
  snprintf (errfile, sizeof errfile, "/tmp/%s-XXXXXX", program);
  int fd = mkstemp (errfile);
  if (fd < 0)
    {
      check (name, false);
      return;
    }
  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* A child that hangs fails its checks instead of stalling every
	 later one.  */
      alarm (300);
      dup2 (fd, 2);
      check_failures = 0;
      char prefix[128];
      snprintf (prefix, sizeof prefix, "%s: ", name);
      standin_check_prefix = prefix;
      if (!body (arg))
	_exit (3);
      fflush (stdout);
      _exit (check_failures ? 1 : 0);
    }
  int status = 0;
  waitpid (pid, &status, 0);
  bool normal = WIFEXITED (status) && WEXITSTATUS (status) <= 1;
  struct stat st;
  bool empty = fstat (fd, &st) == 0 && st.st_size == 0;
  if (!empty || !normal)
    {
      /* Show what the child said, for the log.  */
      char buf[2048];
      ssize_t r = pread (fd, buf, sizeof buf - 1, 0);
      if (r > 0)
	{
	  buf[r] = '\0';
	  fprintf (stderr, "  (%s: stderr: %s)\n", name, buf);
	}
    }
  close (fd);
  unlink (errfile);
  char buf[256];
  snprintf (buf, sizeof buf, "%s: child exited normally", name);
  check (buf, normal);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 1)
    check_failures++;		/* Already reported by the child.  */
  if (stderr_empty)
    {
      snprintf (buf, sizeof buf, "%s: nothing printed", name);
      check (buf, empty);
    }
}

/* ------------------------------------------------------------------ */
/* The plugin.  */

static void *plugin;
unsigned (*p_version) (void);
const char *(*p_get_name) (void);
unsigned (*p_get_caps) (void);
int (*p_get_type) (void);
int (*p_get_num_devices) (unsigned);
bool (*p_init_device) (int);
bool (*p_fini_device) (int);
int (*p_load_image) (int, unsigned, const void *, struct ok_addr_pair **,
		     uint64_t **, uint64_t *);
bool (*p_unload_image) (int, unsigned, const void *);
void *(*p_alloc) (int, size_t);
bool (*p_free) (int, void *);
bool (*p_host2dev) (int, void *, const void *, size_t);
bool (*p_dev2host) (int, void *, const void *, size_t);
bool (*p_dev2dev) (int, void *, const void *, size_t);
void (*p_run) (int, void *, void *, void **);
void (*p_async_run) (int, void *, void *, void **, void *);

bool
standin_sym (void *handle, const char *name, void *fnp)
{
  void *sym = dlsym (handle, name);
  memcpy (fnp, &sym, sizeof sym);
  if (sym == NULL)
    fprintf (stderr, "%s: no %s\n", program, name);
  return sym != NULL;
}

int offloadkit_standin_libgomp_gcc;

bool
standin_open_plugin (const char *path)
{
  /* Test programs built by the GCC under test register in its form: the
     harness then plays the libgomp they will run with.  */
  const char *gcc = getenv ("OFFLOADKIT_STANDIN_LIBGOMP");
  if (offloadkit_standin_libgomp_gcc == 0 && gcc != NULL)
    offloadkit_standin_libgomp_gcc = atoi (gcc);
  plugin = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL)
    {
      fprintf (stderr, "%s: %s\n", program, dlerror ());
      return false;
    }
  static const struct { const char *name; void *fnp; } entries[] = {
    { "GOMP_OFFLOAD_version", &p_version },
    { "GOMP_OFFLOAD_get_name", &p_get_name },
    { "GOMP_OFFLOAD_get_caps", &p_get_caps },
    { "GOMP_OFFLOAD_get_type", &p_get_type },
    { "GOMP_OFFLOAD_get_num_devices", &p_get_num_devices },
    { "GOMP_OFFLOAD_init_device", &p_init_device },
    { "GOMP_OFFLOAD_fini_device", &p_fini_device },
    { "GOMP_OFFLOAD_load_image", &p_load_image },
    { "GOMP_OFFLOAD_unload_image", &p_unload_image },
    { "GOMP_OFFLOAD_alloc", &p_alloc },
    { "GOMP_OFFLOAD_free", &p_free },
    { "GOMP_OFFLOAD_host2dev", &p_host2dev },
    { "GOMP_OFFLOAD_dev2host", &p_dev2host },
    { "GOMP_OFFLOAD_dev2dev", &p_dev2dev },
    { "GOMP_OFFLOAD_run", &p_run },
    { "GOMP_OFFLOAD_async_run", &p_async_run },
  };
  bool ok = true;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    ok &= standin_sym (plugin, entries[i].name, entries[i].fnp);
  return ok;
}

bool
standin_plugin_sym (const char *name, void *fnp)
{
  void *sym = plugin != NULL ? dlsym (plugin, name) : NULL;
  memcpy (fnp, &sym, sizeof sym);
  return sym != NULL;
}

void
standin_close_plugin (void)
{
  if (plugin != NULL)
    dlclose (plugin);
  plugin = NULL;
}

/* ------------------------------------------------------------------ */
/* The callbacks.  Plugins call them from any thread.  */

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_cond = PTHREAD_COND_INITIALIZER;
static char error_buf[2048];
static int error_count;
static char debug_buf[2048];
static int completions;
static void *completion_data;
static pthread_t completion_from;
__thread jmp_buf *standin_fatal_jump;

/* Copy SIZE bytes of what the callbacks recorded at FROM to TO, or clear
   them (FROM NULL), under CB_LOCK.  */
static void
locked_copy (void *to, const void *from, size_t size)
{
  pthread_mutex_lock (&cb_lock);
  if (from != NULL)
    memcpy (to, from, size);
  else
    memset (to, 0, size);
  pthread_mutex_unlock (&cb_lock);
}

/* The functions RESET, which clears RECORD (of TYPE), and NOW, which
   returns a copy of it.  */
#define RECORD_ACCESSORS(type, record, reset, now) \
  void reset (void) { locked_copy (&(record), NULL, sizeof (record)); } \
  type now (void) \
  { \
    type r_; \
    locked_copy (&r_, &(record), sizeof r_); \
    return r_; \
  }

/* libgomp's allocators end the program when out of memory; so do
   these.  */
void *
GOMP_PLUGIN_malloc (size_t n)
{
  void *p = malloc (n);
  if (p == NULL)
    abort ();
  return p;
}

void *
GOMP_PLUGIN_malloc_cleared (size_t n)
{
  void *p = calloc (1, n);
  if (p == NULL)
    abort ();
  return p;
}

void *
GOMP_PLUGIN_realloc (void *p, size_t n)
{
  p = realloc (p, n);
  if (p == NULL)
    abort ();
  return p;
}

void
GOMP_PLUGIN_target_task_completion (void *data)
{
  pthread_mutex_lock (&cb_lock);
  completions++;
  completion_data = data;
  completion_from = pthread_self ();
  pthread_cond_broadcast (&cb_cond);
  pthread_mutex_unlock (&cb_lock);
}

__thread void *standin_acc_tls;
bool standin_acc_prof;
int standin_acc_default_dims[3];

int GOMP_PLUGIN_acc_default_dim (unsigned int);
int
GOMP_PLUGIN_acc_default_dim (unsigned int i)
{
  if (i >= 3)
    {
      /* libgomp ends the program here.  */
      GOMP_PLUGIN_error ("invalid dimension argument: %u", i);
      return 0;
    }
  return standin_acc_default_dims[i];
}
static struct standin_acc_events acc_events;

void *GOMP_PLUGIN_acc_thread (void);
void *
GOMP_PLUGIN_acc_thread (void)
{
  return standin_acc_tls;
}

/* libgomp's struct goacc_thread, as far as plugins read it (the plugin's
   oacc-abi.h has the layout): the profiling state.  */
struct standin_goacc_thread
{
  void *base_dev, *dev, *saved_bound_dev, *mapped_data;
  acc_prof_info *prof_info;
  acc_api_info *api_info;
  bool prof_callbacks_enabled;
  void *next;
  void *target_tls;
};
static __thread struct standin_goacc_thread acc_thread;
static __thread acc_prof_info acc_prof;
static __thread acc_api_info acc_api;

void *GOMP_PLUGIN_goacc_thread (void);
void *
GOMP_PLUGIN_goacc_thread (void)
{
  if (!standin_acc_prof)
    return NULL;
  acc_thread.prof_info = &acc_prof;
  acc_thread.api_info = &acc_api;
  acc_thread.target_tls = standin_acc_tls;
  return &acc_thread;
}

void GOMP_PLUGIN_goacc_profiling_dispatch (acc_prof_info *, acc_event_info *,
					   acc_api_info *);
void
GOMP_PLUGIN_goacc_profiling_dispatch (acc_prof_info *prof,
				      acc_event_info *ev, acc_api_info *api)
{
  pthread_mutex_lock (&cb_lock);
  int t = ev->event_type;
  if (t >= 0 && t < 32 && prof->event_type == ev->event_type)
    acc_events.count[t]++;
  if (t == acc_ev_enqueue_launch_start || t == acc_ev_enqueue_launch_end)
    {
      snprintf (acc_events.kernel, sizeof acc_events.kernel, "%s",
		ev->launch_event.kernel_name != NULL
		? ev->launch_event.kernel_name : "(null)");
      acc_events.dims[0] = ev->launch_event.num_gangs;
      acc_events.dims[1] = ev->launch_event.num_workers;
      acc_events.dims[2] = ev->launch_event.vector_length;
    }
  else
    {
      acc_events.bytes = ev->data_event.bytes;
      acc_events.device_ptr = ev->data_event.device_ptr;
    }
  acc_events.device_api = api->device_api;
  pthread_mutex_unlock (&cb_lock);
}

RECORD_ACCESSORS (struct standin_acc_events, acc_events,
		  standin_acc_events_reset, standin_acc_events_now)

static struct standin_rev rev_record;
int standin_rev_device;
void (*standin_rev_during) (void);

/* Declared in libgomp 13's form, the longer: a plugin playing 14+ passes
   seven arguments, and the last two are then not read.  */
void GOMP_PLUGIN_target_rev (uint64_t fn, uint64_t mapnum, uint64_t devaddrs,
			     uint64_t sizes, uint64_t kinds, int dev_num,
			     void (*dev_to_host) (void *, const void *, size_t,
						  void *),
			     void (*host_to_dev) (void *, const void *, size_t,
						  void *),
			     void *token);
void
GOMP_PLUGIN_target_rev (uint64_t fn, uint64_t mapnum, uint64_t devaddrs,
			uint64_t sizes, uint64_t kinds, int dev_num,
			void (*dev_to_host) (void *, const void *, size_t,
					     void *),
			void (*host_to_dev) (void *, const void *, size_t,
					     void *),
			void *token)
{
  (void) host_to_dev;
  struct standin_rev r = { .fn = fn, .mapnum = mapnum, .devaddrs = devaddrs,
			   .sizes = sizes, .kinds = kinds, .dev_num = dev_num };
  size_t n = (mapnum < 8 ? mapnum : 8) * sizeof (uint64_t);
  if (n > 0 && devaddrs != 0)
    {
      if (offloadkit_standin_libgomp_gcc == 13)
	dev_to_host (r.addrs, (const void *) (uintptr_t) devaddrs, n, token);
      else
	(p_dev2host) (standin_rev_device, r.addrs,
		      (const void *) (uintptr_t) devaddrs, n);
      r.copied = true;
    }
  if (standin_rev_during != NULL)
    standin_rev_during ();
  pthread_mutex_lock (&cb_lock);
  r.calls = rev_record.calls + 1;
  rev_record = r;
  pthread_mutex_unlock (&cb_lock);
}

RECORD_ACCESSORS (struct standin_rev, rev_record, standin_rev_reset,
		  standin_rev_now)

static struct standin_target_ext target_ext_record;

void GOMP_target_ext (int device, void (*fn) (void *), size_t mapnum,
		      void **hostaddrs, size_t *sizes, unsigned short *kinds,
		      unsigned int flags, void **depend, void **args);
void
GOMP_target_ext (int device, void (*fn) (void *), size_t mapnum,
		 void **hostaddrs, size_t *sizes, unsigned short *kinds,
		 unsigned int flags, void **depend, void **args)
{
  (void) mapnum;
  (void) hostaddrs;
  (void) sizes;
  (void) kinds;
  (void) flags;
  (void) depend;
  (void) args;
  pthread_mutex_lock (&cb_lock);
  target_ext_record.calls++;
  target_ext_record.device = device;
  target_ext_record.fn = (void *) fn;
  pthread_mutex_unlock (&cb_lock);
}

RECORD_ACCESSORS (struct standin_target_ext, target_ext_record,
		  standin_target_ext_reset, standin_target_ext_now)

/* Debug messages are always formatted (so that valgrind sees their
   arguments used), shown only when verbose.  */
void
GOMP_PLUGIN_debug (int kind, const char *msg, ...)
{
  (void) kind;
  va_list ap;
  pthread_mutex_lock (&cb_lock);
  va_start (ap, msg);
  vsnprintf (debug_buf, sizeof debug_buf, msg, ap);
  va_end (ap);
  if (standin_verbose)
    fputs (debug_buf, stderr);
  pthread_mutex_unlock (&cb_lock);
}

void
GOMP_PLUGIN_error (const char *msg, ...)
{
  va_list ap;
  pthread_mutex_lock (&cb_lock);
  va_start (ap, msg);
  vsnprintf (error_buf, sizeof error_buf, msg, ap);
  va_end (ap);
  error_count++;
  if (standin_verbose || standin_show_errors)
    fprintf (stderr, "%s: plugin error: %s\n", program, error_buf);
  pthread_mutex_unlock (&cb_lock);
}

void
GOMP_PLUGIN_fatal (const char *msg, ...)
{
  char buf[1024];
  va_list ap;
  va_start (ap, msg);
  vsnprintf (buf, sizeof buf, msg, ap);
  va_end (ap);
  if (standin_fatal_jump != NULL)
    longjmp (*standin_fatal_jump, 1);
  fprintf (stderr, "%s: unexpected fatal error: %s (last error: %s)\n",
	   program, buf, error_buf);
  exit (2);
}

/* ------------------------------------------------------------------ */
/* What they recorded.  */

int
errors_now (void)
{
  int n;
  locked_copy (&n, &error_count, sizeof n);
  return n;
}

const char *
last_error (void)
{
  return error_buf;
}

bool
verror_says (int before, va_list needles)
{
  bool ok = errors_now () == before + 1;
  for (const char *s; (s = va_arg (needles, const char *)) != NULL;)
    if (strstr (error_buf, s) == NULL)
      {
	fprintf (stderr, "  (message lacks '%s')\n", s);
	ok = false;
      }
  if (!ok)
    fprintf (stderr, "  (errors %d -> %d, last: %s)\n", before, errors_now (),
	     error_buf);
  return ok;
}

bool
error_says (int before, ...)
{
  va_list ap;
  va_start (ap, before);
  bool ok = verror_says (before, ap);
  va_end (ap);
  return ok;
}

const char *
last_debug (void)
{
  return debug_buf;
}

void
completions_reset (void)
{
  locked_copy (&completions, NULL, sizeof completions);
}

int
completions_now (void)
{
  int n;
  locked_copy (&n, &completions, sizeof n);
  return n;
}

void *
last_completion (void)
{
  void *data;
  locked_copy (&data, &completion_data, sizeof data);
  return data;
}

pthread_t
completion_thread (void)
{
  pthread_t t;
  locked_copy (&t, &completion_from, sizeof t);
  return t;
}

void
wait_completions (int n, int seconds)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  ts.tv_sec += seconds;
  pthread_mutex_lock (&cb_lock);
  while (completions < n)
    if (pthread_cond_timedwait (&cb_cond, &cb_lock, &ts) == ETIMEDOUT)
      break;
  pthread_mutex_unlock (&cb_lock);
}

int
standin_load_image_14 (int dev, unsigned version, const void *data,
		       struct ok_addr_pair **table)
{
  uint64_t *rev = (uint64_t *) table;
  *table = NULL;
  int n = (p_load_image) (dev, version, data, table, &rev, NULL);
  check ("load_image clears the reverse-offload table", rev == NULL);
  return n;
}

/* ------------------------------------------------------------------ */
/* The 3D copy's arrays.  */

int *
standin_rect3d_start (int dev, int a[3][4][5], int b[3][4][5])
{
  for (int i = 0; i < 60; i++)
    ((int *) a)[i] = 100 + i, ((int *) b)[i] = -1;
  int *dd = p_alloc (dev, 2 * 3 * 4 * sizeof (int));
  int fill[24];
  for (int i = 0; i < 24; i++)
    fill[i] = -7;
  p_host2dev (dev, dd, fill, sizeof fill);
  return dd;
}

void
standin_rect3d_copy (memcpy3d_fn m3, int dev, int a[3][4][5], int b[3][4][5],
		     int *dd, const char *to_device, const char *to_host)
{
  size_t is = sizeof (int);
  check (to_device, m3 (dev, -1, 3 * is, 2, 2, dd, 0, 0, 0, 4 * is, 3,
			a, 2 * is, 1, 1, 5 * is, 4) == 1);
  check (to_host, m3 (-1, dev, 3 * is, 2, 2, b, 1 * is, 2, 1, 5 * is, 4,
		      dd, 0, 0, 0, 4 * is, 3) == 1);
}

void
standin_rect3d_check (int dev, int a[3][4][5], int b[3][4][5],
		      const int *dd)
{
  bool ok = true;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++)
	{
	  bool in = i >= 1 && j >= 2 && k >= 1 && k < 4;
	  ok &= b[i][j][k] == (in ? a[i][j - 1][k + 1] : -1);
	}
  check ("memcpy3d: every element", ok);
  int dback[24];
  p_dev2host (dev, dback, dd, sizeof dback);
  ok = true;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++)
	ok &= dback[(i * 3 + j) * 4 + k] == (j < 2 && k < 3
					     ? a[i + 1][j + 1][k + 2] : -7);
  check ("memcpy3d: device bytes outside the block untouched", ok);
}
