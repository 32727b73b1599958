/* OpenACC profiling on the emulated device: the plugin's own events (the
   device allocations, the launch) reach a tool, with the kernel's name,
   the device API of the plugin (CUDA for nvptx, as GCC's nvptx plugin
   says, "other" for gcn), and the launch's end event carries what the
   tool put into its start event.  */

#include <acc_prof.h>
#include <openacc.h>
#include <stdlib.h>
#include <string.h>

static int allocs, frees, launch_starts, launch_ends;
static int bad;
static void *marker = &marker;

static void
cb_alloc (acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
  (void) pi;
  (void) ai;
  if (ei->data_event.device_ptr == NULL || ei->data_event.bytes == 0)
    bad = 1;
  allocs++;
}

static void
cb_free (acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
  (void) pi;
  (void) ai;
  if (ei->data_event.device_ptr == NULL)
    bad = 2;
  frees++;
}

static void
cb_launch (acc_prof_info *pi, acc_event_info *ei, acc_api_info *ai)
{
  acc_device_api want = (acc_get_device_type () == acc_device_nvidia
			 ? acc_device_api_cuda : acc_device_api_other);
  if (ai->device_api != want || ei->launch_event.kernel_name == NULL
      || ei->launch_event.num_gangs < 1)
    bad = 3;
  if (pi->event_type == acc_ev_enqueue_launch_start)
    {
      if (ei->launch_event.tool_info != NULL)
	bad = 4;
      ei->launch_event.tool_info = marker;
      launch_starts++;
    }
  else
    {
      if (ei->launch_event.tool_info != marker)
	bad = 5;
      launch_ends++;
    }
}

/* What libgomp calls in a library it loads through ACC_PROFLIB; the
   program calls it itself, as libgomp's own tests do.  */
static void
register_tool (acc_prof_reg reg)
{
  reg (acc_ev_alloc, cb_alloc, acc_reg);
  reg (acc_ev_free, cb_free, acc_reg);
  reg (acc_ev_enqueue_launch_start, cb_launch, acc_reg);
  reg (acc_ev_enqueue_launch_end, cb_launch, acc_reg);
}

int
main (void)
{
  register_tool (acc_prof_register);
  int a[100];
  for (int i = 0; i < 100; i++)
    a[i] = i;
#pragma acc parallel loop copy (a)
  for (int i = 0; i < 100; i++)
    a[i]++;
  if (a[7] != 8 || bad || allocs < 1 || frees < 1 || launch_starts != 1
      || launch_ends != 1)
    abort ();
  return 0;
}
