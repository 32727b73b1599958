! STOP in a region on an async queue: the region runs, and ends, on the
! queue; the program hears of it at its wait (nvidia: the kernel's trap;
! radeon: the process ends with the status from the queue's thread).
program stop_async
  implicit none
  integer :: n

  n = 3
  print *, "CheCKpOInT"
  !$acc parallel copyin(n) async(1)
  if (n == 3) stop 3
  !$acc end parallel
  !$acc wait(1)
  print *, "WrONg WAy"
end program stop_async

! { dg-output "CheCKpOInT(\n|\r\n|\r)+STOP 3(\n|\r\n|\r)+" }
! { dg-device-exit 3 }
