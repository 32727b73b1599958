// An emulated device's memory has the size OFFLOADKIT_EMULATE_MEMORY gives
// it (offloadkit.c/device-memory.c says more): device buffers owned by
// objects take their share while the objects live.
// { dg-do run }
// { dg-set-target-env-var OFFLOADKIT_EMULATE 1 }
// { dg-set-target-env-var OFFLOADKIT_EMULATE_MEMORY 32M }

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "okt-check.h"

const std::size_t MiB = std::size_t (1) << 20;

class device_buffer
{
  void *p;
public:
  explicit device_buffer (std::size_t n) : p (omp_target_alloc (n, 0)) {}
  ~device_buffer () { if (p) omp_target_free (p, 0); }
  bool ok () const { return p != nullptr; }
};

int
main ()
{
  okt_require_devices ();
  std::fprintf (stderr, "expect an out-of-memory message:\n");
  {
    device_buffer a (20 * MiB);
    OKT_CHECK (a.ok ());
    device_buffer b (20 * MiB);
    OKT_CHECK (!b.ok ());
  }
  device_buffer c (20 * MiB), d (10 * MiB);
  OKT_CHECK (c.ok () && d.ok ());
  return 0;
}
