/* hsa-harness: the descriptors of the test libraries, loads that must
   succeed or fail, and the images loaded on the main process's two
   devices: the address table, variables and their initial values, and
   images in GCC's own format.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-harness.h"

const struct reg *ours, *gccs;
const struct ok_openmp_target *our_desc;
size_t nfuncs, nvars;
struct ok_addr_pair *tab0, *tab1;

/* What is alive in the runtime, by leak kind.  */
struct census { long n[8]; };

static struct census
census (void)
{
  struct census c = { { 0 } };
  for (size_t i = 0; harness->leak_kinds[i] != NULL; i++)
    c.n[i] = f_outstanding (harness->leak_kinds[i]);
  return c;
}

/* Check that what is alive in the runtime is what was alive at BEFORE.  */
static bool
same_census (const struct census *before, const char *what)
{
  struct census now = census ();
  bool ok = true;
  for (size_t i = 0; harness->leak_kinds[i] != NULL; i++)
    if (now.n[i] != before->n[i])
      {
	fprintf (stderr, "  (%s: %ld %s alive, %ld before)\n", what,
		 now.n[i], harness->leak_kinds[i], before->n[i]);
	ok = false;
      }
  return ok;
}

bool
describe_ours (void)
{
  if (ours == NULL)
    return false;
  our_desc = ours->target_data;
  const struct ok_host_table *h = &our_desc->host;
  nfuncs = (size_t) (h->funcs_end - h->funcs);
  nvars = (size_t) (h->vars_end - h->vars) / 2;
  return our_desc->magic == OK_DESC_MAGIC && our_desc->num_targets >= 1;
}

const struct ok_tgt_desc *
target_for (const struct ok_openmp_target *d, uint32_t arch)
{
  for (uint32_t i = 0; i < d->num_targets; i++)
    if (ok_desc_target_at (d, i)->arch == arch)
      return ok_desc_target_at (d, i);
  return NULL;
}

struct ok_addr_pair *
load (int dev, const struct ok_openmp_target *d)
{
  return harness_load (dev, ours->version, d, nfuncs + nvars + 1);
}

void
bad_load (const char *name, int dev, const void *data, ...)
{
  struct census c = census ();
  long bad = bad_calls ();
  int e = errors_now ();
  struct ok_addr_pair *table;
  int n;
  va_list ap;
  va_start (ap, data);
  bool said = harness_refused_load (name, dev, ours->version, data, ap, &n,
				    &table);
  va_end (ap);
  if (!said)
    fprintf (stderr, "  (%d errors, last: %s)\n", errors_now () - e,
	     last_error ());
  checkf (said, "%s: one clear error", name);
  checkf (same_census (&c, name), "%s: nothing left in the runtime", name);
  char buf[256];
  snprintf (buf, sizeof buf, "%s: no invalid runtime call", name);
  check_no_bad_calls (buf, bad);
  harness_undo_load (n, table, dev, ours->version, data);
}

/* ------------------------------------------------------------------ */
/* The images on the main process's devices.  */

/* Our descriptor as an earlier mkoffload laid it out, version 2, whose
   targets array has the shorter entries: it loads on device 1 as version
   3 does (both images are checked, the second found at version 2's
   stride).  */
static void
test_load_v2 (void)
{
  struct ok_tgt_desc_v2 v2[4];
  struct ok_openmp_target d = *our_desc;
  uint32_t n = our_desc->num_targets < 4 ? our_desc->num_targets : 4;
  for (uint32_t i = 0; i < n; i++)
    memcpy (&v2[i], ok_desc_target_at (our_desc, i), sizeof v2[i]);
  d.desc_version = 2;
  d.num_targets = n;
  d.targets = (const struct ok_tgt_desc *) (const void *) v2;
  struct ok_addr_pair *t = load (1, &d);
  checkf (t != NULL, "descriptor version 2: our image loads on device 1"
	  " (%s)", agent_name[1]);
  if (t == NULL || tab1 == NULL)
    {
      free (t);
      return;
    }
  bool same = true;
  for (size_t i = 0; i < nfuncs + nvars; i++)
    same &= t[i].end - t[i].start == tab1[i].end - tab1[i].start;
  check ("descriptor version 2: the entries of version 3's load", same);
  free (t);
  check ("descriptor version 2: unloads",
	 p_unload_image (1, ours->version, &d));
}

