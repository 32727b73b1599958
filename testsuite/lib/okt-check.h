/* Checks shared by offloadkit's C and C++ run tests.

   libgomp 12 falls back to the host silently when no device exists, even
   with OMP_TARGET_OFFLOAD=mandatory, and a host fallback passes most value
   checks.  So every test first proves that it runs on the device(s) the
   harness asked for: the device count must equal OFFLOADKIT_EMULATE, and a
   write to a map(to:) variable inside a target region must not reach the
   host (on the host fallback both are the same object).  */

#ifndef OKT_CHECK_H
#define OKT_CHECK_H

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "okt-assert.h"
#include "okt-declare-target.h"

/* Number of devices the harness set up: OFFLOADKIT_TEST_DEVICES when set
   (runs on real GPUs, alone or with emulated devices: bench/gpu-kit.sh),
   else the number of emulated devices (0 when none).  */
static inline int
okt_expected_devices (void)
{
  const char *s = getenv ("OFFLOADKIT_TEST_DEVICES");
  if (!s || !*s)
    s = getenv ("OFFLOADKIT_EMULATE");
  return s ? atoi (s) : 0;
}

/* What omp_is_initial_device () answers inside a target region on an
   emulated device: 0, the wrapper's device answer, up to GCC 14; GCC 15
   and later fold the call to 1 in host code at compile time, and an
   emulated device runs the host code of regions, so the wrapper is not
   asked.  -1 in runs on GPUs (OFFLOADKIT_TEST_DEVICES), whose device code
   answers 0 whatever the GCC: there the answer depends on the device.  */
static inline int
okt_region_initial_device (void)
{
  const char *gpus = getenv ("OFFLOADKIT_TEST_DEVICES");
  if (__GNUC__ >= 15 && gpus != NULL && *gpus != '\0')
    return -1;
  return __GNUC__ >= 15;
}

/* True when a target region on DEV works on memory separate from the
   host's.  */
static inline int
okt_separate_memory (int dev)
{
  int x = 1;
#pragma omp target map(to: x) device(dev)
  {
    x = 2;
  }
  return x == 1;
}

/* Check the devices exist and are real (separate memory), so that a
   silent host fallback fails the test.  */
static inline void
okt_require_devices (void)
{
  int n = okt_expected_devices ();
  if (omp_get_num_devices () != n)
    {
      fprintf (stderr, "expected %d devices (OFFLOADKIT_TEST_DEVICES or "
	       "OFFLOADKIT_EMULATE), "
	       "libgomp reports %d\n", n, omp_get_num_devices ());
      abort ();
    }
  OKT_CHECK (n >= 1);
  for (int d = 0; d < n; d++)
    OKT_CHECK (okt_separate_memory (d));
}

#endif
