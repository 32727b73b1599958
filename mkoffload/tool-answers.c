/* What ptxas and nvlink say about themselves; see tool-answers.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "diag.h"
#include "file-io.h"
#include "run-command.h"
#include "tool-answers.h"

/* Where the cache DIR keeps the answer of TOOL, whose file is ST, to
   ARG (malloc'd).  */
static char *
answer_path (const char *dir, const char *tool, const struct stat *st,
	     const char *arg)
{
  struct mko_hash h;
  mko_hash_init (&h);
  mko_hash_str (&h, "offloadkit tool answer 1");
  mko_hash_str (&h, tool);
  mko_hash_str (&h, arg);
  long long id[] = {
    (long long) st->st_dev, (long long) st->st_ino, (long long) st->st_size,
    (long long) st->st_mtim.tv_sec, (long long) st->st_mtim.tv_nsec,
    (long long) st->st_ctim.tv_sec, (long long) st->st_ctim.tv_nsec,
  };
  mko_hash_bytes (&h, id, sizeof id);
  char *hex = mko_hash_hex (&h);
  /* The "nvptx-" prefix puts answers under the cache's size limit with
     its other entries.  */
  char *path = xasprintf ("%s/nvptx-answer-%s.txt", dir, hex);
  free (hex);
  return path;
}

/* Where the cache DIR keeps the answer of TOOL's file as it is now to
   ARG (malloc'd), or NULL when DIR is NULL or TOOL cannot be looked at.  */
static char *
current_path (const char *dir, const char *tool, const char *arg)
{
  struct stat st;
  if (!dir || stat (tool, &st) != 0)
    return NULL;
  return answer_path (dir, tool, &st, arg);
}

/* The answer the cache DIR holds for TOOL's to ARG (malloc'd), or NULL;
   *PATH gets where it is kept (malloc'd), or NULL when DIR is NULL or
   TOOL cannot be looked at.  */
static char *
cached_answer (const char *dir, const char *tool, const char *arg,
	       char **path)
{
  *path = current_path (dir, tool, arg);
  if (!*path)
    return NULL;
  size_t len;
  char *text = ok_read_file (*path, &len, NULL);
  if (text && len > 0 && strlen (text) == len)
    {
      /* Used now: the cache is trimmed by entries' times.  */
      utimensat (AT_FDCWD, *path, NULL, 0);
      return text;
    }
  free (text);
  return NULL;
}

/* OUT, what a tool that exited with RC printed, as an answer: OUT when
   RC is 0 and OUT is not empty, kept in the cache DIR at PATH when PATH
   is not NULL; else NULL (OUT freed).  PATH is freed.  */
static char *
keep_answer (const char *dir, char *path, int rc, char *out)
{
  if (rc != 0 || !out || !*out)
    {
      free (out);
      free (path);
      return NULL;
    }
  if (path)
    mko_cache_put (dir, path, out, strlen (out));
  free (path);
  return out;
}

/* A question asked ahead (mko_tool_answer_ahead), not answered yet.  */
struct asked
{
  char *dir, *tool, *arg;
  /* Where the cache keeps the answer of the tool's file as it was when
     asked, or NULL.  */
  char *path;
  int started;			/* RUN is running.  */
  struct ok_running run;
  char *out;
  struct asked *next;
};

/* The questions asked ahead and not collected yet, and the process that
   asked them (a forked child does not collect them).  */
static struct asked *asked;
static pid_t asker;

/* Wait for A's answer and return it as mko_tool_answer does, kept in
   the cache where PATH, where the cache keeps the answer of the tool's
   file as it is now, is the one A asked: not for a toolkit upgraded in
   place meanwhile, whose answer would key the old one's objects.  A
   (already off the list) and PATH are freed.  */
static char *
collect (struct asked *a, char *path)
{
  int rc = a->started ? ok_finish_command (&a->run) : -1;
  if (path && (!a->path || strcmp (a->path, path) != 0))
    {
      free (path);
      path = NULL;
    }
  char *answer = keep_answer (a->dir, path, rc, a->out);
  free (a->path);
  free (a->dir);
  free (a->tool);
  free (a->arg);
  free (a);
  return answer;
}

/* At exit: the questions no link step needed (the versions, when no
   cubin was built; any, when the link failed first) are collected all
   the same, so that no tool outlives the link, writing into the
   temporary directory that the cleanup removes after this (tempfile.h's
   exit handler, registered earlier, runs later), and so that their
   answers are kept for the next link.  They take milliseconds.  */
static void
collect_the_rest (void)
{
  if (getpid () != asker)
    return;
  while (asked)
    {
      struct asked *a = asked;
      asked = a->next;
      free (collect (a, current_path (a->dir, a->tool, a->arg)));
    }
}

void
mko_tool_answer_ahead (const char *dir, const char *tool, const char *arg)
{
  char *path;
  char *text = cached_answer (dir, tool, arg, &path);
  if (text)
    {
      free (text);
      free (path);
      return;
    }
  if (!asker)
    {
      asker = getpid ();
      atexit (collect_the_rest);
    }
  struct asked *a = xcalloc (1, sizeof *a);
  a->dir = dir ? xstrdup (dir) : NULL;
  a->tool = xstrdup (tool);
  a->arg = xstrdup (arg);
  a->path = path;
  const char *argv[] = { tool, arg, NULL };
  struct ok_command cmd = { .argv = argv, .out = &a->out, .quiet = 1 };
  /* Not started (already reported): mko_tool_answer does not try
     again.  */
  a->started = ok_start_command (&cmd, 0, &a->run) == 0;
  a->next = asked;
  asked = a;
}

char *
mko_tool_answer (const char *dir, const char *tool, const char *arg)
{
  char *path;
  char *text = cached_answer (dir, tool, arg, &path);
  if (text)
    {
      free (path);
      return text;
    }

  struct asked **ap = &asked;
  while (*ap && (strcmp ((*ap)->tool, tool) || strcmp ((*ap)->arg, arg)))
    ap = &(*ap)->next;
  if (*ap)
    {
      struct asked *a = *ap;
      *ap = a->next;
      return collect (a, path);
    }
  char *out = NULL;
  const char *argv[] = { tool, arg, NULL };
  struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1 };
  int rc = ok_run_command (&cmd);
  return keep_answer (dir, path, rc, out);
}
