/* Read-only declare target variables: const tables live in read-only host
   memory, and gfortran's array constructors do the same for compiler-made
   constants; the device must read them without anyone writing the host
   copy.  */
/* { dg-do run } */

#include "okt-check.h"

static const int primes[8] = { 2, 3, 5, 7, 11, 13, 17, 19 };
const double weights[4] = { 0.5, 0.25, 0.125, 0.125 };
#pragma omp declare target(primes, weights)

OKT_BEGIN_DECLARE_TARGET
static int
weighted (int i)
{
  return (int) (primes[i] * 8 * weights[i % 4]);
}
#pragma omp end declare target

int
main (void)
{
  okt_require_devices ();

  int sum = 0, w[8];
#pragma omp target map(from: sum, w)
  {
    sum = 0;
    for (int i = 0; i < 8; i++)
      {
	sum += primes[i];
	w[i] = weighted (i);
      }
  }
  OKT_CHECK (sum == 77);
  for (int i = 0; i < 8; i++)
    OKT_CHECK (w[i] == (int) (primes[i] * 8 * weights[i % 4]));

  /* Twice, and on every device, for good measure.  */
  for (int d = 0; d < omp_get_num_devices (); d++)
    {
      int p = 0;
#pragma omp target device(d) map(from: p)
      p = primes[7] * primes[0];
      OKT_CHECK (p == 38);
    }
  return 0;
}
