/* offloadkit-info: will programs offload here, and if not, why.

   Without arguments it describes this machine: the libgomp a program
   gets, and for each kind of offload device the plugin libgomp would load
   (offloadkit's or GCC's, and from where) with its devices, or the
   reason for none.  With programs or shared libraries it describes their
   offload images too, and what each device found would run of them.
   Exit status: 0 when offloading will happen (a device for each kind of
   image of each FILE, or, without FILE, any device), 1 when it will not,
   2 after an error (a bad option, a file that cannot be read).  */

#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomp-abi.h"
#include "info.h"

static const char *program_name = "offloadkit-info";

static void
usage (FILE *out)
{
  fprintf (out,
"Usage: %s [OPTION]... [FILE]...\n"
"Say whether offloading will happen on this machine: the libgomp that\n"
"programs get, the plugin libgomp loads for each kind of offload device\n"
"(offloadkit's or GCC's) and its devices, or why there are none; with\n"
"FILEs (programs or shared libraries), their offload images and what\n"
"each device would run of them.  Nothing of FILE runs, and no kernel\n"
"is started.\n"
"\n"
"  --json        print one JSON object instead of text\n"
"  --help        display this help and exit\n"
"  --version     output version information and exit\n"
"\n"
"Exit status: 0 when offloading will happen (each FILE has a device for\n"
"each kind of image it has; without FILE, there is a device), 1 when it\n"
"will not, 2 after an error.\n"
"\n"
"The settings that change the answer are read from the environment as\n"
"programs read them: LD_LIBRARY_PATH, OFFLOADKIT_EMULATE, the drivers'\n"
"own; OMP_TARGET_OFFLOAD and ACC_DEVICE_TYPE are shown.\n",
	   program_name);
}

/* JSON strings.  */
static void
json_str (const char *s)
{
  putchar ('"');
  for (; s != NULL && *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
	printf ("\\%c", c);
      else if (c < 0x20)
	printf ("\\u%04x", c);
      else
	putchar (c);
    }
  putchar ('"');
}

static bool
plugin_has_devices (const struct info_plugin *pl)
{
  return pl->error[0] == '\0' && pl->num_devices > 0;
}

/* What device DEV of kind KIND would run of program P's images: a cubin
   for its SM (or of its major below it), the PTX JIT-linked, a code
   object for its GCN architecture, host code on an emulated device;
   into BUF, and whether it runs something.  */
static bool
device_runs (const struct info_program *p, enum info_kind kind,
	     const struct info_device *dev, char *buf, size_t len)
{
  if (dev->emulated || dev->describe[0] == '\0')
    {
      if (dev->emulated && !p->offloadkit)
	{
	  snprintf (buf, len, "nothing: an emulated device runs only images"
		    " built by offloadkit's mkoffload, and this one's were"
		    " built by GCC's");
	  return false;
	}
      snprintf (buf, len, dev->emulated ? "the host code of its regions"
		: "its images (the plugin does not say how)");
      return true;
    }
  const struct info_image *best = NULL, *ptx = NULL, *too_new = NULL;
  for (int i = 0; i < p->nimages; i++)
    {
      const struct info_image *im = &p->images[i];
      if (im->kind != kind)
	continue;
      if (im->form == INFO_CUBIN && dev->sm != 0
	  && (im->arch == dev->sm
	      || (im->arch / 10 == dev->sm / 10 && im->arch < dev->sm
		  && (best == NULL || im->arch > best->arch))))
	best = im;
      else if (im->form == INFO_PTX && im->arch <= dev->sm
	       && dev->cuda_driver > 0
	       && info_ptx_isa_cuda (im->ptx_isa) > dev->cuda_driver)
	too_new = im;		/* The driver's JIT refuses it.  */
      else if (im->form == INFO_PTX && im->arch <= dev->sm
	       && (ptx == NULL || im->arch > ptx->arch))
	ptx = im;
      else if (im->form == INFO_GCN_CODE)
	{
	  char name[48];
	  if (strcmp (info_gcn_name (im->arch, name, sizeof name),
		      dev->gfx) == 0)
	    best = im;
	}
    }
  if (best != NULL && best->form == INFO_CUBIN)
    snprintf (buf, len, "the cubin for sm_%u", best->arch);
  else if (best != NULL)
    snprintf (buf, len, "the code object for %s", dev->gfx);
  else if (ptx != NULL)
    snprintf (buf, len, "the PTX for sm_%u, JIT-compiled for sm_%u",
	      ptx->arch, dev->sm);
  else if (too_new != NULL)
    {
      unsigned need = info_ptx_isa_cuda (too_new->ptx_isa);
      snprintf (buf, len, "nothing: no cubin for sm_%u, and its PTX (ISA"
		" %u.%u) needs a CUDA %u.%u driver or newer, and this one is"
		" %u.%u", dev->sm, too_new->ptx_isa / 10, too_new->ptx_isa % 10,
		need / 1000, need % 1000 / 10, dev->cuda_driver / 1000,
		dev->cuda_driver % 1000 / 10);
    }
  else if (kind == INFO_NVPTX)
    snprintf (buf, len, "nothing: no cubin for sm_%u and no PTX for it or"
	      " an older target", dev->sm);
  else
    snprintf (buf, len, "nothing: no code object for %s; rebuild with"
	      " -foffload-options=amdgcn-amdhsa=-march=%s", dev->gfx,
	      dev->gfx);
  return best != NULL || ptx != NULL;
}

