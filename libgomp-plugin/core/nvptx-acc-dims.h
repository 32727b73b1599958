/* The launch of an OpenACC kernel on an nvidia device, as GCC's nvptx
   plugin makes it (nvptx_exec in GCC 12 to 16's
   libgomp/plugin/plugin-nvptx.c): its dimensions, its two resource checks
   and its GOMP_DEBUG line.  Two backends of the nvptx plugin launch so: the
   CUDA backend on a GPU, and the emulated device on a GPU it models
   (emulated/emu-acc-dims.c), so that what a program and a tool see of a
   launch (the dimensions in GOMP_DEBUG's output and in the profiling
   events, the refusals) is the same on both.  In the nvptx plugin only.  */

#ifndef OK_NVPTX_ACC_DIMS_H
#define OK_NVPTX_ACC_DIMS_H

#include "backend.h"

/* The lanes of a warp: the vector length GCC's plugin chooses.  */
#define OK_NVPTX_WARP 32
/* Named barriers a worker of a vector over a warp needs one of (GCC's
   limit of 15 workers for such vectors).  */
#define OK_NVPTX_MAX_WORKER_BARRIERS 15

/* What GCC's choice reads of the device (CUDA's device attributes).  */
struct ok_nvptx_gpu
{
  int max_threads_per_block;
  int max_threads_per_sm;
  int num_sms;
};

/* The driver's occupancy advice for a kernel (CUDA's
   cuOccupancyMaxPotentialBlockSize): the block size *BLOCKS, at most
   LIMIT threads unless LIMIT is 0, with which the device is fullest, and
   the number of such blocks *GRIDS that fills it.  False after a reported
   error.  */
typedef bool ok_nvptx_occupancy_fn (void *kernel, int limit, int *grids,
				    int *blocks);

/* A kernel as the choice sees it.  */
struct ok_nvptx_kernel
{
  const char *name;		/* As GCC's plugin names it: the PTX one.  */
  /* The compiler's dimensions (the image's launch record), 0 where it
     left the choice to the run time.  */
  unsigned fixed[OK_ACC_DIMS];
  int max_threads_per_block;	/* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.  */
  /* NULL: a driver without occupancy advice.  */
  ok_nvptx_occupancy_fn *occupancy;
  void *occupancy_arg;
};

/* The dimensions DIMS of K's launch on GPU: the compiler's, else libgomp's
   GIVEN (the clauses' values; 0: none), the rest chosen as GCC's plugin
   does from GOMP_OPENACC_DIM, the device and the occupancy advice.  Then
   GCC's resource checks, with GCC's messages, and GCC's GOMP_DEBUG line
   for the launch.  False after a reported error: the launch must not be
   made.  */
bool ok_nvptx_acc_launch_dims (const struct ok_nvptx_gpu *gpu,
			       const struct ok_nvptx_kernel *k,
			       const unsigned given[OK_ACC_DIMS],
			       unsigned dims[OK_ACC_DIMS]);

/* GCC's GOMP_DEBUG line after K has been launched.  */
void ok_nvptx_acc_launched (const struct ok_nvptx_kernel *k);

#endif
