/* OFFLOADKIT_EMULATE: how many emulated devices this plugin offers.

   It is either a count N or a comma-separated list of PLUGIN:N ("gcn:1",
   "nvptx:2,gcn:1").  libgomp counts the devices of every plugin it loads,
   and a program built for one offload target has images for that
   target's plugin only, so a plain N means N devices of each kind the
   process has offloadkit images for: each plugin looks for the notes
   that offloadkit's wrapper objects carry (OK_NOTE_OWNER) in the loaded
   objects.  A process with no such note yet (its offloading code is in a
   library that is still to be loaded, say) gets N of every kind.  The
   list names the plugins explicitly.

   Both plugins read the setting; a mistake in it is reported by one of
   them only, the "speaker": the first plugin of EMU_PLUGINS that the
   process has images for (or the first of all when it has none) and that
   is loaded, ours and not GCC's plugin of the same name.  libgomp loads
   and asks its plugins one after another, in a fixed order, so the
   second to ask sees whether the first spoke.  */

/* dl_iterate_phdr.  */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu-internal.h"

/* More would only be a typo.  */
#define EMU_MAX_DEVICES 64

/* offloadkit's plugins, in the order of who speaks first.  */
static const struct
{
  const char *name;
  int device_type;
} emu_plugins[] = {
  { "nvptx", OK_GOMP_DEVICE_NVIDIA_PTX },
  { "gcn", OK_GOMP_DEVICE_GCN },
};
#define EMU_NUM_PLUGINS (sizeof emu_plugins / sizeof emu_plugins[0])

/* Index of the plugin called NAME (LEN bytes) in EMU_PLUGINS, or -1.  */
static int
emu_plugin_index (const char *name, size_t len)
{
  for (size_t i = 0; i < EMU_NUM_PLUGINS; i++)
    if (strlen (emu_plugins[i].name) == len
	&& memcmp (emu_plugins[i].name, name, len) == 0)
      return (int) i;
  return -1;
}

/* Add to *KINDS (a bit per EMU_PLUGINS index) the device types named by
   the offloadkit notes of the LEN bytes of notes at P.  */
static void
emu_scan_notes (const unsigned char *p, size_t len, unsigned *kinds)
{
  static const char owner[] = OK_NOTE_OWNER;
  while (len >= 12)
    {
      uint32_t namesz, descsz, type;
      memcpy (&namesz, p, 4);
      memcpy (&descsz, p + 4, 4);
      memcpy (&type, p + 8, 4);
      size_t name_pad = ((size_t) namesz + 3) & ~(size_t) 3;
      size_t desc_pad = ((size_t) descsz + 3) & ~(size_t) 3;
      if (name_pad > len - 12 || desc_pad > len - 12 - name_pad)
	return;			/* Not notes as we know them.  */
      const unsigned char *name = p + 12, *desc = name + name_pad;
      if (namesz == sizeof owner && memcmp (name, owner, sizeof owner) == 0
	  && type == OK_NOTE_IMAGES && descsz >= 4)
	{
	  int32_t device_type;
	  memcpy (&device_type, desc, 4);
	  for (size_t i = 0; i < EMU_NUM_PLUGINS; i++)
	    if (emu_plugins[i].device_type == device_type)
	      *kinds |= 1u << i;
	}
      p = desc + desc_pad;
      len -= 12 + name_pad + desc_pad;
    }
}

/* The kinds of device (bits by EMU_PLUGINS index) that the loaded
   object INFO has offloadkit images for.  */
unsigned
emu_object_kinds (const struct dl_phdr_info *info)
{
  unsigned kinds = 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type == PT_NOTE)
	emu_scan_notes ((const unsigned char *) info->dlpi_addr
			+ ph->p_vaddr, ph->p_memsz, &kinds);
    }
  return kinds;
}

static int
emu_visit_object (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  *(unsigned *) data |= emu_object_kinds (info);
  return 0;
}

/* The kinds of device (bits by EMU_PLUGINS index) that the loaded
   objects have offloadkit images for.  */
static unsigned
emu_image_kinds (void)
{
  unsigned kinds = 0;
  dl_iterate_phdr (emu_visit_object, &kinds);
  return kinds;
}

/* Whether the plugin file of EMU_PLUGINS[I] that libgomp finds is ours:
   ME (this one), or one of that file name, found as libgomp finds it,
   that carries our mark (GCC's own plugin of the same name does not).
   Only asked when the setting has a mistake to report.  */
static bool
emu_plugin_ours (int i, int me)
{
  if (i == me)
    return true;
  char soname[64];
  snprintf (soname, sizeof soname, "libgomp-plugin-%s.so.1",
	    emu_plugins[i].name);
  void *h = dlopen (soname, RTLD_LAZY | RTLD_LOCAL);
  if (h == NULL)
    return false;
  bool ours = dlsym (h, OK_PLUGIN_MARK) != NULL;
  dlclose (h);
  return ours;
}

