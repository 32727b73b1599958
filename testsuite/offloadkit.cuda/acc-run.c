/* An OpenACC program for cuda.exp, run over the fake libcuda, whose
   kernels are recorded, not run: it prints what libgomp and the plugin
   answer (devices, a property, a queue's stream) and makes a synchronous
   region with fixed dimensions, and two queued ones, the second waiting
   for the first; cuda.exp reads the launches in the fake's log.  Its
   arrays' values mean nothing here.  */

#include <openacc.h>
#include <stdio.h>

#define N 4096

static float a[N], b[N];

int
main (void)
{
  int n = acc_get_num_devices (acc_device_nvidia);
  printf ("devices %d\n", n);
  if (n < 1)
    return 1;
  printf ("vendor %s\n", acc_get_property_string (0, acc_device_nvidia,
						   acc_property_vendor));
#pragma acc parallel loop num_gangs (3) num_workers (2) vector_length (32) \
  copy (a)
  for (int i = 0; i < N; i++)
    a[i] += 1;
#pragma acc parallel loop copyin (a) copyout (b) async (1)
  for (int i = 0; i < N; i++)
    b[i] = a[i];
#pragma acc parallel loop copy (a) async (2) wait (1)
  for (int i = 0; i < N; i++)
    a[i] = 2;
  printf ("stream %s\n", acc_get_cuda_stream (1) != NULL ? "yes" : "no");
#pragma acc wait
  printf ("done\n");
  return 0;
}
