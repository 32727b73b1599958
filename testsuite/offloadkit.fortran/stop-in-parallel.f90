! STOP in a parallel region inside a target region, on the thread that
! started it while the other threads wait at the region's end: the
! program ends as from the target region itself (nvidia: the kernel's
! trap; radeon: the exit status), without waiting for them.
program stop_in_parallel
  use omp_lib
  implicit none
  integer :: n

  n = 21
  print *, "CheCKpOInT"
  !$omp target map(to: n)
  !$omp parallel num_threads(2)
  if (omp_get_thread_num () == 0) stop n
  !$omp end parallel
  !$omp end target
  print *, "WrONg WAy"
end program stop_in_parallel

! { dg-output "CheCKpOInT(\n|\r\n|\r)+STOP 21(\n|\r\n|\r)+" }
! { dg-device-exit 21 }
