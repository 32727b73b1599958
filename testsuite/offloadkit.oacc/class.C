// A C++ class's data through an OpenACC region: members copied in stay
// unchanged on the host, results come back.
#include <openacc.h>
#include <cstdlib>

struct grid
{
  int n;
  double v[128];
  double sum () const
  {
    double s = 0;
#pragma acc parallel loop reduction (+:s) copyin (this[0:1])
    for (int i = 0; i < n; i++)
      s += v[i];
    return s;
  }
};

int
main ()
{
  grid g;
  g.n = 128;
  for (int i = 0; i < 128; i++)
    g.v[i] = i;
  double out[128];
#pragma acc parallel loop copyin (g) copyout (out)
  for (int i = 0; i < 128; i++)
    {
      out[i] = g.v[i] * 2;
      g.v[i] = -1;
    }
  if (g.v[3] != 3 || out[3] != 6 || g.sum () != 127 * 128 / 2)
    abort ();
  return 0;
}
