/* Built by gcn.exp through our gcn mkoffload for hsa-harness's tests of
   `declare target indirect' and reverse offload (hsa-harness-abi3.c): two
   indirect functions, and the declare target table ind_fns of their
   device addresses, which the harness compares with the map the plugin
   writes.

   GCC 14 and later compile the `indirect' clause: their addresses go to
   the section .gnu.offload_ind_funcs, in whose start our mkoffload puts
   the label .offload_ind_func_table, and the device libgomp defines
   __gomp_indirect_addr_map, which the plugin points at the map it
   writes.  Earlier GCCs know no `indirect' clause, so what GCC 14's
   would emit is made by hand under the same names (the device libgomp
   of GCC 12 and 13 has no such variable).

   Built with -DIND_HMAP, the device code also has GCC 16's
   __gomp_indirect_addr_hmap, for which the plugin builds the hash table
   on the host: GCC 16's device libgomp defines it, for earlier GCCs it
   is made here.  */

#if defined IND_HMAP && __GNUC__ < 16
#pragma omp declare target
void *ind_hmap __asm__ ("__gomp_indirect_addr_hmap");
#pragma omp end declare target
#define KEEP_HMAP (ind_hmap != 0)
#else
#define KEEP_HMAP 0
#endif

#if __GNUC__ >= 14
#pragma omp begin declare target indirect
int twice (int x) { return 2 * x; }
int thrice (int x) { return 3 * x; }
#pragma omp end declare target

#pragma omp declare target
int (*ind_fns[2]) (int) = { twice, thrice };
#pragma omp end declare target
#else
#pragma omp declare target
int twice (int x) { return 2 * x; }
int thrice (int x) { return 3 * x; }
int (*ind_fns[2]) (int) __attribute__ ((section (".gnu.offload_ind_funcs")))
  = { twice, thrice };
void *ind_map __asm__ ("__gomp_indirect_addr_map");
#pragma omp end declare target
/* Referenced, so that the link keeps it.  */
#define KEEP_MAP (ind_map != 0)
#endif
#ifndef KEEP_MAP
#define KEEP_MAP 0
#endif

int
run (int x)
{
  int r = 0;
#pragma omp target map(from: r)
  r = ind_fns[x & 1] (x) + KEEP_MAP + KEEP_HMAP;
  return r;
}
