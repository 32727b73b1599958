/* offloadkit-info's program that requires unified shared memory (GCC 13
   and newer record it).  */
#include <stdio.h>

#pragma omp requires unified_shared_memory

int
main (void)
{
  int x = 1;
#pragma omp target map(tofrom: x)
  x += 1;
  printf ("%d\n", x);
  return x != 2;
}
