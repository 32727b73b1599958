/* hsa-harness: device code of GCC 13 and newer.  Its device runtime reads
   the kernel arguments of GCN device version 3 (GCC 13's
   libgomp/config/gcn/libgomp-gcn.h: stack and team-arena pointers and
   sizes after the heap pointer, the output buffer at offset 56), GCC's own
   images of 13 and 14 have other target data, GCC 14's map host
   addresses of `declare target indirect' functions to device ones, and
   GCC 13's post reverse-offload requests in the output buffer.

   The test libraries hold the device code of the GCC under test (12's,
   or 14's to 16's); the harness plays what it has not: it marks our
   descriptor's images as GCC 13's mkoffload would
   (OK_TGT_GCN_KERNARGS_V3), or clears the mark, to check that the flag
   decides the layout per image; wraps code objects in the target data
   of GCC 13's and 14's mkoffloads; and writes the device's requests
   into the output buffer while the gate holds the kernel.  IND.so
   (ind.c) has two indirect functions, GCC 14+'s own or, for GCC 12,
   made by hand as GCC 14's compiler would give them: a table in
   .gnu.offload_ind_funcs and the device variable
   __gomp_indirect_addr_map; IND16.so the same with GCC 16's
   __gomp_indirect_addr_hmap, for which the plugin builds the hash table
   on the host.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hsa-harness.h"

/* GCC's struct output and printf_data (libgomp-gcn.h), our own
   declaration.  */
struct out_entry
{
  int written;
  char msg[128];
  int type;
  union
  {
    char text[128];
    uint64_t value_u64[16];
  } u;
};

struct out_buf
{
  int return_value;
  unsigned int next_output;
  struct out_entry queue[1024];
  unsigned int consumed;
};

/* GCC 12's and 13's gcn target data, and 14's (gcn_image_desc of their
   plugin-gcn.c).  */
struct gcc_code
{
  size_t size;
  const void *image;
};

struct gcc_kernel
{
  const char *name;
  int oacc_dims[3];
  int sgpr_count, vgpr_count;
};

struct gcc13_image
{
  const struct gcc_code *code;
  unsigned kernel_count;
  const struct gcc_kernel *kernels;
  unsigned global_variable_count;
};

struct gcc14_image
{
  const struct gcc_code *code;
  unsigned kernel_count;
  const struct gcc_kernel *kernels;
  unsigned ind_func_count;
  unsigned global_variable_count;
};

/* The "declare target indirect" test library, or NULL.  */
const struct reg *inds, *inds16;

/* D with the flags of every image set to FLAGS (the copy lives until the
   next call).  */
static const struct ok_openmp_target *
flagged (const struct ok_openmp_target *d, uint32_t flags)
{
  static struct ok_tgt_desc targets[4];
  static struct ok_openmp_target copy;
  copy = *d;
  for (uint32_t i = 0; i < d->num_targets && i < 4; i++)
    {
      targets[i] = *ok_desc_target_at (d, i);
      targets[i].flags = flags;
    }
  copy.targets = targets;
  return &copy;
}

/* D with every image marked as built by GCC 13+.  */
static const struct ok_openmp_target *
marked_v3 (const struct ok_openmp_target *d)
{
  return flagged (d, OK_TGT_GCN_KERNARGS_V3);
}

static bool
start (void)
{
  offloadkit_standin_libgomp_gcc = 14;
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  bool ok = num (0) >= 1 && describe_ours () && p_init_device (0);
  check ("device 0 starts", ok);
  return ok;
}

/* start, then our image marked as GCC 13+'s (in *V3) loaded on device 0:
   its table, NULL when either failed.  */
static struct ok_addr_pair *
start_marked (const struct ok_openmp_target **v3)
{
  if (!start ())
    return NULL;
  *v3 = marked_v3 (our_desc);
  struct ok_addr_pair *t = load (0, *v3);
  check ("marked image loads", t != NULL);
  return t;
}

/* GCC's image (GCCS's target data) in GCC 14's form: GCC 12's and 13's
   lack ind_func_count, then 0.  */
static struct gcc14_image
gccs_as_gcc14 (void)
{
  if (OK_GOMP_VERSION_LIB (gccs->version) >= 3)
    return *(const struct gcc14_image *) gccs->target_data;
  const struct gcc13_image *g = gccs->target_data;
  return (struct gcc14_image) { g->code, g->kernel_count, g->kernels, 0,
				g->global_variable_count };
}

