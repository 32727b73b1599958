/* A program whose calls of GOMP_target_ext the emulated device cannot
   redirect (it also keeps the function's address in initialised data,
   which no GOT slot holds) gets no emulated device when it requires
   reverse offload, rather than ancestor regions run in place on a
   device's copies: its regions run on the host, correctly.  */
/* { dg-do run } */
/* { dg-set-target-env-var OMP_TARGET_OFFLOAD default } */

/* Before okt-check.h, whose functions have target regions.  */
#pragma omp requires reverse_offload

#include "okt-check.h"

/* libgomp's entry point, under another name than GCC's built-in.  */
extern void okt_target_ext (void) __asm__ ("GOMP_target_ext");
void (*volatile okt_keep) (void) = okt_target_ext;

int
main (void)
{
  OKT_CHECK (okt_keep != NULL);
  OKT_CHECK (omp_get_num_devices () == 0);
  int x = 1;
#pragma omp target map(to: x)
  {
    x = 2;
#pragma omp target device(ancestor: 1) map(always, tofrom: x)
    x += 10;
  }
  OKT_CHECK (x == 12);
  return 0;
}
