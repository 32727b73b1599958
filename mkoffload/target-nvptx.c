/* The nvptx-none offload target: GCC's nvptx accel compiler produces
   linked PTX, which we check with NVIDIA's ptxas when one is installed and
   embed as it is (the plugin JIT-links it for the device at hand).  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "file-io.h"
#include "gomp-abi.h"
#include "mkoffload.h"
#include "offload-desc.h"
#include "run-command.h"
#include "tempfile.h"

static int nvptx_build (struct mko_ctx *ctx);

const struct mko_target mko_target = {
  .name = "nvptx-none",
  .device_type = OK_GOMP_DEVICE_NVIDIA_PTX,
  .accel_cc = OK_ACCEL_TRIPLET "-accel-nvptx-none-gcc-" OK_GCC_VERSION,
  .accel_cc_env = "OFFLOADKIT_NVPTX_CC",
  .package = "gcc-" OK_GCC_VERSION "-offload-nvptx",
  .build = nvptx_build,
};

/* The accel driver must find its own tools, not the host's: drop the
   host compilation's search paths, as GCC's mkoffload does.  */
static const char *const accel_unset_env[] = {
  "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", NULL
};

static int
run_accel_compiler (struct mko_ctx *ctx, const char *ptx)
{
  struct mko_argv a = { 0 };
  char *dumpbase = xasprintf ("%s.mkoffload", ctx->dumpbase);

  mko_argv_push (&a, ctx->accel_cc);
  if (ctx->save_temps)
    mko_argv_push (&a, "-save-temps");
  if (ok_verbose)
    mko_argv_push (&a, "-v");
  mko_argv_push (&a, "-xlto");
  mko_argv_push (&a, "-m64");
  if (ctx->fopenmp)
    mko_argv_push (&a, "-mgomp");
  for (size_t i = 0; i < ctx->passthrough.n; i++)
    mko_argv_push (&a, ctx->passthrough.v[i]);
  mko_argv_push (&a, "-dumpdir");
  mko_argv_push (&a, "");
  mko_argv_push (&a, "-dumpbase");
  mko_argv_push (&a, dumpbase);
  mko_argv_push (&a, "-dumpbase-ext");
  mko_argv_push (&a, "");
  /* nvptx-as would run whatever ptxas is on PATH with GCC 12's default
     -misa=sm_35, which current CUDA releases reject; we verify the
     linked PTX ourselves below, for an architecture ptxas accepts.  */
  mko_argv_push (&a, "-Wa,--no-verify");
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, ptx);
  /* Device code may call libatomic (e.g. an atomic update of a char
     becomes __atomic_compare_exchange_1); the accel install has it.  */
  mko_argv_push (&a, "-latomic");
  int rc = ok_run_argv (a.v, accel_unset_env);
  free (a.v);
  free (dumpbase);
  return rc;
}

/* Collect the names of the "//:FUNC_MAP "name"..." and "//:VAR_MAP
   "name"" lines of MODULE, which the nvptx back end writes in host-table
   order.  */
static void
collect_maps (struct mko_ctx *ctx, const char *module)
{
  for (const char *line = module; line && *line;)
    {
      const char *next = strchr (line, '\n');
      struct mko_argv *list = NULL;
      const char *rest = NULL;
      if (strncmp (line, "//:FUNC_MAP \"", 13) == 0)
	list = &ctx->func_names, rest = line + 13;
      else if (strncmp (line, "//:VAR_MAP \"", 12) == 0)
	list = &ctx->var_names, rest = line + 12;
      if (list)
	{
	  const char *q = strchr (rest, '"');
	  if (q && (!next || q < next))
	    mko_argv_push (list, xstrndup (rest, q - rest));
	}
      line = next ? next + 1 : NULL;
    }
}

/* The plain sm_NN architectures PTXAS accepts for --gpu-name, from the
   "Allowed values" of its --help (letter-suffixed variants such as sm_90a
   are skipped: they accept only PTX written for them).  Return how many
   were stored in ARCHS (at most MAX); 0 when that cannot be found out.  */
static size_t
ptxas_archs (const char *ptxas, int *archs, size_t max)
{
  const char *argv[] = { ptxas, "--help", NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1 };
  size_t n = 0;

  if (ok_run_command (&cmd) != 0 || !out)
    {
      free (out);
      return 0;
    }
  const char *p = strstr (out, "--gpu-name");
  p = p ? strstr (p, "Allowed values") : NULL;
  const char *end = p ? strstr (p, "Default value") : NULL;
  for (; p && (p = strstr (p, "'sm_")) && (!end || p < end) && n < max; p++)
    {
      char *e;
      long v = strtol (p + 4, &e, 10);
      if (e != p + 4 && *e == '\'' && v > 0 && v < INT_MAX)
	archs[n++] = v;
    }
  free (out);
  return n;
}

/* The NN of MODULE's ".target sm_NN" directive, or 0.  */
static int
module_target_sm (const char *module)
{
  for (const char *p = module; (p = strstr (p, ".target")); p++)
    if ((p == module || p[-1] == '\n'))
      {
	p += 7;
	while (*p == ' ' || *p == '\t')
	  p++;
	if (strncmp (p, "sm_", 3) == 0)
	  return atoi (p + 3);
	return 0;
      }
  return 0;
}

