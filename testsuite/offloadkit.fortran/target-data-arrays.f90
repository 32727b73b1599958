! target, target data and target enter/exit data on Fortran arrays:
! explicit-shape, allocatable and array sections.
! { dg-do run }

program main
  use omp_lib
  implicit none
  integer, parameter :: n = 1000
  real(8) :: a(n), b(n)
  integer, allocatable :: c(:, :)
  integer :: i, j
  real(8) :: s

  call okt_require_devices ()

  a = [(real(i, 8), i = 1, n)]
  b = 0
  !$omp target data map(to: a) map(tofrom: b)
    !$omp target
      do i = 1, n
        b(i) = 2 * a(i)
        a(i) = -1                 ! map(to:): never copied back.
      end do
    !$omp end target
    if (b(10) /= 0) stop 3        ! Still on the device.
    !$omp target update from(b(1:10))
    if (b(10) /= 20) stop 4
    if (b(11) /= 0) stop 5
  !$omp end target data
  if (any (a < 1)) stop 6
  do i = 1, n
    if (b(i) /= 2 * i) stop 7
  end do

  allocate (c(20, 30))
  c = 0
  !$omp target enter data map(to: c)
  !$omp target teams distribute parallel do collapse(2)
    do j = 1, 30
      do i = 1, 20
        c(i, j) = i * 100 + j
      end do
    end do
  !$omp end target teams distribute parallel do
  if (c(5, 5) /= 0) stop 8
  !$omp target exit data map(from: c)
  do j = 1, 30
    do i = 1, 20
      if (c(i, j) /= i * 100 + j) stop 9
    end do
  end do
  deallocate (c)

  s = 0
  !$omp target teams distribute parallel do reduction(+: s) map(to: a(101:200))
    do i = 101, 200
      s = s + a(i)
    end do
  !$omp end target teams distribute parallel do
  if (s /= sum (a(101:200))) stop 10
contains
  include 'okt-check.inc'
end program main
