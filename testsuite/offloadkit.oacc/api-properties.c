/* The runtime API on the emulated device: device count and type,
   properties, device memory.  */

#include <openacc.h>
#include <stdlib.h>
#include <string.h>

int
main (void)
{
  acc_device_t t = acc_get_device_type ();
  if (t != acc_device_nvidia && t != acc_device_radeon)
    abort ();
  if (acc_get_num_devices (t) < 1)
    abort ();
  const char *name = acc_get_property_string (0, t, acc_property_name);
  const char *vendor = acc_get_property_string (0, t, acc_property_vendor);
  const char *driver = acc_get_property_string (0, t, acc_property_driver);
  size_t mem = acc_get_property (0, t, acc_property_memory);
  size_t free_mem = acc_get_property (0, t, acc_property_free_memory);
  if (name == NULL || strstr (name, "emulated") == NULL
      || vendor == NULL || driver == NULL
      || mem == 0 || free_mem == 0 || free_mem > mem)
    abort ();

  int *d = acc_malloc (100 * sizeof (int));
  int h[100], r[100];
  for (int i = 0; i < 100; i++)
    h[i] = i * i, r[i] = 0;
  acc_memcpy_to_device (d, h, sizeof h);
  h[5] = -1;
  acc_memcpy_from_device (r, d, sizeof r);
  if (r[5] != 25 || d == h)
    abort ();
  acc_free (d);
  return 0;
}
