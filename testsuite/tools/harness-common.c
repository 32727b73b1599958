/* Shared pieces of the fake-runtime harnesses; see harness-common.h.  */

#define _GNU_SOURCE
#include "harness-common.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gomp-standin.h"

const struct harness *harness;

void *fake;
int (*f_fail) (const char *);
void (*f_gate) (int);
long (*f_calls) (const char *);
long (*f_outstanding) (const char *);
long (*f_bad_calls) (const char **);

/* ------------------------------------------------------------------ */
/* Loading, children, the walk.  */

bool
harness_open (void)
{
  setenv (harness->library_var, harness->fake_path, 1);
  fake = dlopen (harness->fake_path, RTLD_NOW | RTLD_LOCAL);
  if (fake == NULL)
    {
      fprintf (stderr, "%s: %s\n", harness->program, dlerror ());
      return false;
    }
  bool ok = standin_open_plugin (harness->plugin_path);
  const struct { const char *query; void *fnp; } common[] = {
    { "fail", &f_fail }, { "gate", &f_gate }, { "calls", &f_calls },
    { "outstanding", &f_outstanding }, { "bad_calls", &f_bad_calls } };
  for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
    {
      char name[64];
      snprintf (name, sizeof name, "%s_%s", harness->fake_prefix,
		common[i].query);
      ok &= standin_sym (fake, name, common[i].fnp);
    }
  for (size_t i = 0; harness->fake_syms[i].name != NULL; i++)
    ok &= standin_sym (fake, harness->fake_syms[i].name,
		       harness->fake_syms[i].fnp);
  return ok;
}

/* Apply ENV (see struct harness; NULL: nothing).  */
static void
harness_apply_env (const char *const *env)
{
  for (int i = 0; env != NULL && env[i] != NULL; i += 2)
    if (env[i + 1] != NULL)
      setenv (env[i], env[i + 1], 1);
    else
      unsetenv (env[i]);
}

struct child
{
  const char *const *env;
  bool (*open) (void);
  void (*fn) (void);
};

static bool
child_body (void *arg)
{
  const struct child *c = arg;
  harness_apply_env (c->env);
  if (!c->open ())
    return false;
  harness_apply_env (c->env);
  c->fn ();
  return true;
}

void
harness_in_child (const char *name, const char *const *env,
		  bool (*open) (void), void (*fn) (void), bool stderr_empty)
{
  struct child c = { env, open != NULL ? open : harness_open, fn };
  standin_in_child (name, child_body, &c, stderr_empty);
}

int
harness_run (const struct harness *h, const struct harness_area *areas,
	     size_t n)
{
  harness = h;
  bool loaded = false;
  for (size_t i = 0; i < n; i++)
    {
      const struct harness_area *a = &areas[i];
      if (a->can_run != NULL && !a->can_run ())
	{
	  if (a->unsupported != NULL)
	    unsupported (a->unsupported);
	  continue;
	}
      switch (a->where)
	{
	case HARNESS_CHILD:
	  harness_in_child (a->name, a->env, a->open, a->fn, a->stderr_empty);
	  break;
	case HARNESS_UNLOADED:
	  a->fn ();
	  break;
	case HARNESS_LOADED:
	  if (!loaded)
	    {
	      harness_apply_env (h->env);
	      if (!harness_open ())
		return 2;
	      loaded = true;
	    }
	  a->fn ();
	  break;
	}
    }
  standin_close_plugin ();
  return check_summary ();
}

/* ------------------------------------------------------------------ */
/* The fake.  */

harness_fn
harness_fake_fn (const char *name)
{
  void *sym = dlsym (fake, name);
  if (sym == NULL)
    {
      fprintf (stderr, "%s: the fake lacks %s\n", harness->program, name);
      abort ();
    }
  harness_fn f;
  memcpy (&f, &sym, sizeof f);
  return f;
}

long
bad_calls (void)
{
  return f_bad_calls (NULL);
}

void
check_no_bad_calls (const char *name, long before)
{
  const char *last;
  long n = f_bad_calls (&last);
  if (n != before)
    fprintf (stderr, "  (%ld invalid %s calls, last: %s)\n", n - before,
	     harness->fake_who, last);
  check (name, n == before);
}

void
check_no_leaks (const char *what)
{
  for (size_t i = 0; harness->leak_kinds[i] != NULL; i++)
    {
      const char *kind = harness->leak_kinds[i];
      long n = f_outstanding (kind);
      checkf (n == 0, "%s: no %s left (%ld)", what, kind, n);
    }
}

/* ------------------------------------------------------------------ */
/* Checks and image loads.  */

