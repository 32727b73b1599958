/* Built by gcn.exp through our gcn mkoffload (gfx906) for hsa-harness's
   tests of `declare target indirect' (hsa-harness-abi3.c).  The accel
   compiler here, GCC 12's, knows no `indirect' clause, so what GCC 14's
   would emit for two such functions is made by hand under the names GCC
   14 gives it: their addresses in the section .gnu.offload_ind_funcs, in
   whose start our mkoffload puts the label .offload_ind_func_table, and
   the device libgomp's variable __gomp_indirect_addr_map, which the
   plugin points at the map it writes.  */

#pragma omp declare target
int twice (int x) { return 2 * x; }
int thrice (int x) { return 3 * x; }
int (*ind_fns[2]) (int) __attribute__ ((section (".gnu.offload_ind_funcs")))
  = { twice, thrice };
void *ind_map __asm__ ("__gomp_indirect_addr_map");
#pragma omp end declare target

int
run (int x)
{
  int r = 0;
#pragma omp target map(from: r)
  r = ind_fns[x & 1] (x) + (ind_map != 0);
  return r;
}
