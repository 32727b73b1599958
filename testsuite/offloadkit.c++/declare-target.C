// declare target in C++: namespace-scope and static member variables,
// member functions and templates called on the device.
// { dg-do run }

#include "okt-check.h"

namespace geo
{
OKT_BEGIN_DECLARE_TARGET
  int origin[2] = { 3, 4 };

  struct Point
  {
    int x, y;
    int dist2 () const
    {
      int dx = x - origin[0], dy = y - origin[1];
      return dx * dx + dy * dy;
    }
  };

  template <typename T>
  T clamp (T v, T lo, T hi)
  {
    return v < lo ? lo : v > hi ? hi : v;
  }
#pragma omp end declare target
}

struct Stats
{
  static int calls;
};
int Stats::calls = 0;
#pragma omp declare target(Stats::calls)

int
main ()
{
  okt_require_devices ();

  geo::Point pts[4] = { { 3, 4 }, { 6, 8 }, { 0, 0 }, { 4, 4 } };
  int d[4];
  geo::origin[0] = 100;   // Host copy only: the device keeps { 3, 4 }.
#pragma omp target map(to: pts) map(from: d)
  for (int i = 0; i < 4; i++)
    {
      d[i] = geo::clamp (pts[i].dist2 (), 0, 20);
      Stats::calls++;
    }
  OKT_CHECK (d[0] == 0 && d[1] == 20 && d[2] == 20 && d[3] == 1);
  OKT_CHECK (Stats::calls == 0);
#pragma omp target update from(Stats::calls)
  OKT_CHECK (Stats::calls == 4);
  OKT_CHECK (geo::origin[0] == 100);
#pragma omp target update from(geo::origin)
  OKT_CHECK (geo::origin[0] == 3);
  return 0;
}