void
checkf (bool ok, const char *fmt, ...)
{
  char name[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  check (name, ok);
}

void
harness_libgomp14 (void)
{
  offloadkit_standin_libgomp_gcc = 14;
  check ("version 3", p_version () == 3);
  check ("2 devices", (p_get_num_devices) (0) == 2);
}

struct ok_addr_pair *
harness_load (int dev, unsigned ver, const void *data, size_t expect)
{
  struct ok_addr_pair *table = NULL;
  int n = p_load_image (dev, ver, data, &table);
  if (n < 0 || (size_t) n != expect)
    {
      fprintf (stderr, "  (load_image on %d returned %d, want %zu: %s)\n",
	       dev, n, expect, last_error ());
      harness_undo_load (n, table, dev, ver, data);
      return NULL;
    }
  return table;
}

bool
harness_refused_load (const char *name, int dev, unsigned ver,
		      const void *data, va_list needles, int *n,
		      struct ok_addr_pair **table)
{
  int e = errors_now ();
  *table = NULL;
  *n = p_load_image (dev, ver, data, table);
  checkf (*n == -1, "%s: load_image returns -1", name);
  return verror_says (e, needles);
}

void
harness_undo_load (int n, struct ok_addr_pair *table, int dev, unsigned ver,
		   const void *data)
{
  if (n > 0)
    {
      free (table);
      p_unload_image (dev, ver, data);
    }
}

/* ------------------------------------------------------------------ */
/* Sessions.  */

/* One hammering thread.  */
struct hammer
{
  int dev;
  void *fn;
  int runs;			/* -1 when a round trip went wrong.  */
  bool async;
};

static void *
hammer (void *arg)
{
  struct hammer *h = arg;
  for (int i = 0; i < h->runs; i++)
    {
      void *mem = p_alloc (h->dev, 256);
      p_host2dev (h->dev, mem, &i, sizeof i);
      if (h->async && i % 2 == 1)
	p_async_run (h->dev, h->fn, mem, NULL, h);
      else
	p_run (h->dev, h->fn, mem, NULL);
      int back = -1;
      p_dev2host (h->dev, &back, mem, sizeof back);
      if (back != i)
	h->runs = -1;
      p_free (h->dev, mem);
    }
  return NULL;
}

void
harness_hammer_threads (void *const fns[6])
{
  completions_reset ();
  struct hammer h[6];
  pthread_t th[6];
  for (int i = 0; i < 6; i++)
    {
      h[i] = (struct hammer) { i % 2, fns[i], 40, i >= 4 };
      pthread_create (&th[i], NULL, hammer, &h[i]);
    }
  for (int i = 0; i < 6; i++)
    pthread_join (th[i], NULL);
  wait_completions (40, 20);
  bool data_ok = true;
  for (int i = 0; i < 6; i++)
    data_ok &= h[i].runs == 40;
  check ("threads: every copy round trip right", data_ok);
  check ("threads: 40 async completions", completions_now () == 40);
}

/* Opens the fake's gate after 300 ms.  */
static void *
open_gate_later (void *arg)
{
  (void) arg;
  struct timespec pause = { 0, 300 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  f_gate (0);
  return NULL;
}

void
harness_check_fini (void *fn, struct ok_addr_pair *(*load) (int dev))
{
  if (fn != NULL)
    {
      completions_reset ();
      f_gate (1);
      int token;
      p_async_run (0, fn, NULL, NULL, &token);
      /* fini waits for the kernel, which the fake completes only when the
	 gate opens: a thread opens it later.  */
      pthread_t opener;
      pthread_create (&opener, NULL, open_gate_later, NULL);
      check ("fini device 0", p_fini_device (0));
      pthread_join (opener, NULL);
      check ("fini waited for the running kernel's completion",
	     completions_now () == 1 && last_completion () == &token);
    }
  else
    check ("fini device 0", p_fini_device (0));
  check ("fini device 1", p_fini_device (1));
  check_no_leaks ("after fini");
  check ("init again", p_init_device (0));
  struct ok_addr_pair *t = load (0);
  check ("load again", t != NULL);
  free (t);
  check ("fini again", p_fini_device (0));
  check_no_leaks ("after the second fini");
}

/* ------------------------------------------------------------------ */
/* The library variable naming something else.  */

void
child_named_missing (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("one error naming the variable and the library",
	 error_says (0, harness->library_var, HARNESS_MISSING_LIBRARY,
		     "no ", NULL));
}

/* The FIFO of child_named_fifo, in a directory of its own.  */
static char fifo_dir[PATH_MAX], fifo_path[PATH_MAX + 16];

bool
harness_open_fifo_library (void)
{
  if (!harness_open ())
    return false;
  const char *tmp = getenv ("TMPDIR");
  snprintf (fifo_dir, sizeof fifo_dir, "%s/harness-fifo-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  if (mkdtemp (fifo_dir) == NULL)
    {
      perror ("mkdtemp");
      return false;
    }
  snprintf (fifo_path, sizeof fifo_path, "%s/lib.so", fifo_dir);
  if (mkfifo (fifo_path, 0600) != 0)
    {
      perror ("mkfifo");
      rmdir (fifo_dir);
      return false;
    }
  setenv (harness->library_var, fifo_path, 1);
  return true;
}

void
child_named_fifo (void)
{
  check ("0 devices, at once", p_get_num_devices () == 0);
  check ("one error naming the variable and the FIFO",
	 error_says (0, harness->library_var, fifo_path, "is a FIFO", NULL));
  unlink (fifo_path);
  rmdir (fifo_dir);
}
