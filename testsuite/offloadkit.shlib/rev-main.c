/* Reverse offload from the program, then from a library loaded with
   dlopen (rev-lib.c, path in argv[1]), unloaded and loaded again.  In
   that order: libgomp drops every image's reverse-offload table when one
   of them is unloaded (GCC 13 to 16's gomp_unload_image_from_device), on
   a GPU as on an emulated device, so the program's ancestor regions could
   not run after the library's unload.  */

/* Before okt-check.h, whose functions have target regions.  */
#pragma omp requires reverse_offload

#include <dlfcn.h>
#include "okt-check.h"

static void
use_library (const char *path)
{
  void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    {
      fprintf (stderr, "dlopen: %s\n", dlerror ());
      abort ();
    }
  int (*run) (int, int *) = (int (*) (int, int *)) dlsym (h, "rev_run");
  OKT_CHECK (run != NULL);
  int calls = 0;
  OKT_CHECK (run (1, &calls) == 20);
  OKT_CHECK (calls == 1);
  OKT_CHECK (run (4, &calls) == 50);
  OKT_CHECK (calls == 2);
  OKT_CHECK (dlclose (h) == 0);
}

int
main (int argc, char **argv)
{
  OKT_CHECK (argc == 2);
  okt_require_devices ();
  int y = 1;
#pragma omp target map(to: y)
  {
    y = 3;
#pragma omp target device(ancestor: 1) map(always, tofrom: y)
    y += 20;
  }
  OKT_CHECK (y == 23);
  use_library (argv[1]);
  use_library (argv[1]);
  return 0;
}
