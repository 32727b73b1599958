! gfortran's acc_on_device in a region on the emulated device answers as
! the device's own.  At -O0: from GCC 15, gfortran folds it to the host's
! answer when optimising, as GCC does in C.
! { dg-options "-O0" }
program on_device
  use openacc
  implicit none
  logical :: dev, host
  integer(acc_device_kind) :: t

  t = acc_get_device_type ()
  dev = .false.
  host = .true.
  !$acc parallel copyout(dev, host) copyin(t)
  dev = acc_on_device (acc_device_not_host) .and. acc_on_device (t)
  host = acc_on_device (acc_device_host)
  !$acc end parallel
  if (.not. dev) stop 1
  if (host) stop 2
  if (.not. acc_on_device (acc_device_host)) stop 3
end program on_device
