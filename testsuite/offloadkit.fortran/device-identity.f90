! What a region asks about its device, from Fortran: gfortran calls
! libgomp's Fortran entry points (omp_get_device_num_, ...), which the
! wrapper answers as a device would on emulated devices.  Also a region
! comparing with an array constructor (gfortran makes it a constant array
! in read-only memory and lists it as a declare target variable), and the
! thread_limit clause.
! { dg-do run }
! { dg-set-target-env-var OFFLOADKIT_EMULATE 2 }

program main
  use omp_lib
  implicit none
  integer, parameter :: primes(4) = [3, 5, 7, 11]
  integer :: d, i, num, lim, total, arr(10), gpus
  logical :: initial, folded

  ! GCC 15 and later fold omp_is_initial_device () to .true. in host code
  ! at compile time, and an emulated device runs the host code of
  ! regions; a GPU (runs with OFFLOADKIT_TEST_DEVICES) runs device code,
  ! which answers .false. whatever the GCC.
  folded = gcc_major () >= 15
  call get_environment_variable ("OFFLOADKIT_TEST_DEVICES", length=gpus)

  call okt_require_devices ()

  do d = 0, 1
    num = -1
    initial = .true.
    !$omp target device(d) map(from: num, initial)
    num = omp_get_device_num ()
    initial = omp_is_initial_device ()
    !$omp end target
    if (num /= d) stop 3
    if ((initial .neqv. folded) .and. (gpus == 0 .or. .not. folded)) stop 4
  end do
  if (.not. omp_is_initial_device ()) stop 5
  if (omp_get_device_num () /= omp_get_initial_device ()) stop 6

  !$omp target map(from: total, arr)
  total = 0
  do i = 1, 4
    total = total + primes(i) * i
  end do
  do i = 1, 10
    arr(i) = -2 * i
  end do
  if (any (arr /= [(-2 * i, i = 1, 10)])) total = -1
  !$omp end target
  if (total /= 3 + 10 + 21 + 44) stop 7
  if (arr(10) /= -20) stop 9

  !$omp target thread_limit(2) map(from: lim)
  lim = omp_get_thread_limit ()
  !$omp end target
  if (lim /= 2) stop 8
contains
  include 'okt-check.inc'
end program main
