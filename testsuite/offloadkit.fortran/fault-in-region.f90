! An integer division by zero in a region, from Fortran: the host traps
! where a GPU would not, and the region fails as a kernel that cannot go
! on (offloadkit.c/fault-division.c says how).
! { dg-do run }
! { dg-set-target-env-var OFFLOADKIT_EMULATE 1 }
! { dg-set-target-env-var OMP_TARGET_OFFLOAD mandatory }
program fault_in_region
  implicit none
  integer, volatile :: zero
  integer :: n, d, q

  zero = 0
  n = 9
  d = zero
  print *, "CheCKpOInT"
  !$omp target map(to: n, d) map(from: q)
  q = n / d
  !$omp end target
  print *, "WrONg WAy", q
end program fault_in_region

! { dg-output "CheCKpOInT(\n|\r\n|\r)+" }
! { dg-output "libgomp: cuCtxSynchronize error: unspecified launch failure \\(perhaps abort was called\\)(\n|\r\n|\r)+" { target offload_nvptx } }
! { dg-output "libgomp: GCN fatal error: Asynchronous queue error(\n|\r\n|\r)Runtime message: HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception\\.(\n|\r\n|\r)+" { target offload_amdgcn } }
! { dg-output "libgomp: offloadkit-(nvptx|gcn): emulated device 0: kernel '\[^'\]*' faulted: an integer division by zero \\(SIGFPE\\)" }
! { dg-shouldfail "the region traps" }
