/* Ahead-of-time cubins for the nvptx image; see ptx-aot.h.

   Per architecture: "ptxas -c" on each module on its own (the modules
   refer to each other's functions, so each is compiled as relocatable
   device code), then one "nvlink" of all the objects into an executable
   cubin that cuModuleLoadData takes as it is.  All the ptxas and nvlink
   jobs of all architectures go to ok_run_commands at once, so they share
   the CPUs; an architecture's nvlink starts as soon as its objects are
   compiled.  As many run at a time as there are CPUs and GiBs of
   available memory, whichever is fewer.

   What ptxas compiles is the modules without the functions that no
   kernel can reach (ptx-prune.h).  The program's own module, when it
   has many functions, is compiled in parts (ptx-split.h): ptxas' time
   and memory grow much faster than a module's size, and a whole one of
   GCC's largest libgomp tests needs 7 GB; each part stays under 150 MB.

   Compiled objects are cached, keyed by a hash of ptxas' --version
   output, the ptxas arguments and the module's (or part's) text: the
   accel toolchain's library modules, about 20 in every link, which take
   most of the time of a small program's link, and the link's own
   modules, so that linking a program again after an edit of its host
   code only, or of one part of its device code, compiles nothing, or
   that part.  The cache is kept under a size (OFFLOADKIT_CACHE_SIZE,
   256 MiB by default) by removing the entries used least recently.

   The objects ptxas writes are named *.cubin: nvlink of CUDA 11 takes an
   input named *.o for a host object and links nothing of a device
   object so named.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/time.h>

#include "cache.h"
#include "diag.h"
#include "elf-check.h"
#include "file-io.h"
#include "ptx-aot.h"
#include "ptx-merge.h"
#include "ptx-prune.h"
#include "ptx-split.h"
#include "run-command.h"
#include "tool-answers.h"

/* ---- The cache.  ---------------------------------------------------- */

/* What is wrong with DATA[0, LEN), the contents of the cache entry
   PATH, a ptxas object for sm_SM: a malloc'd description, or NULL when
   it is a whole one (ptxas' objects are checked so before they are
   stored, but a full disk or a hand copy can still cut one short).  */
static char *
cache_entry_problem (const char *path, const char *data, size_t len,
		     unsigned sm)
{
  struct ok_cuda_want want = { .type = ET_REL, .sm = sm };
  return ok_cuda_elf_problem (path, (const unsigned char *) data, len,
			      &want);
}

/* On a hit, a copy of the cached object for UNIT (named STEM in file
   names) and sm_SM, as an intermediate file of this link: nvlink then
   reads a file that nobody else touches, even if the cache is cleaned
   meanwhile.  The entry's time is brought up to date: the cache is
   trimmed by it.  NULL on a miss, or a damaged entry, which is removed
   (to be compiled and stored again); and also, with *FAILED set, when
   the copy cannot be written (reported).  */
static const char *
cache_fetch (struct mko_ctx *ctx, const char *path, const char *unit,
	     const char *stem, unsigned sm, int *failed)
{
  size_t len;
  char *data = ok_read_file (path, &len, NULL);
  if (!data)
    return NULL;
  char *why = cache_entry_problem (path, data, len, sm);
  if (why)
    {
      ok_inform ("%s for sm_%u: removed the damaged cache entry: %s", unit,
		 sm, why);
      unlink (path);
      free (why);
      free (data);
      return NULL;
    }
  char *suffix = xasprintf (".mkoffload.%s.sm_%u.cubin", stem, sm);
  const char *obj = mko_intermediate (ctx, suffix);
  free (suffix);
  int rc = ok_write_file (obj, data, len);
  free (data);
  if (rc < 0)
    {
      *failed = 1;
      return NULL;
    }
  utimensat (AT_FDCWD, path, NULL, 0);
  ok_inform ("%s for sm_%u: cached '%s'", unit, sm, path);
  return obj;
}

/* Copy SRC, WHAT (for -v: "library module 3 for sm_80"), into the cache
   DIR as DEST (cache.h: atomically).  Failures only lose the caching.  */
static void
cache_store (const char *src, const char *dir, const char *dest,
	     const char *what)
{
  size_t len;
  char *data = ok_read_file (src, &len, NULL);
  if (data && mko_cache_put (dir, dest, data, len) == 0)
    ok_inform ("%s: cached '%s' as '%s'", what, src, dest);
  free (data);
}

