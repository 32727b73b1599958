/* A target nowait region, for trace.exp: libgomp runs it as a target task
   through the plugin's asynchronous launch, which the trace marks.  */

#include <omp.h>
#include <stdio.h>

#define N 4096

static int x[N];

int
main (void)
{
  for (int i = 0; i < N; i++)
    x[i] = i;
  /* Under OMP_TARGET_OFFLOAD=mandatory, libgomp 13 and newer set the
     default device only when they first look for devices, in the global
     ICVs: the threads of a parallel region started before that keep an
     unset one, and a target region there stops the program ("but device
     not found").  Looking for them first avoids that.  */
  if (omp_get_num_devices () < 1)
    {
      fprintf (stderr, "nowait: no device\n");
      return 1;
    }
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target nowait map(tofrom: x)
    for (int i = 0; i < N; i++)
      x[i] *= 3;
#pragma omp taskwait
  }
  for (int i = 0; i < N; i++)
    if (x[i] != 3 * i)
      {
	fprintf (stderr, "nowait: x[%d] is %d\n", i, x[i]);
	return 1;
      }
  puts ("nowait: ok");
  return 0;
}
