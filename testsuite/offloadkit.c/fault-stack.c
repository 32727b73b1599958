/* A region that recurses past its stack faults as a kernel that
   overflows its stack does on a GPU; offloadkit's line says the stack
   overflowed (the signal is taken on a stack of its own).  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 1 } */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory } */

#include <stdio.h>
#include "okt-declare-target.h"

OKT_BEGIN_DECLARE_TARGET
static int __attribute__ ((noinline))
deep (int n)
{
  volatile char pad[4096];
  pad[0] = (char) n;
  return n == 0 ? 0 : deep (n - 1) + pad[0];
}
#pragma omp end declare target

int
main (void)
{
  int r = 0, n = 1 << 20;
  printf ("CheCKpOInT\n");
  fflush (stdout);
#pragma omp target map(from: r) map(to: n)
  r = deep (n);
  printf ("WrONg WAy %d\n", r);
  return 0;
}

/* { dg-output "CheCKpOInT(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: cuCtxSynchronize error: an illegal memory access was encountered(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "Memory access fault by GPU node-1 \\(Agent handle: 0x\[0-9a-f\]+\\) on address 0x\[0-9a-f\]+\\. Reason: \[^\n\r\]*\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted: .*\\(SIGSEGV\\) at 0x\[0-9a-f\]+, just below the region's stack: the region's stack overflowed" } */
/* { dg-shouldfail "the region's stack overflows" } */
