/* An asynchronous OpenACC region that reads through a NULL device
   pointer faults when its queue runs it (at the wait): GCC's nvptx
   plugin's words for an OpenACC kernel (cuStreamSynchronize) on the
   nvidia device, the runtime's memory-fault line on the radeon device,
   then offloadkit's line, and the program ends as after such a
   kernel.  */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory } */

#include <openacc.h>
#include <stdio.h>

static int *volatile nowhere;

int
main (void)
{
  int *p = nowhere;
  int r = -1;
  printf ("CheCKpOInT %d\n", acc_get_num_devices (acc_get_device_type ()));
  fflush (stdout);
#pragma acc parallel deviceptr (p) copyout (r) async (1)
  r = p[2];
#pragma acc wait (1)
  printf ("WrONg WAy %d\n", r);
  return 0;
}

/* { dg-output "CheCKpOInT 1(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: cuStreamSynchronize error: an illegal memory access was encountered(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "Memory access fault by GPU node-1 \\(Agent handle: 0x\[0-9a-f\]+\\) on address 0x0\\. Reason: Page not present or supervisor privilege\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted: a memory access where nothing is mapped \\(SIGSEGV\\) at 0x8, near NULL" } */
/* { dg-shouldfail "the region faults" } */
