/* The tables of an image's functions that GCC 13+'s device code needs
   beside its kernels: the device addresses of the functions, which
   libgomp needs to run reverse-offload requests (`target device
   (ancestor: 1)'), and the map from host to device addresses of the
   `declare target indirect' functions (GCC 14+), which the device looks
   host function pointers up in, in the form its device code reads: GCC
   16's hash table or GCC 14's flat list (core/indirect-map.h).  Done as
   GCC 16's libgomp/plugin/plugin-gcn.c does in GOMP_OFFLOAD_load_image,
   for offloadkit's images and GCC's alike.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcc-gcn-image.h"
#include "hsa-internal.h"
#include "indirect-map.h"

bool
gcn_rev_fns (struct gcn_device *dev, struct gcn_image *img, size_t nfuncs,
	     uint64_t **rev_fns)
{
  *rev_fns = NULL;
  if (nfuncs == 0)
    return true;
  uint64_t addr = 0;
  uint32_t size = 0;
  int found = gcn_variable (dev, img, GCC_GCN_FUNC_TABLE, &addr, &size);
  if (found < 0)
    return false;
  /* GCC 12's device code has no reverse offload, and images built by
     GCC 12's mkoffload no such label: no request can name a function.  */
  if (found == 0 || addr == 0)
    {
      OK_DEBUG ("%s: image has no %s: no reverse offload", dev->base.label,
		GCC_GCN_FUNC_TABLE);
      return true;
    }
  uint64_t *fns = GOMP_PLUGIN_malloc (nfuncs * sizeof *fns);
  if (!gcn_dev2host (&dev->base, fns, (void *) (uintptr_t) addr,
		     nfuncs * sizeof *fns))
    {
      free (fns);
      return false;
    }
  *rev_fns = fns;
  return true;
}

/* The device variable IMG's map goes to: GCC 16's
   __gomp_indirect_addr_hmap, whose device code then takes the hash table
   as it is, when the image has it, else __gomp_indirect_addr_map (GCC 14
   and 15), from which the device code builds its own table at the
   kernel's start; its address in *VAR and the form it wants in *FORM.
   False after a report.  */
static bool
gcn_ind_map_var (struct gcn_device *dev, struct gcn_image *img, size_t count,
		 uint64_t *var, enum ok_ind_form *form)
{
  static const struct { const char *name; enum ok_ind_form form; } vars[] = {
    { OK_IND_HMAP_VAR, OK_IND_HASH }, { OK_IND_MAP_VAR, OK_IND_FLAT }
  };
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    {
      uint32_t size = 0;
      *var = 0;
      int found = gcn_variable (dev, img, vars[i].name, var, &size);
      if (found < 0)
	return false;
      if (found == 0 || *var == 0)
	continue;
      if (size != sizeof (uint64_t))
	{
	  ok_dev_error (&dev->base, "cannot load offload image: variable"
			" '%s' has %u bytes on the device, expected a pointer"
			" (8)", vars[i].name, (unsigned) size);
	  return false;
	}
      *form = vars[i].form;
      return true;
    }
  ok_dev_error (&dev->base, "cannot load offload image: it has %zu"
		" `declare target indirect' functions but its device code"
		" has neither %s nor %s (device code older than GCC 14's?)",
		count, OK_IND_HMAP_VAR, OK_IND_MAP_VAR);
  return false;
}

/* Write the map of COUNT indirect functions, HOST_IND_FNS[I] to
   DEV_FNS[I], in the form the image's device code reads
   (core/indirect-map.h) to device memory freed with IMG, and its address
   to the device's variable for it.  */
static bool
gcn_write_ind_map (struct gcn_device *dev, struct gcn_image *img,
		   const uint64_t *host_ind_fns, const uint64_t *dev_fns,
		   size_t count)
{
  uint64_t var;
  enum ok_ind_form form;
  if (!gcn_ind_map_var (dev, img, count, &var, &form))
    return false;
  struct ok_ind_pair *pairs = malloc (count * sizeof *pairs);
  if (pairs == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  for (size_t i = 0; i < count; i++)
    {
      pairs[i] = (struct ok_ind_pair) { host_ind_fns[i], dev_fns[i] };
      OK_DEBUG ("%s: indirect function %zu: %#llx -> %#llx",
		dev->base.label, i, (unsigned long long) host_ind_fns[i],
		(unsigned long long) dev_fns[i]);
    }
  size_t bytes = 0;
  void *map = ok_ind_map_build (form, pairs, count, &bytes);
  free (pairs);
  if (map == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  img->ind_map = gcn_region_alloc (dev, bytes, "the indirect-function map");
  bool ok = img->ind_map != NULL
	    && gcn_host2dev (&dev->base, img->ind_map, map, bytes);
  free (map);
  uint64_t where = (uint64_t) (uintptr_t) img->ind_map;
  ok = ok && gcn_host2dev (&dev->base, (void *) (uintptr_t) var, &where,
			   sizeof where);
  if (ok)
    OK_DEBUG ("%s: map of %zu indirect functions (%s, %zu bytes) at %p",
	      dev->base.label, count, ok_ind_form_name (form), bytes,
	      img->ind_map);
  return ok;
}

bool
gcn_map_indirect (struct gcn_device *dev, struct gcn_image *img,
		  const uint64_t *host_ind_fns, size_t count, size_t in_table)
{
  if (count == 0)
    return true;
  if (host_ind_fns == NULL)
    {
      /* Only libgomp 14+ passes the host's table, and only a GCC 14+
	 image has such functions, which libgomp 13 refuses by its library
	 version: no region can call one.  */
      OK_DEBUG ("%s: image has %zu indirect functions, libgomp passed no"
		" host table of them", dev->base.label, count);
      return true;
    }
  if (count > OK_IND_MAX)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it claims %zu"
		    " `declare target indirect' functions", count);
      return false;
    }
  uint64_t addr = 0;
  uint32_t size = 0;
  int found = gcn_variable (dev, img, GCC_GCN_IND_FUNC_TABLE, &addr, &size);
  if (found < 0)
    return false;
  if (found == 0 || addr == 0)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has %zu"
		    " `declare target indirect' functions but no global"
		    " symbol %s at their table", count,
		    GCC_GCN_IND_FUNC_TABLE);
      return false;
    }
  /* GCC's target data counts them; GCC 14+'s code objects have the
     table, empty when there are none: reading COUNT entries from a
     shorter one would map what follows it.  */
  if (in_table < count)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has %zu"
		    " `declare target indirect' functions but its table %s"
		    " (section %s) holds %zu", count, GCC_GCN_IND_FUNC_TABLE,
		    GCC_GCN_IND_FUNC_SECTION, in_table);
      return false;
    }
  uint64_t *dev_fns = malloc (count * sizeof *dev_fns);
  if (dev_fns == NULL)
    {
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  bool ok = gcn_dev2host (&dev->base, dev_fns, (void *) (uintptr_t) addr,
			  count * sizeof *dev_fns)
	    && gcn_write_ind_map (dev, img, host_ind_fns, dev_fns, count);
  free (dev_fns);
  return ok;
}

size_t
gcn_ind_count (const unsigned char *image, size_t size)
{
  uint64_t bytes = 0;
  if (!gcn_elf_section_size (image, size, GCC_GCN_IND_FUNC_SECTION, &bytes))
    return 0;
  return (size_t) (bytes / sizeof (uint64_t));
}
