// A member function called in a region reads through a pointer member
// whose data no map clause gave the device (NULL there): the region
// faults as on a GPU (offloadkit.c/fault-in-region.c says how).
// { dg-do run }
// { dg-set-target-env-var OFFLOADKIT_EMULATE 1 }
// { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory }

#include <cstdio>
#include "okt-declare-target.h"

static int *volatile nowhere;

OKT_BEGIN_DECLARE_TARGET
struct table
{
  int *cells;
  int at (int i) const { return cells[i]; }
};
#pragma omp end declare target

int
main ()
{
  table t = { nowhere };
  int r = -1;
  std::printf ("CheCKpOInT\n");
  std::fflush (stdout);
#pragma omp target map(to: t) map(from: r)
  r = t.at (5);
  std::printf ("WrONg WAy %d\n", r);
  return 0;
}

// { dg-output "CheCKpOInT(\n|\r\n|\r)+" }
// { dg-output "libgomp: cuCtxSynchronize error: an illegal memory access was encountered(\n|\r\n|\r)+" { target offload_nvptx } }
// { dg-output "Memory access fault by GPU node-1 \\(Agent handle: 0x\[0-9a-f\]+\\) on address 0x0\\. Reason: Page not present or supervisor privilege\\.(\n|\r\n|\r)+" { target offload_amdgcn } }
// { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*main\[^'\]*' faulted: a memory access where nothing is mapped \\(SIGSEGV\\) at 0x14, near NULL" }
// { dg-shouldfail "the region faults" }
