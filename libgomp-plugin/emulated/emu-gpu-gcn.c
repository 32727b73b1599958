/* The GPU the emulated device of the gcn plugin models, for OpenACC
   launches: their dimensions are chosen and reported (the profiling
   events) as GCC's gcn plugin does on a GPU (core/gcn-acc-dims.c, which
   the HSA backend uses), so that a program or a tool sees the launch a
   radeon device would make.  The GPU has 104 compute units.  */

#include "emu-internal.h"
#include "gcn-acc-dims.h"

#define EMU_GPU_COMPUTE_UNITS 104

bool
emu_gpu_acc_dims (const char *name, const unsigned fixed[OK_ACC_DIMS],
		  bool known, const unsigned given[OK_ACC_DIMS],
		  unsigned dims[OK_ACC_DIMS])
{
  (void) known;			/* GCC's gcn plugin checks nothing.  */
  ok_gcn_acc_dims (EMU_GPU_COMPUTE_UNITS, fixed, given, dims);
  OK_DEBUG ("OpenACC kernel %s: %u gangs of %u workers", name,
	    dims[OK_ACC_GANG], dims[OK_ACC_WORKER]);
  return true;
}

void
emu_gpu_acc_launched (const char *name)
{
  (void) name;
}

bool
emu_gpu_check_images (struct emu_device *dev, const struct ok_image_req *req,
		      char *what, size_t len)
{
  (void) dev;
  (void) req;
  if (len > 0)
    what[0] = '\0';
  return true;
}

/* A kernel that exits stops with the status in its return value, and
   GCC's gcn plugin ends the process with its low byte, as the HSA
   backend does.  */
bool
emu_gpu_region_exited (struct emu_device *dev, const char *kernel,
		       int status)
{
  OK_DEBUG ("%s: kernel %s called exit (%d)", dev->base.label, kernel,
	    status & 0xff);
  ok_device_exit (status & 0xff);
}