/* The requires clauses of MASK that libgomp acts on, by their names,
   into BUF: "unified_shared_memory, reverse_offload", or "" for none
   (GOMP_REQUIRES_TARGET_USED says only that the program has target
   regions).  */
static const char *
requires_names (uint32_t mask, char *buf, size_t len)
{
  static const struct { uint32_t bit; const char *name; } names[] = {
    { OK_GOMP_REQUIRES_UNIFIED_ADDRESS, "unified_address" },
    { OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY, "unified_shared_memory" },
    { OK_GOMP_REQUIRES_SELF_MAPS, "self_maps" },
    { OK_GOMP_REQUIRES_REVERSE_OFFLOAD, "reverse_offload" },
  };
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (mask & names[i].bit)
      snprintf (buf + strlen (buf), len - strlen (buf), "%s%s",
		buf[0] ? ", " : "", names[i].name);
  return buf;
}

/* Whether program P needs the devices' access to the host's memory.  */
static bool
requires_usm (const struct info_program *p)
{
  return p->requires_known
    && (p->omp_requires & (OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
			   | OK_GOMP_REQUIRES_SELF_MAPS)) != 0;
}

/* The number of devices of plugin PL that program P gets: those that
   give unified shared memory when it requires it (libgomp 15 and later
   ask the plugin with the program's requires mask; libgomp 13 and 14's
   plugins give none).  */
static int
program_devices (const struct info_program *p, const struct info_plugin *pl)
{
  if (!plugin_has_devices (pl))
    return 0;
  if (requires_usm (p))
    return pl->usm_devices > 0 ? pl->usm_devices : 0;
  return pl->num_devices;
}

/* The libgomp interface version of M's libgomp (GOMP_VERSION), or 0.  */
static unsigned
libgomp_interface (const struct info_machine *m)
{
  return m->libgomp[0] != '\0' ? OK_GOMP_VERSION_OF_GCC (m->gcc) : 0;
}

