/* Program linked with a shared library that has its own offload image
   (linked-lib.c): both images are registered and usable together, and each
   keeps its own declare target variables.  */

#include "okt-check.h"

extern void lib_add_base (int *, int);
extern void lib_set_device_base (int);
extern int lib_get_device_base (void);
extern int lib_separate_memory (void);

#pragma omp declare target
int main_base = 7;
#pragma omp end declare target

int
main (void)
{
  okt_require_devices ();
  OKT_CHECK (lib_separate_memory ());

  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
  lib_add_base (a, 10);
  for (int i = 0; i < 10; i++)
    OKT_CHECK (a[i] == 2 * i + 1000);

  /* Our own region, own variable.  */
  int m = 0;
#pragma omp target map(from: m)
  m = main_base * 6;
  OKT_CHECK (m == 42);

  lib_set_device_base (5);
  OKT_CHECK (lib_get_device_base () == 5);
  lib_add_base (a, 1);
  OKT_CHECK (a[0] == 1005);
#pragma omp target map(from: m)
  m = main_base;
  OKT_CHECK (m == 7);
  return 0;
}
