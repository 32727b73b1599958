/* A shared library with its own target regions and declare target
   variable; linked into linked-main.c, which offloads too.  Built with
   -fPIC -shared through our mkoffload.  */

#include <omp.h>

#pragma omp declare target
int lib_base = 1000;

static int
lib_helper (int x)
{
  return x + lib_base;
}
#pragma omp end declare target

/* Add lib_base + i to a[i] on the device.  */
void
lib_add_base (int *a, int n)
{
#pragma omp target map(tofrom: a[0:n])
  for (int i = 0; i < n; i++)
    a[i] = lib_helper (a[i] + i);
}

/* Change the library's device copy of lib_base only.  */
void
lib_set_device_base (int v)
{
#pragma omp target firstprivate(v)
  lib_base = v;
}

int
lib_get_device_base (void)
{
  int r;
#pragma omp target map(from: r)
  r = lib_base;
  return r;
}

/* Map-to write test inside the library: returns 1 if the device write to
   a map(to:) scalar stayed on the device.  */
int
lib_separate_memory (void)
{
  int x = 1;
#pragma omp target map(to: x)
  x = 2;
  return x == 1;
}
