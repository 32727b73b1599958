/* GOMP_OPENACC_DIM asks for 33 workers of a warp's 32 lanes: more
   threads than a block of the GPU the emulated nvidia device models may
   have (1024), so the launch is refused with GCC's nvptx plugin's
   message and the program stops, as on that GPU.  GCC's gcn plugin reads
   no GOMP_OPENACC_DIM: on the radeon device the region runs.  */
/* { dg-set-target-env-var "GOMP_OPENACC_DIM" ":33:" } */
/* { dg-shouldfail "too many threads for a block" { offload_nvptx } } */

#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

int
main (void)
{
  int a[256];
  fprintf (stderr, "CheCKpOInT\n");
#pragma acc parallel copyout (a)
#pragma acc loop worker vector
  for (int i = 0; i < 256; i++)
    a[i] = i + 1;
  for (int i = 0; i < 256; i++)
    if (a[i] != i + 1)
      abort ();
  fprintf (stderr, "ran\n");
  return 0;
}

/* { dg-output "CheCKpOInT(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: .*The Nvidia accelerator has insufficient resources to launch 'main\\\$_omp_fn\\\$0' with num_workers = 33 and vector_length = 32" { target offload_nvptx } } */
/* { dg-output "ran" { target offload_amdgcn } } */
