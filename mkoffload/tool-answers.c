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

char *
mko_tool_answer (const char *dir, const char *tool, const char *arg)
{
  struct stat st;
  char *path = NULL;
  if (dir && stat (tool, &st) == 0)
    {
      path = answer_path (dir, tool, &st, arg);
      size_t len;
      char *text = ok_read_file (path, &len, NULL);
      if (text && len > 0 && strlen (text) == len)
	{
	  /* Used now: the cache is trimmed by entries' times.  */
	  utimensat (AT_FDCWD, path, NULL, 0);
	  free (path);
	  return text;
	}
      free (text);
    }

  const char *argv[] = { tool, arg, NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .out = &out, .quiet = 1 };
  if (ok_run_command (&cmd) != 0 || !out || !*out)
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
