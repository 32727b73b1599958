/* { dg-do run { target usm } } */
/* A program that requires unified shared memory (libgomp 15+) gets
   emulated devices that reach the host's memory: regions run on the
   device (its queries answer as the device) on the host's own data, the
   heap, the stack and static data alike, with no map; omp_target_alloc
   memory is the host's to read and write; every host address is
   accessible.  `declare target' variables keep device copies of their
   own, as on a GPU.  */

/* Before okt-check.h, whose helpers have target regions.  */
#pragma omp requires unified_shared_memory

#include <stdint.h>
#include <stdlib.h>

#include "okt-check.h"

#define N 1000

static int table[64];

OKT_BEGIN_DECLARE_TARGET
int counter = 5;
#pragma omp end declare target

int
main (void)
{
  int n = okt_expected_devices ();
  OKT_CHECK (n >= 1);
  OKT_CHECK (omp_get_num_devices () == n);

  int *heap = malloc (N * sizeof *heap);
  int stack[100];
  OKT_CHECK (heap != NULL);
  for (int i = 0; i < N; i++)
    heap[i] = i;
  for (int i = 0; i < 100; i++)
    stack[i] = i;

  for (int d = 0; d < n; d++)
    {
      int dev = -1;
      uintptr_t seen_heap = 0, seen_stack = 0, seen_table = 0;
      /* No map clause for the arrays: the host's memory is the
	 device's.  (Scalars are firstprivate by default: the answers are
	 mapped back.)  */
#pragma omp target device(d) \
	map(from: dev, seen_heap, seen_stack, seen_table)
      {
	dev = omp_get_device_num ();
	for (int i = 0; i < N; i++)
	  heap[i] *= 2;
	for (int i = 0; i < 100; i++)
	  stack[i] += 1;
	for (int i = 0; i < 64; i++)
	  table[i] = d + 1;
	seen_heap = (uintptr_t) heap;
	seen_stack = (uintptr_t) &stack[0];
	seen_table = (uintptr_t) &table[0];
	counter += 10;
      }
      OKT_CHECK (dev == d);	/* On the device, not the host.  */
      OKT_CHECK (seen_heap == (uintptr_t) heap);
      OKT_CHECK (seen_stack == (uintptr_t) &stack[0]);
      OKT_CHECK (seen_table == (uintptr_t) &table[0]);
      for (int i = 0; i < N; i++)
	OKT_CHECK (heap[i] == i << (d + 1));
      for (int i = 0; i < 100; i++)
	OKT_CHECK (stack[i] == i + d + 1);
      for (int i = 0; i < 64; i++)
	OKT_CHECK (table[i] == d + 1);

      /* The device's copy of the `declare target' variable moved on; the
	 host's did not.  */
      int on_device = 0;
#pragma omp target device(d) map(from: on_device)
      on_device = counter;
      OKT_CHECK (on_device == 15);
      OKT_CHECK (counter == 5);

      /* Device memory the host writes and reads.  */
      int *t = omp_target_alloc (N * sizeof *t, d);
      OKT_CHECK (t != NULL);
      for (int i = 0; i < N; i++)
	t[i] = 3 * i;
      long sum = 0;
#pragma omp target device(d) map(tofrom: sum)
      for (int i = 0; i < N; i++)
	sum += t[i];
      OKT_CHECK (sum == 3L * N * (N - 1) / 2);
      omp_target_free (t, d);

      OKT_CHECK (omp_target_is_accessible (heap, N * sizeof *heap, d));
      OKT_CHECK (omp_target_is_accessible (stack, sizeof stack, d));
    }
  free (heap);
  return 0;
}
