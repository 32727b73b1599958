/* Shared pieces of the fake-runtime harnesses; see harness-common.h.  */

#include "harness-common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gomp-standin.h"

bool
harness_open (const char *program, const char *fake_path, void **fake,
	      const char *plugin_path, const struct harness_sym *syms)
{
  *fake = dlopen (fake_path, RTLD_NOW | RTLD_LOCAL);
  if (*fake == NULL)
    {
      fprintf (stderr, "%s: %s\n", program, dlerror ());
      return false;
    }
  bool ok = standin_open_plugin (plugin_path);
  for (size_t i = 0; syms[i].name != NULL; i++)
    ok &= standin_sym (*fake, syms[i].name, syms[i].fnp);
  return ok;
}

void
harness_apply_env (const char *const *env)
{
  for (int i = 0; env[i] != NULL; i += 2)
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
  struct child c = { env, open, fn };
  standin_in_child (name, child_body, &c, stderr_empty);
}

void
harness_check_no_bad_calls (const char *name, long before,
			    long (*bad_calls) (const char **last),
			    const char *who)
{
  const char *last;
  long n = bad_calls (&last);
  if (n != before)
    fprintf (stderr, "  (%ld invalid %s calls, last: %s)\n", n - before,
	     who, last);
  check (name, n == before);
}

void
harness_check_no_leaks (const char *what, const char *const *kinds,
			size_t nkinds, long (*outstanding) (const char *kind))
{
  char buf[256];
  for (size_t i = 0; i < nkinds; i++)
    {
      long n = outstanding (kinds[i]);
      snprintf (buf, sizeof buf, "%s: no %s left (%ld)", what, kinds[i], n);
      check (buf, n == 0);
    }
}

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

/* Opens the gate *ARG (a pointer to the fake's gate function) after
   300 ms.  */
static void *
open_gate_later (void *arg)
{
  void (*const *gate) (int) = arg;
  struct timespec pause = { 0, 300 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  (*gate) (0);
  return NULL;
}

void
harness_check_fini_waits (void *fn, void (*gate) (int))
{
  completions_reset ();
  gate (1);
  int token;
  p_async_run (0, fn, NULL, NULL, &token);
  /* fini waits for the kernel, which the fake completes only when the
     gate opens: a thread opens it later.  */
  pthread_t opener;
  pthread_create (&opener, NULL, open_gate_later, &gate);
  check ("fini device 0", p_fini_device (0));
  pthread_join (opener, NULL);
  check ("fini waited for the running kernel's completion",
	 completions_now () == 1 && last_completion () == &token);
}
