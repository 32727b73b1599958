! Unified shared memory in Fortran (libgomp 15+): an allocatable array,
! a pointer target and a module variable used in regions with no map, on
! emulated devices that are devices.
! { dg-do run { target usm } }

module usm_data
  implicit none
  integer :: total(4) = 0
end module usm_data

program usm_allocatable
  use omp_lib
  use usm_data
  implicit none
  !$omp requires unified_shared_memory
  integer, allocatable :: a(:)
  integer, target :: t(50)
  integer, pointer :: p(:)
  integer :: d, i, dev, n

  n = omp_get_num_devices ()
  if (n < 1) stop 1
  allocate (a(100))
  a = [(i, i = 1, 100)]
  t = 7
  p => t
  do d = 0, n - 1
    dev = -1
    !$omp target device(d) map(from: dev)
    dev = omp_get_device_num ()
    a = a * 2
    p = p + 1
    total(d + 1) = sum (a)
    !$omp end target
    if (dev /= d) stop 2
    if (any (a /= [(i * 2 ** (d + 1), i = 1, 100)])) stop 3
    if (any (t /= 7 + d + 1)) stop 4
    if (total(d + 1) /= 5050 * 2 ** (d + 1)) stop 5
  end do
end program usm_allocatable
