/* dlopen / dlclose / dlopen again a library with its own offload image
   (dlopen-lib.c, path in argv[1]) while the program offloads too.  */

#include <dlfcn.h>
#include "okt-check.h"

#pragma omp declare target
int prog_var = 3;
#pragma omp end declare target

static int
prog_region (void)
{
  int r;
#pragma omp target map(from: r)
  r = ++prog_var;
  return r;
}

static void
use_library (const char *path, int round)
{
  void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    {
      fprintf (stderr, "dlopen: %s\n", dlerror ());
      abort ();
    }
  int (*bump) (int) = (int (*) (int)) dlsym (h, "dl_bump");
  int (*sqsum) (const int *, int)
    = (int (*) (const int *, int)) dlsym (h, "dl_square_sum");
  OKT_CHECK (bump && sqsum);

  /* Fresh image each time: starts from the initializer 100.  */
  OKT_CHECK (bump (1) == 101);
  OKT_CHECK (bump (2) == 103);
  int a[50];
  for (int i = 0; i < 50; i++)
    a[i] = i + round;
  int e = 0;
  for (int i = 0; i < 50; i++)
    e += a[i] * a[i];
  OKT_CHECK (sqsum (a, 50) == e);
  OKT_CHECK (dlclose (h) == 0);
}

int
main (int argc, char **argv)
{
  OKT_CHECK (argc == 2);
  okt_require_devices ();
  OKT_CHECK (prog_region () == 4);
  use_library (argv[1], 0);
  OKT_CHECK (prog_region () == 5);
  use_library (argv[1], 1);
  use_library (argv[1], 2);
  OKT_CHECK (prog_region () == 6);
  return 0;
}