/* One entry of the cache, for trimming.  */
struct cache_entry
{
  char *name;
  struct timespec used;
  uint64_t size;
};

static int
older_first (const void *a, const void *b)
{
  const struct cache_entry *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec)
    return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  return (x->used.tv_nsec > y->used.tv_nsec)
	 - (x->used.tv_nsec < y->used.tv_nsec);
}

/* When the entries of the cache DIR add up to more than LIMIT bytes,
   remove the ones used least recently (by their modification time, which
   a hit brings up to date) until they are under three quarters of it.
   Other links may be trimming or reading at the same time: an entry
   already gone is fine, and a link reads an entry whole before using
   it.  */
static void
cache_trim (const char *dir, uint64_t limit)
{
  DIR *d = opendir (dir);
  if (!d)
    return;
  struct cache_entry *v = NULL;
  size_t n = 0;
  uint64_t total = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (strncmp (de->d_name, "nvptx-", 6) != 0
	  || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
	  || !S_ISREG (st.st_mode))
	continue;
      v = xrealloc (v, (n + 1) * sizeof *v);
      v[n++] = (struct cache_entry) { xstrdup (de->d_name), st.st_mtim,
				      (uint64_t) st.st_size };
      total += (uint64_t) st.st_size;
    }
  if (total > limit)
    {
      qsort (v, n, sizeof *v, older_first);
      size_t removed = 0;
      for (size_t i = 0; i < n && total > limit / 4 * 3; i++)
	if (unlinkat (dirfd (d), v[i].name, 0) == 0 || errno == ENOENT)
	  {
	    total -= v[i].size;
	    removed++;
	  }
      ok_inform ("cache '%s' over %llu bytes: removed the %zu entries used"
		 " least recently", dir, (unsigned long long) limit, removed);
    }
  for (size_t i = 0; i < n; i++)
    free (v[i].name);
  free (v);
  closedir (d);
}

/* ---- Compiling and linking.  ---------------------------------------- */

/* How many tools to run at a time: as many as there are CPUs, but no
   more than GiBs of memory are available, since a ptxas of a large
   module may need the better part of one (MemAvailable of /proc/meminfo;
   unknown: the CPUs decide).  */
static unsigned
tool_jobs (void)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned jobs = cpus > 0 ? (unsigned) cpus : 1;
  FILE *f = fopen ("/proc/meminfo", "r");
  if (f)
    {
      char line[128];
      unsigned long long kib;
      while (fgets (line, sizeof line, f))
	if (sscanf (line, "MemAvailable: %llu kB", &kib) == 1)
	  {
	    unsigned long long gib = kib >> 20;
	    if (gib < jobs)
	      jobs = gib > 0 ? (unsigned) gib : 1;
	    break;
	  }
      fclose (f);
    }
  return jobs;
}

/* Check OUTPUT, a WHAT that the tool NAME (run as TOOL) wrote and exited
   with status 0, against WANT.  A tool that says it succeeded can still
   leave nothing, or a file without the kernels, which would be embedded
   and fail only when the program runs.  Return 0, or -1 after reporting
   one error naming the tool and the file.  */
static int
check_tool_output (const char *name, const char *tool, const char *what,
		   const char *output, const struct ok_cuda_want *want)
{
  char *why = ok_cuda_file_problem (output, want);
  if (!why)
    return 0;
  ok_error ("%s '%s' produced an unusable %s: %s", name, tool, what, why);
  free (why);
  return -1;
}

/* What ptxas compiles: a module of the link, or a part of one.  */
struct unit
{
  const char *text;
  size_t module;		/* 0-based.  */
  size_t part, nparts;		/* 0-based; NPARTS 1 for a whole module.  */
  int own;			/* The link's own, not a library member.  */
  const char *file;		/* Written once, for all architectures.  */
  /* For messages: "module 1", "part 2 of 16 of module 1" (the link's
     own), "library module 3".  */
  char label[96];
};

/* A command of the one batch mko_ptx_aot runs: ptxas compiling a unit
   for an architecture, or (LINK) nvlink linking an architecture's
   objects.  */
struct job
{
  size_t unit, arch;
  int link;
  const char *obj;		/* ptxas' output; nvlink's input.  */
  char *cache_path;		/* Where to store it, or NULL.  */
};