void
test_load (void)
{
  long bad = bad_calls ();
  tab0 = load (0, our_desc);
  checkf (tab0 != NULL, "our image loads on device 0 (%s)", agent_name[0]);
  tab1 = load (1, our_desc);
  checkf (tab1 != NULL, "our image loads on device 1 (%s)", agent_name[1]);
  if (tab0 == NULL)
    return;
  const struct ok_tgt_desc *td = target_for (our_desc, agent_arch[0]);
  checkf (td != NULL && td->kernel_info != NULL && td->num_funcs == nfuncs
	  && td->num_vars == nvars,
	  "the descriptor has a %s image with kernel info", agent_name[0]);
  if (td == NULL)
    return;
  bool funcs_ok = true;
  for (size_t i = 0; i < nfuncs; i++)
    funcs_ok &= tab0[i].start != 0 && tab0[i].end >= tab0[i].start;
  check ("a non-zero entry per kernel", funcs_ok);
  bool vars_ok = nvars > 0;
  const struct ok_host_table *h = &our_desc->host;
  for (size_t i = 0; i < nvars; i++)
    {
      uintptr_t addr = 0;
      uint64_t size = 0;
      int kernel = 1;
      size_t host_size = (size_t) (uintptr_t) h->vars[2 * i + 1]
			 & ~OK_GOMP_LINK_BIT;
      /* A link variable is a pointer on the device (NAME.linkptr).  */
      if ((uintptr_t) h->vars[2 * i + 1] & OK_GOMP_LINK_BIT)
	host_size = sizeof (void *);
      const struct ok_addr_pair *e = &tab0[nfuncs + i];
      bool found = f_symbol (td->var_names[i], 0, &addr, &size, &kernel,
			     NULL);
      if (!found || kernel || e->start != addr || e->end - e->start != size
	  || size != host_size)
	{
	  fprintf (stderr, "  (variable %s: entry %#lx+%lu, runtime %#lx+%lu,"
		   " host size %zu)\n", td->var_names[i],
		   (unsigned long) e->start,
		   (unsigned long) (e->end - e->start), (unsigned long) addr,
		   (unsigned long) size, host_size);
	  vars_ok = false;
	}
    }
  check ("variables: the runtime's addresses and sizes, as big as on the "
	 "host", vars_ok);
  /* The trailing entry: GCC 12's libgomp wants __gomp_device_num (an
     int), 13's and later the 16-byte __gomp_additional_icvs, and they
     write the device number there themselves.  */
  bool icvs = offloadkit_standin_libgomp_gcc >= 13;
  const char *dn_name = icvs ? "__gomp_additional_icvs" : "__gomp_device_num";
  size_t dn_want = icvs ? 16 : sizeof (int);
  const struct ok_addr_pair *dn = &tab0[nfuncs + nvars];
  uintptr_t dn_addr = 0;
  uint64_t dn_size = 0;
  bool has_dn = f_symbol (dn_name, 0, &dn_addr, &dn_size, NULL, NULL);
  char what[96];
  snprintf (what, sizeof what, "%s: the last entry", dn_name);
  check (what, has_dn ? dn->start == dn_addr && dn->end - dn->start == dn_size
		      : dn->start == 0 && dn->end == 0);
  snprintf (what, sizeof what, "%s: %zu bytes", dn_name, dn_want);
  if (has_dn)
    check (what, dn->end - dn->start == dn_want);
  else
    unsupported ("the trailing variable's size (the image has none)");
  /* Initial values of variables come from the code object.  */
  int counter = 0;
  for (size_t i = 0; i < nvars; i++)
    if (strcmp (td->var_names[i], "counter") == 0)
      {
	p_dev2host (0, &counter, (void *) tab0[nfuncs + i].start,
		    sizeof counter);
	check ("variable counter: initial value 7 on the device",
	       counter == 7);
      }
  /* A static variable: only the code object's variable table leads to
     it (the fake, like the runtime, does not load local symbols).  */
  bool has_hidden = false;
  for (size_t i = 0; i < nvars; i++)
    if (strncmp (td->var_names[i], "hidden", 6) == 0)
      {
	uintptr_t addr = 0;
	uint64_t size = 0;
	short v[3] = { 0, 0, 0 };
	has_hidden = true;
	check ("static variable hidden: the local symbol's address and"
	       " size (6 bytes)",
	       f_symbol (td->var_names[i], 0, &addr, &size, NULL, NULL)
	       && tab0[nfuncs + i].start == addr
	       && tab0[nfuncs + i].end == addr + 6 && size == 6);
	p_dev2host (0, v, (void *) tab0[nfuncs + i].start, sizeof v);
	check ("static variable hidden: initial value {3, 4, 5} on the"
	       " device", v[0] == 3 && v[1] == 4 && v[2] == 5);
      }
  check ("static variable hidden: in the descriptor", has_hidden);
  check_no_bad_calls ("load: no invalid runtime calls", bad);
  test_load_v2 ();
}

