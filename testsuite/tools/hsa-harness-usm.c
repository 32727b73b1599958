/* hsa-harness: unified shared memory and self maps (libgomp 15+).  The
   agents are counted for a program that requires either only when the
   runtime says they reach the host's memory by default
   (HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT: the fake's
   FAKEHSA_SVM_DEFAULT), as GCC 16's gcn plugin counts them; then every
   host address is theirs.  Else none is, silently.  */

#include <stdlib.h>

#include "hsa-harness.h"

#define USM OK_GOMP_REQUIRES_UNIFIED_SHARED_MEMORY
#define SELF_MAPS OK_GOMP_REQUIRES_SELF_MAPS

/* FAKEHSA_SVM_DEFAULT=1 (an APU, or XNACK on), libgomp 16.  */
void
child_usm_svm (void)
{
  int (*acc) (int, const void *, size_t);
  if (!standin_plugin_sym ("GOMP_OFFLOAD_is_accessible_ptr", &acc))
    {
      check ("is_accessible_ptr exported", false);
      return;
    }
  int e = errors_now ();
  int n = (p_get_num_devices) (USM | SELF_MAPS);
  check ("USM and self_maps, SVM by default: every agent counted", n >= 1);
  check ("USM and self_maps: nothing said", errors_now () == e);
  check ("USM: init", n >= 1 && p_init_device (0));
  int local[16] = { 0 };
  char *heap = malloc (1 << 20);
  check ("USM: the host's memory is the agents'",
	 n >= 1 && acc (0, local, sizeof local) == 1
	 && heap != NULL && acc (0, heap, 1 << 20) == 1);
  free (heap);
}

/* FAKEHSA_SVM_DEFAULT unset (a discrete GPU without XNACK), libgomp
   16.  */
void
child_usm_no_svm (void)
{
  int e = errors_now ();
  check ("USM without SVM by default: none counted (-1)",
	 (p_get_num_devices) (USM) == -1);
  check ("self_maps without SVM by default: none counted (-1)",
	 (p_get_num_devices) (SELF_MAPS) == -1);
  check ("USM without SVM: nothing said", errors_now () == e);
}

/* FAKEHSA_SVM_DEFAULT=1, libgomp 14: none counted.  */
void
child_usm_libgomp14 (void)
{
  check ("USM under libgomp 14: none counted (-1)",
	 (p_get_num_devices) (USM) == -1);
}
