// Classes, templates and references in target regions.
// { dg-do run }

#include "okt-check.h"

template <typename T, int N>
struct Buffer
{
  T data[N];
  T sum () const
  {
    T s = T ();
    for (int i = 0; i < N; i++)
      s += data[i];
    return s;
  }
  void scale (T k)
  {
    for (int i = 0; i < N; i++)
      data[i] *= k;
  }
};

class Counter
{
  int hits;
public:
  Counter () : hits (0) {}
  void hit (int n = 1) { hits += n; }
  int get () const { return hits; }
};

template <typename T>
T
square (T x)
{
  return x * x;
}

static void
add_into (int &dst, const int &src)
{
#pragma omp target map(tofrom: dst) map(to: src)
  dst += src;
}

int
main ()
{
  okt_require_devices ();

  Buffer<double, 16> b;
  for (int i = 0; i < 16; i++)
    b.data[i] = i;
  double total = 0;
#pragma omp target map(tofrom: b) map(from: total)
  {
    b.scale (2.0);
    total = b.sum ();
  }
  OKT_CHECK (total == 240.0);
  OKT_CHECK (b.data[3] == 6.0);

  // A map(to:) object modified on the device stays unchanged here.
  Counter c;
  c.hit (5);
  int seen = 0;
#pragma omp target map(to: c) map(from: seen)
  {
    c.hit (10);
    seen = c.get ();
  }
  OKT_CHECK (seen == 15);
  OKT_CHECK (c.get () == 5);

  // Templates instantiated for several types in one region.
  long sl = 0;
  float sf = 0;
#pragma omp target map(from: sl, sf)
  {
    sl = square (100000L);
    sf = square (1.5f);
  }
  OKT_CHECK (sl == 10000000000L);
  OKT_CHECK (sf == 2.25f);

  // References as mapped variables.
  int x = 1, y = 41;
  int &rx = x;
  add_into (rx, y);
  OKT_CHECK (x == 42);
  int &ry = y;
#pragma omp target map(to: ry)
  ry = 0;
  OKT_CHECK (y == 41);
  return 0;
}
