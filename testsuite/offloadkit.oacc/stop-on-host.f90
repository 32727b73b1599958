! Outside regions, STOP and ERROR STOP are the host libgfortran's, with
! its "Error termination", although the program's offloading wrapper
! interposes them for regions on the emulated device.  The region before
! runs on the device: what it writes to a copyin array stays there.
program stop_on_host
  use openacc
  implicit none
  integer :: a(8), s, i

  if (acc_get_device_type () == acc_device_host) stop 1
  a = [(i, i = 1, 8)]
  s = 0
  !$acc parallel copyin(a) copy(s)
  do i = 1, 8
    s = s + a(i)
    a(i) = -1
  end do
  !$acc end parallel
  if (s /= 36) stop 2
  if (any (a /= [(i, i = 1, 8)])) stop 3
  print *, "CheCKpOInT"
  error stop 7
end program stop_on_host

! { dg-output "CheCKpOInT(\n|\r\n|\r)+ERROR STOP 7(\n|\r\n|\r)+Error termination" }
! { dg-exit-status 7 }