int
emu_rank (void)
{
  for (size_t i = 0; i < EMU_NUM_PLUGINS; i++)
    if (emu_plugins[i].device_type == ok_plugin.device_type)
      return (int) i;
  return -1;
}

int
emu_num_ranks (void)
{
  return (int) EMU_NUM_PLUGINS;
}

/* Symbol NAME of the plugin of rank RANK, not this one, when the process
   has it loaded already and it is ours; else NULL.  Nothing is loaded:
   plugins stay loaded once libgomp has them, so what is found stays.  */
void *
emu_peer_symbol (int rank, const char *name)
{
  if (rank < 0 || rank >= (int) EMU_NUM_PLUGINS || rank == emu_rank ())
    return NULL;
  char soname[64];
  snprintf (soname, sizeof soname, "libgomp-plugin-%s.so.1",
	    emu_plugins[rank].name);
  void *h = dlopen (soname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  void *sym = dlsym (h, OK_PLUGIN_MARK) != NULL ? dlsym (h, name) : NULL;
  dlclose (h);
  return sym;
}

/* The index in EMU_PLUGINS of the plugin that reports mistakes in the
   setting, when KINDS (bits by index) are the kinds the process has
   images for and ME is this plugin: the first of those kinds (all when
   there are none) whose plugin is ours; ME when none is.  */
static int
emu_speaker (unsigned kinds, int me)
{
  unsigned candidates = kinds != 0 ? kinds : (1u << EMU_NUM_PLUGINS) - 1;
  for (size_t i = 0; i < EMU_NUM_PLUGINS; i++)
    if ((candidates & (1u << i)) && emu_plugin_ours ((int) i, me))
      return (int) i;
  return me;
}

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

/* The count the list ENV gives plugin ME, or -1 when ENV is not a list
   of PLUGIN:N.  Only for a well-formed list (REPORT), the names of no
   offloadkit plugin are reported.  */
static long
emu_parse_list (const char *env, int me, bool report)
{
  long mine = 0;
  const char *p = env;
  for (;;)
    {
      const char *comma = strchr (p, ',');
      const char *end = comma ? comma : p + strlen (p);
      const char *colon = memchr (p, ':', (size_t) (end - p));
      long n = colon ? emu_parse_count (colon + 1, end) : -1;
      if (n < 0 || colon == p)
	return -1;
      int which = emu_plugin_index (p, (size_t) (colon - p));
      if (which == me)
	mine = n;
      else if (which < 0 && report)
	ok_error ("OFFLOADKIT_EMULATE=\"%s\" names \"%.*s\", which is no"
		  " offloadkit plugin (they are %s and %s): no emulated"
		  " devices for it", env, (int) (colon - p), p,
		  emu_plugins[0].name, emu_plugins[1].name);
      if (comma == NULL)
	return mine;
      p = comma + 1;
    }
}

/* Whether ENV, a list, names a plugin that is none of ours.  */
static bool
emu_list_has_stranger (const char *env)
{
  const char *p = env;
  for (;;)
    {
      if (emu_plugin_index (p, strcspn (p, ":,")) < 0)
	return true;
      p = strchr (p, ',');
      if (p == NULL)
	return false;
      p++;
    }
}

int
emu_probe (void)
{
  const char *env = getenv ("OFFLOADKIT_EMULATE");
  if (env == NULL || *env == '\0')
    return 0;
  int me = -1;
  for (size_t i = 0; i < EMU_NUM_PLUGINS; i++)
    if (emu_plugins[i].device_type == ok_plugin.device_type)
      me = (int) i;
  unsigned kinds = emu_image_kinds ();

  long n = -1;
  if (strchr (env, ':') != NULL)
    {
      /* Checked whole before anything is said of it.  */
      n = emu_parse_list (env, me, false);
      if (n >= 0 && emu_list_has_stranger (env)
	  && emu_speaker (kinds, me) == me)
	emu_parse_list (env, me, true);
    }
  else if ((n = emu_parse_count (env, env + strlen (env))) > 0 && kinds != 0
	   && me >= 0 && !(kinds & (1u << me)))
    {
      OK_DEBUG ("OFFLOADKIT_EMULATE=%s: the process has no image for this"
		" plugin: no emulated devices", env);
      n = 0;
    }
  if (n >= 0)
    return (int) n;
  if (emu_speaker (kinds, me) == me)
    ok_error ("OFFLOADKIT_EMULATE=\"%s\" is neither a number of emulated"
	      " devices from 0 to %d nor a list such as \"nvptx:1,gcn:2\"; no"
	      " emulated devices", env, EMU_MAX_DEVICES);
  return 0;
}
