/* hsa-harness: device counts and silence without a kernel driver,
   without a runtime, without GPU agents; HSA agents before emulated
   devices; the image choice by ISA.  Each runs in a child, over a fresh
   plugin.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsa-harness.h"

void
child_zero_silent (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("no error", errors_now () == 0);
}

/* A child that loads the plugin only, without the fake: the runtime it
   finds by its own rules (none usable without /dev/kfd).  */
bool
open_plugin_only (void)
{
  unsetenv ("OFFLOADKIT_HSA_LIBRARY");
  return standin_open_plugin (plugin_path);
}

void
child_system_runtime (void)
{
  child_zero_silent ();
  standin_close_plugin ();
}

bool
have_no_kfd (void)
{
  return access ("/dev/kfd", F_OK) != 0;
}

void
child_init_fails (void)
{
  check ("0 devices", p_get_num_devices () == 0);
  check ("at most one error, naming hsa_init",
	 errors_now () == 0 || error_says (0, "hsa_init", NULL));
}

void
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
  /* The image choice: each device's agent its own.  The fake
     refuses a code object for another machine, so loading on both
     proves the choice.  */
  for (int dev = 0; dev < 2; dev++)
    {
      struct ok_addr_pair *t = load (dev, our_desc);
      checkf (t != NULL, "device %d (%s): the image for its ISA loads", dev,
	      agent_name[dev]);
      free (t);
      if (t != NULL)
	p_unload_image (dev, ours->version, our_desc);
    }
  check ("fini all", p_fini_device (0) && p_fini_device (1)
	 && p_fini_device (2));
  check_no_leaks ("after fini");
}

void
child_no_matching_isa (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  char name[96], march[32];
  snprintf (name, sizeof name, "%s+%s image on a %s agent", agent_name[1],
	    agent_name[0], other_agent);
  bad_load (name, 0, our_desc, other_agent, NULL);
  snprintf (march, sizeof march, "-march=%s", other_agent);
  checkf (strstr (last_error (), march) != NULL, "the error advises %s",
	  march);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* An agent no GCC builds for (gfx1010: neither it nor gfx10-1-generic is
   in GCC 12 to 16): the error says so rather than advise an -march that
   mkoffload and GCC refuse.  */
void
child_unbuildable_isa (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  bad_load ("our image on a gfx1010 agent", 0, our_desc,
	    "gfx1010", "no GCC (12 to 16) generates code", NULL);
  check ("the error advises no -march",
	 strstr (last_error (), "-march=") == NULL);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* An agent of a generic target's family: the advice names both -march
   values, with the GCC versions that have them.  */
void
child_generic_advice (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  bad_load ("our image on a gfx1031 agent", 0, our_desc,
	    "gfx1031", NULL);
  check ("the error advises -march=gfx1031 and -march=gfx10-3-generic",
	 strstr (last_error (), "-march=gfx1031 (GCC 15 and newer)") != NULL
	 && strstr (last_error (), "-march=gfx10-3-generic (GCC 15 and newer)")
	    != NULL);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}
