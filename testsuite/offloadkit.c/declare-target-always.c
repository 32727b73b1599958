/* map(always, ...) of declare target variables: the always-to copy reaches
   the device copy and the always-from copy brings back what the region
   wrote, whether the region writes the variable directly or through a
   declare target function.  */
/* { dg-do run } */

#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
int grid[16];

static void
bump_grid (int k)
{
  grid[k] += 100;
}
#pragma omp end declare target

int
main (void)
{
  okt_require_devices ();

  for (int i = 0; i < 16; i++)
    grid[i] = i;

  /* Written directly in the region body.  */
#pragma omp target map(always, tofrom: grid)
  {
    for (int i = 0; i < 16; i++)
      grid[i] *= 2;
  }
  for (int i = 0; i < 16; i++)
    OKT_CHECK (grid[i] == 2 * i);

  /* Written by a called function, read back in the body.  */
  grid[3] = 50;
  int seen = 0;
#pragma omp target map(always, tofrom: grid) map(from: seen)
  {
    bump_grid (3);
    seen = grid[3];
    grid[4] = -4;
  }
  OKT_CHECK (seen == 150);
  OKT_CHECK (grid[3] == 150 && grid[4] == -4);

  /* Without always, the always-present variable is not copied.  */
  grid[0] = 99;
#pragma omp target map(tofrom: grid)
  grid[1] = 7;
  OKT_CHECK (grid[0] == 99 && grid[1] == 2);
#pragma omp target update from(grid)
  OKT_CHECK (grid[0] == 0 && grid[1] == 7);
  return 0;
}
