/* Test tool of aot.exp and gcn-mkoffload.exp: linked with a wrapper object
   that mkoffload made, it plays libgomp and prints the descriptor the
   wrapper registers, so that the tests see exactly what the plugin would
   get.  For nvptx (aot.exp), one line per image:
     targets N
     image I type T format F arch A size S elf E nul Z
   E is the ELF e_machine of the image (190 for a cubin), "-" when the image
   is not ELF; Z is 1 when the image ends with a NUL byte (PTX).
   Compiled with -DDESC_DUMP_GCN (gcn-mkoffload.exp), for amdgcn-amdhsa:
     targets N
     image I type T format F arch A size S elf E funcs NF vars NV info K
     flags I FLAGS
     func I J NAME sgprs S vgprs V group G private P kernarg K [kflags KF]
     var I J NAME
   A is hexadecimal (0x906); E is 224 for an AMD GPU code object; K is 1
   when the image has a kernel_info table; FLAGS are its OK_TGT_* flags,
   in hexadecimal (0 or 0x1); KF, only when not 0, the function's
   OK_KINFO_* flags (0x1: a device function, no kernel).
   Both forms then print each image's OpenACC launch dimensions:
     oacc I none
   when it has none, else one line per function:
     oacc I J NAME G W V FLAGS
   G, W, V the gang, worker and vector sizes, FLAGS in hexadecimal.  */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "desc-check.h"
#include "offload-desc.h"

/* What GCC's crtoffloadbegin.o and crtoffloadend.o would provide: empty
   host tables (mkoffload's wrapper only takes their addresses).  */
const void *const __offload_func_table[1];
const void *const __offload_funcs_end[1];
const void *const __offload_var_table[1];
const void *const __offload_vars_end[1];
const void *const __offload_ind_func_table[1];
const void *const __offload_ind_funcs_end[1];

int
omp_get_initial_device (void)
{
  return 0;
}

#ifdef DESC_DUMP_GCN
/* The image line of T, then its functions and variables.  */
static void
print_image (unsigned i, const struct ok_tgt_desc *t, size_t size,
	     const char *elf)
{
  printf ("image %u type %u format %u arch %#x size %zu elf %s funcs %u"
	  " vars %u info %d\n", i, (unsigned) t->device_type,
	  (unsigned) t->image_format, (unsigned) t->arch, size, elf,
	  (unsigned) t->num_funcs, (unsigned) t->num_vars,
	  t->kernel_info != NULL);
  printf ("flags %u %#x\n", i, (unsigned) t->flags);
  for (unsigned f = 0; f < t->num_funcs; f++)
    {
      printf ("func %u %u %s", i, f, t->func_names[f]);
      if (t->kernel_info)
	{
	  const struct ok_kernel_info *k = &t->kernel_info[f];
	  printf (" sgprs %u vgprs %u group %u private %u kernarg %u",
		  (unsigned) k->sgprs, (unsigned) k->vgprs,
		  (unsigned) k->group_segment_size,
		  (unsigned) k->private_segment_size,
		  (unsigned) k->kernarg_size);
	  if (k->flags != 0)
	    printf (" kflags %#x", (unsigned) k->flags);
	}
      putchar ('\n');
    }
  for (unsigned v = 0; v < t->num_vars; v++)
    printf ("var %u %u %s\n", i, v, t->var_names[v]);
}
#else
static void
print_image (unsigned i, const struct ok_tgt_desc *t, size_t size,
	     const char *elf)
{
  printf ("image %u type %u format %u arch %u size %zu elf %s nul %d\n",
	  i, (unsigned) t->device_type, (unsigned) t->image_format,
	  (unsigned) t->arch, size, elf,
	  size > 0 && t->image_end[-1] == '\0');
}
#endif

/* The OpenACC dimensions of T, image I of D.  */
static void
print_oacc_dims (const struct ok_openmp_target *d, unsigned i,
		 const struct ok_tgt_desc *t)
{
  const struct ok_oacc_dims *od = ok_desc_oacc_dims (d, t);
  if (od == NULL)
    {
      printf ("oacc %u none\n", i);
      return;
    }
  for (unsigned f = 0; f < t->num_funcs; f++)
    printf ("oacc %u %u %s %u %u %u %#x\n", i, f, t->func_names[f],
	    (unsigned) od[f].dim[0], (unsigned) od[f].dim[1],
	    (unsigned) od[f].dim[2], (unsigned) od[f].flags);
}

void
GOMP_offload_register_ver (unsigned version, const void *host_table,
			   int device_type, const void *target_data)
{
  /* From library version 2 (GCC 13) the registered data begins with the
     program's requires mask, as libgomp's GOMP_offload_register_ver
     reads it; the descriptor follows.  */
  const struct ok_openmp_target *d = target_data;
  if ((version >> 16) >= 2)
    d = (const void *) ((const uintptr_t *) target_data + 1);
  (void) host_table;
  (void) device_type;
#ifdef DESC_DUMP_GCN
  if (d->magic != OK_DESC_MAGIC || d->desc_version != OK_DESC_VERSION)
    {
      printf ("bad magic %#x or version %u\n", (unsigned) d->magic,
	      (unsigned) d->desc_version);
      return;
    }
#else
  if (d->magic != OK_DESC_MAGIC)
    {
      printf ("bad magic %#x\n", (unsigned) d->magic);
      return;
    }
#endif
  printf ("targets %u\n", (unsigned) d->num_targets);
  for (unsigned i = 0; i < d->num_targets; i++)
    {
      const struct ok_tgt_desc *t = ok_desc_target_at (d, i);
      size_t size = (size_t) (t->image_end - t->image_start);
      char elf[16] = "-";
      if (size >= 20 && memcmp (t->image_start, "\177ELF", 4) == 0)
	snprintf (elf, sizeof elf, "%u",
		  (unsigned) (t->image_start[18] | t->image_start[19] << 8));
      print_image (i, t, size, elf);
      print_oacc_dims (d, i, t);
    }
}

void
GOMP_offload_unregister_ver (unsigned version, const void *host_table,
			     int device_type, const void *target_data)
{
  (void) version;
  (void) host_table;
  (void) device_type;
  (void) target_data;
}

int
main (void)
{
  return 0;
}
