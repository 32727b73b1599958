/* The launch of an OpenACC region on an emulated device has the
   dimensions the GPU it models would get from GCC's plugin for that GPU:
   those the device compiler fixed (num_gangs (7) num_workers (4), and
   the target's vector: a warp of 32 lanes on nvptx, a wavefront of 64 on
   GCN), else the clause's value known only at run time.  A profiling tool
   sees them, and on nvidia GOMP_DEBUG prints GCC's nvptx plugin's launch
   line.  The regions' results are checked too.  */
/* { dg-set-target-env-var "GOMP_DEBUG" "1" } */

#include <acc_prof.h>
#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

static int launches;
static unsigned gangs[2], workers[2], vectors[2];

static void
cb_launch (acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
  (void) pi;
  (void) ai;
  if (launches < 2)
    {
      gangs[launches] = ei->launch_event.num_gangs;
      workers[launches] = ei->launch_event.num_workers;
      vectors[launches] = ei->launch_event.vector_length;
    }
  launches++;
}

int
main (void)
{
  acc_prof_register (acc_ev_enqueue_launch_start, cb_launch, acc_reg);
  int a[64];
  volatile int nine = 9;
  int n = nine;

#pragma acc parallel num_gangs (7) num_workers (4) copyout (a)
#pragma acc loop gang worker vector
  for (int i = 0; i < 64; i++)
    a[i] = 2 * i;

  int sum = 0;
#pragma acc parallel num_gangs (n) copy (sum)
#pragma acc loop gang reduction (+:sum)
  for (int i = 0; i < 64; i++)
    sum += a[i];

  unsigned vector = acc_get_device_type () == acc_device_nvidia ? 32 : 64;
  if (sum != 63 * 64 || a[63] != 126)
    {
      fprintf (stderr, "wrong results: sum %d, a[63] %d\n", sum, a[63]);
      abort ();
    }
  if (launches != 2 || gangs[0] != 7 || workers[0] != 4
      || vectors[0] != vector || gangs[1] != 9)
    {
      fprintf (stderr, "launches %d: %u x %u x %u, then %u gangs\n",
	       launches, gangs[0], workers[0], vectors[0], gangs[1]);
      abort ();
    }
  return 0;
}

/* { dg-output "nvptx_exec: kernel main\\\$_omp_fn\\\$0: launch gangs=7, workers=4, vectors=32.*nvptx_exec: kernel main\\\$_omp_fn\\\$1: launch gangs=9," { target offload_nvptx } } */
