/* The nvptx-none offload target: GCC's nvptx accel compiler produces
   linked PTX, which we embed as it is (the plugin JIT-links it for the
   device at hand).  Where NVIDIA's ptxas and nvlink are installed, we also
   compile it ahead of time into a cubin for each of a set of GPU
   architectures (ptx-aot.c), embedded after the PTX; the plugin uses the
   cubin of the device's architecture when there is one.  Without cubins,
   ptxas (when installed) still checks the PTX.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "diag.h"
#include "file-io.h"
#include "program-search.h"
#include "gomp-abi.h"
#include "mkoffload.h"
#include "offload-desc.h"
#include "ptx-aot.h"
#include "ptx-tables.h"
#include "run-command.h"
#include "tempfile.h"
#include "tool-answers.h"

static int nvptx_build (struct mko_ctx *ctx);
static int nvptx_option (struct mko_ctx *ctx, const char *arg);

const struct mko_target mko_target = {
  .name = "nvptx-none",
  .device_type = OK_GOMP_DEVICE_NVIDIA_PTX,
  .accel_cc_env = "OFFLOADKIT_NVPTX_CC",
  .build = nvptx_build,
  .option = nvptx_option,
  .help_options =
"  -msass=LIST             GPU architectures to build cubins for, such as\n"
"                          sm_80,sm_90, or 'none' (give it to gcc as\n"
"                          -foffload-options=nvptx-none=-msass=LIST); the\n"
"                          default is those of sm_80, sm_90 and sm_100 that\n"
"                          ptxas accepts and the PTX (-misa) allows\n",
  .help_env =
"  OFFLOADKIT_PTXAS        ptxas to use (default: from PATH, else\n"
"                          $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin;\n"
"                          set it empty for PTX only, unchecked)\n"
"  OFFLOADKIT_NVLINK       nvlink to use (default: next to ptxas)\n"
"  OFFLOADKIT_NVPTX_SASS   as -msass=LIST, which wins over it\n"
"  OFFLOADKIT_CACHE_DIR    cache of compiled modules and cubins (default\n"
"                          $XDG_CACHE_HOME/offloadkit or ~/.cache/offloadkit;\n"
"                          set it empty to turn the cache off)\n"
"  OFFLOADKIT_CACHE_SIZE   size to keep the cache under, such as 512M or 2G\n"
"                          (default 256M)\n",
};

/* The value of the last -msass= option, or NULL.  */
static const char *sass_option;

static int
nvptx_option (struct mko_ctx *ctx, const char *arg)
{
  (void) ctx;
  if (strncmp (arg, "-msass=", 7) != 0)
    return 0;
  sass_option = arg + 7;
  return 1;
}

/* The accel compiler, running (start_accel_compiler).  */
struct accel_run
{
  struct ok_running run;
  const char *requires_file;
};

/* Start the accel compiler, writing the linked PTX to PTX: return 0, or
   -1 after reporting one error.  finish_accel_compiler waits for it.  */
static int
start_accel_compiler (struct mko_ctx *ctx, const char *ptx,
		      struct accel_run *ar)
{
  struct mko_argv a = { 0 };
  char *dumpbase = xasprintf ("%s.mkoffload", ctx->dumpbase);
  /* GCC 15's mkoffload: host code may have exception handling, which
     the device compiles as well as it can.  */
  const char *const fake_eh[] = { "-mfake-exceptions", NULL };

  mko_accel_argv (ctx, &a, NULL,
		  OK_GCC_FAKE_EXCEPTIONS (ctx->gcc_version) ? fake_eh : NULL,
		  dumpbase);
  /* nvptx-as would run whatever ptxas is on PATH with GCC 12's default
     -misa=sm_35, which current CUDA releases reject; we verify the
     linked PTX ourselves below, for an architecture ptxas accepts.  */
  mko_argv_push (&a, "-Wa,--no-verify");
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, ptx);
  /* Device code may call libatomic (e.g. an atomic update of a char
     becomes __atomic_compare_exchange_1); the accel install has it.  */
  mko_argv_push (&a, "-latomic");
  mko_accel_libs (ctx, &a);
  const char *const *env = mko_accel_env (ctx, NULL, &ar->requires_file);
  struct ok_command cmd = { .argv = a.v, .unset_env = mko_accel_unset_env,
			    .set_env = env };
  /* Its driver, lto1 and collect2 write temporary files.  */
  int rc = ok_start_command (&cmd, 1, &ar->run);
  free (a.v);
  free (dumpbase);
  return rc;
}

