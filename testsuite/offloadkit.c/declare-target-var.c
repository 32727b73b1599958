/* declare target variables have their own device copy: it starts with the
   static initializer (even when the host changed the variable before the
   first target region), device writes are not visible on the host until
   target update from, host writes not on the device until update to.  */
/* { dg-do run } */

#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
int counter = 42;
double table[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static int hidden = 5;
#pragma omp end declare target

static int
read_counter (void)
{
  int r;
#pragma omp target map(from: r)
  r = counter;
  return r;
}

int
main (void)
{
  /* Change the host copies before any target construct runs.  */
  counter = 1;
  table[0] = -1;
  hidden = 6;

  okt_require_devices ();

  /* The device copy still has the initial values.  */
  int c, t0, hd;
#pragma omp target map(from: c, t0, hd)
  {
    c = counter;
    t0 = table[0];
    hd = hidden;
  }
  OKT_CHECK (c == 42);
  OKT_CHECK (t0 == 1);
  OKT_CHECK (hd == 5);

  /* A device write stays on the device...  */
#pragma omp target
  {
    counter += 100;
    for (int i = 0; i < 8; i++)
      table[i] *= 10;
  }
  OKT_CHECK (counter == 1);
  OKT_CHECK (table[0] == -1 && table[1] == 2);
  OKT_CHECK (read_counter () == 142);

  /* ...until update from.  */
#pragma omp target update from(counter, table)
  OKT_CHECK (counter == 142);
  for (int i = 0; i < 8; i++)
    OKT_CHECK (table[i] == 10 * (i + 1));

  /* A host write is not on the device until update to.  */
  counter = 7;
  OKT_CHECK (read_counter () == 142);
#pragma omp target update to(counter)
  OKT_CHECK (read_counter () == 7);

  /* Always present: mapping it is a no-op that copies nothing.  */
  counter = 9;
#pragma omp target map(tofrom: counter)
  counter++;
  OKT_CHECK (counter == 9);
  OKT_CHECK (read_counter () == 8);
  return 0;
}
