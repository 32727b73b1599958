! The same in Fortran.
program pkg
  use omp_lib
  implicit none
  integer :: x, y, i
  integer :: v(100)
  x = 3
  y = 0
  if (omp_get_num_devices () < 1) stop 1
  !$omp target map(to: x) map(from: y, v)
  do i = 1, 100
    v(i) = i * x
  end do
  y = sum (v)
  x = 99
  !$omp end target
  if (y /= 15150 .or. x /= 3) then
    print *, 'wrong:', x, y
    stop 1
  end if
  print '(a)', 'fortran ok'
end program pkg
