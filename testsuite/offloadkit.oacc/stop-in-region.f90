! STOP in a region ends it as device code ends: the device's
! libgfortran prints the statement's words, then its exit traps on an
! nvidia device (GCC's nvptx plugin then reports the kernel's failure)
! and ends the process with the status on a radeon device.  What the
! region wrote before stays on the device.
program stop_in_region
  implicit none
  integer :: a(4)

  a = 1
  !$acc parallel copyin(a)
  !$acc end parallel
  print *, "CheCKpOInT"
  !$acc parallel copyin(a)
  a(2) = 7
  if (a(2) == 7) stop 35
  !$acc end parallel
  print *, "WrONg WAy", a
end program stop_in_region

! { dg-output "CheCKpOInT(\n|\r\n|\r)+STOP 35(\n|\r\n|\r)+" }
! { dg-device-exit 35 }
