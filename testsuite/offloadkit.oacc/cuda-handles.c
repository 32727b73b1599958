/* The nvptx plugin's CUDA handles on an emulated device: present, and a
   stream of its own for each async queue (none for acc_async_sync).  */

#include <openacc.h>
#include <stdlib.h>

int
main (void)
{
#pragma acc parallel async (1)
  ;
#pragma acc parallel async (2)
  ;
#pragma acc wait
  if (acc_get_current_cuda_device () == NULL
      || acc_get_current_cuda_context () == NULL)
    abort ();
  void *s1 = acc_get_cuda_stream (1), *s2 = acc_get_cuda_stream (2);
  if (s1 == NULL || s2 == NULL || s1 == s2
      || acc_get_cuda_stream (acc_async_sync) != NULL)
    abort ();
  if (acc_set_cuda_stream (1, s2) != 1 || acc_get_cuda_stream (1) != s2)
    abort ();
  return 0;
}
