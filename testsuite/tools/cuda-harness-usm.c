/* cuda-harness: unified shared memory and self maps (libgomp 15+).  The
   devices are counted for a program that requires either only when every
   one reaches the host's pageable memory (the fake's FAKECUDA_PAGEABLE),
   as GCC 16's nvptx plugin counts them; then every host address is
   theirs.  Else none is, silently: libgomp runs the program on the host
   or, with OMP_TARGET_OFFLOAD=mandatory, stops with its message.  */

#include <stdlib.h>

#include "cuda-harness.h"

#define USM OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
#define SELF_MAPS OK_GOMP_REQUIRES_SELF_MAPS

static int (*is_accessible) (int, const void *, size_t);

static bool
usm_syms (void)
{
  bool ok = standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr",
				&is_accessible);
  check ("is_accessible_ptr exported", ok);
  return ok;
}

/* Whether device ORD can reach host memory of every kind: the stack, the
   heap, static data.  */
static bool
host_memory_accessible (int ord)
{
  static int global[64];
  int local[16] = { 0 };
  char *heap = malloc (1 << 20);
  bool all = (is_accessible (ord, local, sizeof local) == 1
	      && is_accessible (ord, global, sizeof global) == 1
	      && heap != NULL && is_accessible (ord, heap, 1 << 20) == 1);
  free (heap);
  return all;
}

/* FAKECUDA_DEVICES=2, FAKECUDA_PAGEABLE=3, libgomp 16.  */
void
child_usm_all (void)
{
  if (!usm_syms ())
    return;
  int e = errors_now ();
  long attrs = f_calls ("cuDeviceGetAttribute");
  check ("USM: both devices reach pageable memory: 2 devices",
	 (p_get_num_devices) (USM) == 2);
  check ("USM: each device asked",
	 f_calls ("cuDeviceGetAttribute") >= attrs + 2);
  check ("USM: nothing said", errors_now () == e);
  check ("USM: init", p_init_device (0) && p_init_device (1));
  check ("USM: the host's memory is the devices'",
	 host_memory_accessible (0) && host_memory_accessible (1));
  check ("USM: an empty range is not", is_accessible (0, &e, 0) == 0);
  check ("USM: nothing said after", errors_now () == e);
}

/* FAKECUDA_DEVICES=2, FAKECUDA_PAGEABLE=1 (device 1 cannot), libgomp
   16.  */
void
child_self_maps_one_short (void)
{
  int e = errors_now ();
  check ("self_maps: device 1 does not reach pageable memory: none"
	 " counted (-1)", (p_get_num_devices) (SELF_MAPS) == -1);
  check ("self_maps: nothing said", errors_now () == e);
}

/* FAKECUDA_DEVICES=1, FAKECUDA_PAGEABLE=1, libgomp 14: its libgomp would
   map data as ever, so no device is counted for USM.  */
void
child_usm_libgomp14 (void)
{
  int e = errors_now ();
  check ("USM under libgomp 14: none counted (-1)",
	 (p_get_num_devices) (USM) == -1);
  check ("USM under libgomp 14: nothing said", errors_now () == e);
}

/* FAKECUDA_DEVICES=1, FAKECUDA_PAGEABLE=0, OFFLOADKIT_EMULATE=1, libgomp
   15: the CUDA device is left out, the emulated device (host code, the
   host's memory) is counted.  */
void
child_usm_emulated (void)
{
  if (!usm_syms ())
    return;
  check ("USM: the CUDA device left out, the emulated one counted",
	 (p_get_num_devices) (USM | OK_GOMP_REQUIRES_UNIFIED_ADDRESS) == 1);
  check ("USM: init the emulated device", p_init_device (0));
  check ("USM: the host's memory is the emulated device's",
	 host_memory_accessible (0));
}

/* FAKECUDA_DEVICES=1, FAKECUDA_PAGEABLE=1, libgomp 16, a program that
   does not require USM: separate memory, host memory not accessible.  */
void
child_no_usm (void)
{
  if (!usm_syms ())
    return;
  check ("no USM required: 1 device", (p_get_num_devices) (0) == 1);
  check ("no USM required: init", p_init_device (0));
  int local[16] = { 0 };
  check ("no USM required: pageable host memory is not the device's",
	 is_accessible (0, local, sizeof local) == 0);
}
