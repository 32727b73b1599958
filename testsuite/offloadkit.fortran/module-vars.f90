! Module variables with declare target: an uninitialised array, a large
! (4 MiB) uninitialised one, initialised arrays (one of 64 KiB, all
! non-zero), an initialised and an uninitialised scalar, used in target
! regions from procedures of the module and from the main program.  The
! device copy of each starts from the initializer (zero when there is
! none: gfortran's variables of a module are static), device writes stay
! on the device until target update from, host writes reach it with
! target update to.
!
! Why: for nvptx, ptxas puts uninitialised .global variables into a
! .nv.global section of NVIDIA's no-file-content type (0x70000007, like
! SHT_NOBITS), often larger than the cubin itself.  mkoffload's ELF check
! once took such a section for a truncated one, so that every program
! with an uninitialised declare target variable failed to link when
! mkoffload built cubins (its default when ptxas and nvlink are on PATH);
! PTX-only builds (OFFLOADKIT_NVPTX_SASS=none) never showed it.
! { dg-do run }

module okt_globals
  implicit none
  integer, parameter :: nsmall = 512, nbig = 1048576, ninit = 16384
  integer, private :: j
  integer :: small(nsmall)                      ! Uninitialised.
  integer :: big(nbig)                          ! Uninitialised, 4 MiB.
  integer :: init(ninit) = [(3 * j + 1, j = 1, ninit)]
  real(8) :: coeffs(4) = [0.5d0, 1.5d0, 2.5d0, 3.5d0]
  integer :: counter = 42
  integer(8) :: total                           ! Uninitialised scalar.
  !$omp declare target (small, big, init, coeffs, counter, total)
contains
  ! On the device: fill small and every 1024th element of big from init,
  ! count the calls; return the sum of what was read.
  integer(8) function fill (k)
    !$omp declare target
    integer, value :: k
    integer :: i
    fill = 0
    do i = 1, nsmall
      small(i) = k * i + init(i)
      fill = fill + init(i)
    end do
    do i = 1, nbig, 1024
      big(i) = i + k
    end do
    counter = counter + 1
  end function fill

  ! Run fill in a target region of the module and keep its result in
  ! total, on the device.
  subroutine device_fill (k)
    integer, intent(in) :: k
    !$omp target
      total = fill (k)
    !$omp end target
  end subroutine device_fill
end module okt_globals

program main
  use okt_globals
  implicit none
  integer :: i, bad, cnt
  integer(8) :: expect
  real(8) :: csum

  ! Host copies only: the device's start from the initializers.
  counter = 0
  init(1) = -1
  coeffs(1) = -9

  call okt_require_devices ()

  ! Initial values, read on the device.
  bad = -1
  !$omp target map(from: bad, cnt, csum)
    bad = 0
    do i = 1, ninit
      if (init(i) /= 3 * i + 1) bad = i
    end do
    do i = 1, nbig
      if (big(i) /= 0) bad = -2
    end do
    do i = 1, nsmall
      if (small(i) /= 0) bad = -3
    end do
    if (total /= 0) bad = -4
    cnt = counter
    csum = sum (coeffs)
  !$omp end target
  if (bad /= 0) stop 1
  if (cnt /= 42) stop 2
  if (differs (csum, 8d0)) stop 3

  ! Device writes, from the module's procedure and from here.
  call device_fill (5)
  !$omp target
    coeffs = coeffs * 2
    init = init + 1
    big(nbig) = -7
  !$omp end target
  if (counter /= 0 .or. small(1) /= 0 .or. big(1) /= 0) stop 4
  if (big(nbig) /= 0 .or. total /= 0 .or. init(1) /= -1) stop 5
  if (differs (coeffs(1), -9d0) .or. differs (coeffs(2), 1.5d0)) stop 6

  ! A section of big first: the rest stays as the host has it.
  !$omp target update from(big(1025:2048))
  if (big(1) /= 0 .or. big(1025) /= 1025 + 5 .or. big(2049) /= 0) stop 7

  !$omp target update from(small, big, init, coeffs, counter, total)
  if (counter /= 43) stop 8
  expect = 0
  do i = 1, nsmall
    if (small(i) /= 5 * i + 3 * i + 1) stop 9
    expect = expect + 3 * i + 1
  end do
  if (total /= expect) stop 10
  do i = 1, nbig
    if (i == nbig) then
      if (big(i) /= -7) stop 11
    else if (mod (i - 1, 1024) == 0) then
      if (big(i) /= i + 5) stop 12
    else if (big(i) /= 0) then
      stop 13
    end if
  end do
  do i = 1, ninit
    if (init(i) /= 3 * i + 2) stop 14
  end do
  do i = 1, 4
    if (differs (coeffs(i), 2 * (i - 0.5d0))) stop 15
  end do

  ! update to: the device gets the host's values, and only then.
  counter = 100
  init(1:nsmall) = 0
  !$omp target map(from: cnt)
    cnt = counter
  !$omp end target
  if (cnt /= 43) stop 16
  !$omp target update to(counter, init)
  call device_fill (1)
  !$omp target update from(small, total, counter)
  if (counter /= 101 .or. total /= 0) stop 17
  do i = 1, nsmall
    if (small(i) /= i) stop 18
  end do
contains
  include 'okt-check.inc'

  ! Whether A and B differ (all the values compared are exact).
  logical function differs (a, b)
    real(8), intent(in) :: a, b
    differs = abs (a - b) > 1d-12
  end function differs
end program main
