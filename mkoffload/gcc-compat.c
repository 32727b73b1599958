/* What differs between the GCC versions one mkoffload serves (12 to 16):
   which GCC runs us, its accel compiler, the options its driver passes,
   the requires mask, the device libraries; see mkoffload.h.

   The same installed mkoffload is run by every GCC's lto-wrapper that
   finds it, so nothing here is fixed at build time: the version comes
   from the driver that runs us.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "file-io.h"
#include "program-search.h"
#include "gomp-abi.h"
#include "mkoffload.h"
#include "run-command.h"

/* The leading major version number of the version string S ("14",
   "14.2.0"), or -1.  */
static int
parse_major (const char *s)
{
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (end == s || errno || v <= 0 || v > 1000
      || (*end != '\0' && *end != '.' && *end != '\n'))
    return -1;
  return (int) v;
}

/* What DRIVER -dumpversion prints (without its newline), or NULL when
   it cannot be run or fails; errors of starting it are not reported.  */
static char *
dumpversion (const char *driver)
{
  /* One that does not exist is ours to report, not run-command's.  */
  char *path = ok_search_path (driver, getenv ("PATH"));
  if (!path)
    return NULL;
  const char *argv[] = { path, "-dumpversion", NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1,
			    .unset_env = mko_accel_unset_env };
  int rc = ok_run_command (&cmd);
  free (path);
  if (rc != 0 || !out)
    {
      free (out);
      return NULL;
    }
  out[strcspn (out, "\n")] = '\0';
  return out;
}

/* The version of the GCC that runs us.  We ask the driver itself
   (COLLECT_GCC -dumpversion) rather than reading the version directory in
   COMPILER_PATH: lto-wrapper's COMPILER_PATH begins with the -B prefixes
   (where we are installed for tests), and its version directory is a
   layout convention (Debian's /usr/libexec/gcc/TRIPLET/14/, upstream's
   full 14.2.0), while -dumpversion is the driver's own answer, whatever
   its layout; it costs one quick process per link.
   OFFLOADKIT_GCC_VERSION overrides it (for tests, or a driver that cannot
   be run again).  */
static int
detect_gcc_version (const struct mko_ctx *ctx)
{
  const char *env = getenv ("OFFLOADKIT_GCC_VERSION");
  const char *what;
  char *text = NULL;
  int v;

  if (env && *env)
    {
      v = parse_major (env);
      if (v < 0)
	ok_fatal ("OFFLOADKIT_GCC_VERSION='%s': expected a GCC version"
		  " such as 14", env);
      what = "OFFLOADKIT_GCC_VERSION";
    }
  else
    {
      text = dumpversion (ctx->collect_gcc);
      if (!text)
	ok_fatal ("cannot tell the version of COLLECT_GCC '%s': '%s"
		  " -dumpversion' failed (set OFFLOADKIT_GCC_VERSION)",
		  ctx->collect_gcc, ctx->collect_gcc);
      v = parse_major (text);
      if (v < 0)
	ok_fatal ("cannot tell the version of COLLECT_GCC '%s': it says"
		  " '%s' (set OFFLOADKIT_GCC_VERSION)", ctx->collect_gcc,
		  text);
      what = ctx->collect_gcc;
    }
  if (v < MKO_GCC_MIN || v > MKO_GCC_MAX)
    ok_fatal ("GCC %d (%s) is not supported: this mkoffload speaks GCC %d"
	      " to %d", v, what, MKO_GCC_MIN, MKO_GCC_MAX);
  ok_inform ("GCC version %d (from %s)", v, what);
  free (text);
  return v;
}

const char *
mko_accel_cc (void)
{
  static char *name;
  if (name == NULL)
    name = xasprintf ("%s-accel-%s-gcc", OK_ACCEL_TRIPLET, mko_target.name);
  return name;
}

const char *
mko_accel_package (void)
{
  static char *name;
  if (name == NULL)
    name = xasprintf ("offload-%.*s",
		      (int) strcspn (mko_target.name, "-"), mko_target.name);
  return name;
}

void
mko_find_gcc (struct mko_ctx *ctx)
{
  const struct mko_target *t = ctx->target;
  ctx->gcc_version = detect_gcc_version (ctx);

  const char *cc = getenv (t->accel_cc_env);
  if (cc && *cc)
    {
      ctx->accel_cc = ok_find_program (cc);
      if (!ctx->accel_cc)
	ok_fatal ("accel compiler '%s' (from %s) not found", cc,
		  t->accel_cc_env);
      return;
    }

  /* Debian's name (configure's OK_ACCEL_TRIPLET, with the version), then
     upstream's, which has no version in it: that one must be of the
     same GCC, since its lto1 reads the host compiler's LTO streams.  */
  char *versioned = xasprintf ("%s-%d", mko_accel_cc (), ctx->gcc_version);
  char *found = ok_find_program (versioned);
  if (!found)
    {
      found = ok_find_program (mko_accel_cc ());
      if (!found)
	ok_fatal ("accel compiler '%s' not found (install gcc-%d-%s)",
		  versioned, ctx->gcc_version, mko_accel_package ());
      char *text = dumpversion (found);
      int v = text ? parse_major (text) : -1;
      if (v != ctx->gcc_version)
	ok_fatal ("accel compiler '%s' is %s%s, not GCC %d like COLLECT_GCC"
		  " (install gcc-%d-%s, or set %s)", found,
		  text ? "GCC " : "of unknown version", text ? text : "",
		  ctx->gcc_version, ctx->gcc_version, mko_accel_package (),
		  t->accel_cc_env);
      free (text);
    }
  free (versioned);
  ctx->accel_cc = found;
}

