! declare target variables and procedures in a Fortran module: the device
! copy starts from the initializer, and target update moves data.
! { dg-do run }

module okt_mod
  implicit none
  integer :: counter = 42
  real(8) :: weights(10)
  !$omp declare target (counter, weights)
contains
  integer function bump(n)
    !$omp declare target
    integer, value :: n
    counter = counter + n
    bump = counter
  end function bump
end module okt_mod

program main
  use okt_mod
  use omp_lib
  implicit none
  integer :: r, i

  call okt_require_devices ()

  counter = 0                     ! Host copy only.
  !$omp target map(from: r)
    r = bump (8)
  !$omp end target
  if (r /= 50) stop 3
  if (counter /= 0) stop 4
  !$omp target update from(counter)
  if (counter /= 50) stop 5

  weights = [(real(i, 8), i = 1, 10)]
  !$omp target update to(weights)
  !$omp target
    weights = weights * 2
  !$omp end target
  if (weights(3) /= 3) stop 6
  !$omp target update from(weights)
  do i = 1, 10
    if (weights(i) /= 2 * i) stop 7
  end do
contains
  include 'okt-check.inc'
end program main
