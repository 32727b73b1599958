/* Test tool of gcn-mkoffload.exp: linked with a wrapper object that the
   amdgcn-amdhsa mkoffload made, it plays libgomp and prints the
   descriptor the wrapper registers, so that the tests see exactly what
   the gcn plugin would get:
     targets N
     image I type T format F arch A size S elf E funcs NF vars NV info K
     func I J NAME sgprs S vgprs V group G private P kernarg K
     var I J NAME
   A is hexadecimal (0x906); E is the image's ELF e_machine (224 for an AMD
   GPU code object), "-" when it is not ELF; K is 1 when the image has a
   kernel_info table.  */

#include <stdio.h>
#include <string.h>

#include "offload-desc.h"

/* What GCC's crtoffloadbegin.o and crtoffloadend.o would provide.  */
const void *const __offload_func_table[1];
const void *const __offload_funcs_end[1];
const void *const __offload_var_table[1];
const void *const __offload_vars_end[1];

int
omp_get_initial_device (void)
{
  return 0;
}

void
GOMP_offload_register_ver (unsigned version, const void *host_table,
			   int device_type, const void *target_data)
{
  const struct ok_openmp_target *d = target_data;
  (void) version;
  (void) host_table;
  (void) device_type;
  if (d->magic != OK_DESC_MAGIC || d->desc_version != OK_DESC_VERSION)
    {
      printf ("bad magic %#x or version %u\n", (unsigned) d->magic,
	      (unsigned) d->desc_version);
      return;
    }
  printf ("targets %u\n", (unsigned) d->num_targets);
  for (unsigned i = 0; i < d->num_targets; i++)
    {
      const struct ok_tgt_desc *t = &d->targets[i];
      size_t size = (size_t) (t->image_end - t->image_start);
      char elf[16] = "-";
      if (size >= 20 && memcmp (t->image_start, "\177ELF", 4) == 0)
	snprintf (elf, sizeof elf, "%u",
		  (unsigned) (t->image_start[18] | t->image_start[19] << 8));
      printf ("image %u type %u format %u arch %#x size %zu elf %s funcs %u"
	      " vars %u info %d\n", i, (unsigned) t->device_type,
	      (unsigned) t->image_format, (unsigned) t->arch, size, elf,
	      (unsigned) t->num_funcs, (unsigned) t->num_vars,
	      t->kernel_info != NULL);
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
	    }
	  putchar ('\n');
	}
      for (unsigned v = 0; v < t->num_vars; v++)
	printf ("var %u %u %s\n", i, v, t->var_names[v]);
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
