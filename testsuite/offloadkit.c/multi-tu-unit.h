/* What both units of multi-tu.c define with the same names, each its own:
   static declare target variable unit_tag (which each unit defines, with
   a value of its own, before including this) and static function
   unit_region, whose target region reads it.  Their device code must be
   compiled as one program, as GCC's mkoffload does, or the two kernels
   clash.  */

#pragma omp declare target (unit_tag)

static int
unit_region (int x)
{
  int r;
#pragma omp target map(from: r) firstprivate(x)
  r = x * unit_tag;
  return r;
}
