// The same in C++, with a class on the device.
#include <cstdio>
#include <omp.h>

struct acc
{
  int sum = 0;
  void add (int v) { sum += v; }
};

int
main ()
{
  int x = 2;
  acc a;
  if (omp_get_num_devices () < 1)
    return 1;
#pragma omp target map(to: x) map(tofrom: a)
  {
    for (int i = 1; i <= 10; i++)
      a.add (i * x);
    x = 99;
  }
  if (a.sum != 110 || x != 2)
    {
      std::printf ("wrong: sum %d, x %d\n", a.sum, x);
      return 1;
    }
  std::puts ("c++ ok");
  return 0;
}
