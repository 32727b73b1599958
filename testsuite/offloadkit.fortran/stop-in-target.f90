! STOP in an OpenMP target region ends it as device code ends: with
! QUIET=.true. the device's libgfortran prints nothing; its exit traps on
! an nvidia device (reported by the plugin, the program stops) and ends
! the process with the status on a radeon device.
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
! { dg-device-exit 12 }
