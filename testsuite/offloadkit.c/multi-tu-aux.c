/* Second translation unit of multi-tu.c (not a test by itself).  */

#include "okt-declare-target.h"

OKT_BEGIN_DECLARE_TARGET
int aux_table[4] = { 10, 20, 30, 40 };
extern int main_offset;

int
aux_scale (int x)
{
  return x * 3;
}
#pragma omp end declare target

int
aux_region (int x)
{
  int r;
#pragma omp target map(from: r) firstprivate(x)
  r = aux_scale (x) + main_offset;
  return r;
}

/* The same names as multi-tu.c's static function and variable.  */
static int unit_tag = 2;
#include "multi-tu-unit.h"

int
aux_unit_region (int x)
{
  return unit_region (x);
}
