/* hsa-harness: main, which walks the table of areas; the descriptors the
   test libraries register; the start and end of the main process's
   session.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-harness.h"

const char *plugin_path;
char agent_name[2][16] = { "gfx906", "gfx900" };
uint32_t agent_arch[2] = { 0x906, 0x900 };
char agent_list[40] = "gfx906,gfx900";
char other_agent[16] = "gfx908";
int gcc_major = 12;
int (*f_dispatch_count) (void);
int (*f_block) (uintptr_t, uintptr_t *, size_t *);
int (*f_svm) (uintptr_t, uintptr_t *, size_t *, uint64_t *, unsigned *);
int (*f_dispatch_info) (int, void *, int *, char *, size_t, void *, size_t);
int (*f_symbol) (const char *, int, uintptr_t *, uint64_t *, int *,
		 uint64_t *);

/* ------------------------------------------------------------------ */
/* Descriptors, as the test libraries' constructors register them.  */

static struct reg regs[5];
static int nregs;

void GOMP_offload_register_ver (unsigned, const void *, int, const void *);
void GOMP_offload_unregister_ver (unsigned, const void *, int, const void *);

void
GOMP_offload_register_ver (unsigned version, const void *host_table,
			   int type, const void *target_data)
{
  /* As libgomp 13+ does: from library version 2 the data begins with the
     program's requires mask, and the plugin gets what follows.  */
  if ((version >> 16) >= 2)
    target_data = (const uintptr_t *) target_data + 1;
  if (nregs < 5)
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
/* The GPUs and the GCC of the test libraries.  */

/* AGENT_NAME, AGENT_ARCH, AGENT_LIST and OTHER_AGENT from
   HSA_HARNESS_AGENTS ("gfxA,gfxB", two GFX9 GPUs named by their gfx
   number), GCC_MAJOR from HSA_HARNESS_GCC; whether they are valid.  */
static bool
read_settings (void)
{
  const char *agents = getenv ("HSA_HARNESS_AGENTS");
  if (agents != NULL)
    {
      char a[2][16];
      if (sscanf (agents, "%15[^,],%15s", a[0], a[1]) != 2)
	return false;
      for (int i = 0; i < 2; i++)
	{
	  char *end;
	  unsigned long arch = strtoul (a[i] + 3, &end, 16);
	  if (strncmp (a[i], "gfx", 3) != 0 || *end != '\0' || arch < 0x900
	      || arch > 0x90f)
	    return false;
	  strcpy (agent_name[i], a[i]);
	  agent_arch[i] = (uint32_t) arch;
	}
      if (agent_arch[0] == agent_arch[1])
	return false;
      snprintf (agent_list, sizeof agent_list, "%s,%s", a[0], a[1]);
    }
  /* An agent for which the test libraries have no code object.  */
  strcpy (other_agent, agent_arch[0] != 0x908 && agent_arch[1] != 0x908
		       ? "gfx908" : "gfx906");
  const char *gcc = getenv ("HSA_HARNESS_GCC");
  if (gcc != NULL)
    gcc_major = atoi (gcc);
  return gcc_major >= 12;
}

bool
tgt_is_v3 (const struct ok_tgt_desc *td)
{
  return (td->flags & OK_TGT_GCN_KERNARGS_V3) != 0;
}

unsigned
output_offset (bool v3)
{
  return v3 ? V3_OUTPUT : V2_OUTPUT;
}

/* ------------------------------------------------------------------ */
/* The session.  */

/* The main process: devices 0 and 1 (agent_name).  */
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
  if (argc < 4 || argc > 7)
    {
      fprintf (stderr, "usage: %s PLUGIN.so FAKE-HSA.so OURS.so"
	       " [GCCS.so|- [IND.so [IND16.so]]]\n", argv[0]);
      return 2;
    }
  if (!read_settings ())
    {
      fprintf (stderr, "%s: HSA_HARNESS_AGENTS must be two distinct GFX9"
	       " GPUs (gfx906,gfx900) and HSA_HARNESS_GCC a GCC version\n",
	       argv[0]);
      return 2;
    }
  standin_init ("hsa-harness");
  standin_verbose = getenv ("HARNESS_VERBOSE") != NULL;
  plugin_path = argv[1];
  const char *ours_path = argv[3];
  const char *gccs_path = argc >= 5 && strcmp (argv[4], "-") != 0
			  ? argv[4] : NULL;
  const char *inds_path = argc >= 6 ? argv[5] : NULL;
  const char *inds16_path = argc == 7 ? argv[6] : NULL;
  unsetenv ("OFFLOADKIT_EMULATE");
  unsetenv ("FAKEHSA_FAIL");
  unsetenv ("FAKEHSA_AGENTS");
  unsetenv ("FAKEHSA_SVM_DEFAULT");

  ours = register_library (ours_path);
  check ("our library registered one descriptor", ours != NULL);
  check ("our descriptor: OKIT magic, gcn device type",
	 describe_ours () && ours->type == OK_GOMP_DEVICE_GCN);
  if (our_desc == NULL)
    return check_summary ();
  checkf (our_desc->num_targets == 2
	  && target_for (our_desc, agent_arch[0]) != NULL
	  && target_for (our_desc, agent_arch[1]) != NULL,
	  "our descriptor: a %s and a %s image", agent_name[0],
	  agent_name[1]);
  /* Our mkoffload marks the device code of GCC 13 and later.  */
  bool marked = true;
  for (uint32_t i = 0; i < our_desc->num_targets; i++)
    marked &= tgt_is_v3 (ok_desc_target_at (our_desc, i)) == (gcc_major >= 13);
  checkf (marked, "our descriptor: every image %s for GCC %d's device code",
	  gcc_major >= 13 ? "flagged OK_TGT_GCN_KERNARGS_V3" : "unflagged",
	  gcc_major);
  if (gccs_path != NULL)
    gccs = register_library (gccs_path);
  if (inds_path != NULL)
    {
      inds = register_library (inds_path);
      checkf (inds != NULL
	      && ((const struct ok_openmp_target *)
		  inds->target_data)->num_targets == 1
	      && target_for (inds->target_data, agent_arch[0]) != NULL,
	      "IND.so registered one descriptor with one %s image",
	      agent_name[0]);
    }
  if (inds16_path != NULL)
    {
      inds16 = register_library (inds16_path);
      check ("IND16.so registered one descriptor", inds16 != NULL);
    }

  static const struct harness_sym syms[] = {
    { "fakehsa_dispatch_count", &f_dispatch_count },
    { "fakehsa_dispatch_info", &f_dispatch_info },
    { "fakehsa_symbol", &f_symbol }, { "fakehsa_block", &f_block },
    { "fakehsa_svm", &f_svm },
    { NULL, NULL } };
  const struct harness h = {
    .program = "hsa-harness", .plugin_path = plugin_path,
    .fake_path = argv[2], .library_var = "OFFLOADKIT_HSA_LIBRARY",
    .fake_prefix = "fakehsa", .fake_syms = syms, .fake_who = "runtime",
    .leak_kinds = HARNESS_LIST ("mem", "code", "executable", "reader",
			       "queue", "signal", "lock"),
    .env = HARNESS_LIST ("FAKEHSA_AGENTS", agent_list),
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
		  HARNESS_LIST ("FAKEHSA_AGENTS", "none"), true) },
    { AREA_CHILD ("empty FAKEHSA_AGENTS", child_zero_silent,
		  HARNESS_LIST ("FAKEHSA_AGENTS", ""), true) },
    HARNESS_NAMED_LIBRARY_AREAS ("OFFLOADKIT_HSA_LIBRARY"),
    { AREA_CHILD ("hsa_init fails", child_init_fails,
		  HARNESS_LIST ("FAKEHSA_FAIL", "hsa_init"), false) },
    { AREA_CHILD ("two GPUs + 1 emulated", child_two_and_emulated,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list,
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("a GPU without a code object", child_no_matching_isa,
		  HARNESS_LIST ("FAKEHSA_AGENTS", other_agent), false) },
    { AREA_CHILD ("gfx1010 agent", child_unbuildable_isa,
		  HARNESS_LIST ("FAKEHSA_AGENTS", "gfx1010"), false) },
    { AREA_CHILD ("gfx1031 agent", child_generic_advice,
		  HARNESS_LIST ("FAKEHSA_AGENTS", "gfx1031"), false) },
    { AREA_CHILD ("gfx908 agent, gfx9-generic image",
		  child_generic_not_member,
		  HARNESS_LIST ("FAKEHSA_AGENTS", "gfx908"), false) },
    { AREA_CHILD ("generic targets", child_generic_images,
		  HARNESS_LIST ("FAKEHSA_AGENTS", "gfx906,gfx900"), true) },
    { AREA_UNLOADED ("failed runtime calls", test_failures) },
    { AREA_CHILD ("a kernel faults", child_kernel_fault,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0],
			       "FAKEHSA_FAIL", "kernel_dispatch@2"), false) },
    { AREA_CHILD ("print buffer", child_print_buffer,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("the fake", child_fake_selftest,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("loaded by libgomp 14", child_libgomp14,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list), true) },
    { AREA_CHILD ("kernel arguments v3", child_kernargs_v3,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("kernel arguments v3, GCN_* sizes", child_kernargs_v3_env,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0],
			       "GCN_TEAM_ARENA_SIZE", "8192",
			       "GCN_STACK_SIZE", "4096",
			       "GOMP_GCN_LOWLAT_POOL", "1000"), true) },
    { AREA_CHILD ("GCC 13 and 14 images", child_gcc_v3_images,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("indirect functions", child_indirect,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("reverse offload, libgomp 13", child_reverse_offload_13,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list), true) },
    { AREA_CHILD ("reverse offload, libgomp 14", child_reverse_offload_14,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list), true) },
    { AREA_CHILD ("ancestor regions' device functions",
		  child_rev_device_fns,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("OpenACC", child_openacc,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), false) },
    { AREA_CHILD ("OpenACC, libgomp 12", child_openacc_12,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_name[0]), true) },
    { AREA_CHILD ("managed memory", child_managed,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list), false) },
    { AREA_CHILD ("managed memory, SVM by default", child_managed,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list,
			       "FAKEHSA_SVM_DEFAULT", "1"), false) },
    { AREA_CHILD ("requires unified_address", child_requires_ua,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list), true) },
    { AREA_CHILD ("requires unified_address, 1 emulated",
		  child_requires_ua_emulated,
		  HARNESS_LIST ("FAKEHSA_AGENTS", agent_list,
			       "OFFLOADKIT_EMULATE", "1"), true) },
    { AREA_CHILD ("USM, SVM by default", child_usm_svm,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "16",
			       "FAKEHSA_AGENTS", agent_list,
			       "FAKEHSA_SVM_DEFAULT", "1"), true) },
    { AREA_CHILD ("USM, no SVM by default", child_usm_no_svm,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "16",
			       "FAKEHSA_AGENTS", agent_list), true) },
    { AREA_CHILD ("USM, libgomp 14", child_usm_libgomp14,
		  HARNESS_LIST ("OFFLOADKIT_STANDIN_LIBGOMP", "14",
			       "FAKEHSA_AGENTS", agent_list,
			       "FAKEHSA_SVM_DEFAULT", "1"), true) },
    { AREA_LOADED ("devices", test_devices) },
    { AREA_LOADED ("images", test_load) },
    { AREA_LOADED ("refused images", test_bad_images) },
    { AREA_LOADED ("GCC's image format", test_gcc_image) },
    { AREA_LOADED ("memory", test_memory) },
    { AREA_LOADED ("libgomp 15 and 16's entry points", test_entries) },
    { AREA_LOADED ("interop objects", test_interop) },
    { AREA_LOADED ("launches", test_launch) },
    { AREA_LOADED ("async", test_async) },
    { AREA_LOADED ("exit values", test_exit_values) },
    { AREA_LOADED ("threads", test_threads) },
    { AREA_LOADED ("fini", test_fini) },
  };
  return harness_run (&h, areas, sizeof areas / sizeof areas[0]);
}
