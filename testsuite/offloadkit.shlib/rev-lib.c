/* A library whose target region has an ancestor region (rev-main.c loads
   it with dlopen, after the device is set up, unloads it and loads it
   again): its own calls of GOMP_target_ext must reach the emulated device
   each time its image is loaded.  */

#pragma omp requires reverse_offload

/* Host code only: what the ancestor region calls.  */
static int calls;

__attribute__ ((noipa)) static void
count (void)
{
  calls++;
}

/* The host's X after an ancestor region multiplied the device's value,
   START + 1, by 10; and how many times it ran on the host in this load.  */
int
rev_run (int start, int *host_calls)
{
  int x = start;
#pragma omp target map(to: x)
  {
    x = start + 1;
#pragma omp target device(ancestor: 1) map(always, tofrom: x)
    {
      x *= 10;
      count ();
    }
  }
  *host_calls = calls;
  return x;
}
