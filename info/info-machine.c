/* What a program started now would get: the libgomp the dynamic linker
   gives it, and for each kind of offload device the plugin libgomp would
   load (libgomp dlopens "libgomp-plugin-NAME.so.1": the same search from
   this process) and the devices it counts.  Each plugin is asked in a
   child process of its own, with libgomp loaded as a program has it and
   GOMP_DEBUG=1: a plugin may end the process it is loaded in (GCC's gcn
   plugin without an HSA runtime exits) or hang in a driver, and what it
   says while counting is the reason when it counts none.  The child
   writes "@@ KEY VALUE" lines on a pipe, its stderr between them.  No
   kernel is started.  */

#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gomp-abi.h"
#include "info.h"
#include "libgomp-nodes.h"

const char *const info_kind_plugin[INFO_NKINDS] = { "nvptx", "gcn" };
const char *const info_kind_target[INFO_NKINDS] = { "nvptx-none",
						    "amdgcn-amdhsa" };

/* How long a plugin may take to count and start its devices.  */
#define INFO_PROBE_SECONDS 20

/* libgomp's acc_get_property numbers (openacc.h's acc_device_property_t,
   the plugins' GOMP_OFFLOAD_openacc_get_property).  */
#define INFO_PROP_MEMORY 1
#define INFO_PROP_NAME 0x10001
#define INFO_PROP_VENDOR 0x10002
#define INFO_PROP_DRIVER 0x10003
union info_prop
{
  const void *ptr;
  size_t val;
};

/* The child's side.  */

static void
say (int fd, const char *fmt, ...)
{
  char line[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n > sizeof line - 2)
    n = (int) sizeof line - 2;
  for (int i = 0; i < n; i++)
    if (line[i] == '\n')
      line[i] = ' ';
  line[n++] = '\n';
  for (int off = 0; off < n;)
    {
      ssize_t w = write (fd, line + off, (size_t) (n - off));
      if (w < 0 && errno == EINTR)
	continue;
      if (w <= 0)
	return;
      off += (int) w;
    }
}

