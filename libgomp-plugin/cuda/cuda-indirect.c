/* `declare target indirect' functions (device code of GCC 14+, libgomp
   14+).

   A pointer to such a function, taken on the host, reaches device code
   as the host's address; the device code translates it
   (GOMP_target_map_indirect_ptr, GCC's libgomp/config/accel/
   target-indirect.c) through a map that the loader writes.  GCC's nvptx
   mkoffload gives the device code a table of the image's indirect
   functions, $offload_ind_func_table, 8 bytes per function, in the order
   of the host table that libgomp passes; libgomp passes no count, so the
   device table's size gives it.

   The map has one of two forms (core/indirect-map.h, which builds
   both), chosen by the variable the image's device code has for it:
   the hash table of GCC 16 (__gomp_indirect_addr_hmap) or the flat
   pairs of GCC 14 and 15 (__gomp_indirect_addr_map).

   GCC 16's device code has both variables and uses the hash table when
   its pointer is set, so that one is written when the variable is
   there.  The map stays in device memory until the image is unloaded
   (GCC's plugin never frees it).  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-internal.h"
#include "indirect-map.h"

#define CUDA_IND_TABLE_VAR "$offload_ind_func_table"
#define CUDA_IND_MAP_VAR OK_IND_MAP_VAR
#define CUDA_IND_HMAP_VAR OK_IND_HMAP_VAR

/* The device's table of IMG's indirect functions: malloc'd into *DEV_FNS,
   *N of them (as many as EXPECT unless it is -1).  */
static bool
cuda_ind_read_table (struct cuda_device *dev, struct cuda_image *img,
		     long expect, uint64_t **dev_fns, size_t *n)
{
  CUdeviceptr p = 0;
  size_t bytes = 0;
  bool found;
  if (!cuda_module_global (dev, img->module, CUDA_IND_TABLE_VAR, &p, &bytes,
			   &found))
    return false;
  if (!found)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has `declare"
		    " target indirect' functions, but its device code has no"
		    " table of them (" CUDA_IND_TABLE_VAR ")");
      return false;
    }
  *n = bytes / sizeof (uint64_t);
  if (bytes == 0 || bytes % sizeof (uint64_t) != 0 || *n > OK_IND_MAX
      || (expect >= 0 && *n != (size_t) expect))
    {
      char want[64] = "a multiple of 8 bytes";
      if (expect >= 0)
	snprintf (want, sizeof want, "%ld functions, %zu bytes", expect,
		  (size_t) expect * sizeof (uint64_t));
      ok_dev_error (&dev->base, "cannot load offload image: its table of"
		    " `declare target indirect' functions ("
		    CUDA_IND_TABLE_VAR ") has %zu bytes, expected %s", bytes,
		    want);
      return false;
    }
  *dev_fns = malloc (bytes);
  if (*dev_fns == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  if (!cuda_dev2host (&dev->base, *dev_fns, (const void *) (uintptr_t) p,
		      bytes))
    {
      free (*dev_fns);
      return false;
    }
  return true;
}

/* Copy MAP (BYTES) to new device memory of IMG and store its address in
   the device variable at VAR.  */
static bool
cuda_ind_write (struct cuda_device *dev, struct cuda_image *img,
		const void *map, size_t bytes, CUdeviceptr var)
{
  void *d = cuda_mem_alloc (dev, bytes, "the map of `declare target"
			    " indirect' functions");
  if (d == NULL)
    return false;
  uint64_t addr = (uint64_t) (uintptr_t) d;
  if (!cuda_host2dev (&dev->base, d, map, bytes)
      || !cuda_host2dev (&dev->base, (void *) (uintptr_t) var, &addr,
			 sizeof addr))
    {
      ok_cuda.cuMemFree ((CUdeviceptr) addr);
      return false;
    }
  img->ind_map = (CUdeviceptr) addr;
  return true;
}

bool
cuda_indirect_load (struct cuda_device *dev, struct cuda_image *img,
		    const uint64_t *host_fns, long expect)
{
  if (host_fns == NULL && expect > 0)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has %ld"
		    " `declare target indirect' functions, but libgomp passed"
		    " no host table of them", expect);
      return false;
    }
  if (host_fns == NULL)
    return true;
  if (expect == 0)
    {
      ok_dev_error (&dev->base, "cannot load offload image: libgomp passed"
		    " a host table of `declare target indirect' functions,"
		    " but the image says it has none");
      return false;
    }

  /* The variable first: without it there is nothing to read the map.  */
  CUdeviceptr var = 0;
  size_t var_bytes = 0;
  bool hashed, flat = false;
  if (!cuda_module_global (dev, img->module, CUDA_IND_HMAP_VAR, &var,
			   &var_bytes, &hashed)
      || (!hashed && !cuda_module_global (dev, img->module, CUDA_IND_MAP_VAR,
					  &var, &var_bytes, &flat)))
    return false;
  const char *var_name = hashed ? CUDA_IND_HMAP_VAR : CUDA_IND_MAP_VAR;
  if (!hashed && !flat)
    {
      ok_dev_error (&dev->base, "cannot load offload image: it has `declare"
		    " target indirect' functions, but its device code has"
		    " neither " CUDA_IND_HMAP_VAR " nor " CUDA_IND_MAP_VAR
		    " (device code older than GCC 14's?)");
      return false;
    }
  if (var_bytes != sizeof (uint64_t))
    {
      ok_dev_error (&dev->base, "cannot load offload image: variable '%s'"
		    " has %zu bytes on the device, expected a pointer (8)",
		    var_name, var_bytes);
      return false;
    }

  uint64_t *dev_fns;
  size_t n;
  if (!cuda_ind_read_table (dev, img, expect, &dev_fns, &n))
    return false;
  struct ok_ind_pair *pairs = malloc (n * sizeof *pairs);
  if (pairs == NULL)
    {
      free (dev_fns);
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  for (size_t i = 0; i < n; i++)
    {
      pairs[i].host = host_fns[i];
      pairs[i].dev = dev_fns[i];
      OK_DEBUG ("%s: indirect function %zu: host %#llx, device %#llx",
		dev->base.label, i, (unsigned long long) pairs[i].host,
		(unsigned long long) pairs[i].dev);
    }
  free (dev_fns);
  size_t bytes = 0;
  enum ok_ind_form form = hashed ? OK_IND_HASH : OK_IND_FLAT;
  void *map = ok_ind_map_build (form, pairs, n, &bytes);
  free (pairs);
  if (map == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  bool ok = cuda_ind_write (dev, img, map, bytes, var);
  free (map);
  if (ok)
    OK_DEBUG ("%s: map of %zu indirect functions (%s, %zu bytes) at %#llx",
	      dev->base.label, n, ok_ind_form_name (form), bytes,
	      (unsigned long long) img->ind_map);
  return ok;
}

bool
cuda_indirect_unload (struct cuda_device *dev, struct cuda_image *img)
{
  if (img->ind_map == 0)
    return true;
  CUresult r = ok_cuda.cuMemFree (img->ind_map);
  img->ind_map = 0;
  return ok_dev_teardown_ok (&dev->base, r, "free the map of `declare"
			     " target indirect' functions", "cuMemFree");
}
