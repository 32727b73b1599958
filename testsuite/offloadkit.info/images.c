/* offloadkit-info's program: two functions (regions), two variables.  */
#include <stdio.h>

#if __GNUC__ >= 13
#pragma omp begin declare target
#else
#pragma omp declare target
#endif
int table[64];
double scale = 2.0;
#pragma omp end declare target

int
main (void)
{
  int x = 1;
#pragma omp target map(tofrom: x)
  x += table[3];
#pragma omp target map(tofrom: x)
  x = (int) (x * scale);
  printf ("%d\n", x);
  return 0;
}