/* "library modules 2-5, 7" for the NMEMBERS modules MEMBERS (0-based
   indices into the link's, ascending) in LABEL (SIZE bytes).  */
static void
group_label (char *label, size_t size, const size_t *members,
	     size_t nmembers)
{
  size_t len = (size_t) snprintf (label, size, "library modules ");
  for (size_t i = 0; i < nmembers && len < size; )
    {
      size_t j = i;
      while (j + 1 < nmembers && members[j + 1] == members[j] + 1)
	j++;
      if (j > i)
	len += (size_t) snprintf (label + len, size - len, "%s%zu-%zu",
				  i ? ", " : "", members[i] + 1,
				  members[j] + 1);
      else
	len += (size_t) snprintf (label + len, size - len, "%s%zu",
				  i ? ", " : "", members[i] + 1);
      i = j + 1;
    }
}

/* AOT's modules as units: without the functions that no kernel can
   reach (ptx-prune.h), the own ones split where they are large, the
   library ones merged into few (ptx-merge.h).  The texts made here are
   stored in *PARTS (to free).  */
static struct unit *
make_units (const struct mko_ptx_aot *aot, size_t *nunits,
	    struct mko_argv *parts)
{
  struct unit *units = NULL;
  size_t n = 0;
  char **pruned, **texts = xcalloc (aot->nmodules + 1, sizeof *texts);
  size_t ndefs, removed = mko_ptx_prune (aot->modules, aot->nmodules,
					 &pruned, &ndefs);
  for (size_t m = 0; m < aot->nmodules; m++)
    {
      texts[m] = pruned[m] ? pruned[m] : aot->modules[m];
      if (pruned[m])
	mko_argv_push (parts, pruned[m]);
    }
  free (pruned);
  if (removed)
    ok_inform ("'%s': %zu of %zu function definitions left out of the"
	       " cubins, no kernel reaching them", aot->ptx, removed, ndefs);

  /* The library modules merged: enough groups to keep the CPUs busy
     with every architecture's, so that a machine with many still
     compiles several at a time (the online CPUs, not tool_jobs, whose
     count changes with the free memory: the groups are cache keys).  */
  char **lib = xcalloc (aot->nmodules + 1, sizeof *lib);
  size_t *lib_index = xcalloc (aot->nmodules + 1, sizeof *lib_index);
  size_t *lib_number = xcalloc (aot->nmodules + 1, sizeof *lib_number);
  size_t nlib = 0;
  for (size_t m = 0; m < aot->nmodules; m++)
    if (!aot->own[m])
      {
	lib[nlib] = texts[m];
	lib_index[nlib] = m;
	lib_number[nlib++] = m + 1;
      }
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  size_t narchs = aot->narchs ? aot->narchs : 1;
  size_t min_groups = cpus > 0 ? ((size_t) cpus + narchs - 1) / narchs : 1;
  struct mko_ptx_group *groups;
  size_t ngroups = mko_ptx_merge (lib, lib_number, nlib, MKO_PTX_CHUNK_DEFS,
				  min_groups, &groups);
  /* Each module's group + 1, 0 for none.  */
  size_t *group_of = xcalloc (aot->nmodules + 1, sizeof *group_of);
  const char **group_text = xcalloc (ngroups + 1, sizeof *group_text);
  for (size_t k = 0; k < ngroups; k++)
    {
      for (size_t j = 0; j < groups[k].nmembers; j++)
	groups[k].members[j] = lib_index[groups[k].members[j]];
      for (size_t j = 0; j < groups[k].nmembers; j++)
	group_of[groups[k].members[j]] = k + 1;
      mko_argv_push (parts, groups[k].text);
      group_text[k] = groups[k].text;
      groups[k].text = NULL;
    }
  if (ngroups)
    {
      size_t merged = 0;
      for (size_t k = 0; k < ngroups; k++)
	merged += groups[k].nmembers;
      ok_inform ("'%s': %zu of %zu library modules compiled as %zu merged"
		 " module%s", aot->ptx, merged, nlib, ngroups,
		 ngroups == 1 ? "" : "s");
    }
  free (lib);
  free (lib_index);
  free (lib_number);