/* Wait for the accel compiler AR and read the requires mask it wrote:
   return 0, or -1 after reporting one error.  */
static int
finish_accel_compiler (struct mko_ctx *ctx, struct accel_run *ar)
{
  if (ok_finish_checked (&ar->run) < 0)
    return -1;
  return mko_read_requires (ctx, ar->requires_file);
}

/* The OpenACC launch dimensions of the FUNC_MAP lines, one per line, in
   their order; ANY says whether one is an OpenACC function's.  */
struct dims_list
{
  struct ok_oacc_dims *v;
  size_t n, cap;
  int any;
};

/* Parse what follows the closing quote of the name on a FUNC_MAP line of
   PTX, from REST to the line's END, into *D: nothing for an OpenMP
   function; ", GANG, WORKER, VECTOR" for an OpenACC one, as the nvptx
   back end (nvptx_record_offload_symbol) writes them with "%#x", 0 for
   a dimension left to run time.  Return 0, or -1 after reporting one
   error.  */
static int
parse_func_dims (const char *ptx, const char *name, const char *rest,
		 const char *end, struct ok_oacc_dims *d)
{
  static const char *const axis[3] = { "gang", "worker", "vector" };
  const char *p = rest;
  memset (d, 0, sizeof *d);
  while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (p == end)
    return 0;
  for (int k = 0; k < 3; k++)
    {
      p += strspn (p, " \t");
      if (p >= end || *p != ',')
	goto malformed;
      p++;
      p += strspn (p, " \t");
      if (p >= end || *p < '0' || *p > '9')
	goto malformed;
      char *e;
      unsigned long v = strtoul (p, &e, 0);
      if (e > end || e == p)
	goto malformed;
      if (v > UINT16_MAX)
	{
	  ok_error ("'%s': OpenACC function '%s': %s size %lu is over %u,"
		    " the most a launch can have", ptx, name, axis[k], v,
		    (unsigned) UINT16_MAX);
	  return -1;
	}
      d->dim[k] = (uint16_t) v;
      p = e;
    }
  p += strspn (p, " \t");
  if (p == end)
    {
      d->flags = OK_OACC_FN;
      return 0;
    }
malformed:
  ok_error ("'%s': malformed OpenACC dimensions on the FUNC_MAP line of"
	    " '%s': '%.*s', expected ', GANG, WORKER, VECTOR'", ptx, name,
	    (int) (end - rest), rest);
  return -1;
}

/* Collect the names of the "//:FUNC_MAP "name"...", "//:VAR_MAP
   "name"" and (GCC 14 and newer) "//:IND_FUNC_MAP "name"" lines of
   MODULE (of the image file PTX), which the nvptx back end writes in
   host-table order, into CTX's lists and IND, and the OpenACC dimensions
   of the FUNC_MAP lines into DIMS.  Return 0, or -1 after reporting one
   error.  */
static int
collect_maps (struct mko_ctx *ctx, const char *ptx, const char *module,
	      struct mko_argv *ind, struct dims_list *dims)
{
  for (const char *line = module; line && *line;)
    {
      const char *next = strchr (line, '\n');
      const char *eol = next ? next : line + strlen (line);
      struct mko_argv *list = NULL;
      const char *rest = NULL;
      if (strncmp (line, "//:FUNC_MAP \"", 13) == 0)
	list = &ctx->func_names, rest = line + 13;
      else if (strncmp (line, "//:VAR_MAP \"", 12) == 0)
	list = &ctx->var_names, rest = line + 12;
      else if (strncmp (line, "//:IND_FUNC_MAP \"", 17) == 0)
	list = ind, rest = line + 17;
      const char *q = rest ? strchr (rest, '"') : NULL;
      if (q && q < eol)
	{
	  char *name = xstrndup (rest, q - rest);
	  mko_argv_push (list, name);
	  if (list == &ctx->func_names)
	    {
	      if (dims->n == dims->cap)
		{
		  dims->cap = dims->cap ? 2 * dims->cap : 16;
		  dims->v = xrealloc (dims->v, dims->cap * sizeof *dims->v);
		}
	      struct ok_oacc_dims *d = &dims->v[dims->n++];
	      if (parse_func_dims (ptx, name, q + 1, eol, d) < 0)
		return -1;
	      dims->any |= d->flags != 0;
	    }
	}
      line = next ? next + 1 : NULL;
    }
  return 0;
}

