/* Images on the emulated device.  Functions run as themselves: the
   host-fallback code is the device code.  Each `declare target' variable
   gets device bytes of its own per device, started from the initial
   values the wrapper recorded before main (see emu-internal.h for where
   they live).  */

/* dl_iterate_phdr.  */
#define _GNU_SOURCE 1

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "desc-check.h"
#include "emu-internal.h"

/* Whether ADDR lies in memory that the program cannot write: a loadable
   segment without write permission (.rodata), or the part of one that the
   dynamic linker makes read-only after relocation (RELRO: const data with
   addresses in it).  gfortran puts compiler-made constant arrays in the
   variable table, and a const declare target variable is one too.  */
struct emu_ro_query
{
  uintptr_t addr;
  bool readonly;
};

static int
emu_ro_visit (struct dl_phdr_info *info, size_t size, void *data)
{
  struct emu_ro_query *q = data;
  (void) size;
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
      uintptr_t hi = lo + ph->p_memsz;
      if (ph->p_type == PT_GNU_RELRO)
	{
	  /* The loader protects whole pages only: the start rounded down,
	     the end too.  */
	  lo &= ~(page - 1);
	  hi &= ~(page - 1);
	}
      else if (ph->p_type != PT_LOAD)
	continue;
      if (q->addr < lo || q->addr >= hi)
	continue;
      inside = true;
      if (ph->p_type == PT_GNU_RELRO || !(ph->p_flags & PF_W))
	q->readonly = true;
    }
  return inside;		/* Non-zero stops: the object is found.  */
}

static bool
emu_readonly (const void *addr)
{
  struct emu_ro_query q = { (uintptr_t) addr, false };
  dl_iterate_phdr (emu_ro_visit, &q);
  return q.readonly;
}

static void
emu_free_image (struct emu_device *dev, struct emu_image *img)
{
  emu_rev_unload (img);
  for (size_t i = 0; i < img->num_vars; i++)
    {
      struct emu_var *v = &img->vars[i];
      if (!emu_var_aliased (v))
	emu_drop_block (dev, v->copy);
      else if (v->copy != NULL)
	{
	  pthread_mutex_lock (&dev->mem_lock);
	  struct emu_block *b = emu_reg_exact (dev, v->host);
	  if (b != NULL && b->var == v)
	    emu_reg_remove (dev, b);
	  pthread_mutex_unlock (&dev->mem_lock);
	  free (v->copy);
	}
    }
  emu_drop_block (dev, img->device_num);
  if (img->watching)
    emu_fault_unwatch (img->device_num_slot);
  free (img->vars);
  free (img);
}

