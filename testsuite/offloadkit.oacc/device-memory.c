/* Device memory as a GPU's driver reports it: acc_property_memory is the
   device's size (here OFFLOADKIT_EMULATE_MEMORY's 256 MiB), and
   acc_property_free_memory falls with the device's own allocations
   (acc_malloc, data clauses) and rises again when they are freed; an
   allocation larger than what is free fails, and a smaller one then
   still succeeds.  */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE_MEMORY 256M } */

#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

#include "okt-assert.h"

#define MiB ((size_t) 1 << 20)
static float big[MiB];		/* 4 MiB.  */

static size_t
free_memory (acc_device_t t)
{
  return acc_get_property (0, t, acc_property_free_memory);
}

int
main (void)
{
  acc_device_t t = acc_get_device_type ();
  OKT_CHECK (t == acc_device_nvidia || t == acc_device_radeon);
  size_t total = acc_get_property (0, t, acc_property_memory);
  OKT_CHECK (total == 256 * MiB);
  size_t before = free_memory (t);
  OKT_CHECK (before > 0 && before <= total);

  void *p = acc_malloc (MiB);
  OKT_CHECK (p != NULL);
  size_t with_p = free_memory (t);
  OKT_CHECK (before - with_p == MiB);

  /* A data region's copies count while they live (libgomp allocates
     room for alignment with them).  */
  size_t inside = 0;
#pragma acc data copyin (big)
  {
    inside = free_memory (t);
  }
  OKT_CHECK (with_p - inside >= sizeof big
	 && with_p - inside < sizeof big + 4096);
  OKT_CHECK (free_memory (t) == with_p);

  acc_free (p);
  OKT_CHECK (free_memory (t) == before);

  /* More than is free: refused, as a GPU refuses it; then a smaller
     allocation still fits.  */
  fprintf (stderr, "expect an out-of-memory message:\n");
  void *too_big = acc_malloc (before + MiB);
  OKT_CHECK (too_big == NULL);
  OKT_CHECK (free_memory (t) == before);
  void *half = acc_malloc (before / 2);
  OKT_CHECK (half != NULL);
  OKT_CHECK (free_memory (t) == before - before / 2);
  acc_free (half);
  OKT_CHECK (free_memory (t) == before);
  return 0;
}
