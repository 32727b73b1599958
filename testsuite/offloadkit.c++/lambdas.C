// Lambdas in target regions: passed to a template that offloads, and
// defined inside a region capturing device data by reference.  (Left out:
// virtual calls, as GCC 12 emits no device vtables for classes defined in a
// declare target block, which CUDA's ptxas rejects; captureless lambdas
// defined in a target region, on which GCC 12's g++ crashes.)
// { dg-do run }

#include "okt-check.h"

template <typename F>
static void
apply (int *a, int n, F f)
{
#pragma omp target map(tofrom: a[0:n])
  for (int i = 0; i < n; i++)
    a[i] = f (a[i]);
}

int
main ()
{
  okt_require_devices ();

  int a[8];
  for (int i = 0; i < 8; i++)
    a[i] = i;
  int k = 10;
  apply (a, 8, [=] (int x) { return x * k + 1; });
  for (int i = 0; i < 8; i++)
    OKT_CHECK (a[i] == i * 10 + 1);

  int sum = 0;
#pragma omp target map(tofrom: sum) map(to: a)
  {
    auto add = [&] (int x) { sum += x; };
    for (int i = 0; i < 8; i++)
      add (a[i]);
    a[0] = -1;		// map(to:): stays on the device.
  }
  OKT_CHECK (sum == 10 * 28 + 8);
  OKT_CHECK (a[0] == 1);
  return 0;
}
