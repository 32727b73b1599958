/* Reverse offload on the emulated device: a `target device (ancestor: 1)'
   region inside a target region runs on the host, and its map clauses
   copy between the device's data and the host's originals, as on a GPU.
   Run in place (libgomp's host fallback inside the region) it would work
   on the device's copies and see the device: each check below tells the
   two apart.  */
/* { dg-do run } */

/* Before okt-check.h, whose functions have target regions.  */
#pragma omp requires reverse_offload

#include "okt-check.h"

/* Host code only (not declare target): what ancestor regions call.  */
static int seen_device_num = -100;
static int seen_value = -100;
static int seen_dt = -100;

__attribute__ ((noipa)) static void
note_host (int value)
{
  seen_device_num = omp_get_device_num ();
  seen_value = value;
}

#pragma omp begin declare target
int dt_var = 7;
#pragma omp end declare target

__attribute__ ((noipa)) static void
note_dt (void)
{
  /* By name: the host's variable.  */
  seen_dt = dt_var;
}

struct triple
{
  int v[3];
};

__attribute__ ((noipa)) static int
sum (const struct triple *t)
{
  return t->v[0] + t->v[1] + t->v[2];
}

int
main (void)
{
  okt_require_devices ();
  int host = omp_get_initial_device ();

  /* always, tofrom: the host's x gets the device's value, the ancestor
     region changes it on the host, and the device's copy gets the result
     back.  The outer map(to:) does not copy back: the host's x is what
     the ancestor region left.  */
  int x = 1, dev_after = 0, dev_num = -1;
#pragma omp target map(to: x) map(from: dev_after, dev_num)
  {
    x = 2;
#pragma omp target device(ancestor: 1) map(always, tofrom: x)
    {
      x += 10;
      note_host (x);
    }
    dev_after = x;
    dev_num = omp_get_device_num ();
  }
  OKT_CHECK (x == 12);
  OKT_CHECK (dev_after == 12);
  OKT_CHECK (seen_value == 12);
  /* On the host, the host answers; in the region, the device.  */
  OKT_CHECK (seen_device_num == host);
  OKT_CHECK (dev_num == 0);

  /* from: the host's y is written by the ancestor region (y is mapped,
     so no copy on the way in), and the region's copy is not.  */
  int y = 5, dev_y = 0;
#pragma omp target map(to: y) map(from: dev_y)
  {
    y = 6;
#pragma omp target device(ancestor: 1) map(from: y)
    y = 100;
    dev_y = y;
  }
  OKT_CHECK (y == 100);
  OKT_CHECK (dev_y == 6);

  /* Data on the region's stack, which libgomp copies to the host and
     back (on a GPU it is device memory), and firstprivate data, by value
     and through its address.  */
  int local_after = 0;
  seen_value = -100;
#pragma omp target map(from: local_after)
  {
    int local = 3;
    int fp = 40;
    struct triple t = { { 1, 2, 3 } };
#pragma omp target device(ancestor: 1) map(tofrom: local) firstprivate(fp, t)
    {
      local *= 4;
      note_host (fp + sum (&t));
    }
    local_after = local;
  }
  OKT_CHECK (local_after == 12);
  OKT_CHECK (seen_value == 46);

  /* A `declare target' variable: named in host code, the host's.  Mapped
     with always, the device's value goes to the host and the result back
     (libgomp's reverse lookup does not find the images' variables, so it
     copies into memory of its own on the host, not the host's variable,
     on a GPU too).  */
  int dt_dev = 0;
#pragma omp target map(from: dt_dev)
  {
    dt_var = 99;
#pragma omp target device(ancestor: 1)
    note_dt ();
#pragma omp target device(ancestor: 1) map(always, tofrom: dt_var)
    dt_var += 1;
    dt_dev = dt_var;
  }
  OKT_CHECK (seen_dt == 7);
  OKT_CHECK (dt_dev == 100);
#pragma omp target update from(dt_var)
  OKT_CHECK (dt_var == 100);

  /* In a target nowait region, which the device's worker runs while the
     host goes on.  */
  int w = 1, dev_w = 0;
#pragma omp target nowait map(to: w) map(from: dev_w)
  {
    w = 4;
#pragma omp target device(ancestor: 1) map(always, tofrom: w)
    w *= 3;
    dev_w = w;
  }
#pragma omp taskwait
  OKT_CHECK (w == 12);
  OKT_CHECK (dev_w == 12);

  /* An ancestor region outside any target region runs on the host as it
     is.  */
  int z = 1;
#pragma omp target device(ancestor: 1) map(tofrom: z)
  z = 2;
  OKT_CHECK (z == 2);
  return 0;
}
