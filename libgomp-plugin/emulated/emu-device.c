/* Emulated devices: how many (OFFLOADKIT_EMULATE), starting and stopping
   them, and the backend's hook table.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu-internal.h"

/* More would only be a typo.  */
#define EMU_MAX_DEVICES 64

/* Parse a device count in [S, E): a decimal number from 0 to
   EMU_MAX_DEVICES.  -1 if it is not one.  */
static long
emu_parse_count (const char *s, const char *e)
{
  if (s == e || e - s > 6)
    return -1;
  long n = 0;
  for (const char *p = s; p < e; p++)
    {
      if (*p < '0' || *p > '9')
	return -1;
      n = n * 10 + (*p - '0');
    }
  return n <= EMU_MAX_DEVICES ? n : -1;
}

/* OFFLOADKIT_EMULATE is either N, for every offloadkit plugin, or a
   comma-separated list of PLUGIN:N (e.g. "gcn:1" or "nvptx:2,gcn:1"),
   naming the plugins that get emulated devices: libgomp counts the
   devices of all its plugins, so with both of ours installed a plain N
   gives N nvptx and N gcn devices, and a program built for one target
   finds devices without its image in front.  */
static int
emu_probe (void)
{
  const char *env = getenv ("OFFLOADKIT_EMULATE");
  if (env == NULL || *env == '\0')
    return 0;
  if (strchr (env, ':') == NULL)
    {
      long n = emu_parse_count (env, env + strlen (env));
      if (n >= 0)
	return (int) n;
    }
  else
    {
      size_t len = strlen (ok_plugin.name);
      long mine = 0;
      const char *p = env;
      for (;;)
	{
	  const char *comma = strchr (p, ',');
	  const char *end = comma ? comma : p + strlen (p);
	  const char *colon = memchr (p, ':', (size_t) (end - p));
	  long n = colon ? emu_parse_count (colon + 1, end) : -1;
	  if (n < 0 || colon == p)
	    {
	      mine = -1;
	      break;
	    }
	  if ((size_t) (colon - p) == len && memcmp (p, ok_plugin.name, len) == 0)
	    mine = n;
	  if (comma == NULL)
	    break;
	  p = comma + 1;
	}
      if (mine >= 0)
	return (int) mine;
    }
  ok_error ("OFFLOADKIT_EMULATE=\"%s\" is neither a number of emulated"
	    " devices from 0 to %d nor a list such as \"nvptx:1,gcn:2\"; no"
	    " emulated devices", env, EMU_MAX_DEVICES);
  return 0;
}

static bool
emu_init_device (struct ok_device *d)
{
  struct emu_device *dev = emu_dev (d);
  ok_device_set_label (d, "emulated device %d", d->local);
  pthread_mutex_init (&dev->mem_lock, NULL);
  pthread_mutex_init (&dev->queue_lock, NULL);
  pthread_cond_init (&dev->queue_cond, NULL);
  pthread_cond_init (&dev->done_cond, NULL);
  int err = pthread_create (&dev->worker, NULL, emu_worker, dev);
  if (err != 0)
    {
      ok_dev_error (d, "cannot start its thread: %s", strerror (err));
      pthread_cond_destroy (&dev->done_cond);
      pthread_cond_destroy (&dev->queue_cond);
      pthread_mutex_destroy (&dev->queue_lock);
      pthread_mutex_destroy (&dev->mem_lock);
      return false;
    }
  return true;
}

/* After the core has waited for the device's launches and unloaded its
   images.  */
static bool
emu_fini_device (struct ok_device *d)
{
  struct emu_device *dev = emu_dev (d);
  emu_worker_stop (dev);
  /* What the program did not free goes with the device.  */
  for (size_t i = 0; i < dev->num_blocks; i++)
    free (dev->blocks[i].start);
  free (dev->blocks);
  pthread_cond_destroy (&dev->done_cond);
  pthread_cond_destroy (&dev->queue_cond);
  pthread_mutex_destroy (&dev->queue_lock);
  pthread_mutex_destroy (&dev->mem_lock);
  return true;
}

const struct ok_backend ok_backend_emulated = {
  .name = "emulated",
  .device_size = sizeof (struct emu_device),
  .job_size = sizeof (struct emu_job),
  .in_order = true,
  .probe = emu_probe,
  .init_device = emu_init_device,
  .fini_device = emu_fini_device,
  .load_image = emu_load_image,
  .unload_image = emu_unload_image,
  .alloc = emu_alloc,
  .free = emu_free,
  .host2dev = emu_host2dev,
  .dev2host = emu_dev2host,
  .dev2dev = emu_dev2dev,
  .launch = emu_launch,
  .finish = emu_finish,
};