/* The plain sm_NN architectures PTXAS accepts for --gpu-name, from the
   "Allowed values" of its --help (letter-suffixed variants such as sm_90a
   are skipped: they accept only PTX written for them), asked through the
   cache directory CACHE (tool-answers.h).  Return how many
   were stored in ARCHS (at most MAX); 0 when that cannot be found out.  */
static size_t
ptxas_archs (const char *cache, const char *ptxas, int *archs, size_t max)
{
  char *out = mko_tool_answer (cache, ptxas, "--help");
  size_t n = 0;

  if (!out)
    return 0;
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

/* Check each module of this link with ptxas on its own (-c: modules refer to each
   other's functions, resolved only when the plugin links them), for the
   oldest architecture this ptxas supports that the module's .target
   allows: GCC 12 targets sm_30 by default, which current ptxas releases
   no longer accept as --gpu-name, although they still compile such PTX
   for newer GPUs.  */
static int
verify_with_ptxas (struct mko_ctx *ctx, const char *ptxas,
		   const int *archs, size_t narchs,
		   char *const *modules, const unsigned char *own,
		   size_t nmodules, const char *ptx)
{
  if (!narchs)
    ok_inform ("cannot tell which architectures '%s' accepts; using its"
	       " default", ptxas);

  for (size_t i = 0; i < nmodules; i++)
    {
      /* Only this link's own modules are checked; the others are members
	 of the accel toolchain's libraries (libgomp, newlib), checked when
	 the toolchain was built.  Checking those 20 modules again took
	 ptxas 1.8 s on every link.  */
      if (!own[i])
	continue;
      char *suffix = xasprintf (".mkoffload.%zu.ptx", i + 1);
      const char *mod = mko_intermediate (ctx, suffix);
      free (suffix);
      suffix = xasprintf (".mkoffload.%zu.cubin", i + 1);
      const char *cubin = mko_intermediate (ctx, suffix);
      free (suffix);

      if (ok_write_file (mod, modules[i], strlen (modules[i])) < 0)
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

/* The cubin architectures asked for, from -msass= or else
   OFFLOADKIT_NVPTX_SASS.  */
struct sass_request
{
  char *source;			/* "-msass=LIST" or "OFFLOADKIT_NVPTX_SASS=LIST"
				   (malloc'd), NULL for the default.  */
  int archs[32];
  size_t n;
};

/* Parse the request.  Return 0, or -1 after reporting one error.  */
static int
parse_sass_request (struct sass_request *req)
{
  const char *list = sass_option;
  req->n = 0;
  req->source = NULL;
  if (list)
    req->source = xasprintf ("-msass=%s", list);
  else if ((list = getenv ("OFFLOADKIT_NVPTX_SASS")))
    req->source = xasprintf ("OFFLOADKIT_NVPTX_SASS=%s", list);
  else
    return 0;
  if (!*list || strcmp (list, "none") == 0)
    return 0;

  for (const char *p = list;;)
    {
      const char *comma = strchr (p, ',');
      size_t len = comma ? (size_t) (comma - p) : strlen (p);
      size_t digits = len > 3 ? strspn (p + 3, "0123456789") : 0;
      if (len < 4 || len > 6 || strncmp (p, "sm_", 3) != 0
	  || digits != len - 3 || p[3] == '0')
	{
	  ok_error ("%s: expected 'none' or a comma-separated list of"
		    " architectures such as sm_80,sm_90, found '%.*s'",
		    req->source, (int) len, p);
	  return -1;
	}
      int arch = atoi (p + 3);
      int dup = 0;
      for (size_t i = 0; i < req->n; i++)
	dup |= req->archs[i] == arch;
      if (!dup)
	{
	  if (req->n == sizeof req->archs / sizeof *req->archs)
	    {
	      ok_error ("%s: too many architectures", req->source);
	      return -1;
	    }
	  req->archs[req->n++] = arch;
	}
      if (!comma)
	break;
      p = comma + 1;
    }
  /* Ascending, as the images are listed.  */
  for (size_t i = 1; i < req->n; i++)
    for (size_t k = i; k > 0 && req->archs[k - 1] > req->archs[k]; k--)
      {
	int t = req->archs[k];
	req->archs[k] = req->archs[k - 1];
	req->archs[k - 1] = t;
      }
  return 0;
}

/* "sm_75, sm_80, ..." for messages.  */
static char *
arch_list (const int *archs, size_t n)
{
  char *s = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *t = xasprintf ("%s%ssm_%d", s, i ? ", " : "", archs[i]);
      free (s);
      s = t;
    }
  return s;
}

/* Decide which cubins to build into ARCHS (at most 32): the request, each
   checked against what PTXAS accepts (ACCEPTED, NACCEPTED; 0 when
   unknown) and against MIN_SM, the newest .target of the modules (a cubin
   cannot be older than its PTX); or by default those of sm_80, sm_90 and
   sm_100 that pass both checks.  A requested architecture that fails one
   is an error; a default one is left out.  Return the count, or -1 after
   reporting one error.  */
static int
choose_archs (const struct sass_request *req, const char *ptxas,
	      const int *accepted, size_t naccepted, int min_sm, int *archs)
{
  static const int defaults[] = { 80, 90, 100 };
  size_t n = 0;

  if (!req->source)
    {
      if (naccepted == 0)
	{
	  ok_inform ("cannot tell which architectures '%s' accepts: no"
		     " cubins", ptxas);
	  return 0;
	}
      for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
	{
	  int ok = 0;
	  for (size_t k = 0; k < naccepted; k++)
	    ok |= accepted[k] == defaults[i];
	  if (!ok)
	    ok_inform ("'%s' does not accept sm_%d: no cubin for it", ptxas,
		       defaults[i]);
	  else if (defaults[i] < min_sm)
	    ok_inform ("the PTX targets sm_%d: no cubin for sm_%d", min_sm,
		       defaults[i]);
	  else
	    archs[n++] = defaults[i];
	}
      return (int) n;
    }

  for (size_t i = 0; i < req->n; i++)
    {
      int ok = naccepted == 0;
      for (size_t k = 0; k < naccepted; k++)
	ok |= accepted[k] == req->archs[i];
      if (!ok)
	{
	  char *list = arch_list (accepted, naccepted);
	  ok_error ("%s: ptxas '%s' does not accept sm_%d (it accepts %s)",
		    req->source, ptxas, req->archs[i], list);
	  free (list);
	  return -1;
	}
      if (req->archs[i] < min_sm)
	{
	  ok_error ("%s: the PTX targets sm_%d (-misa), which an sm_%d"
		    " cubin cannot run; ask for sm_%d or newer",
		    req->source, min_sm, req->archs[i], min_sm);
	  return -1;
	}
      archs[n++] = req->archs[i];
    }
  return (int) n;
}

/* The tool NAME that environment variable VAR names, searched in PATH,
   in *TOOL: 1 when VAR is set (*TOOL NULL when it is empty, which means
   no tool), 0 when it is not (the caller searches), -1 after reporting
   that the tool it names does not exist.  */
static int
tool_from_env (const char *var, const char *name, char **tool)
{
  const char *env = getenv (var);
  *tool = NULL;
  if (!env)
    return 0;
  if (!*env)
    return 1;
  *tool = ok_search_path (env, getenv ("PATH"));
  if (!*tool)
    {
      ok_error ("%s '%s' (%s) not found", name, env, var);
      return -1;
    }
  return 1;
}

/* Find ptxas: OFFLOADKIT_PTXAS (set empty: none), else PATH, else the
   usual CUDA install directories.  Store it (or NULL) in *PTXAS; return
   0, or -1 after reporting one error.  */
static int
find_ptxas (char **ptxas)
{
  int rc = tool_from_env ("OFFLOADKIT_PTXAS", "ptxas", ptxas);
  if (rc != 0)
    {
      if (rc > 0 && !*ptxas)
	ok_inform ("OFFLOADKIT_PTXAS is empty: PTX not verified, no cubins");
      return rc < 0 ? -1 : 0;
    }
  *ptxas = ok_search_path ("ptxas", getenv ("PATH"));
  static const char *const homes[] = { "CUDA_HOME", "CUDA_PATH" };
  for (size_t i = 0; !*ptxas && i < 2; i++)
    {
      const char *home = getenv (homes[i]);
      if (home && *home)
	{
	  char *bin = xasprintf ("%s/bin", home);
	  *ptxas = ok_search_path ("ptxas", bin);
	  free (bin);
	}
    }
  if (!*ptxas)
    *ptxas = ok_search_path ("ptxas", "/usr/local/cuda/bin");
  if (!*ptxas)
    ok_inform ("no ptxas found: PTX not verified, no cubins");
  return 0;
}

/* Find nvlink: OFFLOADKIT_NVLINK (set empty: none), else next to PTXAS.
   Store it (or NULL) in *NVLINK; return 0, or -1 after reporting one
   error.  */
static int
find_nvlink (const char *ptxas, char **nvlink)
{
  int rc = tool_from_env ("OFFLOADKIT_NVLINK", "nvlink", nvlink);
  if (rc != 0)
    return rc < 0 ? -1 : 0;
  const char *slash = strrchr (ptxas, '/');
  char *dir = slash ? xstrndup (ptxas, slash - ptxas) : xstrdup (".");
  *nvlink = ok_search_path ("nvlink", *dir ? dir : "/");
  free (dir);
  return 0;
}

/* Ask PTXAS (and the nvlink next to it) in the background what the link
   will ask them once the accel compiler is done (tool-answers.h), through
   the cache directory CACHE: ptxas --help (ptxas_archs: for cubins, or
   to verify the PTX) always; both tools' --version (mko_ptx_aot's cache
   keys) when REQ does not rule cubins out, there is a cache and there is
   an nvlink next to ptxas (without one no cubin is built, and nothing
   asks them).  When OFFLOADKIT_NVLINK names one, the versions are left
   to mko_ptx_aot, as find_nvlink is: one it cannot find is reported only
   when cubins are built.  */
static void
ask_tools_ahead (const struct sass_request *req, const char *ptxas,
		 const char *cache)
{
  mko_tool_answer_ahead (cache, ptxas, "--help");
  if ((req->source && !req->n) || !cache || getenv ("OFFLOADKIT_NVLINK"))
    return;
  char *nvlink = NULL;
  if (find_nvlink (ptxas, &nvlink) == 0 && nvlink)
    {
      mko_tool_answer_ahead (cache, ptxas, "--version");
      mko_tool_answer_ahead (cache, nvlink, "--version");
    }
  free (nvlink);
}

/* Append the module of function tables that MODS (the modules of the
   image file PTX, whose LEN bytes are TEXT) need, when they need one
   (ptx-tables.c, with IND the indirect functions' names), to the file,
   so that the PTX image carries it, and to MODS, so that the cubins do.
   Return 1 when it did, 0 when none was needed, -1 after reporting one
   error.  */
static int
append_tables (struct mko_ctx *ctx, const char *ptx, const char *text,
	       size_t len, struct mko_argv *mods, const struct mko_argv *ind)
{
  struct mko_ptx_tables_in in = {
    .modules = (char *const *) mods->v, .nmodules = mods->n,
    .ind_names = ind, .ptx = ptx,
  };
  char *tables;
  if (mko_ptx_tables (ctx, &in, &tables) < 0)
    return -1;
  if (!tables)
    return 0;
  /* Each module ends with a NUL, the last one's possibly missing.  */
  size_t tlen = strlen (tables);
  size_t nul = text[len - 1] != '\0';
  char *whole = xmalloc (len + nul + tlen + 1);
  memcpy (whole, text, len);
  whole[len] = '\0';
  memcpy (whole + len + nul, tables, tlen + 1);
  int rc = ok_write_file (ptx, whole, len + nul + tlen + 1);
  free (whole);
  if (rc < 0)
    {
      free (tables);
      return -1;
    }
  mko_argv_push (mods, tables);
  return 1;
}

/* Build CTX's images, collecting the OpenACC dimensions into DIMS.  */
static int
build_images (struct mko_ctx *ctx, struct dims_list *dims)
{
  /* A bad request is reported before the accel compiler runs.  */
  struct sass_request req;
  if (parse_sass_request (&req) < 0)
    return -1;

  char *ptxas, *nvlink = NULL, *cache = NULL;
  uint64_t cache_limit = 0;
  if (find_ptxas (&ptxas) < 0
      || (ptxas && mko_cache_limit (&cache_limit) < 0))
    return -1;

  /* What the link will ask ptxas and nvlink is asked while the accel
     compiler runs.  */
  const char *ptx = mko_intermediate (ctx, ".mkoffload");
  struct accel_run accel;
  if (start_accel_compiler (ctx, ptx, &accel) < 0)
    return -1;
  if (ptxas)
    {
      cache = mko_cache_dir ();
      ask_tools_ahead (&req, ptxas, cache);
    }
  if (finish_accel_compiler (ctx, &accel) < 0)
    return -1;

  size_t len;
  const char *why;
  char *text = ok_read_file (ptx, &len, &why);
  if (!text)
    {
      ok_error ("cannot read '%s': %s", ptx, why);
      return -1;
    }
  if (len == 0)
    {
      ok_error ("the accel compiler produced an empty '%s'", ptx);
      return -1;
    }

  /* The file is a sequence of NUL-terminated PTX modules.  */
  struct mko_argv mods = { 0 }, ind = { 0 };
  for (size_t off = 0; off < len;)
    {
      if (text[off])
	mko_argv_push (&mods, text + off);
      off += strlen (text + off) + 1;
    }
  for (size_t i = 0; i < mods.n; i++)
    if (collect_maps (ctx, ptx, mods.v[i], &ind, dims) < 0)
      return -1;
  int tables = append_tables (ctx, ptx, text, len, &mods, &ind);
  if (tables < 0)
    return -1;
  /* This link's own modules: the program's, with the map lines, and the
     tables; the others are the accel toolchain's library members.  */
  unsigned char *own = xcalloc (mods.n, 1);
  for (size_t i = 0; i < mods.n; i++)
    own[i] = mods.n == 1 || mko_ptx_has_maps (mods.v[i])
	     || (tables && i == mods.n - 1);

  /* The PTX always comes first: any device can JIT it.  The file ends
     with a NUL when the tables were appended.  */
  mko_add_image (ctx, ptx, !tables && text[len - 1] != '\0', OK_IMAGE_PTX,
		 0);

  if (!ptxas)
    {
      if (req.n)
	ok_inform ("no ptxas: no cubins for %s", req.source);
      free (req.source);
      return 0;
    }

  int accepted[128];
  size_t naccepted = ptxas_archs (cache, ptxas, accepted,
				  sizeof accepted / sizeof *accepted);
  int min_sm = 0;
  for (size_t i = 0; i < mods.n; i++)
    {
      int sm = module_target_sm (mods.v[i]);
      if (sm > min_sm)
	min_sm = sm;
    }
  int archs[32];
  int narchs = choose_archs (&req, ptxas, accepted, naccepted, min_sm,
			     archs);
  if (narchs < 0)
    return -1;
  if (narchs > 0)
    {
      if (find_nvlink (ptxas, &nvlink) < 0)
	return -1;
      if (!nvlink)
	{
	  char *list = arch_list (archs, narchs);
	  mko_note ("no nvlink next to '%s' (or set OFFLOADKIT_NVLINK):"
		    " no cubins for %s, PTX only", ptxas, list);
	  free (list);
	  narchs = 0;
	}
    }

  if (narchs > 0)
    {
      /* ptxas checks every module as it compiles it.  */
      struct mko_ptx_aot aot = {
	.ptxas = ptxas, .nvlink = nvlink,
	.archs = archs, .narchs = narchs,
	.modules = (char *const *) mods.v, .own = own, .nmodules = mods.n,
	.ptx = ptx, .cache_dir = cache, .cache_limit = cache_limit,
      };
      const char *cubins[32];
      if (mko_ptx_aot (ctx, &aot, cubins) < 0)
	return -1;
      for (int i = 0; i < narchs; i++)
	mko_add_image (ctx, cubins[i], 0, OK_IMAGE_CUBIN, archs[i]);
    }
  else if (verify_with_ptxas (ctx, ptxas, accepted, naccepted,
			      (char *const *) mods.v, own, mods.n, ptx) < 0)
    return -1;
  free (req.source);
  free (ptxas);
  free (nvlink);
  free (cache);
  if (tables)
    free ((char *) mods.v[mods.n - 1]);
  free (mods.v);
  free (ind.v);
  free (own);
  /* The names collect_maps took are copies.  */
  free (text);
  return 0;
}

static int
nvptx_build (struct mko_ctx *ctx)
{
  struct dims_list dims = { 0 };
  if (build_images (ctx, &dims) < 0)
    return -1;
  /* The PTX and its cubins have the same functions: one table for all,
     none for an OpenMP program.  */
  if (dims.any)
    for (size_t i = 0; i < ctx->num_images; i++)
      ctx->images[i].oacc_dims = dims.v;
  else
    free (dims.v);
  return 0;
}
