/* Test tool of aot.exp: linked with a wrapper object that mkoffload
   made, it plays libgomp and prints the descriptor the wrapper registers,
   one line per image, so that the tests see exactly what the plugin would
   get:
     targets N
     image I type T format F arch A size S elf E nul Z
   E is the ELF e_machine of the image (190 for a cubin), "-" when the image
   is not ELF; Z is 1 when the image ends with a NUL byte (PTX).  */

#include <stdio.h>
#include <string.h>

#include "offload-desc.h"

/* What GCC's crtoffloadbegin.o and crtoffloadend.o would provide: empty
   host tables (mkoffload's wrapper only takes their addresses).  */
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
  if (d->magic != OK_DESC_MAGIC)
    {
      printf ("bad magic %#x\n", (unsigned) d->magic);
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
      printf ("image %u type %u format %u arch %u size %zu elf %s nul %d\n",
	      i, (unsigned) t->device_type, (unsigned) t->image_format,
	      (unsigned) t->arch, size, elf,
	      size > 0 && t->image_end[-1] == '\0');
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
