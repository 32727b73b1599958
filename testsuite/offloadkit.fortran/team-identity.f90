! Every thread of a parallel region inside a target region answers as the
! device (offloadkit.c/team-identity.c says why): omp_get_device_num from
! the threads of a parallel do and of nested parallel regions in a region,
! gfortran's entry points of libgomp.
! { dg-do run }
! { dg-set-target-env-var OFFLOADKIT_EMULATE 2 }
! { dg-set-target-env-var OMP_MAX_ACTIVE_LEVELS 2 }

program team_identity
  use omp_lib
  implicit none
  integer, parameter :: n = 48
  integer :: d, i, got(n), thr(n), host

  call okt_require_devices ()
  host = omp_get_initial_device ()
  do d = 0, 1
    got = -1
    thr = 0
    !$omp target device(d) map(from: got, thr)
    !$omp parallel do num_threads(4) schedule(static, 1)
    do i = 1, n
      got(i) = omp_get_device_num ()
      thr(i) = omp_get_thread_num ()
    end do
    !$omp end parallel do
    !$omp end target
    if (any (got /= d)) then
      print *, "device", d, "answers", got
      stop 1
    end if
    if (all (thr == 0) .and. omp_get_num_procs () > 1) stop 2

    got = -1
    !$omp target device(d) map(from: got)
    !$omp parallel num_threads(2)
    !$omp parallel num_threads(2)
    do i = 1 + 2 * omp_get_ancestor_thread_num (1) &
           + omp_get_thread_num (), n, 4
      got(i) = omp_get_device_num ()
    end do
    !$omp end parallel
    !$omp end parallel
    !$omp end target
    if (any (got /= d)) then
      print *, "nested, device", d, "answers", got
      stop 3
    end if
  end do

  !$omp parallel do num_threads(4)
  do i = 1, n
    got(i) = omp_get_device_num ()
  end do
  !$omp end parallel do
  if (any (got /= host)) stop 4
contains
  include 'okt-check.inc'
end program team_identity