static bool
emu_open (struct ok_device *d, struct ok_image_load *ld)
{
  struct emu_device *dev = emu_dev (d);
  char checked[sizeof ld->what - 32];
  if (!emu_gpu_check_images (dev, ld, checked, sizeof checked))
    return false;
  struct emu_image *img = calloc (1, sizeof *img);
  struct emu_var *vars = calloc (ld->num_vars ? ld->num_vars : 1,
				 sizeof *vars);
  if (img == NULL || vars == NULL)
    {
      free (img);
      free (vars);
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  img->vars = vars;
  img->num_funcs = ld->num_funcs;
  img->funcs = ld->desc->host.funcs;
  const struct ok_tgt_desc *tgt = ok_desc_target (ld->desc, ld->device_type,
						  0);
  if (tgt != NULL && tgt->num_funcs == ld->num_funcs)
    {
      img->func_names = tgt->func_names;
      img->oacc_dims = ok_desc_oacc_dims (ld->desc, tgt);
    }
  /* The wrapper's snapshot of the initial values, when it took one, is
     what a real device image would start from; the variables take their
     bytes from it in order.  */
  if (ld->desc->host_var_init != NULL)
    img->init = *ld->desc->host_var_init;
  img->device_num_slot = ld->desc->device_num_slot;
  if (ld->desc->desc_version >= 3)
    img->acc_device_slot = ld->desc->acc_device_slot;
  if (ld->desc->desc_version >= 4)
    img->device_exit_slot = ld->desc->device_exit_slot;
  ld->image = img;
  snprintf (ld->what, sizeof ld->what, "host-fallback code%s", checked);
  return true;
}

/* Functions run as themselves: the host-fallback code is the device
   code.  */
static bool
emu_function (struct ok_device *d, struct ok_image_load *ld, size_t i,
	      struct ok_addr_pair *entry)
{
  (void) d;
  entry->start = (uintptr_t) ld->desc->host.funcs[i];
  entry->end = entry->start + 1;
  return true;
}

static bool
emu_variable (struct ok_device *d, struct ok_image_load *ld, size_t i,
	      struct ok_addr_pair *entry)
{
  struct emu_device *dev = emu_dev (d);
  struct emu_image *img = ld->image;
  struct emu_var *v = &img->vars[i];
  struct ok_host_var hv = ok_host_var (ld, i);
  v->host = (char *) hv.addr;
  v->link = hv.link;
  v->size = hv.size;
  v->readonly = v->size > 0 && emu_readonly (v->host);
  size_t copy_size = v->link ? sizeof (void *) : v->size;
  img->num_vars = i + 1;
  if (emu_var_aliased (v))
    {
      /* The device address is the host global's, so that a region
	 reaches the variable at the same place through its name and
	 through the address libgomp passes, as on a device.  */
      v->copy = malloc (v->size);
      pthread_mutex_lock (&dev->mem_lock);
      bool ok = (v->copy != NULL
		 && emu_reg_insert (dev, v->host, v->size, EMU_VAR));
      if (ok)
	emu_reg_exact (dev, v->host)->var = v;
      pthread_mutex_unlock (&dev->mem_lock);
      if (!ok)
	{
	  free (v->copy);
	  v->copy = NULL;
	  ok_dev_error (&dev->base, "out of memory loading an image");
	  return false;
	}
    }
  else
    {
      v->copy = emu_new_block (dev, copy_size, EMU_VAR);
      if (v->copy == NULL)
	return false;
      if (v->link)
	{
	  /* libgomp's writes into the slot tell where the variable is
	     mapped.  */
	  pthread_mutex_lock (&dev->mem_lock);
	  emu_reg_exact (dev, v->copy)->link = v;
	  pthread_mutex_unlock (&dev->mem_lock);
	}
    }
  if (v->link)
    /* Null until libgomp maps the variable and stores its address.  */
    memset (v->copy, 0, sizeof (void *));
  else if (img->init != NULL)
    {
      memcpy (v->copy, img->init, v->size);
      img->init += v->size;
    }
  else
    memcpy (v->copy, v->host, v->size);
  char *addr = emu_var_aliased (v) ? v->host : v->copy;
  entry->start = (uintptr_t) addr;
  entry->end = (uintptr_t) addr + copy_size;
  return true;
}

/* The trailing entry: libgomp 12's __gomp_device_num int, or from 13
   its struct gomp_offload_icvs, whose first member is the device number
   too.  Host-fallback code reads the host's other ICVs.  */
static bool
emu_trailing (struct ok_device *d, struct ok_image_load *ld,
	      const struct ok_trailing_var *var, struct ok_addr_pair *entry)
{
  struct emu_device *dev = emu_dev (d);
  struct emu_image *img = ld->image;
  size_t size = var->size < sizeof (int) ? sizeof (int) : var->size;
  img->device_num = emu_new_block (dev, size, EMU_DEVNUM);
  if (img->device_num == NULL)
    return false;
  memset (img->device_num, 0, size);
  emu_fault_watch (img->device_num_slot);
  img->watching = true;
  entry->start = (uintptr_t) img->device_num;
  entry->end = entry->start + size;
  return true;
}

static bool
emu_rev_table (struct ok_device *d, struct ok_image_load *ld,
	       uint64_t **rev_fns)
{
  return emu_rev_load (emu_dev (d), ld->image, ld, rev_fns);
}

static bool
emu_close (struct ok_device *d, void *handle, bool dtors)
{
  (void) dtors;
  emu_free_image (emu_dev (d), handle);
  return true;
}

const struct ok_image_ops emu_image_ops = {
  .open = emu_open,
  .function = emu_function,
  .variable = emu_variable,
  .trailing = emu_trailing,
  .rev_table = emu_rev_table,
  .close = emu_close,
};

const char *
emu_acc_kernel (struct emu_device *dev, void *fn, char *buf, size_t len,
		unsigned fixed[OK_ACC_DIMS], bool *known)
{
  *known = false;
  for (int i = 0; i < OK_ACC_DIMS; i++)
    fixed[i] = 0;
  for (struct ok_loaded_image *l = ok_images_first (&dev->base); l != NULL;
       l = l->next)
    {
      const struct emu_image *img = emu_image_of (l);
      if (img->oacc_dims != NULL)
	for (size_t f = 0; f < img->num_funcs; f++)
	  if (img->funcs[f] == fn)
	    {
	      for (int i = 0; i < OK_ACC_DIMS; i++)
		fixed[i] = img->oacc_dims[f].dim[i];
	      *known = true;
	      break;
	    }
    }
  return emu_fn_name (dev, fn, buf, len);
}
