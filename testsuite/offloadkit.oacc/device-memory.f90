! Device memory as a GPU's driver reports it, from Fortran (device-memory.c
! says what): the device's size from OFFLOADKIT_EMULATE_MEMORY, and free
! memory that falls with acc_malloc and a data region's copies and rises
! again when they go.
! { dg-set-target-env-var OFFLOADKIT_EMULATE_MEMORY 128M }

program device_memory
  ! Not the module's acc_malloc and acc_free (GCC 14 and newer have
  ! them, GCC 12 not): the C functions, declared here.
  use openacc, only: acc_device_kind, acc_device_nvidia, acc_device_radeon, &
       acc_get_device_type, acc_get_property, acc_property_memory, &
       acc_property_free_memory
  use iso_c_binding, only: c_size_t, c_ptr, c_associated
  implicit none
  integer(c_size_t), parameter :: mib = 1048576
  integer(acc_device_kind) :: t
  integer(c_size_t) :: total, before, with_p, inside
  type(c_ptr) :: p
  real :: big(262144)		! 1 MiB

  interface
    type(c_ptr) function acc_malloc (n) bind(c)
      import :: c_size_t, c_ptr
      integer(c_size_t), value :: n
    end function acc_malloc
    subroutine acc_free (p) bind(c)
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine acc_free
  end interface

  t = acc_get_device_type ()
  if (t /= acc_device_nvidia .and. t /= acc_device_radeon) stop 1
  total = acc_get_property (0, t, acc_property_memory)
  if (total /= 128 * mib) stop 2
  before = acc_get_property (0, t, acc_property_free_memory)
  if (before <= 0 .or. before > total) stop 3

  p = acc_malloc (2 * mib)
  if (.not. c_associated (p)) stop 4
  with_p = acc_get_property (0, t, acc_property_free_memory)
  if (before - with_p /= 2 * mib) stop 5

  big = 1.0
  !$acc data copyin(big)
  inside = acc_get_property (0, t, acc_property_free_memory)
  !$acc end data
  if (with_p - inside < mib .or. with_p - inside >= mib + 4096) stop 6
  if (acc_get_property (0, t, acc_property_free_memory) /= with_p) stop 7

  call acc_free (p)
  if (acc_get_property (0, t, acc_property_free_memory) /= before) stop 8
end program device_memory
