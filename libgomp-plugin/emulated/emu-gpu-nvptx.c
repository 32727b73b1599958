/* The GPU the emulated device of the nvptx plugin models, for OpenACC
   launches: their dimensions are chosen, checked and reported (GOMP_DEBUG,
   the profiling events) as GCC's nvptx plugin does on a GPU
   (core/nvptx-acc-dims.c, which the CUDA backend uses), so that a program,
   a tool or a test sees the launch an nvidia device would make.

   The GPU is one of CUDA's limits: blocks of up to 1024 threads, 2048
   threads and 32 blocks per multiprocessor, and 132 multiprocessors.  The
   region's code, compiled for the host, uses no registers: every kernel
   can have blocks of the largest size, and the occupancy advice is the
   one the CUDA driver gives for such a kernel.  */

#include <limits.h>
#include <stdio.h>

#include "cubin-check.h"
#include "desc-check.h"
#include "emu-internal.h"
#include "nvptx-acc-dims.h"

static const struct ok_nvptx_gpu emu_gpu = {
  .max_threads_per_block = 1024,
  .max_threads_per_sm = 2048,
  .num_sms = 132
};
#define EMU_GPU_MAX_BLOCKS_PER_SM 32

/* cuOccupancyMaxPotentialBlockSize's answer for a kernel that no register
   or shared memory limits: the largest block allowed, and as many as a
   multiprocessor holds on each.  */
static bool
emu_gpu_occupancy (void *arg, int limit, int *grids, int *blocks)
{
  (void) arg;
  int block = emu_gpu.max_threads_per_block;
  if (limit > 0 && limit < block)
    block = limit;
  int per_sm = emu_gpu.max_threads_per_sm / block;
  if (per_sm > EMU_GPU_MAX_BLOCKS_PER_SM)
    per_sm = EMU_GPU_MAX_BLOCKS_PER_SM;
  *blocks = block;
  *grids = per_sm * emu_gpu.num_sms;
  return true;
}

bool
emu_gpu_acc_dims (const char *name, const unsigned fixed[OK_ACC_DIMS],
		  bool known, const unsigned given[OK_ACC_DIMS],
		  unsigned dims[OK_ACC_DIMS])
{
  struct ok_nvptx_kernel k = {
    .name = name,
    .fixed = { fixed[0], fixed[1], fixed[2] },
    /* Without the compiler's dimensions, no limit refuses a launch.  */
    .max_threads_per_block = known ? emu_gpu.max_threads_per_block
				   : INT_MAX,
    .occupancy = emu_gpu_occupancy,
  };
  return ok_nvptx_acc_launch_dims (&emu_gpu, &k, given, dims);
}

void
emu_gpu_acc_launched (const char *name)
{
  struct ok_nvptx_kernel k = { .name = name };
  ok_nvptx_acc_launched (&k);
}

/* A kernel that exits traps on an nvidia device, and GCC's plugin hears
   it from the synchronisation as CUDA's "unspecified launch failure"; its
   words come first, as the CUDA backend's (cuda_kernel_error) do.  */
bool
emu_gpu_region_exited (struct emu_device *dev, const char *kernel,
		       int status)
{
  char detail[sizeof dev->base.label + 256];
  snprintf (detail, sizeof detail, "kernel '%.120s' on %s called exit (%d),"
	    " which traps on an nvidia device", kernel, dev->base.label,
	    status);
  ok_gcc_words_error (detail, "cuStreamSynchronize error: unspecified launch"
		      " failure (perhaps abort was called)");
  return false;
}

bool
emu_gpu_check_images (struct emu_device *dev, const struct ok_image_req *req,
		      char *what, size_t len)
{
  size_t used = 0;
  const struct ok_tgt_desc *t;
  if (len > 0)
    what[0] = '\0';
  for (unsigned i = 0;
       (t = ok_desc_target (req->desc, req->device_type, i)) != NULL; i++)
    {
      if (t->image_format != OK_IMAGE_CUBIN)
	continue;
      char err[512];
      if (!ok_cubin_check (req->desc, t, req->num_funcs, req->num_vars, err,
			   sizeof err))
	{
	  ok_dev_error (&dev->base, "cannot load offload image: %s", err);
	  return false;
	}
      if (used < len)
	used += (size_t) snprintf (what + used, len - used, "%ssm_%u",
				   used ? ", " : "; cubins checked: ",
				   (unsigned) t->arch);
    }
  return true;
}
