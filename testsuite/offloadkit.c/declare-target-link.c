/* declare target link: the variable is not copied to the device at image
   load; mapping it makes the device refer to the mapped copy.  */
/* { dg-do run } */

#include "okt-check.h"

#define N 1000

int big[N];
double factor = 2.5;
#pragma omp declare target link(big, factor)

OKT_BEGIN_DECLARE_TARGET
static void
scale_big (void)
{
  for (int i = 0; i < N; i++)
    big[i] = (int) (big[i] * factor);
}
#pragma omp end declare target

int
main (void)
{
  okt_require_devices ();

  for (int i = 0; i < N; i++)
    big[i] = i;

#pragma omp target map(tofrom: big) map(to: factor)
  scale_big ();
  for (int i = 0; i < N; i++)
    OKT_CHECK (big[i] == (int) (i * 2.5));

  /* While mapped with enter data, device writes need update from.  */
  factor = 2;
#pragma omp target enter data map(to: big, factor)
#pragma omp target
  scale_big ();
  OKT_CHECK (big[2] == 5);
#pragma omp target update from(big)
  OKT_CHECK (big[2] == 10);
#pragma omp target exit data map(release: big, factor)
  return 0;
}
