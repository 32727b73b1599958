/* Target regions and `declare target' variables for tools/hsa-harness,
   which dlopens this file built as a shared library (by gcn.exp, through
   our gcn mkoffload and through GCC's own) and takes the descriptor its
   constructor registers.  The host functions are never called: the
   harness drives the plugin with the image's kernels directly.
   omp_get_device_num pulls the device's __gomp_device_num in.  `hidden'
   is static: a local symbol in the code object, which the HSA runtime
   does not load, so the plugin must find it through the variable
   table.  */

#include <omp.h>

#pragma omp declare target
int counter = 7;
double table[5] = { 1, 2, 3, 4, 5 };
long big[1000];
static short hidden[3] = { 3, 4, 5 };
#pragma omp end declare target
/* On the device, a pointer that libgomp sets when LINKED is mapped.  */
long linked[100];
#pragma omp declare target link(linked)

int
image_plain (int n)
{
  int r = 0;
#pragma omp target map(tofrom: r)
  r = counter + hidden[n % 3] + n + omp_get_device_num ();
  return r;
}

double
image_teams (int n)
{
  double sum = 0;
#pragma omp target teams distribute parallel for reduction(+: sum) \
  map(tofrom: sum)
  for (int i = 0; i < n; i++)
    sum += table[i % 5] + big[i % 1000];
  return sum;
}

long
image_link (int i)
{
  long r = 0;
#pragma omp target map(to: linked[i:1]) map(from: r)
  r = linked[i];
  return r;
}
