/* omp_get_device_num () and omp_is_initial_device () inside target regions
   on two emulated devices.

   An emulated device runs the host-fallback version of each region; the
   wrapper that mkoffload links into the program answers these two calls as
   a device would on the thread that runs the region, and as libgomp does
   everywhere else.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 2 } */

#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
/* Called from regions: the answer must not depend on where the call is
   compiled.  */
static int
where_am_i (void)
{
  return omp_is_initial_device () ? -100 : omp_get_device_num ();
}
#pragma omp end declare target

int
main (void)
{
  okt_require_devices ();
  int n = omp_get_num_devices ();
  OKT_CHECK (n == 2);
  int host = omp_get_initial_device ();
  OKT_CHECK (omp_get_device_num () == host);
  OKT_CHECK (omp_is_initial_device ());

  for (int d = 0; d < n; d++)
    {
      int init = -1, num = -1, via_fn = -1, probe = 0;
#pragma omp target device(d) map(from: init, num, via_fn) map(to: probe)
      {
	init = omp_is_initial_device ();
	num = omp_get_device_num ();
	via_fn = where_am_i ();
	probe = 1;
      }
      OKT_CHECK (probe == 0);
      int want = okt_region_initial_device ();
      OKT_CHECK (want < 0 || init == want);
      OKT_CHECK (num == d);
      OKT_CHECK (via_fn == (init ? -100 : d));

      /* The same through the asynchronous path.  */
      num = -1;
#pragma omp target device(d) map(from: num) nowait
      num = omp_get_device_num ();
#pragma omp taskwait
      OKT_CHECK (num == d);
    }

  /* Host fallback and the host itself still answer "initial device".  */
  int init = -1, num = -1;
#pragma omp target if (0) map(from: init, num)
  {
    init = omp_is_initial_device ();
    num = omp_get_device_num ();
  }
  OKT_CHECK (init == 1 && num == host);
  OKT_CHECK (omp_is_initial_device () && omp_get_device_num () == host);

  /* Host threads running while a device runs a region get host
     answers.  */
  int host_seen = -1, team = 0;
#pragma omp parallel num_threads(2)
  {
    team = omp_get_num_threads ();
    if (omp_get_thread_num () == 0)
      {
#pragma omp target device(1) map(from: num)
	num = omp_get_device_num ();
      }
    else
      host_seen = omp_get_device_num ();
  }
  OKT_CHECK (num == 1);
  OKT_CHECK (host_seen == host || team == 1);
  return 0;
}