/* Our image marked as GCC 13+'s: every kernel-argument field, for the
   default sizes and the LDS shared out between teams (60 compute units
   in the fake); the same image without the flag (as our mkoffload leaves
   GCC 12's device code) gets GCC 12's layout, whatever GCC built it: the
   flag decides, per image.  */
void
child_kernargs_v3 (void)
{
  const struct ok_openmp_target *v3;
  struct ok_addr_pair *t = start_marked (&v3);
  if (t == NULL)
    return;
  void *fn = (void *) t[0].start;
  void *tv = p_alloc (0, 64);
  struct dispatch d;
  void *a1[] = { ARG_TEAMS (3), ARG_LIMIT (2), NULL };
  check ("3 teams of 2: arena, stacks, heap, output; 64 KiB of LDS",
	 run_one (0, fn, tv, a1, &d)
	 && v3_args_are (&d, tv, 3, 2, 64 * 1024, 32 * 1024, 65536));
  void *a2[] = { ARG_TEAMS (200), ARG_LIMIT (4), NULL };
  check ("200 teams of 4: the memory grows; 3 teams per CU share the LDS",
	 run_one (0, fn, tv, a2, &d)
	 && v3_args_are (&d, tv, 200, 4, 64 * 1024, 32 * 1024, 65536 / 3));
  check ("3 teams of 2 again", run_one (0, fn, tv, a1, &d)
	 && v3_args_are (&d, tv, 3, 2, 64 * 1024, 32 * 1024, 65536));
  p_unload_image (0, ours->version, v3);
  free (t);

  const struct ok_openmp_target *v2 = flagged (our_desc, 0);
  t = load (0, v2);
  check ("unmarked image loads", t != NULL);
  if (t != NULL)
    {
      uint64_t extra = 0;
      const struct ok_tgt_desc *td = target_for (v2, agent_arch[0]);
      char kd[160];
      snprintf (kd, sizeof kd, "%s.kd", td->func_names[0]);
      f_symbol (kd, 0, NULL, NULL, NULL, &extra);
      bool ok = run_one (0, (void *) t[0].start, tv, a1, &d)
		&& d.kargs[2] == d.p.kernarg_address + V2_OUTPUT
		&& d.p.group_size == (uint32_t) (extra >> 32);
      check ("unmarked, GCC 12's layout: output at 40, the kernel's own"
	     " LDS", ok);
      p_unload_image (0, ours->version, v2);
      free (t);
    }
  p_free (0, tv);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* GCN_TEAM_ARENA_SIZE, GCN_STACK_SIZE and GOMP_GCN_LOWLAT_POOL, read as
   GCC 13+'s plugin reads them (set by the area).  */
void
child_kernargs_v3_env (void)
{
  const struct ok_openmp_target *v3;
  struct ok_addr_pair *t = start_marked (&v3);
  if (t == NULL)
    return;
  struct dispatch d;
  void *a1[] = { ARG_TEAMS (5), ARG_LIMIT (3), NULL };
  check ("8 KiB arenas, 4 KiB stacks, 1000 bytes of LDS",
	 run_one (0, (void *) t[0].start, NULL, a1, &d)
	 && v3_args_are (&d, NULL, 5, 3, 8192, 4096, 1000));
  p_unload_image (0, ours->version, v3);
  free (t);
  check ("fini", p_fini_device (0));
}

/* GCC 13's and 14's own formats (device version 3), made of the parts
   of GCC's image (GCC 12's, or 13 to 16's own): they load, and their
   kernels get version 3's arguments.  An image claiming indirect
   functions without their table is refused.  */
void
child_gcc_v3_images (void)
{
  if (gccs == NULL)
    {
      unsupported ("GCC 13 and 14 formats (no GCC-format library)");
      return;
    }
  if (!start ())
    return;
  const struct ok_host_table *h = gccs->host_table;
  size_t nf = (size_t) (h->funcs_end - h->funcs);
  size_t nv = (size_t) (h->vars_end - h->vars) / 2;
  /* From library version 3 (GCC 14) the target data has ind_func_count
     before the variable count.  */
  struct gcc14_image g14 = gccs_as_gcc14 ();
  check ("GCC's image: no indirect functions", g14.ind_func_count == 0);
  struct gcc13_image g13 = { g14.code, g14.kernel_count, g14.kernels,
			     g14.global_variable_count };
  unsigned v13 = OK_GOMP_VERSION_PACK (2, OK_GCC_DEV_VERSION_GCN_13);
  unsigned v14 = OK_GOMP_VERSION_PACK (3, OK_GCC_DEV_VERSION_GCN_13);
  struct { const char *name; unsigned version; const void *data; } forms[] = {
    { "GCC 13's format", v13, &g13 },
    { "GCC 14's format", v14, &g14 },
  };
  void *tv = p_alloc (0, 64);
  for (int i = 0; i < 2; i++)
    {
      struct ok_addr_pair *t = harness_load (0, forms[i].version,
					     forms[i].data, nf + nv + 1);
      checkf (t != NULL, "%s: loads, %zu + %zu + 1 entries", forms[i].name,
	      nf, nv);
      if (t == NULL)
	continue;
      bool sizes = true;
      for (size_t v = 0; v < nv; v++)
	{
	  uintptr_t hs = (uintptr_t) h->vars[2 * v + 1];
	  if (hs & OK_GOMP_LINK_BIT)
	    hs = sizeof (void *);
	  sizes &= t[nf + v].end - t[nf + v].start == hs;
	}
      checkf (sizes, "%s: variables as big as on the host", forms[i].name);
      struct dispatch d;
      void *a[] = { ARG_TEAMS (2), ARG_LIMIT (1), NULL };
      checkf (run_one (0, (void *) t[0].start, tv, a, &d)
	      && v3_args_are (&d, tv, 2, 1, 64 * 1024, 32 * 1024, 65536),
	      "%s: version 3 kernel arguments", forms[i].name);
      checkf (p_unload_image (0, forms[i].version, forms[i].data),
	      "%s: unloads", forms[i].name);
      free (t);
    }
  p_free (0, tv);

  /* Indirect functions, but GCC 12's code object has no table of them.  */
  g14.ind_func_count = 2;
  uint64_t host_fns[2] = { 0x1000, 0x2000 };
  struct ok_addr_pair *t = NULL;
  int e = errors_now ();
  int n = (p_load_image) (0, v14, &g14, &t, NULL, host_fns);
  check ("indirect functions without their table: refused", n == -1);
  check ("indirect functions without their table: says so",
	 error_says (e, "2 `declare target indirect' functions",
		     ".offload_ind_func_table", NULL));
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* The device address of the pointer variable NAME of the image loaded
   on device 0 in *VAR and its value in *VALUE; false when the image has
   no such 8-byte variable.  */
static bool
ind_pointer_var (const char *name, uintptr_t *var, uint64_t *value)
{
  uint64_t size = 0;
  *var = 0;
  *value = 0;
  return (f_symbol (name, 0, var, &size, NULL, NULL) && size == 8
	  && p_dev2host (0, value, (void *) *var, 8));
}

/* The device addresses of IND.so's two functions in the order of the
   host's HOST (libgomp's table of them) into DEV_OF_HOST: ind_fns lists
   the functions in the same order on the host (HOST_FNS, its contents
   there) and on the device (IND_TAB: its table entry).  */
static bool
ind_dev_fns (const uint64_t *host, const uint64_t *host_fns,
	     const struct ok_addr_pair *ind_tab, uint64_t dev_of_host[2])
{
  uint64_t dev_fns[2] = { 0, 0 };
  if (!p_dev2host (0, dev_fns, (void *) ind_tab->start, sizeof dev_fns)
      || dev_fns[0] == 0 || dev_fns[1] == 0 || dev_fns[0] == dev_fns[1]
      || host[0] == host[1])
    return false;
  for (int k = 0; k < 2; k++)
    {
      int j = host_fns[0] == host[k] ? 0 : host_fns[1] == host[k] ? 1 : -1;
      if (j < 0)
	return false;
      dev_of_host[k] = dev_fns[j];
    }
  return true;
}

/* The map of indirect functions IND.so's image on device 0 got, given
   HOST (libgomp's host table of them): GCC 14's flat form, {host,
   device} pairs and 0, in __gomp_indirect_addr_map.  */
static bool
ind_map_is (const uint64_t *host, const uint64_t *host_fns,
	    const struct ok_addr_pair *ind_tab)
{
  uintptr_t var = 0;
  uint64_t map_addr = 0, dev[2] = { 0, 0 }, map[5];
  if (!ind_pointer_var ("__gomp_indirect_addr_map", &var, &map_addr)
      || map_addr == 0 || !ind_dev_fns (host, host_fns, ind_tab, dev)
      || !p_dev2host (0, map, (void *) (uintptr_t) map_addr, sizeof map))
    {
      fprintf (stderr, "  (no map: variable %#lx, map at %#llx)\n",
	       (unsigned long) var, (unsigned long long) map_addr);
      return false;
    }
  bool ok = map[4] == 0;
  for (int k = 0; k < 2; k++)
    ok &= map[2 * k] == host[k] && map[2 * k + 1] == dev[k];
  if (!ok)
    fprintf (stderr, "  (map %#llx %#llx %#llx %#llx %#llx; expected"
	     " %#llx -> %#llx, %#llx -> %#llx)\n",
	     (unsigned long long) map[0], (unsigned long long) map[1],
	     (unsigned long long) map[2], (unsigned long long) map[3],
	     (unsigned long long) map[4], (unsigned long long) host[0],
	     (unsigned long long) dev[0], (unsigned long long) host[1],
	     (unsigned long long) dev[1]);
  return ok;
}

/* GCC 16's device code's lookup (libgomp/hashtab.h's htab_find over
   libgomp/config/accel/target-indirect.c's entries, struct htab as
   amdgcn lays it out: three size_t and an unsigned int, then the 16-byte
   entries at offset 32), written from GCC's source for this test: the
   device address for HOST in the table of SIZE entries E, 0 when it is
   not there.  */
static uint64_t
ind_hash_lookup (const uint64_t *e, uint32_t size, uint64_t host)
{
  uint32_t hash = (uint32_t) (host ^ (host >> 32));
  uint32_t index = hash % size;
  uint32_t hash2 = 1 + hash % (size - 2);
  for (uint32_t probes = 0; probes <= size; probes++)
    {
      const uint64_t *entry = e + 2 * index;
      if (entry[0] == 0 && entry[1] == 0)
	return 0;
      if (entry[0] == host)
	return entry[1];
      index += hash2;
      if (index >= size)
	index -= size;
    }
  return 0;
}

/* The same for GCC 16's form: the hash table in
   __gomp_indirect_addr_hmap, which the device code's lookup reads as it
   is (7 entries for 2 functions, prime index 0), and
   __gomp_indirect_addr_map left NULL, so that the device code does not
   build a table of its own.  */
static bool
ind_hash_is (const uint64_t *host, const uint64_t *host_fns,
	     const struct ok_addr_pair *ind_tab)
{
  uintptr_t var = 0, flat_var = 0;
  uint64_t map_addr = 0, flat = 0, dev[2] = { 0, 0 };
  uint64_t t[4 + 2 * 7];
  if (!ind_pointer_var ("__gomp_indirect_addr_hmap", &var, &map_addr)
      || map_addr == 0 || !ind_dev_fns (host, host_fns, ind_tab, dev)
      || !p_dev2host (0, t, (void *) (uintptr_t) map_addr, sizeof t))
    {
      fprintf (stderr, "  (no hash table: variable %#lx, at %#llx)\n",
	       (unsigned long) var, (unsigned long long) map_addr);
      return false;
    }
  bool flat_null = (!ind_pointer_var ("__gomp_indirect_addr_map", &flat_var,
				      &flat) || flat == 0);
  bool header = t[0] == 7 && t[1] == 2 && t[2] == 0 && (uint32_t) t[3] == 0;
  uint64_t miss = host[0] + host[1];
  bool found = (ind_hash_lookup (t + 4, 7, host[0]) == dev[0]
		&& ind_hash_lookup (t + 4, 7, host[1]) == dev[1]
		&& ind_hash_lookup (t + 4, 7, miss) == 0);
  if (!flat_null || !header || !found)
    fprintf (stderr, "  (flat map %#llx; header %llu %llu %llu %u; lookups"
	     " %s)\n", (unsigned long long) flat, (unsigned long long) t[0],
	     (unsigned long long) t[1], (unsigned long long) t[2],
	     (unsigned) t[3], found ? "right" : "wrong");
  return flat_null && header && found;
}

/* Whether the image loaded on device 0 has GCC 16's variable for the
   hash table.  */
static bool
ind_has_hmap (void)
{
  uintptr_t var = 0;
  return f_symbol ("__gomp_indirect_addr_hmap", 0, &var, NULL, NULL, NULL)
	 != 0;
}

/* The map of IND.so's or IND16.so's image on device 0 in the form its
   device code reads: the hash table when it has GCC 16's variable for
   it, else the flat map.  */
static bool
ind_served (const uint64_t *host, const uint64_t *host_fns,
	    const struct ok_addr_pair *ind_tab)
{
  return (ind_has_hmap () ? ind_hash_is (host, host_fns, ind_tab)
	  : ind_map_is (host, host_fns, ind_tab));
}

/* IND.so's table of host addresses of its indirect functions, as libgomp
   14 passes it (HOST), and the host's ind_fns (HOST_FNS), the variable
   of index IV: GCC 14+'s in the 6-word host table (libgcc's
   __OFFLOAD_TABLE__, words 4 and 5), in the order the compiler gave them
   (not their order in ind_fns); GCC 12's, made by hand, ind_fns itself.
   Whether there are two.  */
static bool
ind_host_tables (const struct reg *r, size_t iv, uint64_t host[2],
		 uint64_t host_fns[2])
{
  const struct ok_openmp_target *d = r->target_data;
  memcpy (host_fns, d->host.vars[2 * iv], 2 * sizeof *host_fns);
  if (OK_GOMP_VERSION_LIB (r->version) < 3)
    {
      memcpy (host, host_fns, 2 * sizeof *host);
      return true;
    }
  void *const *const *t = r->host_table;
  const uint64_t *from = (const uint64_t *) t[4];
  if ((const uint64_t *) t[5] - from != 2)
    return false;
  memcpy (host, from, 2 * sizeof *host);
  return true;
}

/* IND.so's descriptor and the index of its variable ind_fns.  */
static const struct ok_openmp_target *
ind_desc_of (const struct reg *r, size_t *nf, size_t *nv, size_t *ind_var)
{
  const struct ok_openmp_target *d = r->target_data;
  *nf = (size_t) (d->host.funcs_end - d->host.funcs);
  *nv = (size_t) (d->host.vars_end - d->host.vars) / 2;
  *ind_var = *nv;
  for (size_t i = 0; i < *nv; i++)
    if (strcmp (ok_desc_target_at (d, 0)->var_names[i], "ind_fns") == 0)
      *ind_var = i;
  return d;
}

static const struct ok_openmp_target *
ind_desc (size_t *nf, size_t *nv, size_t *ind_var)
{
  return ind_desc_of (inds, nf, nv, ind_var);
}

/* The form of the map the image loaded on device 0 should have been
   served, for check names.  */
static const char *
ind_form (void)
{
  return (ind_has_hmap () ? "the hash table in __gomp_indirect_addr_hmap"
	  : "the flat map {host, device}... 0 in __gomp_indirect_addr_map");
}

/* R's image (IND.so's or IND16.so's, called TAG) with its 2 indirect
   functions on device 0, in our format and wrapped in GCC 14's (the
   count from its target data): the map in the form its device code
   reads, GCC 16's hash table when WANT_HASH; freed at unload.  Then GCC
   14's target data counting more functions than the code object's
   table holds, refused.  */
static void
ind_image_checks (const struct reg *r, const char *tag, bool want_hash)
{
  size_t nf, nv, iv;
  const struct ok_openmp_target *d = ind_desc_of (r, &nf, &nv, &iv);
  checkf (iv < nv, "%s: the variable ind_fns", tag);
  if (iv >= nv)
    return;
  uint64_t host_fns[2], host_ind[2];
  bool tables = ind_host_tables (r, iv, host_ind, host_fns);
  checkf (tables, "%s: the host's table of its 2 indirect functions", tag);
  if (!tables)
    return;
  struct ok_addr_pair *t = NULL;
  int n = (p_load_image) (0, r->version, d, &t, NULL, host_ind);
  checkf (n == (int) (nf + nv + 1), "%s: our image with 2 indirect"
	  " functions loads", tag);
  if (n > 0)
    {
      checkf (ind_has_hmap () == want_hash, "%s: device code %s GCC 16's"
	      " __gomp_indirect_addr_hmap", tag, want_hash ? "with" : "without");
      checkf (ind_served (host_ind, host_fns, &t[nf + iv]), "%s: our"
	      " image: %s", tag, ind_form ());
      checkf (p_unload_image (0, r->version, d), "%s: our image unloads",
	      tag);
      free (t);
    }

  const struct ok_tgt_desc *td = ok_desc_target_at (d, 0);
  struct gcc_code code = { (size_t) (td->image_end - td->image_start),
			   td->image_start };
  struct gcc_kernel *ks = calloc (nf ? nf : 1, sizeof *ks);
  for (size_t i = 0; i < nf; i++)
    ks[i].name = td->func_names[i];
  struct gcc14_image g14 = { &code, (unsigned) nf, ks, 2, (unsigned) nv };
  unsigned v14 = OK_GOMP_VERSION_PACK (3, OK_GCC_DEV_VERSION_GCN_13);
  t = NULL;
  n = (p_load_image) (0, v14, &g14, &t, NULL, host_ind);
  checkf (n == (int) (nf + nv + 1), "%s: GCC 14's format with 2 indirect"
	  " functions loads", tag);
  if (n > 0)
    {
      checkf (ind_served (host_ind, host_fns, &t[nf + iv]), "%s: GCC 14's"
	      " format: %s", tag, ind_form ());
      checkf (p_unload_image (0, v14, &g14), "%s: GCC 14's format unloads",
	      tag);
      free (t);
    }
  /* Target data counting more than the code object's table holds: the
     map would come from beyond it.  */
  g14.ind_func_count = 3;
  uint64_t host3[3] = { host_ind[0], host_ind[1], host_ind[0] + 64 };
  t = NULL;
  int e = errors_now ();
  n = (p_load_image) (0, v14, &g14, &t, NULL, host3);
  checkf (n == -1, "%s: GCC 14's format counting 3 in a table of 2:"
	  " refused", tag);
  checkf (error_says (e, "3 `declare target indirect' functions",
		      ".offload_ind_func_table", "holds 2", NULL),
	  "%s: GCC 14's format counting 3 in a table of 2: says so", tag);
  free (t);
  free (ks);
}

/* `declare target indirect' with libgomp 14: IND.so's image gets the
   flat map its device code reads (GCC 14's and 15's; GCC 16's device
   code has GCC 16's variable, and gets the hash table), IND16.so's,
   whose device code has GCC 16's variable, the hash table built on the
   host.  */
void
child_indirect (void)
{
  if (inds == NULL)
    {
      unsupported ("indirect functions (no IND.so)");
      return;
    }
  if (!start ())
    return;
  ind_image_checks (inds, "IND.so", gcc_major >= 16);
  if (inds16 != NULL)
    ind_image_checks (inds16, "IND16.so", true);
  else
    unsupported ("indirect functions: the hash table (no IND16.so)");
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

/* The entry point of kernel NAME as loaded on device 0: its kernel
   descriptor's address plus kernel_code_entry_byte_offset (at 16).  */
static uint64_t
kernel_entry (const char *name)
{
  uintptr_t kd = 0;
  int kernel = 0;
  char sym[160];
  snprintf (sym, sizeof sym, "%s.kd", name);
  if (!f_symbol (sym, 0, &kd, NULL, &kernel, NULL) || !kernel)
    return 0;
  int64_t off;
  memcpy (&off, (const void *) (kd + 16), sizeof off);
  return (uint64_t) kd + (uint64_t) off;
}

/* Reverse offload, with the libgomp the area plays (13: copies through
   the plugin's callbacks; 14: through its dev2host): libgomp's table of
   the functions' device addresses, then a request that the device posts
   in the output buffer while the kernel runs reaches
   GOMP_PLUGIN_target_rev with its arguments, and the device is released.
   The HSA devices are numbered for a program that requires reverse
   offload.  */
static void
reverse_offload (int gcc)
{
  if (inds == NULL)
    {
      unsupported ("reverse offload (no IND.so)");
      return;
    }
  offloadkit_standin_libgomp_gcc = gcc;
  int (*num) (unsigned) = (int (*) (unsigned)) (void *) p_get_num_devices;
  check ("requires reverse_offload: the HSA devices",
	 num (OK_GOMP_REQUIRES_REVERSE_OFFLOAD) == 2);
  if (!p_init_device (0))
    {
      check ("init", false);
      return;
    }
  size_t nf, nv, iv;
  const struct ok_openmp_target *d = marked_v3 (ind_desc (&nf, &nv, &iv));
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = NULL;
  /* As a program of that libgomp's GCC registers it: libgomp 13 refuses
     library version 3 (GCC 14's programs).  */
  unsigned lib = OK_GOMP_VERSION_LIB (inds->version);
  unsigned ver = OK_GOMP_VERSION_PACK (gcc == 13 && lib > 2 ? 2 : lib,
				       OK_GOMP_VERSION_DEV (inds->version));
  int n = (p_load_image) (0, ver, d, &t, &rev, NULL);
  check ("loads", n == (int) (nf + nv + 1));
  if (n <= 0)
    return;
  bool rev_ok = rev != NULL;
  for (size_t i = 0; rev_ok && i < nf; i++)
    rev_ok = rev[i] != 0 && rev[i] == kernel_entry (ok_desc_target_at (d, 0)->func_names[i]);
  check ("the reverse-offload table: each function's entry point", rev_ok);
  if (!rev_ok)
    return;

  /* The block the next launch reuses.  */
  struct dispatch disp;
  void *fn = (void *) t[0].start;
  if (!run_one (0, fn, NULL, NULL, &disp))
    {
      check ("a run", false);
      return;
    }
  struct out_buf *out = (struct out_buf *) (uintptr_t)
			(disp.p.kernarg_address + V3_OUTPUT);
  uint64_t *addrs = p_alloc (0, 16), *sizes = p_alloc (0, 16);
  unsigned short *kinds = p_alloc (0, 4);
  uint64_t host_addrs[2] = { 0xabcd00, 0 };
  p_host2dev (0, addrs, host_addrs, sizeof host_addrs);
  standin_rev_reset ();
  standin_rev_device = 0;
  completions_reset ();
  f_gate (1);
  int token;
  p_async_run (0, fn, NULL, NULL, &token);
  struct out_entry *e = &out->queue[0];
  uint64_t req[6] = { rev[0], 1, (uintptr_t) addrs, (uintptr_t) sizes,
		      (uintptr_t) kinds, 0 };
  memcpy (e->u.value_u64, req, sizeof req);
  e->type = 4;
  __atomic_store_n (&e->written, 1, __ATOMIC_RELEASE);
  __atomic_store_n (&out->next_output, 1, __ATOMIC_RELEASE);
  /* The device waits until the host has run the region.  */
  bool released = false;
  for (int i = 0; i < 500 && !released; i++)
    {
      struct timespec pause = { 0, 10 * 1000 * 1000 };
      nanosleep (&pause, NULL);
      released = __atomic_load_n (&e->written, __ATOMIC_ACQUIRE) == 0;
    }
  f_gate (0);
  wait_completions (1, 10);
  check ("the device is released", released);
  struct standin_rev r = standin_rev_now ();
  check ("GOMP_PLUGIN_target_rev: once", r.calls == 1);
  check ("GOMP_PLUGIN_target_rev: the function, mapnum and arrays",
	 r.fn == rev[0] && r.mapnum == 1 && r.devaddrs == (uintptr_t) addrs
	 && r.sizes == (uintptr_t) sizes && r.kinds == (uintptr_t) kinds
	 && r.dev_num == 0);
  check ("GOMP_PLUGIN_target_rev: libgomp reads the device's addresses",
	 r.copied && r.addrs[0] == host_addrs[0]);
  check ("the launch completes", completions_now () == 1);
  p_free (0, addrs);
  p_free (0, sizes);
  p_free (0, kinds);
  free (rev);
  check ("unloads", p_unload_image (0, ver, d));
  free (t);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}

void
child_reverse_offload_13 (void)
{
  reverse_offload (13);
}

void
child_reverse_offload_14 (void)
{
  reverse_offload (14);
}

/* D marked as GCC 13+'s with its function FN made a device function, as
   our mkoffload marks the `nohost' function of an ancestor region (the
   copy lives until the next call; false when D has too many images or
   functions for it).  */
static const struct ok_openmp_target *
with_device_fn (const struct ok_openmp_target *d, size_t fn)
{
  static struct ok_kernel_info info[4][64];
  static struct ok_tgt_desc targets[4];
  static struct ok_openmp_target copy;
  copy = *d;
  copy.desc_version = OK_DESC_VERSION;
  for (uint32_t i = 0; i < d->num_targets; i++)
    {
      const struct ok_tgt_desc *td = ok_desc_target_at (d, i);
      if (i >= 4 || td->num_funcs > 64 || fn >= td->num_funcs
	  || td->kernel_info == NULL)
	return NULL;
      memcpy (&targets[i], td, d->desc_version < 3
	      ? sizeof (struct ok_tgt_desc_v2) : sizeof targets[i]);
      if (d->desc_version < 3)
	targets[i].oacc_dims = NULL;
      targets[i].flags = OK_TGT_GCN_KERNARGS_V3;
      memcpy (info[i], td->kernel_info, td->num_funcs * sizeof info[i][0]);
      info[i][fn] = (struct ok_kernel_info) { .flags = OK_KINFO_DEVICE_FN };
      targets[i].kernel_info = info[i];
    }
  copy.targets = targets;
  return &copy;
}

/* Running function FN of the image on device 0, a device function named
   NAME, is refused: a fatal error naming it, and no dispatch.  */
static void
device_fn_refused (const char *what, void *fn, const char *name)
{
  int e = errors_now (), before = f_dispatch_count ();
  volatile bool fatal;
  STANDIN_CATCH_FATAL (fatal, p_run (0, fn, NULL, NULL));
  checkf (fatal && f_dispatch_count () == before,
	  "%s: running the device function is refused, nothing dispatched",
	  what);
  checkf (error_says (e, name, "`target device (ancestor: 1)' region",
		      "has no kernel", NULL),
	  "%s: the error names the function and says why", what);
}

/* The device functions of ancestor regions (GCC 13+'s `nohost' clones),
   which the function table lists beside the kernels: in our format
   (marked OK_KINFO_DEVICE_FN by our mkoffload) and in GCC 14's (a
   function without kernel descriptor or register counts, as GCC's
   mkoffload lists it), the image loads, the reverse-offload table has
   the function's device address from .offload_func_table as for any
   other, and launching it is refused.  GCC's format with a function that
   has register counts but no kernel descriptor is still refused.  The
   image's first kernel plays the function: only the flag, or the name
   GCC's target data gives it, tells.  */
#define GCC_FUNC_TABLE ".offload_func_table"

void
child_rev_device_fns (void)
{
  if (!start ())
    return;
  const struct ok_tgt_desc *td0 = ok_desc_target_at (our_desc, 0);
  size_t nf = td0->num_funcs;
  const struct ok_openmp_target *d = with_device_fn (our_desc, 0);
  if (d == NULL || nf == 0)
    {
      check ("our image has kernel information for its functions", false);
      return;
    }
  const char *name = td0->func_names[0];
  struct ok_addr_pair *t = NULL;
  uint64_t *rev = NULL;
  int n = (p_load_image) (0, ours->version, d, &t, &rev, NULL);
  size_t nv = (size_t) (our_desc->host.vars_end - our_desc->host.vars) / 2;
  check ("ours, a device function: loads", n == (int) (nf + nv + 1));
  if (n <= 0)
    return;
  check ("ours, a device function: its device address in the"
	 " reverse-offload table", rev != NULL && rev[0] != 0
	 && rev[0] == kernel_entry (name));
  device_fn_refused ("ours", (void *) t[0].start, name);
  if (nf > 1)
    {
      struct dispatch disp;
      check ("ours: the image's kernels still run",
	     run_one (0, (void *) t[1].start, NULL, NULL, &disp));
    }
  check ("ours: unloads", p_unload_image (0, ours->version, d));
  free (t);
  free (rev);

  if (gccs == NULL)
    unsupported ("GCC 14's format with a device function (no GCC-format"
		 " library)");
  else
    {
      /* GCC 12's and 13's target data lack ind_func_count.  */
      struct gcc14_image gd = gccs_as_gcc14 ();
      const struct gcc14_image *g = &gd;
      static struct gcc_kernel ks[64];
      unsigned k0 = 0;
      while (k0 < g->kernel_count
	     && (strcmp (g->kernels[k0].name, "_init_array") == 0
		 || strcmp (g->kernels[k0].name, "_fini_array") == 0))
	k0++;
      if (g->kernel_count > 64 || k0 == g->kernel_count)
	{
	  check ("GCC's image has a kernel", false);
	  return;
	}
      memcpy (ks, g->kernels, g->kernel_count * sizeof ks[0]);
      const char *kname = ks[k0].name;
      ks[k0] = (struct gcc_kernel) { .name = "main._omp_fn.1.nohost.0" };
      struct gcc14_image g14 = *g;
      g14.kernels = ks;
      const struct ok_host_table *h = gccs->host_table;
      size_t gf = (size_t) (h->funcs_end - h->funcs);
      size_t gv = (size_t) (h->vars_end - h->vars) / 2;
      unsigned v14 = OK_GOMP_VERSION_PACK (3, OK_GCC_DEV_VERSION_GCN_13);
      t = NULL;
      rev = NULL;
      n = (p_load_image) (0, v14, &g14, &t, &rev, NULL);
      check ("GCC 14's format, a device function: loads",
	     n == (int) (gf + gv + 1));
      if (n <= 0)
	return;
      /* GCC 12's mkoffload labels no function table: no table.  */
      if (f_symbol (GCC_FUNC_TABLE, 0, NULL, NULL, NULL, NULL))
	check ("GCC 14's format, a device function: its device address in"
	       " the reverse-offload table", rev != NULL
	       && rev[0] == kernel_entry (kname));
      else
	check ("GCC 14's format, GCC 12's code object: no reverse-offload"
	       " table", rev == NULL);
      device_fn_refused ("GCC 14's format", (void *) t[0].start,
			 "main._omp_fn.1.nohost.0");
      check ("GCC 14's format: unloads", p_unload_image (0, v14, &g14));
      free (t);
      free (rev);

      ks[k0].sgpr_count = 62;
      ks[k0].vgpr_count = 24;
      t = NULL;
      int e = errors_now ();
      n = (p_load_image) (0, v14, &g14, &t, NULL, NULL);
      check ("GCC 14's format, a kernel without descriptor: refused",
	     n == -1 && error_says (e, "lacks kernel",
				    "main._omp_fn.1.nohost.0", NULL));
    }
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}