  for (size_t m = 0; m < aot->nmodules; m++)
    {
      char **chunks = NULL;
      size_t nchunks = 0;
      if (group_of[m])
	{
	  /* A group is one unit, where its first module was.  */
	  const struct mko_ptx_group *g = &groups[group_of[m] - 1];
	  if (g->members[0] != m)
	    continue;
	  units = xrealloc (units, (n + 1) * sizeof *units);
	  struct unit *u = &units[n++];
	  *u = (struct unit) { .text = group_text[group_of[m] - 1],
			       .module = m, .nparts = 1 };
	  group_label (u->label, sizeof u->label, g->members, g->nmembers);
	  continue;
	}
      if (aot->own[m])
	{
	  /* The others: every module but this one.  */
	  char **others = xcalloc (aot->nmodules, sizeof *others);
	  size_t k = 0;
	  for (size_t o = 0; o < aot->nmodules; o++)
	    if (o != m)
	      others[k++] = texts[o];
	  nchunks = mko_ptx_split (texts[m], others, k,
				   MKO_PTX_CHUNK_DEFS, &chunks);
	  free (others);
	  if (nchunks)
	    ok_inform ("PTX module %zu of '%s': compiled in %zu parts of at"
		       " most %d function definitions", m + 1, aot->ptx,
		       nchunks, MKO_PTX_CHUNK_DEFS);
	}
      size_t count = nchunks ? nchunks : 1;
      units = xrealloc (units, (n + count) * sizeof *units);
      for (size_t c = 0; c < count; c++)
	{
	  struct unit *u = &units[n++];
	  *u = (struct unit) { .text = nchunks ? chunks[c] : texts[m],
			       .module = m, .part = c, .nparts = count,
			       .own = aot->own[m] };
	  if (nchunks)
	    {
	      mko_argv_push (parts, chunks[c]);
	      snprintf (u->label, sizeof u->label, "part %zu of %zu of module"
			" %zu", c + 1, count, m + 1);
	    }
	  else
	    snprintf (u->label, sizeof u->label, "%smodule %zu",
		      aot->own[m] ? "" : "library ", m + 1);
	}
      free (chunks);
    }
  mko_ptx_free_groups (groups, ngroups);
  free (group_of);
  free (group_text);
  free (texts);
  *nunits = n;
  return units;
}

/* The hash of a unit's TEXT, once for all architectures.  */
static struct mko_hash
text_hash (const char *text)
{
  struct mko_hash h;
  mko_hash_init (&h);
  mko_hash_str (&h, text);
  return h;
}

/* The cache key of a unit's text of hash TEXT for ptxas IDENT and GPU
   ("sm_90").  */
static char *
cache_key (const char *ident, const char *gpu, const struct mko_hash *text)
{
  /* The key covers everything that makes ptxas' output what it is;
     "-c --gpu-name sm_NN" stands for the argument vector of
     mko_ptx_aot, file names aside.  */
  struct mko_hash h;
  mko_hash_init (&h);
  mko_hash_str (&h, "offloadkit ptxas cache 2");
  mko_hash_str (&h, ident);
  mko_hash_str (&h, "-c");
  mko_hash_str (&h, "--gpu-name");
  mko_hash_str (&h, gpu);
  mko_hash_bytes (&h, &text->h, sizeof text->h);
  return mko_hash_hex (&h);
}

/* The cubin for WANT (an architecture of AOT, ARCH_OPT "-arch=sm_NN") of
   the objects of keys KEYS (NUNITS of them), which the cache may have as
   PATH (set, malloc'd): 1 when it had it whole and it was copied to
   CUBIN, 0 when not (a damaged entry is removed), -1 after reporting an
   error.  */
static int
link_cache_fetch (const char *dir, const char *link_ident,
		  const char *arch_opt, char *const *keys, size_t nunits,
		  const struct ok_cuda_want *want, const char *cubin,
		  char **path)
{
  struct mko_hash h;
  mko_hash_init (&h);
  mko_hash_str (&h, "offloadkit nvlink cache 1");
  mko_hash_str (&h, link_ident);
  mko_hash_str (&h, "--suppress-stack-size-warning");
  mko_hash_str (&h, arch_opt);
  for (size_t u = 0; u < nunits; u++)
    mko_hash_str (&h, keys[u]);
  char *hex = mko_hash_hex (&h);
  *path = xasprintf ("%s/nvptx-link-%s.cubin", dir, hex);
  free (hex);
  size_t len;
  char *data = ok_read_file (*path, &len, NULL);
  if (!data)
    return 0;
  char *why = ok_cuda_elf_problem (*path, (unsigned char *) data, len, want);
  if (why)
    {
      ok_inform ("the sm_%u cubin: removed the damaged cache entry: %s",
		 want->sm, why);
      unlink (*path);
      free (why);
      free (data);
      return 0;
    }
  int wrote = ok_write_file (cubin, data, len);
  free (data);
  if (wrote < 0)
    return -1;
  utimensat (AT_FDCWD, *path, NULL, 0);
  ok_inform ("the sm_%u cubin: cached '%s'", want->sm, *path);
  return 1;
}

