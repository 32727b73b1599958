/* A program whose target regions, declare target functions and variables
   are spread over two translation units (multi-tu-aux.c), so that
   mkoffload links several LTO objects into one image whose function and
   variable tables must match the host tables' order.  Both units also
   have a static function with a target region and a static declare target
   variable of the same names: their device code must be compiled as one
   program, as GCC's mkoffload does, or the two kernels clash.  Also
   exercises dg-options and dg-additional-sources.  */
/* { dg-do run } */
/* { dg-options "-O1" } */
/* { dg-additional-sources "multi-tu-aux.c" } */

#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
extern int aux_table[4];
extern int aux_scale (int);
int main_offset = 1000;
#pragma omp end declare target

extern int aux_region (int);
extern int aux_unit_region (int);

static int unit_tag = 7;
#include "multi-tu-unit.h"

int
main (void)
{
  okt_require_devices ();

  /* Our region calls the other unit's function and reads its variable.  */
  int r[4];
#pragma omp target map(from: r)
  for (int i = 0; i < 4; i++)
    r[i] = aux_scale (aux_table[i]) + main_offset;
  for (int i = 0; i < 4; i++)
    OKT_CHECK (r[i] == (i + 1) * 10 * 3 + 1000);

  /* The other unit's region reads our variable.  */
  OKT_CHECK (aux_region (5) == 5 * 3 + 1000);

  /* Device copies are separate from the host's in both units.  */
  aux_table[0] = -1;
  main_offset = 0;
  OKT_CHECK (aux_region (0) == 1000);
#pragma omp target update to(main_offset)
  OKT_CHECK (aux_region (0) == 0);

  /* Each unit's static region runs its own kernel with its own variable.  */
  OKT_CHECK (unit_region (3) == 21);
  OKT_CHECK (aux_unit_region (3) == 6);
  unit_tag = 5;
#pragma omp target update to(unit_tag)
  OKT_CHECK (unit_region (3) == 15);
  OKT_CHECK (aux_unit_region (3) == 6);
  return 0;
}
