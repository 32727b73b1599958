/* teams distribute parallel for with reductions of several kinds.  */
/* { dg-do run } */

#include "okt-check.h"

#define N 100000

int
main (void)
{
  okt_require_devices ();

  static int a[N];
  for (int i = 0; i < N; i++)
    a[i] = (i * 37) % 1001 - 500;

  long sum = 0;
  int mx = -100000, mn = 100000;
  double prod = 1.0;
  int all_small = 1;
#pragma omp target teams distribute parallel for map(to: a) \
	reduction(+: sum) reduction(max: mx) reduction(min: mn) \
	reduction(&&: all_small)
  for (int i = 0; i < N; i++)
    {
      sum += a[i];
      if (a[i] > mx)
	mx = a[i];
      if (a[i] < mn)
	mn = a[i];
      all_small = all_small && (a[i] < 1000);
    }

#pragma omp target teams distribute parallel for reduction(*: prod)
  for (int i = 0; i < 20; i++)
    prod *= (i % 2) ? 2.0 : 1.0;

  long esum = 0;
  int emx = -100000, emn = 100000;
  for (int i = 0; i < N; i++)
    {
      esum += a[i];
      emx = a[i] > emx ? a[i] : emx;
      emn = a[i] < emn ? a[i] : emn;
    }
  OKT_CHECK (sum == esum);
  OKT_CHECK (mx == emx && mn == emn);
  OKT_CHECK (all_small);
  OKT_CHECK (prod == 1024.0);

  /* An array reduction, with num_teams.  */
  int hist[4] = { 0, 0, 0, 0 };
#pragma omp target teams distribute parallel for num_teams(4) \
	reduction(+: hist[0:4])
  for (int i = 0; i < N; i++)
    hist[i % 4]++;
  for (int k = 0; k < 4; k++)
    OKT_CHECK (hist[k] == N / 4);
  return 0;
}
