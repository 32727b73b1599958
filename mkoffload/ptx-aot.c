/* Ahead-of-time cubins for the nvptx image; see ptx-aot.h.

   Per architecture: "ptxas -c" on each module on its own (the modules
   refer to each other's functions, so each is compiled as relocatable
   device code), then one "nvlink" of all the objects into an executable
   cubin that cuModuleLoadData takes as it is.  All the ptxas jobs of all
   architectures go to ok_run_commands at once, so they share the CPUs;
   the nvlink jobs (one per architecture, fast) follow.

   About 20 of the modules of each link are the same every time: the
   accel toolchain's libgomp and newlib members.  Compiling them takes
   most of the time (1.1 s of CPU per architecture for a tiny program), so
   their objects are cached, keyed by a hash of ptxas' --version output,
   the ptxas arguments and the module text.  The link's own modules (the
   program's, and the function tables mkoffload appends) change with
   every edit and are never cached, so the cache does not grow with the
   number of programs built.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "elf-check.h"
#include "file-io.h"
#include "ptx-aot.h"
#include "run-command.h"
#include "tempfile.h"

/* ---- The cache.  ---------------------------------------------------- */

/* 128-bit FNV-1a: not cryptographic, but the inputs are the user's own
   compilers and files, and 128 bits make an accidental collision
   negligible.  */
struct hash128
{
  unsigned __int128 h;
};

static void
hash_init (struct hash128 *h)
{
  h->h = ((unsigned __int128) 0x6c62272e07bb0142ull << 64)
	 | 0x62b821756295c58dull;
}

static void
hash_bytes (struct hash128 *h, const void *data, size_t len)
{
  const unsigned __int128 prime = ((unsigned __int128) 1 << 88) + 0x13b;
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++)
    {
      h->h ^= p[i];
      h->h *= prime;
    }
}

/* A string and its terminating NUL, so that "ab","c" and "a","bc"
   differ.  */
static void
hash_str (struct hash128 *h, const char *s)
{
  hash_bytes (h, s, strlen (s) + 1);
}

static char *
hash_hex (const struct hash128 *h)
{
  return xasprintf ("%016llx%016llx", (unsigned long long) (h->h >> 64),
		    (unsigned long long) h->h);
}

/* The cache directory, or NULL when caching is off or there is no home
   for it.  */
static char *
cache_dir (void)
{
  const char *d = getenv ("OFFLOADKIT_CACHE_DIR");
  if (d)
    return *d ? xstrdup (d) : NULL;
  d = getenv ("XDG_CACHE_HOME");
  /* The XDG specification says to ignore a relative path.  */
  if (d && d[0] == '/')
    return xasprintf ("%s/offloadkit", d);
  d = getenv ("HOME");
  if (d && d[0] == '/')
    return xasprintf ("%s/.cache/offloadkit", d);
  return NULL;
}

/* mkdir -p DIR (new directories private to the user).  0, or -1.  */
static int
make_dirs (const char *dir)
{
  struct stat st;
  if (stat (dir, &st) == 0)
    return S_ISDIR (st.st_mode) ? 0 : -1;
  char *copy = xstrdup (dir);
  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
	*p = '\0';
	if (mkdir (copy, 0700) < 0 && errno != EEXIST)
	  {
	    free (copy);
	    return -1;
	  }
	*p = '/';
      }
  int rc = mkdir (copy, 0700) < 0 && errno != EEXIST ? -1 : 0;
  free (copy);
  return rc;
}

/* What is wrong with DATA[0, LEN), the contents of the cache entry
   PATH: a malloc'd description, or NULL when it is a whole ptxas object
   (ptxas' objects are checked so before they are stored, but a full disk
   or a hand copy can still cut one short).  */
static char *
cache_entry_problem (const char *path, const char *data, size_t len)
{
  return ok_elf_image_problem (path, (const unsigned char *) data, len,
			       EM_CUDA, ET_REL, NULL, 0);
}

/* On a hit, a copy of the cached object for module M (0-based) and GPU,
   as an intermediate file of this link: nvlink then reads a file that
   nobody else touches, even if the cache is cleaned meanwhile.  NULL on
   a miss, or a damaged entry, which is removed (to be compiled and
   stored again); and also, with *FAILED set, when the copy cannot be
   written (reported).  */
static const char *
cache_fetch (struct mko_ctx *ctx, const char *path, size_t m,
	     const char *gpu, int *failed)
{
  size_t len;
  char *data = ok_read_file (path, &len, NULL);
  if (!data)
    return NULL;
  char *why = cache_entry_problem (path, data, len);
  if (why)
    {
      ok_inform ("module %zu for %s: removed the damaged cache entry: %s",
		 m + 1, gpu, why);
      unlink (path);
      free (why);
      free (data);
      return NULL;
    }
  char *suffix = xasprintf (".mkoffload.%zu.%s.o", m + 1, gpu);
  const char *obj = mko_intermediate (ctx, suffix);
  free (suffix);
  int rc = mko_write_file (obj, data, len);
  free (data);
  if (rc < 0)
    {
      *failed = 1;
      return NULL;
    }
  ok_inform ("module %zu for %s: cached '%s'", m + 1, gpu, path);
  return obj;
}