int
mko_ptx_aot (struct mko_ctx *ctx, const struct mko_ptx_aot *aot,
	     const char **cubins)
{
  size_t narchs = aot->narchs, nunits;
  struct mko_argv parts = { 0 };
  int *statuses = NULL, stored = 0;
  /* Strings of the commands' argument vectors, freed at the end.  */
  struct mko_argv strings = { 0 };
  struct unit *units = make_units (aot, &nunits, &parts);
  struct job *jobs = xcalloc (nunits * narchs + narchs, sizeof *jobs);
  const char **objs = xcalloc (nunits * narchs, sizeof *objs);
  struct ok_command *cmds = xcalloc (nunits * narchs + narchs, sizeof *cmds);
  /* For each architecture, the indices in CMDS of its ptxas jobs, which
     its nvlink waits for.  */
  size_t *after = xcalloc (nunits * narchs + 1, sizeof *after);
  /* Each object's cache key, for the key of the cubin linked of them.  */
  char **keys = xcalloc (nunits * narchs, sizeof *keys);
  size_t njobs = 0;
  int rc = -1;
  unsigned tools = tool_jobs ();
  size_t *order = NULL, *sizes = NULL, *arch_order = NULL;
  struct ok_cuda_want *wants = NULL;
  int *linked = NULL;
  char **link_cache = NULL;

  /* The cache.  */
  char *dir = NULL, *ident = NULL, *link_ident = NULL;
  /* What the cache needs to know about the ptxas and nvlink in use:
     their --version output.  When that cannot be had, nothing is
     cached.  */
  if (aot->cache_dir
      && (dir = xstrdup (aot->cache_dir))
      && (!(ident = mko_tool_answer (dir, aot->ptxas, "--version"))
	  || !(link_ident = mko_tool_answer (dir, aot->nvlink, "--version"))))
    {
      free (dir);
      dir = NULL;
    }

  /* Largest units first (see below).  */
  order = xcalloc (nunits ? nunits : 1, sizeof *order);
  sizes = xcalloc (nunits ? nunits : 1, sizeof *sizes);
  for (size_t u = 0; u < nunits; u++)
    {
      sizes[u] = strlen (units[u].text);
      size_t k = u;
      for (; k > 0 && sizes[order[k - 1]] < sizes[u]; k--)
	order[k] = order[k - 1];
      order[k] = u;
    }

  /* What the cubins must be, and for each architecture whether the
     cache has the cubin of these very objects: then nothing of it is
     compiled or linked.  */
  wants = xcalloc (narchs, sizeof *wants);
  linked = xcalloc (narchs, sizeof *linked);
  link_cache = xcalloc (narchs, sizeof *link_cache);
  for (size_t a = 0; a < narchs; a++)
    {
      wants[a] = (struct ok_cuda_want) {
	.type = ET_EXEC, .sm = (unsigned) aot->archs[a],
	.functions = ctx->func_names.v, .nfunctions = ctx->func_names.n,
	.variables = ctx->var_names.v, .nvariables = ctx->var_names.n,
      };
      char *suffix = xasprintf (".mkoffload.sm_%d.cubin", aot->archs[a]);
      cubins[a] = mko_intermediate (ctx, suffix);
      free (suffix);
    }
  if (dir)
    {
      struct mko_hash *texts = xcalloc (nunits ? nunits : 1, sizeof *texts);
      for (size_t u = 0; u < nunits; u++)
	texts[u] = text_hash (units[u].text);
      for (size_t a = 0; a < narchs; a++)
	{
	  char gpu[32], arch_opt[40];
	  snprintf (gpu, sizeof gpu, "sm_%d", aot->archs[a]);
	  snprintf (arch_opt, sizeof arch_opt, "-arch=%s", gpu);
	  for (size_t u = 0; u < nunits; u++)
	    keys[a * nunits + u] = cache_key (ident, gpu, &texts[u]);
	  int got = link_cache_fetch (dir, link_ident, arch_opt,
				      keys + a * nunits, nunits, &wants[a],
				      cubins[a], &link_cache[a]);
	  if (got < 0)
	    {
	      free (texts);
	      goto out;
	    }
	  linked[a] = got;
	}
      free (texts);
    }

  /* One batch: for each architecture whose cubin the cache does not
     have, newest first, the ptxas jobs of the units the cache does not
     have either, largest first, then its nvlink, which waits only for
     them and so runs while the next architecture's are compiled.  The
     longest jobs then do not start last and hold up the link while other
     CPUs wait: the largest units, and the newest architecture, whose
     ptxas and nvlink take the longest (nvlink of sm_100 twice as long as
     of sm_90).  The stack-size warning is expected: GCC's device code
     runs on its own soft stacks and calls through pointers, so the size
     is never static, and the plugin provides the stacks.  */
  arch_order = xcalloc (narchs ? narchs : 1, sizeof *arch_order);
  for (size_t a = 0; a < narchs; a++)
    {
      size_t k = a;
      for (; k > 0 && aot->archs[arch_order[k - 1]] < aot->archs[a]; k--)
	arch_order[k] = arch_order[k - 1];
      arch_order[k] = a;
    }
  size_t nafter = 0;
  for (size_t ak = 0; ak < narchs; ak++)
    {
      size_t a = arch_order[ak], first_after = nafter;
      if (linked[a])
	continue;
      char *gpu = xasprintf ("sm_%d", aot->archs[a]);
      mko_argv_push (&strings, gpu);
      for (size_t k = 0; k < nunits; k++)
	{
	  size_t u = order[k];
	  struct unit *un = &units[u];
	  char *cache_path = NULL;
	  char *stem = un->nparts > 1
		       ? xasprintf ("%zu.p%zu", un->module + 1, un->part + 1)
		       : xasprintf ("%zu", un->module + 1);
	  if (dir)
	    {
	      cache_path = xasprintf ("%s/nvptx-%s.o", dir,
				      keys[a * nunits + u]);
	      int failed = 0;
	      const char *copy = cache_fetch (ctx, cache_path, un->label, stem,
					      (unsigned) aot->archs[a],
					      &failed);
	      if (failed || copy)
		{
		  free (stem);
		  free (cache_path);
		}
	      if (failed)
		goto out;
	      if (copy)
		{
		  objs[a * nunits + u] = copy;
		  continue;
		}
	    }

	  /* Each unit's text is written once, for all architectures.  */
	  if (!un->file)
	    {
	      char *suffix = xasprintf (".mkoffload.%s.ptx", stem);
	      un->file = mko_intermediate (ctx, suffix);
	      free (suffix);
	      if (ok_write_file (un->file, un->text, strlen (un->text)) < 0)
		{
		  free (stem);
		  free (cache_path);
		  goto out;
		}
	    }
	  char *suffix = xasprintf (".mkoffload.%s.%s.cubin", stem, gpu);
	  free (stem);
	  const char *obj = mko_intermediate (ctx, suffix);
	  free (suffix);

	  struct mko_argv av = { 0 };
	  mko_argv_push (&av, aot->ptxas);
	  mko_argv_push (&av, "-c");
	  mko_argv_push (&av, "--gpu-name");
	  mko_argv_push (&av, gpu);
	  mko_argv_push (&av, "-o");
	  mko_argv_push (&av, obj);
	  mko_argv_push (&av, un->file);
	  jobs[njobs] = (struct job) { .unit = u, .arch = a, .obj = obj,
				       .cache_path = cache_path };
	  cmds[njobs].argv = av.v;
	  objs[a * nunits + u] = obj;
	  after[nafter++] = njobs;
	  njobs++;
	}

      struct mko_argv av = { 0 };
      mko_argv_push (&av, aot->nvlink);
      mko_argv_push (&av, "--suppress-stack-size-warning");
      char *arch_opt = xasprintf ("-arch=%s", gpu);
      mko_argv_push (&strings, arch_opt);
      mko_argv_push (&av, arch_opt);
      mko_argv_push (&av, "-o");
      mko_argv_push (&av, cubins[a]);
      for (size_t u = 0; u < nunits; u++)
	mko_argv_push (&av, objs[a * nunits + u]);
      jobs[njobs] = (struct job) { .arch = a, .link = 1 };
      cmds[njobs] = (struct ok_command) { .argv = av.v,
					  .after = after + first_after,
					  .nafter = nafter - first_after };
      njobs++;
    }

  statuses = xcalloc (njobs ? njobs : 1, sizeof *statuses);
  if (ok_run_commands (cmds, njobs, tools, statuses) < 0)
    goto out;
  /* The first command, in their order, that failed (-1: reported).  */
  size_t failed = 0;
  while (failed < njobs && (statuses[failed] == 0
			    || statuses[failed] == OK_COMMAND_NOT_RUN))
    failed++;
  if (failed < njobs && !jobs[failed].link)
    {
      const struct unit *un = &units[jobs[failed].unit];
      if (statuses[failed] > 0)
	ok_error ("ptxas rejected %s%s of %zu in '%s' for sm_%d (exit"
		  " status %d; its messages are above)",
		  un->nparts > 1 ? "" : "PTX ", un->label, aot->nmodules,
		  aot->ptx, aot->archs[jobs[failed].arch], statuses[failed]);
      goto out;
    }
  /* Every object that ptxas wrote is checked before anything is cached
     or an nvlink's failure is reported (one that ptxas left unusable is
     what an nvlink of it would fail on), and cached even when an nvlink
     failed: a link run again then compiles nothing again.  */
  for (size_t i = 0; i < njobs; i++)
    {
      const struct job *j = &jobs[i];
      if (j->link || statuses[i] != 0)
	continue;
      struct ok_cuda_want want = { .type = ET_REL,
				   .sm = (unsigned) aot->archs[j->arch] };
      if (check_tool_output ("ptxas", aot->ptxas, "object", j->obj,
			     &want) < 0)
	goto out;
    }
  for (size_t i = 0; i < njobs; i++)
    if (!jobs[i].link && statuses[i] == 0 && jobs[i].cache_path)
      {
	char *what = xasprintf ("%s for sm_%d", units[jobs[i].unit].label,
				aot->archs[jobs[i].arch]);
	cache_store (jobs[i].obj, dir, jobs[i].cache_path, what);
	free (what);
	stored = 1;
      }
  if (failed < njobs)
    {
      if (statuses[failed] > 0)
	ok_error ("nvlink failed to link the sm_%d cubin of '%s'"
		  " (exit status %d; its messages are above)",
		  aot->archs[jobs[failed].arch], aot->ptx, statuses[failed]);
      goto out;
    }

  /* The plugin looks the kernels and variables up by these names.  */
  for (size_t i = 0; i < njobs; i++)
    if (jobs[i].link
	&& check_tool_output ("nvlink", aot->nvlink, "cubin",
			      cubins[jobs[i].arch], &wants[jobs[i].arch]) < 0)
      goto out;
  for (size_t i = 0; i < njobs; i++)
    if (jobs[i].link && link_cache[jobs[i].arch])
      {
	size_t a = jobs[i].arch;
	char *what = xasprintf ("the sm_%d cubin", aot->archs[a]);
	cache_store (cubins[a], dir, link_cache[a], what);
	free (what);
	stored = 1;
      }
  rc = 0;
 out:
  if (stored)
    cache_trim (dir, aot->cache_limit);
  /* The commands' other strings stay: some are registered temporary
     file names.  */
  for (size_t i = 0; i < njobs; i++)
    {
      free ((void *) cmds[i].argv);
      free (jobs[i].cache_path);
    }
  free (statuses);
  for (size_t i = 0; i < strings.n; i++)
    free ((char *) strings.v[i]);
  free (strings.v);
  free (wants);
  free (linked);
  for (size_t a = 0; link_cache && a < narchs; a++)
    free (link_cache[a]);
  free (link_cache);
  free (after);
  for (size_t i = 0; i < nunits * narchs; i++)
    free (keys[i]);
  free (keys);
  free (link_ident);
  for (size_t i = 0; i < parts.n; i++)
    free ((char *) parts.v[i]);
  free (parts.v);
  free (units);
  free (jobs);
  free (objs);
  free (cmds);
  free (order);
  free (arch_order);
  free (sizes);
  free (ident);
  free (dir);
  return rc;
}
