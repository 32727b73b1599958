/* A fault on a thread of a parallel region inside a target region (not
   the region's own thread) is the region's too: reported once, naming
   the thread's part, with the hint for an address that is no device
   memory (here a page the host unmapped, passed as a device pointer);
   the program ends as after such a kernel.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 1 } */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory } */

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int
main (void)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  int *gone = mmap (NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (gone == MAP_FAILED)
    abort ();
  munmap (gone, page);
  printf ("CheCKpOInT %d\n", omp_get_num_devices ());
  fflush (stdout);
  int sum = 0;
#pragma omp target is_device_ptr(gone) map(tofrom: sum)
#pragma omp parallel num_threads(4) reduction(+: sum)
  {
    /* Not the region's own thread (thread 0), every time.  */
    if (omp_get_thread_num () == omp_get_num_threads () - 1
	&& omp_get_num_threads () > 1)
      sum += gone[1];
    else
      sum += 1;
  }
  printf ("WrONg WAy %d\n", sum);
  return 0;
}

/* { dg-output "CheCKpOInT 1(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: cuCtxSynchronize error: an illegal memory access was encountered(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "Memory access fault by GPU node-1 \\(Agent handle: 0x\[0-9a-f\]+\\) on address 0x\[0-9a-f\]+000\\. Reason: Page not present or supervisor privilege\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted on a thread of a parallel region in it: a memory access where nothing is mapped \\(SIGSEGV\\) at 0x\[0-9a-f\]+004, which is no device memory: a host address that no mapping covers" } */
/* { dg-shouldfail "a thread of the region faults" } */
