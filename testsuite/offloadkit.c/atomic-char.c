/* Atomics on char and short inside target regions: on nvptx these need
   libatomic (__atomic_compare_exchange_1), which the device link must
   provide.  */
/* { dg-do run } */

#include "okt-check.h"

int
main (void)
{
  okt_require_devices ();

  char c = 0;
  short s = 0;
  unsigned char flags = 0;
#pragma omp target teams distribute parallel for map(tofrom: c, s, flags)
  for (int i = 0; i < 100; i++)
    {
#pragma omp atomic update
      c += 1;
#pragma omp atomic update
      s += 3;
#pragma omp atomic update
      flags |= (unsigned char) (1u << (i % 8));
    }
  OKT_CHECK (c == 100);
  OKT_CHECK (s == 300);
  OKT_CHECK (flags == 0xff);

  char old;
#pragma omp target map(tofrom: c) map(from: old)
  {
#pragma omp atomic capture
    { old = c; c = 42; }
  }
  OKT_CHECK (old == 100 && c == 42);
  return 0;
}
