/* A region that dereferences a pointer whose data no map clause gave
   the device (NULL there) faults as on a GPU: GCC's nvptx plugin's words
   for the nvidia device, the runtime's memory-fault line for the radeon
   device, then offloadkit's line naming the device, the kernel and the
   address; the program ends as after such a kernel (exit status 1 on
   the nvidia device; the radeon device's runtime aborts).  Output the
   program flushed before stays.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 1 } */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory } */

#include <stdio.h>
#include <stdlib.h>

/* Not known to the compiler to be NULL.  */
static int *volatile nowhere;

int
main (void)
{
  int *p = nowhere;
  int r = -1;
  printf ("CheCKpOInT\n");
  fflush (stdout);
#pragma omp target map(from: r) map(to: p[0:0])
  r = p[3];
  printf ("WrONg WAy %d\n", r);
  return 0;
}

/* { dg-output "CheCKpOInT(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: cuCtxSynchronize error: an illegal memory access was encountered(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "Memory access fault by GPU node-1 \\(Agent handle: 0x\[0-9a-f\]+\\) on address 0x0\\. Reason: Page not present or supervisor privilege\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted: a memory access where nothing is mapped \\(SIGSEGV\\) at 0xc, near NULL: a pointer the region uses is NULL on the device" } */
/* { dg-shouldfail "the region faults" } */
