// C++ statics on the device: static data members (uninitialised,
// initialised, constexpr, and one of an explicitly instantiated class
// template), namespace-scope variables (uninitialised, one of them 4 MiB,
// initialised, constexpr, C++17 inline, constant-initialised through a
// constexpr constructor) and file-scope static arrays, used from member
// functions that target regions call.  Each device copy starts from the
// initializer (zero when there is none); device writes stay on the device
// until target update from, host writes reach it with target update to.
// Only constant initialisation: GCC 12 runs no constructors on the device.
//
// Why: for nvptx, ptxas puts uninitialised .global variables into a
// .nv.global section of NVIDIA's no-file-content type (0x70000007, like
// SHT_NOBITS), often larger than the cubin itself.  mkoffload's ELF check
// once took such a section for a truncated one, so that every program
// with an uninitialised declare target global failed to link when
// mkoffload built cubins (its default when ptxas and nvlink are on PATH);
// PTX-only builds (OFFLOADKIT_NVPTX_SASS=none) never showed it.
// { dg-do run }

#include "okt-check.h"

namespace stats
{
OKT_BEGIN_DECLARE_TARGET
  const int nbins = 16;
  int samples[1 << 20];			// Uninitialised, 4 MiB.
  int count;				// Uninitialised scalar.
  double weights[4] = { 0.5, 1.5, 2.5, 3.5 };
  constexpr int primes[6] = { 2, 3, 5, 7, 11, 13 };
  inline int generation = 5;		// C++17 inline variable.

  struct Point
  {
    int x, y;
    constexpr Point (int a, int b) : x (a), y (b) {}
  };
  Point origin (3, -4);			// Constant initialisation.

  class Histogram
  {
  public:
    static int bins[nbins];		// Uninitialised.
    static int scale;			// Initialised.
    static constexpr int offset = 2;

    // Add V to the bins, weighted: called on the device.
    void add (int v) const
    {
      bins[(v + offset) % nbins] += scale * primes[v % 6];
    }
    static long total ()
    {
      long t = 0;
      for (int i = 0; i < nbins; i++)
	t += bins[i];
      return t;
    }
  };
#pragma omp end declare target

  // GCC 12 refuses the definition of a static data member inside a
  // declare target region, but accepts the member by name.
  int Histogram::bins[nbins];
  int Histogram::scale = 3;
#pragma omp declare target(Histogram::bins, Histogram::scale)
}

// File-scope statics.
static int table[64];
static const double factors[3] = { 0.25, 2.0, -1.0 };
#pragma omp declare target(table, factors)

// Static data members of a class template, of an explicit
// instantiation: named as above.
template <typename T>
struct Slots
{
  static T slots[8];
  static T fill;
  void put (int i, T v) const { slots[i] = v + fill; }
  T get (int i) const { return slots[i]; }
};
template <typename T> T Slots<T>::slots[8];
template <typename T> T Slots<T>::fill = T (7);
template struct Slots<int>;
#pragma omp declare target(Slots<int>::slots, Slots<int>::fill)

OKT_BEGIN_DECLARE_TARGET
struct Recorder
{
  int id;
  // Fill table and samples; return a checksum of what it read.
  long record (int n) const
  {
    long seen = origin_sum ();
    for (int i = 0; i < 64; i++)
      table[i] = id * i + stats::generation;
    for (int i = 0; i < n; i++)
      stats::samples[i * 1024] = i + 1;
    stats::count += n;
    return seen;
  }
  static long origin_sum ()
  {
    return stats::origin.x * 100 + stats::origin.y;
  }
};
#pragma omp end declare target

int
main ()
{
  // Host copies only: the device keeps the initializers.
  stats::Histogram::scale = -1;
  stats::weights[0] = -9;
  stats::origin.x = 1000;
  stats::generation = 0;
  Slots<int>::fill = 0;

  okt_require_devices ();

  int zero = -1, scale = 0, gen = 0, fill = 0;
  double w = 0, f = 0;
  long origin = 0;
#pragma omp target map(from: zero, scale, gen, fill, w, f, origin)
  {
    zero = stats::count == 0 && stats::Histogram::total () == 0;
    for (int i = 0; i < (1 << 20); i++)
      zero &= stats::samples[i] == 0;
    for (int i = 0; i < 64; i++)
      zero &= table[i] == 0;
    Slots<int> s;
    for (int i = 0; i < 8; i++)
      zero &= s.get (i) == 0;
    scale = stats::Histogram::scale;
    gen = stats::generation;
    fill = Slots<int>::fill;
    w = stats::weights[0] + stats::weights[3];
    f = factors[0] + factors[1] + factors[2];
    origin = Recorder::origin_sum ();
  }
  OKT_CHECK (zero == 1);
  OKT_CHECK (scale == 3 && gen == 5 && fill == 7);
  OKT_CHECK (w == 0.5 + 3.5);
  OKT_CHECK (f == factors[0] + factors[1] + factors[2]);
  OKT_CHECK (origin == 3 * 100 - 4);

  // Member functions write on the device.
  long seen = 0;
#pragma omp target map(from: seen)
  {
    stats::Histogram h;
    for (int v = 0; v < 100; v++)
      h.add (v);
    Recorder r = { 4 };
    seen = r.record (512);
    Slots<int> s;
    for (int i = 0; i < 8; i++)
      s.put (i, i * i);
  }
  OKT_CHECK (seen == 3 * 100 - 4);
  OKT_CHECK (stats::Histogram::total () == 0 && stats::count == 0);
  OKT_CHECK (table[5] == 0 && stats::samples[0] == 0);
  OKT_CHECK (Slots<int>::slots[3] == 0);

#pragma omp target update from(stats::Histogram::bins, stats::count, \
			       stats::samples, table, Slots<int>::slots)
  // What add did, on the host (with the device's scale).
  int bins[stats::nbins] = { 0 };
  for (int v = 0; v < 100; v++)
    bins[(v + stats::Histogram::offset) % stats::nbins]
      += 3 * stats::primes[v % 6];
  for (int i = 0; i < stats::nbins; i++)
    OKT_CHECK (stats::Histogram::bins[i] == bins[i]);
  OKT_CHECK (stats::count == 512);
  for (int i = 0; i < (1 << 20); i++)
    OKT_CHECK (stats::samples[i] == (i % 1024 == 0 && i / 1024 < 512
				     ? i / 1024 + 1 : 0));
  for (int i = 0; i < 64; i++)
    OKT_CHECK (table[i] == 4 * i + 5);
  for (int i = 0; i < 8; i++)
    OKT_CHECK (Slots<int>::slots[i] == i * i + 7);
  // Not updated: still the host's.
  OKT_CHECK (stats::Histogram::scale == -1 && stats::generation == 0);

  // update to: the device gets the host's values.
#pragma omp target update to(stats::Histogram::scale, stats::origin)
  long t = 0;
#pragma omp target map(from: seen, t)
  {
    stats::Histogram h;
    h.add (1);
    t = stats::Histogram::total ();
    seen = Recorder::origin_sum ();
  }
  long expect = 0;
  for (int i = 0; i < stats::nbins; i++)
    expect += bins[i];
  OKT_CHECK (t == expect - stats::primes[1]);
  OKT_CHECK (seen == 1000 * 100 - 4);
  return 0;
}
