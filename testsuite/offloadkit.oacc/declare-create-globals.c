/* File-scope globals with acc declare: create of uninitialised arrays
   (one of 4 MiB) and of a scalar, copyin of initialised arrays and of a
   struct.  Regions, and a routine they call, write the device copies;
   the host sees nothing of it until update self, and the device sees the
   host's writes only after update device.  The device copies start from
   the initializers, zero when there is none (GCC's device copy is the
   image's variable; OpenACC leaves a created one undefined).

   GCC 12's host compiler drops the clauses of an update directive that
   name a declare'd global as a whole (GOACC_update gets no mappings), but
   keeps array sections: the arrays are updated by section, the scalar and
   the struct with acc_update_self and acc_update_device.

   Why: for nvptx, ptxas puts uninitialised .global variables into a
   .nv.global section of NVIDIA's no-file-content type (0x70000007, like
   SHT_NOBITS), often larger than the cubin itself.  mkoffload's ELF check
   once took such a section for a truncated one, so that every program
   with an uninitialised global on the device failed to link when
   mkoffload built cubins (its default when ptxas and nvlink are on PATH);
   PTX-only builds (OFFLOADKIT_NVPTX_SASS=none) never showed it.  */
/* { dg-do run } */

#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

#include "okt-assert.h"

#define N 512
#define BIG (1 << 20)			/* ints: 4 MiB.  */

int g[N];
int big[BIG];
long total;
#pragma acc declare create (g, big, total)

struct pair
{
  int a;
  double b;
};

int h[4] = { 1, 2, 3, 4 };
static int steps[N] = { [0] = 5, [1] = 7, [N - 1] = 11 };
struct pair pr = { 6, 0.75 };
#pragma acc declare copyin (h, steps, pr)

/* Add K to total and return the sum: on the device.  (Regions reach
   total only through here: GCC 12 makes a scalar that a region names
   firstprivate even when it is declare'd, and the region then works on
   a private copy, not on the device's variable.)  */
#pragma acc routine seq
static long
add_total (long k)
{
  total += k;
  return total;
}

/* Add K * I + steps[I] to each g[I] and K to total; return the sum.  */
#pragma acc routine seq
static long
fill (int k)
{
  for (int i = 0; i < N; i++)
    g[i] += k * i + steps[i];
  return add_total (k);
}

int
main (void)
{
  /* Host copies only: the device's start from the initializers.  */
  h[0] = -1;
  steps[0] = 0;
  pr.a = -6;

  OKT_CHECK (acc_get_device_type () != acc_device_host);
  OKT_CHECK (acc_is_present (g, sizeof g) && acc_is_present (big, sizeof big));
  OKT_CHECK (acc_is_present (&total, sizeof total));
  OKT_CHECK (acc_is_present (h, sizeof h) && acc_is_present (&pr, sizeof pr));

  /* Separate memory: what a region writes to a copyin variable stays on
     the device.  */
  int probe = 1;
#pragma acc parallel copyin (probe)
  probe = 2;
  OKT_CHECK (probe == 1);

  /* Initial values, read on the device.  */
  int bad = -1, hv[4], pa = 0;
  double pb = 0;
  long t0 = -1;
#pragma acc parallel num_gangs (1) copyout (bad, hv, pa, pb, t0)
  {
    bad = 0;
    for (int i = 0; i < N; i++)
      if (g[i] != 0)
	bad = 1;
    for (int i = 0; i < BIG; i++)
      if (big[i] != 0)
	bad = 2;
    for (int i = 0; i < 4; i++)
      hv[i] = h[i];
    pa = pr.a;
    pb = pr.b;
    t0 = add_total (0);
  }
  OKT_CHECK (bad == 0);
  for (int i = 0; i < 4; i++)
    OKT_CHECK (hv[i] == i + 1);
  OKT_CHECK (pa == 6 && pb == 0.75);
  OKT_CHECK (t0 == 0);

  /* Device writes: in parallel loops, and through the routines in
     regions of one gang (a parallel region's statements run in each of
     its gangs; acc serial makes GCC's nvptx compiler warn).  */
#pragma acc parallel loop
  for (int i = 0; i < BIG; i += 1024)
    big[i] = i / 1024 + 1;
#pragma acc parallel loop
  for (int i = 0; i < N; i++)
    g[i] = i;
#pragma acc parallel num_gangs (1)
  {
    fill (3);
    big[BIG - 1] = -7;
    h[2] *= 10;
    pr.a += 1;
    pr.b *= 2;
  }
  OKT_CHECK (g[1] == 0 && g[N - 1] == 0 && total == 0);
  OKT_CHECK (big[0] == 0 && big[1024] == 0 && big[BIG - 1] == 0);
  OKT_CHECK (h[0] == -1 && h[2] == 3 && pr.a == -6 && pr.b == 0.75);

  /* A section of big first: the rest stays as the host has it.  */
#pragma acc update self (big[1024:2048])
  OKT_CHECK (big[0] == 0 && big[1024] == 2 && big[2048] == 3);
  OKT_CHECK (big[3072] == 0);

#pragma acc update self (g[0:N], big[0:BIG], h[0:4])
  acc_update_self (&total, sizeof total);
  acc_update_self (&pr, sizeof pr);
  /* The device's steps, as fill read them.  */
  int dev_steps[N];
  acc_memcpy_from_device (dev_steps, acc_deviceptr (steps), sizeof steps);
  OKT_CHECK (steps[0] == 0);
  for (int i = 0; i < N; i++)
    OKT_CHECK (dev_steps[i] == (i == 0 ? 5 : i == 1 ? 7 : i == N - 1 ? 11 : 0));
  for (int i = 0; i < N; i++)
    OKT_CHECK (g[i] == i + 3 * i + dev_steps[i]);
  OKT_CHECK (total == 3);
  for (int i = 0; i < BIG; i++)
    OKT_CHECK (big[i] == (i == BIG - 1 ? -7 : i % 1024 == 0 ? i / 1024 + 1 : 0));
  OKT_CHECK (h[0] == 1 && h[2] == 30);
  OKT_CHECK (pr.a == 7 && pr.b == 1.5);

  /* Host writes reach the device with update device only.  */
  for (int i = 0; i < N; i++)
    steps[i] = i;
  total = 100;
  long t = -1;
#pragma acc parallel num_gangs (1) copyout (t)
  t = fill (1);
  OKT_CHECK (t == 4);
#pragma acc update device (steps[0:N])
  acc_update_device (&total, sizeof total);
#pragma acc parallel num_gangs (1) copyout (t)
  t = fill (2);
  OKT_CHECK (t == 102);
#pragma acc update self (g[0:N])
  /* 4 * I + DEV_STEPS[I] from above, fill (1) with the device's old
     steps, fill (2) with the host's new ones.  */
  for (int i = 0; i < N; i++)
    OKT_CHECK (g[i] == 4 * i + dev_steps[i] + i + dev_steps[i] + 2 * i + i);
  return 0;
}
