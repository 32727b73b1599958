/* A shared library loaded with dlopen by dlopen-main.c: its offload image
   is registered when it is loaded and unregistered by dlclose, so a reload
   starts again from the declare target variable's initializer.  */

#pragma omp declare target
int dl_counter = 100;
#pragma omp end declare target

/* Increment the device's dl_counter by N and return the new value.  */
int
dl_bump (int n)
{
  int r;
#pragma omp target map(from: r) firstprivate(n)
  {
    dl_counter += n;
    r = dl_counter;
  }
  return r;
}

int
dl_square_sum (const int *a, int n)
{
  int s = 0;
#pragma omp target teams distribute parallel for map(to: a[0:n]) \
	reduction(+: s)
  for (int i = 0; i < n; i++)
    s += a[i] * a[i];
  return s;
}