/* Copy SRC into the cache as DEST, atomically: written under a temporary
   name in the same directory, then renamed, so that a concurrent link
   never reads half an object.  The cleanup signals wait meanwhile: the
   temporary name is not one of ours to remove, and a signal between
   mkstemp and rename would leave it in the cache for good.  Failures
   only lose the caching.  */
static void
cache_store (const char *src, const char *dir, const char *dest)
{
  size_t len;
  char *data = ok_read_file (src, &len, NULL);
  if (!data)
    return;
  char *tmp = xasprintf ("%s/.tmp-XXXXXX", dir);
  sigset_t old_mask;
  ok_tempfile_block_signals (&old_mask);
  int fd = mkstemp (tmp);
  if (fd >= 0)
    {
      size_t done = 0;
      while (done < len)
	{
	  ssize_t w = write (fd, data + done, len - done);
	  if (w < 0 && errno == EINTR)
	    continue;
	  if (w <= 0)
	    break;
	  done += w;
	}
      if (close (fd) == 0 && done == len && rename (tmp, dest) == 0)
	ok_inform ("cached '%s' as '%s'", src, dest);
      else
	unlink (tmp);
    }
  sigprocmask (SIG_SETMASK, &old_mask, NULL);
  free (tmp);
  free (data);
}

/* What the cache needs to know about the ptxas in use.  NULL when its
   --version cannot be run: then nothing is cached.  */
static char *
ptxas_identity (const char *ptxas)
{
  const char *argv[] = { ptxas, "--version", NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1 };
  if (ok_run_command (&cmd) != 0 || !out || !*out)
    {
      free (out);
      return NULL;
    }
  return out;
}

/* ---- Compiling and linking.  ---------------------------------------- */

/* Check OUTPUT, a WHAT that the tool NAME (run as TOOL) wrote and exited
   with status 0: a well-formed ELF file for EM_CUDA, of type TYPE,
   defining each of the N functions FUNCTIONS.  A tool that says it
   succeeded can still leave nothing, or a file without the kernels,
   which would be embedded and fail only when the program runs.  Return
   0, or -1 after reporting one error naming the tool and the file.  */
static int
check_tool_output (const char *name, const char *tool, const char *what,
		   const char *output, unsigned type,
		   const char *const *functions, size_t n)
{
  char *why = ok_elf_file_problem (output, EM_CUDA, type, functions, n);
  if (!why)
    return 0;
  ok_error ("%s '%s' produced an unusable %s: %s", name, tool, what, why);
  free (why);
  return -1;
}

/* One ptxas run: module MOD for architecture ARCH.  */
struct job
{
  size_t mod, arch;
  const char **argv;
  const char *obj;		/* Its output; nvlink's input.  */
  char *cache_path;		/* Where to store it, or NULL.  */
};

