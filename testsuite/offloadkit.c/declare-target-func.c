/* declare target functions called from target regions, including
   recursion, a static function, and functions calling each other across
   the "declare target" list.  */
/* { dg-do run } */

#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
static int
fib (int n)
{
  return n < 2 ? n : fib (n - 1) + fib (n - 2);
}

int scale = 3;

int
scaled (int x)
{
  return x * scale;
}
#pragma omp end declare target

int twice (int);
/* "enter", OpenMP 5.2's name for "to", from GCC 13 (GCC 16 warns on
   "to").  */
#if __GNUC__ >= 13
#pragma omp declare target enter(twice)
#else
#pragma omp declare target to(twice)
#endif

int
twice (int x)
{
  return scaled (x) * 2;
}

int
main (void)
{
  okt_require_devices ();

  int f = 0, s[10];
#pragma omp target map(from: f, s)
  {
    f = fib (20);
    for (int i = 0; i < 10; i++)
      s[i] = twice (i);
  }
  OKT_CHECK (f == 6765);
  for (int i = 0; i < 10; i++)
    OKT_CHECK (s[i] == 6 * i);

  /* The device's copy of scale changes; the host function still uses the
     host copy.  */
#pragma omp target
  scale = 5;
  OKT_CHECK (scaled (2) == 6);
#pragma omp target map(from: f)
  f = twice (1);
  OKT_CHECK (f == 10);
  return 0;
}