void
test_gcc_image (void)
{
  if (gccs == NULL)
    {
      unsupported ("image in GCC's format (not built)");
      return;
    }
  long bad = bad_calls ();
  const struct ok_host_table *h = gccs->host_table;
  size_t nf = (size_t) (h->funcs_end - h->funcs);
  size_t nv = (size_t) (h->vars_end - h->vars) / 2;
  /* GCC 13 made the device version 3 with its device runtime's new
     kernel arguments; the plugin lays them out by it.  */
  bool v3 = gcc_major >= 13;
  unsigned dev_version = v3 ? OK_GCC_DEV_VERSION_GCN_13
			    : OK_GCC_DEV_VERSION_GCN;
  checkf (gccs->type == OK_GOMP_DEVICE_GCN
	  && OK_GOMP_VERSION_DEV (gccs->version) == dev_version,
	  "GCC's image: registered as device version %u (GCC %d)",
	  dev_version, gcc_major);
  struct ok_addr_pair *t = harness_load (0, gccs->version, gccs->target_data,
					 nf + nv + 1);
  check ("GCC's image: loads, one entry per function and variable + 1",
	 t != NULL);
  if (t == NULL)
    return;
  bool sizes_ok = true;
  for (size_t i = 0; i < nv; i++)
    {
      uintptr_t hsize = (uintptr_t) h->vars[2 * i + 1];
      /* A link variable is a pointer on the device.  */
      if (hsize & OK_GOMP_LINK_BIT)
	hsize = sizeof (void *);
      sizes_ok &= t[nf + i].end - t[nf + i].start == hsize
		  && t[nf + i].start != 0;
    }
  check ("GCC's image: variables as big as on the host", sizes_ok);
  void *tv = p_alloc (0, 64);
  struct dispatch d;
  bool ran = run_one (0, (void *) t[0].start, tv, NULL, &d);
  check ("GCC's image: a kernel runs", ran);
  if (ran)
    {
      check ("GCC's image: tgt_vars is the first kernel argument",
	     d.nkargs >= 1 && d.kargs[0] == (uintptr_t) tv);
      /* Its kernel arguments in its device version's layout, for the
	 geometry the launch chose (a kernel needs far less LDS than
	 64 KiB).  */
      if (v3)
	check ("GCC's image: version 3 kernel arguments",
	       v3_args_are (&d, tv, d.p.grid[0], d.p.wg[2], 64 * 1024,
			    32 * 1024, v3_lds (d.p.grid[0], 0)));
      else
	check ("GCC's image: version 2 kernel arguments, output at 40",
	       d.nkargs >= 5 && d.kargs[2] == d.p.kernarg_address + V2_OUTPUT
	       && d.kargs[3] != 0 && d.kargs[4] != 0);
    }
  p_free (0, tv);
  free (t);
  check ("GCC's image: unload",
	 p_unload_image (0, gccs->version, gccs->target_data));
  check_no_bad_calls ("GCC's image: no invalid runtime calls", bad);
}


/* Loaded by libgomp 14 (the stand-in plays it): the trailing entry is
   __gomp_additional_icvs, 16 bytes, or {0, 0} for an image without it
   (the test libraries' accel compiler, GCC 12's, gives them
   __gomp_device_num only); for a program that requires reverse offload
   libgomp gets the device addresses of the image's functions (from the
   label our mkoffload puts at their table), one per function.  GCC 13+'s
   own images: hsa-harness-abi3.c.  */
void
child_libgomp14 (void)
{
  harness_libgomp14 ();
  if (!describe_ours () || !p_init_device (0))
    {
      check ("init", false);
      return;
    }
  unsigned ver3 = OK_GOMP_VERSION_PACK (3, OK_GOMP_VERSION_DEV
					      (ours->version));
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = NULL;
  int n = (p_load_image) (0, ver3, our_desc, &t, &rev, NULL);
  check ("our image loads", n == (int) (nfuncs + nvars + 1));
  if (n > 0)
    {
      const struct ok_addr_pair *e = &t[nfuncs + nvars];
      uintptr_t addr = 0;
      uint64_t size = 0;
      if (f_symbol ("__gomp_additional_icvs", 0, &addr, &size, NULL, NULL))
	check ("trailing entry: __gomp_additional_icvs, 16 bytes",
	       e->start == addr && size == 16 && e->end - e->start == 16);
      else
	check ("trailing entry: {0, 0} without __gomp_additional_icvs",
	       e->start == 0 && e->end == 0);
      bool rev_ok = rev != NULL;
      for (size_t i = 0; rev_ok && i < nfuncs; i++)
	{
	  rev_ok &= rev[i] != 0;
	  for (size_t j = 0; j < i; j++)
	    rev_ok &= rev[i] != rev[j];
	}
      check ("the reverse-offload table: a distinct address per function",
	     rev_ok);
      free (rev);
      free (t);
      check ("unload", p_unload_image (0, ver3, our_desc));
    }
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* A program that requires unified_address, loaded by libgomp 14: the HSA
   devices do not provide it (-1 without others), emulated ones do.  */
void
child_requires_ua (void)
{
  offloadkit_standin_libgomp_gcc = 14;
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  check ("HSA devices only: -1", num (OK_GOMP_REQUIRES_UNIFIED_ADDRESS) == -1);
  check ("no error", errors_now () == 0);
}

void
child_requires_ua_emulated (void)
{
  offloadkit_standin_libgomp_gcc = 14;
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  check ("the emulated device only",
	 num (OK_GOMP_REQUIRES_UNIFIED_ADDRESS) == 1);
  check ("it is device 0", p_init_device (0) && p_fini_device (0));
}
