/* { dg-do run { target usm } } */
/* { dg-set-target-env-var OFFLOADKIT_INFO 1 } */
/* { dg-output "offloadkit-nvptx: 1 emulated device: the host's memory \\(the program requires self_maps\\)" { target offload_nvptx } } */
/* { dg-output "offloadkit-gcn: 1 emulated device: the host's memory \\(the program requires self_maps\\)" { target offload_amdgcn } } */
/* requires self_maps (libgomp 15+): every map is the host's object
   itself, on emulated devices that are devices (their queries answer as
   the device): a write to a map(to:) variable in a region reaches the
   host, unlike with separate memory; `declare target link' variables are
   the host's.  */

/* Before okt-check.h, whose helpers have target regions.  */
#pragma omp requires self_maps

#include "okt-check.h"

int linked[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
#pragma omp declare target link(linked)

int
main (void)
{
  int n = okt_expected_devices ();
  OKT_CHECK (n >= 1);
  OKT_CHECK (omp_get_num_devices () == n);
  for (int d = 0; d < n; d++)
    {
      int x = 1, dev = -1;
      int *where = 0, *where_linked = 0;
#pragma omp target device(d) map(to: x) map(from: dev, where, where_linked)
      {
	x = 2;
	dev = omp_get_device_num ();
	where = &x;
	where_linked = &linked[0];
	for (int i = 0; i < 8; i++)
	  linked[i] += 10;
      }
      OKT_CHECK (dev == d);
      OKT_CHECK (x == 2);		/* A self map: the host's x.  */
      OKT_CHECK (where == &x);
      OKT_CHECK (where_linked == &linked[0]);
      for (int i = 0; i < 8; i++)
	OKT_CHECK (linked[i] == i + 1 + 10 * (d + 1));
    }
  return 0;
}
