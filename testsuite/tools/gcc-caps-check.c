/* The table of GCC capabilities (common/gomp-abi.h) against the facts of
   each GCC's sources, written out a second time here from
   ../shared/notes/libgomp-plugin-abi-12-16.md and the GCC sources it
   cites, so that an edit of one of the macros that the facts do not bear
   fails.  One "PASS: NAME" or "FAIL: NAME" line per check
   (offloadkit.plugin/gcc-caps.exp).  */

#include <stdio.h>

#include "gomp-abi.h"

struct gcc_facts
{
  int gcc;
  unsigned gomp_version;	/* libgomp-plugin.h's GOMP_VERSION.  */
  int requires, icv_block, reverse_offload, target_rev_callbacks;
  int indirect_funcs, acc_args_on_host;
  int requires_file, gcn_kernargs_v3, passes_libraries, fake_exceptions;
  int usm;
};

static const struct gcc_facts facts[] = {
  /* gcc ver req icv rev cb  ind acc  file v3 libs eh  usm */
  { 12, 1,  0,  0,  0,  0,  0,  1,   0,  0,  0,   0,  0 },
  { 13, 2,  1,  1,  1,  1,  0,  0,   1,  1,  0,   0,  0 },
  { 14, 3,  1,  1,  1,  0,  1,  0,   1,  1,  1,   0,  0 },
  { 15, 3,  1,  1,  1,  0,  1,  0,   1,  1,  1,   1,  1 },
  { 16, 3,  1,  1,  1,  0,  1,  0,   1,  1,  1,   1,  1 },
};

static int failures;

static void
check (int ok, int gcc, const char *what)
{
  printf ("%s: GCC %d: %s\n", ok ? "PASS" : "FAIL", gcc, what);
  failures += !ok;
}

int
main (void)
{
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
    {
      const struct gcc_facts *f = &facts[i];
      int g = f->gcc;
      check (OK_GOMP_VERSION_OF_GCC (g) == f->gomp_version, g,
	     "GOMP_VERSION");
      check (!OK_GCC_HAS_REQUIRES (g) == !f->requires, g, "requires");
      check (!OK_GCC_HAS_ICV_BLOCK (g) == !f->icv_block, g, "ICV block");
      check (!OK_GCC_HAS_REVERSE_OFFLOAD (g) == !f->reverse_offload, g,
	     "reverse offload");
      check (!OK_GCC_TARGET_REV_CALLBACKS (g) == !f->target_rev_callbacks,
	     g, "GOMP_PLUGIN_target_rev's copy callbacks");
      check (!OK_GCC_HAS_INDIRECT_FUNCS (g) == !f->indirect_funcs, g,
	     "indirect functions");
      check (!OK_GCC_ACC_ARGS_ON_HOST (g) == !f->acc_args_on_host, g,
	     "OpenACC argument addresses in host memory");
      check (!OK_GCC_HAS_REQUIRES_FILE (g) == !f->requires_file, g,
	     "GCC_OFFLOAD_OMP_REQUIRES_FILE");
      check (!OK_GCC_GCN_KERNARGS_V3 (g) == !f->gcn_kernargs_v3, g,
	     "GCN kernel arguments of device version 3");
      check (!OK_GCC_PASSES_LIBRARIES (g) == !f->passes_libraries, g,
	     "-l_GCC_ libraries");
      check (!OK_GCC_FAKE_EXCEPTIONS (g) == !f->fake_exceptions, g,
	     "-mfake-exceptions");
      check (!OK_GCC_HAS_USM (g) == !f->usm, g,
	     "unified shared memory (GOMP_OFFLOAD_CAP_SHARED_MEM)");
    }
  return failures != 0;
}
