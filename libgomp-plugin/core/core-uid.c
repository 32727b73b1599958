/* libgomp 15's GOMP_OFFLOAD_get_uid: a string that names a device
   uniquely and stays the same from run to run, for
   omp_get_uid_from_device and omp_get_device_from_uid.  */

#include "core-internal.h"

/* The backend's name for device ORD, allocated with GOMP_PLUGIN_malloc
   (libgomp keeps it for the rest of the run); NULL when it has none,
   and libgomp then makes one of the device number.  libgomp initialises
   the device before it asks.  */
const char *
GOMP_OFFLOAD_get_uid (int ord)
{
  struct ok_device *dev = core_device (ord, "name the device");
  if (dev == NULL || dev->backend->get_uid == NULL)
    return NULL;
  return dev->backend->get_uid (dev);
}