/* The lowest of the NARCHS ARCHS that is at least MIN; 0 when none is.  */
static int
pick_arch (const int *archs, size_t narchs, int min)
{
  int best = 0;
  for (size_t i = 0; i < narchs; i++)
    if (archs[i] >= min && (best == 0 || archs[i] < best))
      best = archs[i];
  return best;
}

/* Write TEXT to PATH; report a failure and return -1.  */
static int
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  if (!f)
    {
      ok_error ("cannot write '%s': %s", path, strerror (errno));
      return -1;
    }
  errno = 0;
  fputs (text, f);
  return ok_close_written (f, path);
}

/* Check each module of this link with ptxas on its own (-c: modules refer to each
   other's functions, resolved only when the plugin links them), for the
   oldest architecture this ptxas supports that the module's .target
   allows: GCC 12 targets sm_30 by default, which current ptxas releases
   no longer accept as --gpu-name, although they still compile such PTX
   for newer GPUs.  */
static int
verify_with_ptxas (struct mko_ctx *ctx, const char *ptxas,
		   char *const *modules, size_t nmodules, const char *ptx)
{
  int archs[128];
  size_t narchs = ptxas_archs (ptxas, archs, sizeof archs / sizeof *archs);
  if (!narchs)
    ok_inform ("cannot tell which architectures '%s' accepts; using its"
	       " default", ptxas);

  for (size_t i = 0; i < nmodules; i++)
    {
      /* Only the module this link compiled carries the //: map lines; the
	 others are members of the accel toolchain's libraries (libgomp,
	 newlib), checked when the toolchain was built.  Checking those 20
	 modules again took ptxas 1.8 s on every link.  */
      if (nmodules > 1 && !strstr (modules[i], "\n//:"))
	continue;
      char *suffix = xasprintf (".mkoffload.%zu.ptx", i + 1);
      const char *mod = mko_intermediate (ctx, suffix);
      free (suffix);
      suffix = xasprintf (".mkoffload.%zu.cubin", i + 1);
      const char *cubin = mko_intermediate (ctx, suffix);
      free (suffix);

      if (write_file (mod, modules[i]) < 0)
	return -1;

      struct mko_argv a = { 0 };
      char gpu[32];
      int sm = pick_arch (archs, narchs, module_target_sm (modules[i]));
      mko_argv_push (&a, ptxas);
      mko_argv_push (&a, "-c");
      /* The cubin is thrown away: -O0 still parses and checks the whole
	 module, and takes ptxas 3 s and 150 MB instead of 40 s and 7 GB on
	 the largest of GCC's libgomp tests (for-5.c).  */
      mko_argv_push (&a, "-O0");
      if (sm)
	{
	  snprintf (gpu, sizeof gpu, "sm_%d", sm);
	  mko_argv_push (&a, "--gpu-name");
	  mko_argv_push (&a, gpu);
	}
      mko_argv_push (&a, "-o");
      mko_argv_push (&a, cubin);
      mko_argv_push (&a, mod);
      struct ok_command cmd = { .argv = a.v };
      int rc = ok_run_command (&cmd);
      free (a.v);
      if (rc < 0)
	return -1;
      if (rc > 0)
	{
	  ok_error ("ptxas rejected PTX module %zu of %zu in '%s'"
		    " (exit status %d; its messages are above)", i + 1,
		    nmodules, ptx, rc);
	  return -1;
	}
    }
  return 0;
}

static int
nvptx_build (struct mko_ctx *ctx)
{
  const char *ptx = mko_intermediate (ctx, ".mkoffload");
  if (run_accel_compiler (ctx, ptx) < 0)
    return -1;

  size_t len;
  char *text = ok_read_file (ptx, &len);
  if (!text)
    {
      ok_error ("cannot read '%s': %s", ptx, strerror (errno));
      return -1;
    }
  if (len == 0)
    {
      ok_error ("the accel compiler produced an empty '%s'", ptx);
      return -1;
    }

  /* The file is a sequence of NUL-terminated PTX modules.  */
  struct mko_argv mods = { 0 };
  for (size_t off = 0; off < len;)
    {
      if (text[off])
	mko_argv_push (&mods, text + off);
      off += strlen (text + off) + 1;
    }
  for (size_t i = 0; i < mods.n; i++)
    collect_maps (ctx, mods.v[i]);

  const char *ptxas_env = getenv ("OFFLOADKIT_PTXAS");
  char *ptxas = NULL;
  if (ptxas_env && !*ptxas_env)
    ok_inform ("OFFLOADKIT_PTXAS is empty: PTX not verified");
  else if (ptxas_env)
    {
      ptxas = mko_search_path (ptxas_env, getenv ("PATH"));
      if (!ptxas)
	{
	  ok_error ("ptxas '%s' (OFFLOADKIT_PTXAS) not found", ptxas_env);
	  return -1;
	}
    }
  else
    {
      ptxas = mko_search_path ("ptxas", getenv ("PATH"));
      if (!ptxas)
	ok_inform ("no ptxas on PATH: PTX not verified");
    }
  if (ptxas && verify_with_ptxas (ctx, ptxas, (char *const *) mods.v,
				  mods.n, ptx) < 0)
    return -1;
  free (ptxas);
  free (mods.v);

  ctx->image_path = ptx;
  ctx->image_add_nul = text[len - 1] != '\0';
  ctx->image_format = OK_IMAGE_PTX;
  ctx->arch = 0;
  free (text);
  return 0;
}
