/* The dimensions of an OpenACC kernel's launch on a GCN device, as GCC's
   gcn plugin chooses them (gcn_exec in GCC 12 to 16's
   libgomp/plugin/plugin-gcn.c).  Two backends of the gcn plugin launch
   so: the HSA backend on a GPU and the emulated device on the GPU it
   models (emulated/emu-gpu-gcn.c).  In the gcn plugin only.  */

#ifndef OK_GCN_ACC_DIMS_H
#define OK_GCN_ACC_DIMS_H

#include "backend.h"

/* A worker is a wavefront: the vector length is always the hardware's.  */
#define OK_GCN_WAVEFRONT 64

/* The dimensions DIMS of a launch on a device of CUS compute units: the
   compiler's FIXED ones first (0: left to the run time), then libgomp's
   GIVEN (0: none), the rest GCC's defaults.  */
void ok_gcn_acc_dims (unsigned cus, const unsigned fixed[OK_ACC_DIMS],
		      const unsigned given[OK_ACC_DIMS],
		      unsigned dims[OK_ACC_DIMS]);

#endif