/* The path of the object HANDLE, from the dynamic linker.  */
static const char *
object_path (void *handle)
{
  struct link_map *lm = NULL;
  if (dlinfo (handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL)
    return "?";
  return lm->l_name;
}

/* What the plugins need of this machine, said when a plugin counts no
   device: the vendor's runtime library, and for AMD GPUs the kernel's
   device file.  */
static void
driver_facts (enum info_kind kind, int fd)
{
  const char *lib = kind == INFO_NVPTX ? "libcuda.so.1"
		    : "libhsa-runtime64.so.1";
  void *h = dlopen (lib, RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    say (fd, "@@ reason no %s runtime: %s", kind == INFO_NVPTX ? "CUDA driver"
	 : "HSA", dlerror ());
  else
    say (fd, "@@ reason %s is %s", lib, object_path (h));
  if (kind == INFO_GCN)
    {
      if (access ("/dev/kfd", F_OK) != 0)
	say (fd, "@@ reason no /dev/kfd: no AMD GPU driver (amdgpu) here");
      else if (access ("/dev/kfd", R_OK | W_OK) != 0)
	say (fd, "@@ reason /dev/kfd is there but not readable and writable"
	     " by this user (the render or video group?)");
    }
}

/* Ask the plugin of KIND, loaded as libgomp loads it, what it has; with
   USM only how many devices it counts for a program that requires
   unified shared memory (a plugin decides its count once per process).  */
static void
child_probe (enum info_kind kind, int fd, bool usm)
{
  void *gomp = dlopen ("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (gomp == NULL)
    {
      say (fd, "@@ libgomp-error %s", dlerror ());
      return;
    }
  int gcc = 12;
  for (size_t i = 0; i < sizeof ok_libgomp_nodes / sizeof ok_libgomp_nodes[0];
       i++)
    if (dlvsym (gomp, ok_libgomp_nodes[i].symbol, ok_libgomp_nodes[i].node))
      {
	gcc = ok_libgomp_nodes[i].gcc;
	break;
      }
  say (fd, "@@ libgomp %s", object_path (gomp));
  say (fd, "@@ gcc %d", gcc);

  char name[64];
  snprintf (name, sizeof name, "libgomp-plugin-%s.so.1",
	    info_kind_plugin[kind]);
  void *plugin = dlopen (name, RTLD_LAZY | RTLD_LOCAL);
  if (plugin == NULL)
    {
      say (fd, "@@ plugin-error %s", dlerror ());
      return;
    }
  say (fd, "@@ plugin %s", object_path (plugin));
  say (fd, "@@ ours %d", dlsym (plugin, "offloadkit_plugin") != NULL);
  int (*num) (unsigned) = (int (*) (unsigned)) dlsym
    (plugin, "GOMP_OFFLOAD_get_num_devices");
  bool (*init) (int) = (bool (*) (int)) dlsym (plugin,
					       "GOMP_OFFLOAD_init_device");
  union info_prop (*prop) (int, int) = (union info_prop (*) (int, int))
    dlsym (plugin, "GOMP_OFFLOAD_openacc_get_property");
  bool (*describe) (int, char *, size_t) = (bool (*) (int, char *, size_t))
    dlsym (plugin, "offloadkit_plugin_describe");
  if (num == NULL || init == NULL)
    {
      say (fd, "@@ plugin-error it has no GOMP_OFFLOAD_get_num_devices or"
	   " GOMP_OFFLOAD_init_device");
      return;
    }
  if (usm)
    {
      say (fd, "@@ usm-devices %d",
	   num (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY));
      return;
    }
  /* A program without requirements; libgomp 12 passes no argument.  */
  int n = num (0);
  say (fd, "@@ devices %d", n);
  if (n <= 0)
    driver_facts (kind, fd);
  for (int d = 0; d < n && d < INFO_MAX_DEVICES; d++)
    {
      if (!init (d))
	{
	  say (fd, "@@ device %d failed", d);
	  continue;
	}
      char buf[160] = "";
      if (describe != NULL && describe (d, buf, sizeof buf))
	say (fd, "@@ device %d describe %s", d, buf);
      if (prop == NULL)
	continue;
      union info_prop v = prop (d, INFO_PROP_NAME);
      if (v.ptr != NULL)
	say (fd, "@@ device %d name %s", d, (const char *) v.ptr);
      v = prop (d, INFO_PROP_VENDOR);
      if (v.ptr != NULL)
	say (fd, "@@ device %d vendor %s", d, (const char *) v.ptr);
      v = prop (d, INFO_PROP_DRIVER);
      if (v.ptr != NULL)
	say (fd, "@@ device %d driver %s", d, (const char *) v.ptr);
      v = prop (d, INFO_PROP_MEMORY);
      say (fd, "@@ device %d memory %zu", d, v.val);
    }
}

/* The parent's side.  */

/* Append N bytes at S to the malloc'd string *LOG.  */
static void
log_append (char **log, const char *s, size_t n)
{
  size_t old = *log != NULL ? strlen (*log) : 0;
  char *p = realloc (*log, old + n + 1);
  if (p == NULL)
    return;
  memcpy (p + old, s, n);
  p[old + n] = '\0';
  *log = p;
}

static struct info_device *
device_of (struct info_plugin *pl, const char *rest, const char **after)
{
  char *end;
  long d = strtol (rest, &end, 10);
  if (end == rest || d < 0 || d >= INFO_MAX_DEVICES || *end != ' ')
    return NULL;
  if (d >= pl->ndevs)
    pl->ndevs = (int) d + 1;
  *after = end + 1;
  return &pl->devs[d];
}

/* Read "sm_90" or "gfx90a" out of DEV's description.  */
static void
device_arch (struct info_device *dev)
{
  const char *s = strstr (dev->describe, "sm_");
  if (s != NULL)
    dev->sm = (unsigned) strtoul (s + 3, NULL, 10);
  s = strstr (dev->describe, "gfx");
  if (s != NULL)
    {
      size_t n = strspn (s, "gfx0123456789abcdef-generic");
      if (n >= sizeof dev->gfx)
	n = sizeof dev->gfx - 1;
      memcpy (dev->gfx, s, n);
      dev->gfx[n] = '\0';
    }
  dev->emulated = strncmp (dev->describe, "emulated:", 9) == 0;
}

/* One line the child said.  */
static void
parse_line (struct info_machine *m, struct info_plugin *pl, char *line)
{
  if (strncmp (line, "@@ ", 3) != 0)
    {
      if (line[strspn (line, " \t\r")] == '\0')
	return;
      log_append (&pl->log, line, strlen (line));
      log_append (&pl->log, "\n", 1);
      return;
    }
  char *key = line + 3;
  char *val = strchr (key, ' ');
  if (val == NULL)
    return;
  *val++ = '\0';
  const char *rest;
  struct info_device *dev;
  if (strcmp (key, "libgomp") == 0)
    snprintf (m->libgomp, sizeof m->libgomp, "%s", val);
  else if (strcmp (key, "libgomp-error") == 0)
    snprintf (m->libgomp_error, sizeof m->libgomp_error, "%s", val);
  else if (strcmp (key, "gcc") == 0)
    m->gcc = atoi (val);
  else if (strcmp (key, "plugin") == 0)
    snprintf (pl->path, sizeof pl->path, "%s", val);
  else if (strcmp (key, "plugin-error") == 0)
    snprintf (pl->error, sizeof pl->error, "%s", val);
  else if (strcmp (key, "ours") == 0)
    pl->ours = atoi (val) != 0;
  else if (strcmp (key, "devices") == 0)
    pl->num_devices = atoi (val);
  else if (strcmp (key, "usm-devices") == 0)
    pl->usm_devices = atoi (val);
  else if (strcmp (key, "reason") == 0)
    {
      size_t n = strlen (pl->reasons);
      snprintf (pl->reasons + n, sizeof pl->reasons - n, "%s%s",
		n ? "; " : "", val);
    }
  else if (strcmp (key, "device") == 0
	   && (dev = device_of (pl, val, &rest)) != NULL)
    {
      if (strncmp (rest, "describe ", 9) == 0)
	{
	  snprintf (dev->describe, sizeof dev->describe, "%s", rest + 9);
	  device_arch (dev);
	}
      else if (strncmp (rest, "name ", 5) == 0)
	snprintf (dev->name, sizeof dev->name, "%s", rest + 5);
      else if (strncmp (rest, "vendor ", 7) == 0)
	snprintf (dev->vendor, sizeof dev->vendor, "%s", rest + 7);
      else if (strncmp (rest, "driver ", 7) == 0)
	{
	  snprintf (dev->driver, sizeof dev->driver, "%s", rest + 7);
	  unsigned major, minor;
	  if (sscanf (dev->driver, "CUDA Driver %u.%u", &major, &minor) == 2
	      && major < 100 && minor < 100)
	    dev->cuda_driver = major * 1000 + minor * 10;
	}
      else if (strncmp (rest, "memory ", 7) == 0)
	dev->memory = (size_t) strtoull (rest + 7, NULL, 10);
    }
}

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void
probe_kind (struct info_machine *m, enum info_kind kind, bool usm)
{
  struct info_plugin *pl = &m->plugins[kind];
  int fds[2];
  if (pipe (fds) != 0)
    {
      snprintf (pl->error, sizeof pl->error, "cannot make a pipe: %s",
		strerror (errno));
      return;
    }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      snprintf (pl->error, sizeof pl->error, "cannot fork: %s",
		strerror (errno));
      close (fds[0]);
      close (fds[1]);
      return;
    }
  if (pid == 0)
    {
      close (fds[0]);
      dup2 (fds[1], STDERR_FILENO);
      int null = open ("/dev/null", O_WRONLY);
      if (null >= 0)
	dup2 (null, STDOUT_FILENO);
      /* What the plugin says while counting is the reason it counts
	 none; libgomp reads the setting when it is loaded.  */
      setenv ("GOMP_DEBUG", "1", 1);
      child_probe (kind, fds[1], usm);
      _exit (0);
    }
  close (fds[1]);
  char buf[4096];
  size_t have = 0;
  double deadline = now () + INFO_PROBE_SECONDS;
  bool timed_out = false;
  for (;;)
    {
      int wait_ms = (int) ((deadline - now ()) * 1000);
      if (wait_ms <= 0)
	{
	  timed_out = true;
	  break;
	}
      struct pollfd p = { .fd = fds[0], .events = POLLIN };
      int r = poll (&p, 1, wait_ms);
      if (r < 0 && errno == EINTR)
	continue;
      if (r <= 0)
	{
	  timed_out = r == 0;
	  break;
	}
      ssize_t got = read (fds[0], buf + have, sizeof buf - 1 - have);
      if (got < 0 && errno == EINTR)
	continue;
      if (got <= 0)
	break;
      have += (size_t) got;
      buf[have] = '\0';
      char *nl, *start = buf;
      while ((nl = strchr (start, '\n')) != NULL)
	{
	  *nl = '\0';
	  parse_line (m, pl, start);
	  start = nl + 1;
	}
      have = (size_t) (buf + have - start);
      memmove (buf, start, have);
      if (have == sizeof buf - 1)
	{
	  buf[have] = '\0';
	  parse_line (m, pl, buf);
	  have = 0;
	}
    }
  if (have > 0)
    {
      buf[have] = '\0';
      parse_line (m, pl, buf);
    }
  close (fds[0]);
  if (timed_out)
    kill (pid, SIGKILL);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (timed_out)
    snprintf (pl->error, sizeof pl->error, "the plugin did not answer in"
	      " %d seconds", INFO_PROBE_SECONDS);
  else if (WIFSIGNALED (status))
    snprintf (pl->error, sizeof pl->error, "the plugin crashed the process"
	      " it was loaded in (signal %d)", WTERMSIG (status));
  else if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    snprintf (pl->error, sizeof pl->error, "the plugin ended the process"
	      " it was loaded in (exit status %d)", WEXITSTATUS (status));
}

void
info_machine_probe (struct info_machine *m)
{
  memset (m, 0, sizeof *m);
  m->gcc = 12;
  for (int k = 0; k < INFO_NKINDS; k++)
    {
      struct info_plugin *pl = &m->plugins[k];
      pl->usm_devices = -2;
      probe_kind (m, (enum info_kind) k, false);
      /* Unified shared memory exists from libgomp 15 only.  */
      if (pl->error[0] == '\0' && pl->num_devices > 0 && m->gcc >= 15)
	{
	  char *log = pl->log;
	  pl->log = NULL;
	  probe_kind (m, (enum info_kind) k, true);
	  free (pl->log);
	  pl->log = log;
	}
    }
}

void
info_machine_free (struct info_machine *m)
{
  for (int k = 0; k < INFO_NKINDS; k++)
    free (m->plugins[k].log);
}