static void
print_machine_text (const struct info_machine *m)
{
  if (m->libgomp[0] != '\0')
    printf ("libgomp: %s (GCC %d's, plugin interface version %u)\n",
	    m->libgomp, m->gcc, libgomp_interface (m));
  else
    printf ("libgomp: none found (%s)\n", m->libgomp_error);
  static const char *const settings[] = {
    "OMP_TARGET_OFFLOAD", "OFFLOADKIT_EMULATE", "ACC_DEVICE_TYPE",
    "OMP_DEFAULT_DEVICE", "LD_LIBRARY_PATH"
  };
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (getenv (settings[i]) != NULL)
      printf ("setting: %s=%s\n", settings[i], getenv (settings[i]));
  for (int k = 0; k < INFO_NKINDS; k++)
    {
      const struct info_plugin *pl = &m->plugins[k];
      printf ("%s: ", info_kind_target[k]);
      if (pl->path[0] == '\0')
	{
	  printf ("no plugin (%s)\n", pl->error[0] ? pl->error
		  : "libgomp-plugin not found");
	  continue;
	}
      printf ("%s plugin %s\n", pl->ours ? "offloadkit's" : "GCC's",
	      pl->path);
      if (pl->error[0] != '\0')
	printf ("  no devices: %s\n", pl->error);
      else if (pl->num_devices <= 0)
	printf ("  no devices%s%s%s\n", pl->reasons[0] ? ": " : "",
		pl->reasons, pl->log != NULL ? "; the plugin said:" : "");
      for (int d = 0; d < pl->ndevs; d++)
	{
	  const struct info_device *dev = &pl->devs[d];
	  printf ("  device %d: %s", d, dev->describe[0] ? dev->describe
		  : dev->name[0] ? dev->name : "(no description)");
	  if (dev->describe[0] && dev->name[0])
	    printf (", %s", dev->name);
	  if (dev->memory > 0)
	    printf (", %.1f GiB", (double) dev->memory / (1024.0 * 1024 * 1024));
	  if (dev->driver[0])
	    printf (", %s", dev->driver);
	  putchar ('\n');
	}
      if (pl->usm_devices > 0)
	printf ("  unified shared memory: yes, %d device%s, for programs"
		" that require it\n", pl->usm_devices,
		pl->usm_devices == 1 ? "" : "s");
      else if (pl->usm_devices != -2)
	printf ("  unified shared memory: no (the devices do not reach the"
		" host's memory)\n");
      else if (plugin_has_devices (pl))
	printf ("  unified shared memory: no (libgomp %d gives none)\n",
		m->gcc);
      if ((pl->num_devices <= 0 || pl->error[0]) && pl->log != NULL)
	{
	  /* The plugin's own words, indented.  */
	  for (const char *s = pl->log; *s;)
	    {
	      const char *nl = strchr (s, '\n');
	      size_t n = nl ? (size_t) (nl - s) : strlen (s);
	      printf ("    %.*s\n", (int) n, s);
	      s += n + (nl != NULL);
	    }
	}
    }
}

static void
print_program_text (FILE *out, const struct info_program *p,
		    const struct info_machine *m, bool *runs)
{
  *runs = true;
  fprintf (out, "%s:", p->path);
  if (!p->offloadkit && !p->gcc_format)
    {
      fprintf (out, " no offload images\n");
      *runs = false;
      return;
    }
  fprintf (out, " offload images built by %s", p->offloadkit
	  ? "offloadkit's mkoffload" : "GCC's own mkoffload");
  if (p->gcc_major > 0)
    fprintf (out, " for GCC %u", p->gcc_major);
  else if (p->gcc_min > 0)
    fprintf (out, " for GCC %u or newer", p->gcc_min);
  if (p->desc_version > 0)
    fprintf (out, " (descriptor version %u)", p->desc_version);
  fprintf (out, ", %zu function%s, %zu variable%s\n", p->num_funcs,
	  p->num_funcs == 1 ? "" : "s", p->num_vars,
	  p->num_vars == 1 ? "" : "s");
  /* GCC's own images do not say which GCC made them; the compilers of the
     file's objects do (the wrapper's is one of them).  */
  if (p->gcc_major == 0 && p->comment_gccs[0] != '\0')
    fprintf (out, "  compiled by: GCC %s (the file's .comment)\n",
	     p->comment_gccs);
  char names[128];
  if (p->requires_known)
    fprintf (out, "  requires: %s\n",
	     requires_names (p->omp_requires, names, sizeof names)[0]
	     ? names : "nothing of the devices");
  else
    fprintf (out, "  requires: not recorded (%s)\n", !p->offloadkit
	     ? "GCC 12's data has none, nor has a program without OpenMP"
	     " target regions" : p->gcc_major == 0 ? "an earlier offloadkit"
	     " built the images" : p->gcc_major == 12 ? "GCC 12's compiler"
	     " does not give it" : "the compiler gave none");
  unsigned have = libgomp_interface (m);
  if (p->gomp_lib > 0 && have > 0 && p->gomp_lib > have)
    {
      /* GOMP_offload_register_ver refuses them before main.  */
      fprintf (out, "  libgomp: GCC %d's (interface version %u) is too old"
	       " for these images (interface version %u): the program stops"
	       " at start-up with \"Library too old for offload\"\n", m->gcc,
	       have, p->gomp_lib);
      *runs = false;
    }
  for (int k = 0; k < INFO_NKINDS; k++)
    {
      if (!p->kinds[k])
	continue;
      fprintf (out, "  %s:", info_kind_target[k]);
      for (int i = 0; i < p->nimages; i++)
	{
	  const struct info_image *im = &p->images[i];
	  char name[48];
	  if ((int) im->kind != k)
	    continue;
	  if (im->form == INFO_PTX && im->ptx_isa > 0)
	    fprintf (out, " PTX for sm_%u (ISA %u.%u);", im->arch,
		     im->ptx_isa / 10, im->ptx_isa % 10);
	  else if (im->form == INFO_PTX)
	    fprintf (out, " PTX for sm_%u;", im->arch);
	  else if (im->form == INFO_CUBIN)
	    fprintf (out, " cubin sm_%u;", im->arch);
	  else
	    fprintf (out, " code object %s;",
		    info_gcn_name (im->arch, name, sizeof name));
	}
      fputc ('\n', out);
      const struct info_plugin *pl = &m->plugins[k];
      bool any = false;
      int ndevs = program_devices (p, pl);
      for (int d = 0; ndevs > 0 && d < pl->ndevs; d++)
	{
	  char what[256];
	  any |= device_runs (p, (enum info_kind) k, &pl->devs[d], what,
			      sizeof what);
	  fprintf (out, "    device %d runs %s\n", d, what);
	}
      if (!plugin_has_devices (pl))
	fprintf (out, "    no %s device here: the regions run on the host\n",
		info_kind_plugin[k]);
      else if (ndevs == 0)
	fprintf (out, "    no %s device here gives the unified shared memory"
		 " it requires: the regions run on the host\n",
		 info_kind_plugin[k]);
      if (!any)
	*runs = false;
    }
}

