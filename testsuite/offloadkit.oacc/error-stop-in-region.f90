! ERROR STOP in a region: the device's libgfortran prints the words
! without the host's "Error termination" (it never read the program's
! options), then exits with 1 (nvidia: a trap).  ERROR STOP on the host
! afterwards would be the host's: see stop-on-host.f90.
program error_stop_in_region
  implicit none
  integer :: n

  n = 3
  print *, "CheCKpOInT"
  !$acc parallel copyin(n)
  if (n == 3) error stop "SiGN"
  !$acc end parallel
  print *, "WrONg WAy"
end program error_stop_in_region

! { dg-output "CheCKpOInT(\n|\r\n|\r)+ERROR STOP SiGN(\n|\r\n|\r)+" }
! { dg-device-exit 1 }
