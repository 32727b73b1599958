/* hsa-harness: runtime calls failed on purpose.  Each call in turn
   along a whole session must end in one clear error from the plugin, or a
   documented work-around, without a crash or a leak; a faulting kernel
   must end its run in one clear error.  Each runs in a child.  See
   hsa-harness.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-harness.h"

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

void
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
      harness_in_child (name, HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0],
					    "FAKEHSA_FAIL", spec), NULL,
			child_session_with_failure, false);
    }
}

/* A kernel faults (FAKEHSA_FAIL=kernel_dispatch@2: the first dispatch is
   the image's constructor): the run must end in one clear error naming
   the kernel, without hanging, and the device must still shut down.  */
void
child_kernel_fault (void)
{
  check ("1 device", p_get_num_devices () == 1 && p_init_device (0));
  struct ok_addr_pair *t = load (0, our_desc);
  check ("loads", t != NULL);
  if (t == NULL)
    return;
  const struct ok_tgt_desc *td = target_for (our_desc, agent_arch[0]);
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