static void
print_json (const struct info_machine *m, struct info_program *progs,
	    int nprogs, const bool *prog_runs, bool offloads)
{
  printf ("{\"offloads\":%s,\"libgomp\":{\"path\":", offloads ? "true"
	  : "false");
  json_str (m->libgomp);
  printf (",\"gcc\":%d,\"error\":", m->gcc);
  json_str (m->libgomp_error);
  printf ("},\"plugins\":[");
  for (int k = 0; k < INFO_NKINDS; k++)
    {
      const struct info_plugin *pl = &m->plugins[k];
      printf ("%s{\"target\":", k ? "," : "");
      json_str (info_kind_target[k]);
      printf (",\"path\":");
      json_str (pl->path);
      printf (",\"offloadkit\":%s,\"devices\":%d,\"usm_devices\":%d,"
	      "\"error\":", pl->ours ? "true" : "false",
	      pl->error[0] ? 0 : pl->num_devices,
	      pl->usm_devices > 0 ? pl->usm_devices : 0);
      json_str (pl->error);
      printf (",\"reasons\":");
      json_str (pl->reasons);
      printf (",\"said\":");
      json_str (pl->log);
      printf (",\"device\":[");
      for (int d = 0; d < pl->ndevs; d++)
	{
	  const struct info_device *dev = &pl->devs[d];
	  printf ("%s{\"describe\":", d ? "," : "");
	  json_str (dev->describe);
	  printf (",\"name\":");
	  json_str (dev->name);
	  printf (",\"vendor\":");
	  json_str (dev->vendor);
	  printf (",\"driver\":");
	  json_str (dev->driver);
	  printf (",\"memory\":%zu,\"emulated\":%s,\"sm\":%u,\"gfx\":",
		  dev->memory, dev->emulated ? "true" : "false", dev->sm);
	  json_str (dev->gfx);
	  printf ("}");
	}
      printf ("]}");
    }
  printf ("],\"files\":[");
  for (int i = 0; i < nprogs; i++)
    {
      const struct info_program *p = &progs[i];
      printf ("%s{\"path\":", i ? "," : "");
      json_str (p->path);
      char names[128];
      printf (",\"built_by\":\"%s\",\"descriptor_version\":%u,"
	      "\"gcc\":%u,\"gcc_min\":%u,\"libgomp_interface\":%u,"
	      "\"compiled_by\":", p->offloadkit ? "offloadkit"
	      : p->gcc_format ? "gcc" : "", p->desc_version, p->gcc_major,
	      p->gcc_major ? p->gcc_major : p->gcc_min, p->gomp_lib);
      json_str (p->comment_gccs);
      printf (",\"requires\":");
      if (p->requires_known)
	json_str (requires_names (p->omp_requires, names, sizeof names));
      else
	printf ("null");
      printf (",\"functions\":%zu,\"variables\":%zu,\"offloads\":%s,"
	      "\"images\":[", p->num_funcs, p->num_vars,
	      prog_runs[i] ? "true" : "false");
      for (int j = 0; j < p->nimages; j++)
	{
	  const struct info_image *im = &p->images[j];
	  char name[48];
	  printf ("%s{\"target\":\"%s\",\"form\":\"%s\",\"arch\":\"", j ? ","
		  : "", info_kind_target[im->kind],
		  im->form == INFO_PTX ? "ptx" : im->form == INFO_CUBIN
		  ? "cubin" : "code-object");
	  if (im->form == INFO_GCN_CODE)
	    printf ("%s\"}", info_gcn_name (im->arch, name, sizeof name));
	  else if (im->form == INFO_PTX && im->ptx_isa > 0)
	    printf ("sm_%u\",\"ptx_isa\":\"%u.%u\"}", im->arch,
		    im->ptx_isa / 10, im->ptx_isa % 10);
	  else
	    printf ("sm_%u\"}", im->arch);
	}
      printf ("]}");
    }
  printf ("]}\n");
}