int
mko_ptx_aot (struct mko_ctx *ctx, const struct mko_ptx_aot *aot,
	     const char **cubins)
{
  size_t nmods = aot->nmodules, narchs = aot->narchs;
  const char **mod_files = xcalloc (nmods, sizeof *mod_files);
  struct job *jobs = xcalloc (nmods * narchs, sizeof *jobs);
  const char **objs = xcalloc (nmods * narchs, sizeof *objs);
  struct ok_command *cmds = xcalloc (nmods * narchs + narchs, sizeof *cmds);
  size_t njobs = 0;
  int rc = -1;

  /* The cache, for the library modules, when there are some.  */
  char *dir = NULL, *ident = NULL;
  int have_library = 0;
  for (size_t m = 0; m < nmods; m++)
    if (!aot->own[m])
      have_library = 1;
  if (have_library && (dir = cache_dir ()))
    {
      if (make_dirs (dir) < 0)
	{
	  ok_inform ("cannot use the cache directory '%s': %s", dir,
		     strerror (errno));
	  free (dir);
	  dir = NULL;
	}
      else if (!(ident = ptxas_identity (aot->ptxas)))
	{
	  free (dir);
	  dir = NULL;
	}
    }

  /* Largest modules first: with several jobs at a time, the longest
     ones then do not start last and hold up the link.  */
  size_t *order = xcalloc (nmods, sizeof *order);
  size_t *sizes = xcalloc (nmods, sizeof *sizes);
  for (size_t m = 0; m < nmods; m++)
    {
      sizes[m] = strlen (aot->modules[m]);
      size_t k = m;
      for (; k > 0 && sizes[order[k - 1]] < sizes[m]; k--)
	order[k] = order[k - 1];
      order[k] = m;
    }

  for (size_t a = 0; a < narchs; a++)
    {
      char gpu[32];
      snprintf (gpu, sizeof gpu, "sm_%d", aot->archs[a]);
      for (size_t k = 0; k < nmods; k++)
	{
	  size_t m = order[k];
	  const char *text = aot->modules[m];
	  char *cache_path = NULL;
	  if (dir && !aot->own[m])
	    {
	      /* The key covers everything that makes ptxas' output what it
		 is; "-c --gpu-name sm_NN" stands for the argument vector
		 below, file names aside.  */
	      struct hash128 h;
	      hash_init (&h);
	      hash_str (&h, "offloadkit ptxas cache 1");
	      hash_str (&h, ident);
	      hash_str (&h, "-c");
	      hash_str (&h, "--gpu-name");
	      hash_str (&h, gpu);
	      hash_str (&h, text);
	      char *hex = hash_hex (&h);
	      cache_path = xasprintf ("%s/nvptx-%s.o", dir, hex);
	      free (hex);
	      int failed = 0;
	      const char *copy = cache_fetch (ctx, cache_path, m, gpu,
					      &failed);
	      if (failed)
		goto out;
	      if (copy)
		{
		  objs[a * nmods + m] = copy;
		  free (cache_path);
		  continue;
		}
	    }

	  /* Each module file is written once, for all architectures.  */
	  if (!mod_files[m])
	    {
	      char *suffix = xasprintf (".mkoffload.%zu.ptx", m + 1);
	      mod_files[m] = mko_intermediate (ctx, suffix);
	      free (suffix);
	      if (mko_write_file (mod_files[m], text, strlen (text)) < 0)
		goto out;
	    }
	  char *suffix = xasprintf (".mkoffload.%zu.%s.o", m + 1, gpu);
	  const char *obj = mko_intermediate (ctx, suffix);
	  free (suffix);

	  struct mko_argv av = { 0 };
	  mko_argv_push (&av, aot->ptxas);
	  mko_argv_push (&av, "-c");
	  mko_argv_push (&av, "--gpu-name");
	  mko_argv_push (&av, xstrdup (gpu));
	  mko_argv_push (&av, "-o");
	  mko_argv_push (&av, obj);
	  mko_argv_push (&av, mod_files[m]);
	  struct job *j = &jobs[njobs];
	  j->mod = m;
	  j->arch = a;
	  j->argv = av.v;
	  j->obj = obj;
	  j->cache_path = cache_path;
	  cmds[njobs].argv = av.v;
	  objs[a * nmods + m] = obj;
	  njobs++;
	}
    }

  size_t failed;
  int status;
  int ran = ok_run_commands_checked (cmds, njobs, &failed, &status);
  if (ran > 0)
    ok_error ("ptxas rejected PTX module %zu of %zu in '%s' for sm_%d"
	      " (exit status %d; its messages are above)",
	      jobs[failed].mod + 1, nmods, aot->ptx,
	      aot->archs[jobs[failed].arch], status);
  if (ran != 0)
    goto out;
  /* Checked before anything is cached.  */
  for (size_t i = 0; i < njobs; i++)
    if (check_tool_output ("ptxas", aot->ptxas, "object", jobs[i].obj,
			   ET_REL, NULL, 0) < 0)
      goto out;
  for (size_t i = 0; i < njobs; i++)
    if (jobs[i].cache_path)
      cache_store (jobs[i].obj, dir, jobs[i].cache_path);

  /* One nvlink per architecture.  The stack-size warning is expected:
     GCC's device code runs on its own soft stacks and calls through
     pointers, so the size is never static, and the plugin provides the
     stacks.  */
  struct ok_command *links = cmds + njobs;
  for (size_t a = 0; a < narchs; a++)
    {
      char *suffix = xasprintf (".mkoffload.sm_%d.cubin", aot->archs[a]);
      cubins[a] = mko_intermediate (ctx, suffix);
      free (suffix);
      struct mko_argv av = { 0 };
      mko_argv_push (&av, aot->nvlink);
      mko_argv_push (&av, "--suppress-stack-size-warning");
      mko_argv_push (&av, xasprintf ("-arch=sm_%d", aot->archs[a]));
      mko_argv_push (&av, "-o");
      mko_argv_push (&av, cubins[a]);
      for (size_t m = 0; m < nmods; m++)
	mko_argv_push (&av, objs[a * nmods + m]);
      links[a].argv = av.v;
    }
  ran = ok_run_commands_checked (links, narchs, &failed, &status);
  if (ran > 0)
    ok_error ("nvlink failed to link the sm_%d cubin of '%s'"
	      " (exit status %d; its messages are above)",
	      aot->archs[failed], aot->ptx, status);
  if (ran != 0)
    goto out;
  /* The plugin looks the kernels up by these names.  */
  for (size_t a = 0; a < narchs; a++)
    if (check_tool_output ("nvlink", aot->nvlink, "cubin", cubins[a],
			   ET_EXEC, ctx->func_names.v, ctx->func_names.n)
	< 0)
      goto out;
  rc = 0;

 out:
  /* The strings stay: some are registered temporary file names.  */
  free (jobs);
  free (objs);
  free (cmds);
  free (mod_files);
  free (order);
  free (sizes);
  free (ident);
  free (dir);
  return rc;
}
