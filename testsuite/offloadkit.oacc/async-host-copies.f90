! Asynchronous copies to the device take the host's bytes of the moment
! of the call (async-host-copies.c says why): a subroutine queues a region on
! each of 64 queues with scalars that are temporaries of its caller and
! returns before the wait.
module scaling
  implicit none
contains
  subroutine scale_async (p, n, f, q)
    integer, intent(in) :: n, q
    real, intent(inout) :: p(n)
    real, intent(in) :: f
    integer :: i
    !$acc parallel loop present(p) async(q)
    do i = 1, n
      p(i) = p(i) * f
    end do
  end subroutine scale_async
end module scaling

program async_host_copies
  use scaling
  implicit none
  integer, parameter :: n = 256, nq = 64
  real :: a(n, nq)
  integer :: q

  a = 1.0
  !$acc data copy(a)
  do q = 1, nq
    call scale_async (a(:, q), n, real (q + 1), q)
  end do
  !$acc wait
  !$acc end data
  do q = 1, nq
    if (any (a(:, q) /= real (q + 1))) then
      print *, "slice", q, "scaled by", a(1, q), "want", q + 1
      stop 1
    end if
  end do
end program async_host_copies
