/* What ptxas and nvlink say about themselves; see tool-answers.h.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The answer the cache DIR holds for TOOL's to ARG (malloc'd), or NULL;
   *PATH gets where it is kept (malloc'd), or NULL when DIR is NULL or
   TOOL cannot be looked at.  */
static char *
cached_answer (const char *dir, const char *tool, const char *arg,
	       char **path)
{
  struct stat st;
  *path = NULL;
  if (!dir || stat (tool, &st) != 0)
    return NULL;
  *path = answer_path (dir, tool, &st, arg);
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

/* A question asked ahead (mko_tool_answer_ahead), not answered yet.  */
struct asked
{
  char *tool, *arg;
  /* Where the cache keeps the answer of the tool's file as it was when
     asked, or NULL.  */
  char *path;
  int started;			/* RUN is running.  */
  struct ok_running run;
  char *out;
  struct asked *next;
};

static struct asked *asked;

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
  struct asked *a = xcalloc (1, sizeof *a);
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

  char *out = NULL;
  int rc = -1;
  struct asked **ap = &asked;
  while (*ap && (strcmp ((*ap)->tool, tool) || strcmp ((*ap)->arg, arg)))
    ap = &(*ap)->next;
  if (*ap)
    {
      struct asked *a = *ap;
      *ap = a->next;
      if (a->started)
	rc = ok_finish_command (&a->run);
      out = a->out;
      /* The answer is of the file as it was when asked: kept only where
	 that file is still the tool's (not a toolkit upgraded in place
	 meanwhile, whose answer would key the old one's objects).  */
      if (path && (!a->path || strcmp (a->path, path) != 0))
	{
	  free (path);
	  path = NULL;
	}
      free (a->path);
      free (a->tool);
      free (a->arg);
      free (a);
    }
  else
    {
      const char *argv[] = { tool, arg, NULL };
      struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1 };
      rc = ok_run_command (&cmd);
    }
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
