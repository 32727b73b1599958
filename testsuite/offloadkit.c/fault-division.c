/* An integer division by zero in a region: the host traps where a GPU
   would give an undefined result, and the region cannot go on: the
   modelled GPU's words for a failed kernel, offloadkit's line saying
   what the host trapped on, and the end libgomp gives such a kernel
   (exit status 1).  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 1 } */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory } */

#include <stdio.h>

static volatile int zero;

int
main (void)
{
  int n = 7, d = zero, q = -1;
  printf ("CheCKpOInT\n");
  fflush (stdout);
#pragma omp target map(to: n, d) map(from: q)
  q = n / d;
  printf ("WrONg WAy %d\n", q);
  return 0;
}

/* { dg-output "CheCKpOInT(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: cuCtxSynchronize error: unspecified launch failure \\(perhaps abort was called\\)(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "libgomp: GCN fatal error: Asynchronous queue error(\n|\r\n|\r)Runtime message: HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted: an integer division by zero \\(SIGFPE\\) at 0x\[0-9a-f\]+; a GPU does not trap there" } */
/* { dg-shouldfail "the region traps" } */
