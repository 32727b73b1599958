! STOP in an OpenMP target region ends it as device code ends: with
! QUIET=.true. the device's libgfortran prints nothing; its exit traps on
! an nvidia device (reported by the plugin, the program stops) and ends
! the process with the status on a radeon device.
! { dg-set-target-env-var GFORTRAN_UNBUFFERED_PRECONNECTED y }
program stop_in_target
  implicit none
  integer :: n

  n = 12
  print *, "CheCKpOInT"
  !$omp target map(to: n)
  if (n == 12) stop n, quiet=.true.
  !$omp end target
  print *, "WrONg WAy"
end program stop_in_target

! { dg-output "CheCKpOInT(\n|\r\n|\r)+" }
! { dg-output "libgomp: cuStreamSynchronize error: unspecified launch failure .perhaps abort was called." { target offload_nvptx } }
! { dg-output "$" { target offload_amdgcn } }
! { dg-shouldfail "an nvidia device's exit traps" { offload_nvptx } }
! { dg-exit-status 12 { offload_amdgcn } }
