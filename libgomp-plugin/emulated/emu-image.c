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
  emu_fault_unwatch (img->device_num_slot);
  free (img->vars);
  free (img);
}

bool
emu_load_image (struct ok_device *d, struct ok_image_req *req, void **handle)
{
  struct emu_device *dev = emu_dev (d);
  const struct ok_host_table *host = &req->desc->host;
  char checked[sizeof req->what - 32];
  if (!emu_gpu_check_images (dev, req, checked, sizeof checked))
    return false;
  struct emu_image *img = calloc (1, sizeof *img);
  struct emu_var *vars = calloc (req->num_vars ? req->num_vars : 1,
				 sizeof *vars);
  if (img == NULL || vars == NULL)
    {
      free (img);
      free (vars);
      ok_dev_error (&dev->base, "out of memory loading an image");
      return false;
    }
  img->vars = vars;

  /* Functions run as themselves: the host-fallback code is the device
     code.  */
  for (size_t i = 0; i < req->num_funcs; i++)
    {
      req->table[i].start = (uintptr_t) host->funcs[i];
      req->table[i].end = req->table[i].start + 1;
    }
  img->num_funcs = req->num_funcs;
  img->funcs = host->funcs;
  const struct ok_tgt_desc *tgt = ok_desc_target (req->desc,
						  req->device_type, 0);
  if (tgt != NULL && tgt->num_funcs == req->num_funcs)
    {
      img->func_names = tgt->func_names;
      img->oacc_dims = ok_desc_oacc_dims (req->desc, tgt);
    }

  /* The wrapper's snapshot of the initial values, when it took one, is
     what a real device image would start from.  */
  const unsigned char *init = NULL;
  if (req->desc->host_var_init != NULL)
    init = *req->desc->host_var_init;

  for (size_t i = 0; i < req->num_vars; i++)
    {
      struct emu_var *v = &vars[i];
      struct ok_host_var hv = ok_host_var (req, i);
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
	      goto fail;
	    }
	}
      else
	{
	  v->copy = emu_new_block (dev, copy_size, EMU_VAR);
	  if (v->copy == NULL)
	    goto fail;
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
      else if (init != NULL)
	{
	  memcpy (v->copy, init, v->size);
	  init += v->size;
	}
      else
	memcpy (v->copy, v->host, v->size);
      char *addr = emu_var_aliased (v) ? v->host : v->copy;
      req->table[req->num_funcs + i].start = (uintptr_t) addr;
      req->table[req->num_funcs + i].end = (uintptr_t) addr + copy_size;
    }

  /* The trailing entry: libgomp 12's __gomp_device_num int, or from 13
     its struct gomp_offload_icvs, whose first member is the device number
     too.  Host-fallback code reads the host's other ICVs.  */
  size_t trailing = req->trailing.size;
  if (trailing < sizeof (int))
    trailing = sizeof (int);
  img->device_num = emu_new_block (dev, trailing, EMU_DEVNUM);
  if (img->device_num == NULL)
    goto fail;
  memset (img->device_num, 0, trailing);
  img->device_num_slot = req->desc->device_num_slot;
  emu_fault_watch (img->device_num_slot);
  if (req->desc->desc_version >= 3)
    img->acc_device_slot = req->desc->acc_device_slot;
  if (req->desc->desc_version >= 4)
    img->device_exit_slot = req->desc->device_exit_slot;
  struct ok_addr_pair *last = &req->table[req->num_funcs + req->num_vars];
  last->start = (uintptr_t) img->device_num;
  last->end = last->start + trailing;

  if (!emu_rev_load (dev, img, req))
    goto fail;

  *handle = img;
  snprintf (req->what, sizeof req->what, "host-fallback code%s", checked);
  return true;

 fail:
  emu_free_image (dev, img);
  return false;
}

bool
emu_unload_image (struct ok_device *d, void *handle)
{
  emu_free_image (emu_dev (d), handle);
  return true;
}

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
