/* An emulated device's memory has the size OFFLOADKIT_EMULATE_MEMORY
   gives it, as a GPU has its own: omp_target_alloc of more than what is
   free fails (NULL), memory freed is free again, and mapped data takes
   its share while it is mapped.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 1 } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE_MEMORY 64M } */

#include "okt-check.h"

#define MiB ((size_t) 1 << 20)

static char chunk[24 << 20];

int
main (void)
{
  okt_require_devices ();
  int d = 0;
  fprintf (stderr, "expect out-of-memory messages:\n");
  void *a = omp_target_alloc (40 * MiB, d);
  OKT_CHECK (a != NULL);
  /* 40 of 64 MiB taken: 40 more do not fit.  */
  OKT_CHECK (omp_target_alloc (40 * MiB, d) == NULL);
  void *b = omp_target_alloc (20 * MiB, d);
  OKT_CHECK (b != NULL);
  omp_target_free (a, d);
  /* Freed: it fits again, with the mapping beside it (16 + 20 + 24 of
     64 MiB).  */
  a = omp_target_alloc (16 * MiB, d);
  OKT_CHECK (a != NULL);
  chunk[5] = 7;
  int seen = 0;
#pragma omp target map(to: chunk) map(from: seen) device(d)
  seen = chunk[5];
  OKT_CHECK (seen == 7);
  omp_target_free (a, d);
  omp_target_free (b, d);
  OKT_CHECK ((a = omp_target_alloc (60 * MiB, d)) != NULL);
  omp_target_free (a, d);
  OKT_CHECK (omp_target_alloc (65 * MiB, d) == NULL);
  return 0;
}