const char *
mko_translate_arg (struct mko_ctx *ctx, const char *arg)
{
  /* As GCC's mkoffloads (14 and newer) do: the driver marks the host
     link's libraries that the device needs too as -l_GCC_LIB.  */
  if (strcmp (arg, "-l_GCC_m") == 0 || strcmp (arg, "-l_GCC_gfortran") == 0
      || strcmp (arg, "-l_GCC_stdc++") == 0)
    return xasprintf ("-l%s", arg + 7);
  /* GCC 15 and newer: the host's ABI options, for compiling the wrapper
     (GCC's mkoffloads compile theirs with it, and pass it to the accel
     compiler too, which accepts and ignores it).  */
  if (strncmp (arg, "-foffload-abi-host-opts=", 24) == 0)
    {
      if (ctx->host_abi_opts && strcmp (ctx->host_abi_opts, arg + 24) != 0)
	ok_fatal ("-foffload-abi-host-opts given twice ('%s', '%s')",
		  ctx->host_abi_opts, arg + 24);
      ctx->host_abi_opts = arg + 24;
    }
  return arg;
}

const char *const *
mko_accel_env (struct mko_ctx *ctx, const char *tag,
	       const char **requires_file)
{
  *requires_file = NULL;
  if (!OK_GCC_HAS_REQUIRES_FILE (ctx->gcc_version))
    return NULL;
  char *suffix = xasprintf (".mkoffload%s%s.omp_requires", tag ? "." : "",
			    tag ? tag : "");
  const char *file = mko_intermediate (ctx, suffix);
  free (suffix);
  /* lto1 writes the mask only when it ran: a stale file kept from an
     earlier -save-temps link must not be read as this link's.  */
  if (ctx->save_temps)
    remove (file);
  const char **env = xcalloc (2, sizeof *env);
  env[0] = xasprintf ("GCC_OFFLOAD_OMP_REQUIRES_FILE=%s", file);
  *requires_file = file;
  return env;
}

int
mko_read_requires (struct mko_ctx *ctx, const char *file)
{
  if (!file)
    return 0;
  size_t len;
  const char *why;
  char *data = ok_read_file (file, &len, &why);
  if (!data)
    {
      ok_error ("cannot read the OpenMP requires mask the accel compiler"
		" should have written to '%s': %s", file, why);
      return -1;
    }
  /* lto1 writes the mask as one uint32_t in its own byte order, which is
     ours (the accel compiler runs on this host).  */
  if (len != sizeof (uint32_t))
    {
      ok_error ("'%s': expected the OpenMP requires mask (%zu bytes), found"
		" %zu bytes", file, sizeof (uint32_t), len);
      free (data);
      return -1;
    }
  uint32_t mask;
  memcpy (&mask, data, sizeof mask);
  free (data);
  if (ctx->have_omp_requires && mask != ctx->omp_requires)
    {
      ok_error ("'%s': OpenMP requires mask %#x, another compile of the"
		" same code wrote %#x", file, (unsigned) mask,
		(unsigned) ctx->omp_requires);
      return -1;
    }
  ctx->omp_requires = mask;
  ctx->have_omp_requires = 1;
  ok_inform ("OpenMP requires mask %#x", (unsigned) mask);
  return 0;
}

/* Whether the accel compiler finds library LIB (libLIB.a).  */
static int
accel_has_library (struct mko_ctx *ctx, const char *lib)
{
  char *name = xasprintf ("-print-file-name=lib%s.a", lib);
  const char *argv[] = { ctx->accel_cc, name, NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .unset_env = mko_accel_unset_env,
			    .out = &out, .quiet = 1 };
  /* It prints the name as it is when it finds no such file.  */
  int found = ok_run_command (&cmd) == 0 && out && out[0] == '/';
  free (out);
  free (name);
  return found;
}

void
mko_accel_libs (struct mko_ctx *ctx, struct mko_argv *a)
{
  if (OK_GCC_PASSES_LIBRARIES (ctx->gcc_version))
    return;
  /* GCC 12's and 13's drivers tell mkoffload nothing of the host link's
     libraries (-l options are not in COLLECT_GCC_OPTIONS, and there is no
     -l_GCC_*), so we do what 14 does for the usual links: the language
     of the driver (g++ links libstdc++, gfortran libgfortran) and the
     math library, which the accel driver does not link by default (its
     LIB_SPEC is -lc) and costs nothing when unused (an archive).  */
  if (ctx->accel_lang_lib == NULL)
    {
      /* Found out once: the amdgcn mkoffload links once per -march.  */
      const char *base = strrchr (ctx->collect_gcc, '/');
      base = base ? base + 1 : ctx->collect_gcc;
      const char *lib = NULL;
      if (strstr (base, "gfortran"))
	lib = "gfortran";
      else if (strstr (base, "g++") || strstr (base, "c++"))
	lib = "stdc++";
      ctx->accel_lang_lib = "";
      /* Debian's GCC 12 and 13 accel packages have no device libstdc++:
	 a region that needs it fails to link as it would with GCC's
	 mkoffload, but one that does not must not.  */
      if (lib && accel_has_library (ctx, lib))
	ctx->accel_lang_lib = xasprintf ("-l%s", lib);
      else if (lib)
	ok_inform ("the accel compiler has no lib%s.a: not linked", lib);
    }
  if (*ctx->accel_lang_lib)
    mko_argv_push (a, ctx->accel_lang_lib);
  mko_argv_push (a, "-lm");
}

unsigned
mko_gomp_version (const struct mko_ctx *ctx)
{
  return OK_GOMP_VERSION_OF_GCC (ctx->gcc_version);
}
