/* The dimensions of an OpenACC kernel's launch on a GCN device, as GCC's
   gcn plugin chooses them: see gcn-acc-dims.h.  */

#include "gcn-acc-dims.h"

void
ok_gcn_acc_dims (unsigned cus, const unsigned fixed[OK_ACC_DIMS],
		 const unsigned given[OK_ACC_DIMS], unsigned dims[OK_ACC_DIMS])
{
  /* The compiler's static dimensions take priority over libgomp's, as
     in GCC's gcn_exec.  */
  for (int i = 0; i < OK_ACC_DIMS; i++)
    dims[i] = fixed[i] > 0 ? fixed[i] : given[i];
  unsigned *gangs = &dims[OK_ACC_GANG], *workers = &dims[OK_ACC_WORKER];
  /* GCC's defaults, tuned for BabelStream: 32 wavefronts per compute
     unit.  */
  if (*gangs == 0 && *workers == 0)
    {
      *gangs = cus * 4;
      *workers = 8;
    }
  else if (*gangs == 0)
    {
      /* GCC computes cus * (32 / workers), which is no gang at all for
	 more than 32 workers: then one per compute unit.  */
      unsigned per_cu = 32 / *workers;
      *gangs = cus * (per_cu > 0 ? per_cu : 1);
    }
  else if (*workers == 0)
    {
      *workers = cus * 32 / *gangs;
      if (*workers == 0)
	*workers = 1;
      if (*workers > 16)
	*workers = 16;
    }
  dims[OK_ACC_VECTOR] = OK_GCN_WAVEFRONT;
}
