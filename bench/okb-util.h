/* Small helpers shared by the benchmark programs: a monotonic clock and
   order statistics.  Header-only so that each benchmark stays one
   translation unit that both GCC's pipeline and ours compile unchanged.  */

#ifndef OKB_UTIL_H
#define OKB_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC.  The clock is system-wide, so a value
   read in a child process can be compared with one read in its parent
   (spawn-timer relies on this).  */
static inline long long
okb_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
okb_cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Sorts V (N > 0 values) in place and returns its median (the mean of
   the two middle values for an even N).  */
static inline double
okb_median (double *v, int n)
{
  qsort (v, n, sizeof *v, okb_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Smallest and largest of N > 0 values.  */
static inline double
okb_min (const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] < m)
      m = v[i];
  return m;
}

static inline double
okb_max (const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] > m)
      m = v[i];
  return m;
}

#endif
