/* The launch of an OpenACC kernel on an nvidia device, as GCC's nvptx
   plugin makes it: see nvptx-acc-dims.h.  */

#include "plugin-core.h"
#include "nvptx-acc-dims.h"
#include "oacc-abi.h"

/* GCC's defaults without the driver's advice: as many gangs as the
   device holds blocks of the largest size at once, as many workers as
   such a block has warps, a warp's lanes as the vector, unless
   GOMP_OPENACC_DIM (ENV) says otherwise, where the hardware allows.  */
static void
nvptx_default_dims (const struct ok_nvptx_gpu *gpu, const int env[3],
		    unsigned def[3])
{
  int block = gpu->max_threads_per_block > 0 ? gpu->max_threads_per_block
					     : 1;
  int gang = gpu->max_threads_per_sm / block * gpu->num_sms;
  int worker = block / OK_NVPTX_WARP;
  int vector = OK_NVPTX_WARP;
  int d[3] = { env[OK_ACC_GANG], env[OK_ACC_WORKER], env[OK_ACC_VECTOR] };
  if (d[OK_ACC_GANG] < 1)
    d[OK_ACC_GANG] = gang ? gang : 1024;
  if (d[OK_ACC_WORKER] < 1 || (d[OK_ACC_WORKER] > worker && gang))
    d[OK_ACC_WORKER] = worker;
  if (d[OK_ACC_VECTOR] < 1 || (d[OK_ACC_VECTOR] != vector && gang))
    d[OK_ACC_VECTOR] = vector;
  for (int i = 0; i < OK_ACC_DIMS; i++)
    def[i] = (unsigned) d[i];
}

/* Choose the dimensions of DIMS that are 0 (CHOSEN), as GCC's nvptx_exec
   does, with the driver's occupancy advice when it has it.  */
static bool
nvptx_choose_dims (const struct ok_nvptx_gpu *gpu,
		   const struct ok_nvptx_kernel *k,
		   const bool chosen[OK_ACC_DIMS], unsigned dims[OK_ACC_DIMS])
{
  int env[OK_ACC_DIMS];
  for (int i = 0; i < OK_ACC_DIMS; i++)
    env[i] = GOMP_PLUGIN_acc_default_dim ((unsigned) i);

  if (k->occupancy == NULL)
    {
      unsigned def[OK_ACC_DIMS];
      nvptx_default_dims (gpu, env, def);
      for (int i = 0; i < OK_ACC_DIMS; i++)
	if (chosen[i])
	  dims[i] = def[i];
      unsigned max = (unsigned) k->max_threads_per_block;
      if (chosen[OK_ACC_VECTOR]
	  && dims[OK_ACC_VECTOR] > max / OK_NVPTX_WARP * OK_NVPTX_WARP)
	dims[OK_ACC_VECTOR] = max / OK_NVPTX_WARP * OK_NVPTX_WARP;
      if (dims[OK_ACC_VECTOR] == 0)
	dims[OK_ACC_VECTOR] = 1;
      if (chosen[OK_ACC_WORKER]
	  && dims[OK_ACC_WORKER] > max / dims[OK_ACC_VECTOR])
	dims[OK_ACC_WORKER] = max / dims[OK_ACC_VECTOR];
      return true;
    }

  int grids = 0, blocks = 0;
  if (!k->occupancy (k->occupancy_arg,
		     (int) (dims[OK_ACC_WORKER] * dims[OK_ACC_VECTOR]),
		     &grids, &blocks))
    return false;
  OK_DEBUG ("'%s': the occupancy advice is %d blocks of %d threads",
	    k->name, grids, blocks);
  /* As GCC: gangs in proportion to the block size the driver suggests,
     twice as many as fit, so that threads do not idle; the vector a warp;
     workers filling the block.  */
  int gangs = env[OK_ACC_GANG];
  if (gangs == 0)
    gangs = 2 * grids * (blocks / OK_NVPTX_WARP);
  int vectors = OK_NVPTX_WARP;
  int workers = env[OK_ACC_WORKER];
  if (workers == 0)
    {
      int actual = chosen[OK_ACC_VECTOR] ? vectors
					 : (int) dims[OK_ACC_VECTOR];
      workers = blocks / actual;
      if (workers < 1)
	workers = 1;
      /* A vector over a warp needs a barrier per worker.  */
      if (actual > OK_NVPTX_WARP && workers > OK_NVPTX_MAX_WORKER_BARRIERS)
	workers = OK_NVPTX_MAX_WORKER_BARRIERS;
    }
  if (gangs < 1)
    gangs = 1;
  const int pick[OK_ACC_DIMS] = { gangs, workers, vectors };
  for (int i = 0; i < OK_ACC_DIMS; i++)
    if (chosen[i])
      dims[i] = (unsigned) pick[i];
  return true;
}

/* Whether K can run with DIMS: GCC's checks, in GCC's words.  */
static bool
nvptx_check_resources (const struct ok_nvptx_kernel *k,
		       const unsigned dims[OK_ACC_DIMS])
{
  unsigned workers = dims[OK_ACC_WORKER], vector = dims[OK_ACC_VECTOR];
  if ((unsigned long) workers * vector
      > (unsigned long) k->max_threads_per_block)
    {
      ok_error ("The Nvidia accelerator has insufficient resources to launch"
		" '%s' with num_workers = %u and vector_length = %u;"
		" recompile the program with 'num_workers = x and"
		" vector_length = y' on that offloaded region or"
		" '-fopenacc-dim=:x:y' where x * y <= %d.", k->name, workers,
		vector, k->max_threads_per_block);
      return false;
    }
  if (workers > OK_NVPTX_MAX_WORKER_BARRIERS && vector > OK_NVPTX_WARP)
    {
      ok_error ("The Nvidia accelerator has insufficient barrier resources"
		" to launch '%s' with num_workers = %u and vector_length ="
		" %u; recompile the program with 'num_workers = x' on that"
		" offloaded region or '-fopenacc-dim=:x:' where x <= 15;"
		" or, recompile the program with 'vector_length = 32' on that"
		" offloaded region or '-fopenacc-dim=::32'.", k->name, workers,
		vector);
      return false;
    }
  return true;
}

bool
ok_nvptx_acc_launch_dims (const struct ok_nvptx_gpu *gpu,
			  const struct ok_nvptx_kernel *k,
			  const unsigned given[OK_ACC_DIMS],
			  unsigned dims[OK_ACC_DIMS])
{
  bool chosen[OK_ACC_DIMS];
  bool any = false;
  for (int i = 0; i < OK_ACC_DIMS; i++)
    {
      dims[i] = k->fixed[i] != 0 ? k->fixed[i] : given[i];
      chosen[i] = dims[i] == 0;
      any |= chosen[i];
    }
  if (any && !nvptx_choose_dims (gpu, k, chosen, dims))
    return false;
  if (!nvptx_check_resources (k, dims))
    return false;
  /* GCC's words exactly: tests and users look for them.  */
  GOMP_PLUGIN_debug (0, "  nvptx_exec: kernel %s: launch gangs=%u,"
		     " workers=%u, vectors=%u\n", k->name, dims[OK_ACC_GANG],
		     dims[OK_ACC_WORKER], dims[OK_ACC_VECTOR]);
  return true;
}

void
ok_nvptx_acc_launched (const struct ok_nvptx_kernel *k)
{
  GOMP_PLUGIN_debug (0, "  nvptx_exec: kernel %s: finished\n", k->name);
}
