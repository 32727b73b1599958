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
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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
emu_gpu_check_images (struct emu_device *dev, const struct ok_image_load *ld,
		      char *what, size_t len)
{
  size_t used = 0;
  const struct ok_tgt_desc *t;
  if (len > 0)
    what[0] = '\0';
  for (unsigned i = 0;
       (t = ok_desc_target (ld->desc, ld->device_type, i)) != NULL; i++)
    {
      if (t->image_format != OK_IMAGE_CUBIN)
	continue;
      char err[512];
      if (!ok_cubin_check (ld->desc, t, ld->num_funcs, ld->num_vars, err,
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

/* A kernel that faults makes the CUDA driver fail the launch, and GCC's
   nvptx plugin reports it where it waits for the kernel: cuCtxSynchronize
   for an OpenMP region, cuStreamSynchronize for an OpenACC one
   (libgomp/plugin/plugin-nvptx.c, GCC 12 to 16), with the driver's
   words: CUDA_ERROR_ILLEGAL_ADDRESS or CUDA_ERROR_ILLEGAL_INSTRUCTION.
   A GPU does not trap on an integer division by zero; the host does, and
   the region cannot go on: CUDA_ERROR_LAUNCH_FAILED's words then, which
   GCC's plugin follows with its "(perhaps abort was called)" and a
   newline.  */
void
emu_gpu_fault_words (struct emu_device *dev, const struct emu_fault *f,
		     bool openacc, struct emu_msg *m)
{
  (void) dev;
  emu_msg_str (m, openacc ? "cuStreamSynchronize error: "
	       : "cuCtxSynchronize error: ");
  switch (f->sig)
    {
    case SIGILL:
      emu_msg_str (m, "an illegal instruction was encountered");
      break;
    case SIGFPE:
      emu_msg_str (m, "unspecified launch failure (perhaps abort was"
		   " called)\n");
      break;
    default:
      emu_msg_str (m, "an illegal memory access was encountered");
      break;
    }
  emu_msg_say (m, true);
}

/* GOMP_PLUGIN_fatal: exit (EXIT_FAILURE).  */
void
emu_gpu_fault_end (struct emu_device *dev, const struct emu_job *job,
		   bool in_handler)
{
  (void) dev;
  (void) job;
  if (in_handler)
    _exit (EXIT_FAILURE);
  ok_device_exit (EXIT_FAILURE);
}