int
main (int argc, char **argv)
{
  bool json = false;
  int first = argc;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--help") == 0)
	{
	  usage (stdout);
	  return 0;
	}
      if (strcmp (argv[i], "--version") == 0)
	{
	  printf ("offloadkit-info (offloadkit) %s\n", PACKAGE_VERSION);
	  return 0;
	}
      if (strcmp (argv[i], "--json") == 0)
	json = true;
      else if (strcmp (argv[i], "--") == 0)
	{
	  first = i + 1;
	  break;
	}
      else if (argv[i][0] == '-' && argv[i][1] != '\0')
	{
	  fprintf (stderr, "%s: error: unrecognized option '%s'\n"
		   "Try '%s --help' for more information.\n", program_name,
		   argv[i], program_name);
	  return 2;
	}
      else
	{
	  first = i;
	  break;
	}
    }
  int nprogs = argc - first;
  struct info_program *progs = calloc (nprogs > 0 ? (size_t) nprogs : 1,
				       sizeof *progs);
  bool *prog_runs = calloc (nprogs > 0 ? (size_t) nprogs : 1, sizeof (bool));
  if (progs == NULL || prog_runs == NULL)
    {
      fprintf (stderr, "%s: error: out of memory\n", program_name);
      return 2;
    }
  for (int i = 0; i < nprogs; i++)
    {
      char err[PATH_MAX + 256];
      if (argv[first + i][0] == '-' && strcmp (argv[first + i], "-") != 0
	  && first + i > 0 && strcmp (argv[first + i - 1], "--") != 0)
	{
	  fprintf (stderr, "%s: error: options come before FILEs: '%s'\n",
		   program_name, argv[first + i]);
	  return 2;
	}
      if (!info_program_read (argv[first + i], &progs[i], err, sizeof err))
	{
	  fprintf (stderr, "%s: error: %s\n", program_name, err);
	  return 2;
	}
    }

  struct info_machine m;
  info_machine_probe (&m);
  bool any_device = false;
  for (int k = 0; k < INFO_NKINDS; k++)
    any_device |= plugin_has_devices (&m.plugins[k]);
  bool offloads = nprogs > 0 || any_device;
  if (!json)
    print_machine_text (&m);
  for (int i = 0; i < nprogs; i++)
    {
      bool runs;
      /* With --json the same verdict, without the text.  */
      FILE *out = json ? fopen ("/dev/null", "w") : stdout;
      if (out == NULL)
	{
	  fprintf (stderr, "%s: error: cannot open /dev/null\n",
		   program_name);
	  return 2;
	}
      print_program_text (out, &progs[i], &m, &runs);
      if (out != stdout)
	fclose (out);
      prog_runs[i] = runs;
      offloads &= runs;
    }
  if (json)
    print_json (&m, progs, nprogs, prog_runs, offloads);
  else if (nprogs == 0)
    printf ("offloading: %s\n", any_device ? "yes" : "no device here");
  info_machine_free (&m);
  free (progs);
  free (prog_runs);
  return offloads ? 0 : 1;
}
