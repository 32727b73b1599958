! OpenACC data clauses and async queues in Fortran on a device with memory
! of its own.
program data
  use openacc
  implicit none
  integer, parameter :: n = 100
  integer :: a(n), b(n), i

  if (acc_get_device_type () == acc_device_host) stop 1
  a = [(i, i = 1, n)]
  b = 0
  !$acc parallel loop copyin(a) copyout(b)
  do i = 1, n
     b(i) = 2 * a(i)
     a(i) = -1
  end do
  if (any (a /= [(i, i = 1, n)])) stop 2
  if (any (b /= 2 * [(i, i = 1, n)])) stop 3

  !$acc enter data copyin(b)
  !$acc parallel loop present(b) async(1)
  do i = 1, n
     b(i) = b(i) + 1
  end do
  !$acc update self(b) async(1)
  if (b(1) /= 2) stop 4
  !$acc wait(1)
  if (b(1) /= 3) stop 5
  !$acc exit data delete(b)
end program data
