/* libgomp 16's page-locked host memory (the allocators with the pinned
   trait): GOMP_OFFLOAD_page_locked_host_alloc and _free.  Part of the
   nvptx plugin only.

   They name no device: libgomp 16 (target.c, get_device_for_page_locked)
   takes the first device of the one plugin that exports them,
   initialises it, and calls them; when two plugins with devices export
   them it ends the program ("Unclear how ... may simultaneously provide
   functionality for page-locked memory").  GCC 16's nvptx plugin
   exports them and its gcn plugin does not, so a process with both
   kinds of device works; ours follow, which keeps that true with
   emulated devices of both plugins.  Without a plugin that exports
   them, libgomp pins memory itself (mmap and mlock).

   The device is the plugin's first, libgomp's target id 0: a CUDA
   device when there is one, else an emulated one.  */

#include "core-internal.h"

bool
GOMP_OFFLOAD_page_locked_host_alloc (void **ptr, size_t size)
{
  *ptr = NULL;
  /* omp_alloc of nothing gives NULL, as from GCC's plugin.  */
  if (size == 0)
    return true;
  struct ok_device *dev = core_device (0, "allocate page-locked host memory");
  if (dev == NULL)
    return false;
  if (dev->backend->page_locked_alloc == NULL)
    {
      /* None to be had: the allocator's fallback decides.  */
      OK_DEBUG ("%s: no page-locked host memory", dev->label);
      return true;
    }
  return dev->backend->page_locked_alloc (dev, ptr, size);
}

bool
GOMP_OFFLOAD_page_locked_host_free (void *ptr)
{
  if (ptr == NULL)
    return true;
  struct ok_device *dev = core_device (0, "free page-locked host memory");
  if (dev == NULL)
    return false;
  if (dev->backend->page_locked_free == NULL)
    {
      ok_dev_error (dev, "cannot free page-locked host memory at %p: the"
		    " device gives none", ptr);
      return false;
    }
  return dev->backend->page_locked_free (dev, ptr);
}
