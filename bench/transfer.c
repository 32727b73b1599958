/* Transfer benchmark: map(to:) and map(from:) of one large buffer,
   beside raw cuMemcpyHtoD / cuMemcpyDtoH of the same buffer in the same
   process.

   The buffer is ordinary pageable memory from malloc, touched before any
   timing.  Each repetition times, with the monotonic clock,
     H2D  #pragma omp target enter data map(to: buf[0:n])
     D2H  #pragma omp target exit data map(from: buf[0:n])
   (what a program sees: the device allocation and free are part of it),
   then, when a CUDA driver and device are there, the raw copies of the
   same bytes through the device's primary context (the context the
   plugins use) into one device buffer allocated beforehand.  An untimed
   first round checks that the bytes really travel both ways.  Rates are
   in GB/s (10^9 bytes per second); the medians and the best are printed:

     okb-transfer-bytes N reps=R
     okb-h2d-gbs median=... max=...      okb-d2h-gbs ...
     okb-raw-h2d-gbs median=... max=...  okb-raw-d2h-gbs ...
     okb-raw-skipped REASON              (instead, without a driver)
     okb-on-device 0|1

   Usage: transfer [BYTES [REPS]]   (defaults 1 GiB and 5)  */

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-raw.h"
#include "okb-util.h"

#define MAX_REPS 50

static void
report (const char *what, double *gbs, int reps)
{
  double best = okb_max (gbs, reps);
  printf ("okb-%s-gbs median=%.2f max=%.2f\n", what, okb_median (gbs, reps),
	  best);
}

/* Raw copies of BUF (N bytes) REPS times; 0, or -1 with the reason in
   C->why.  */
static int
raw_copies (struct okb_cuda *c, unsigned char *buf, size_t n, int reps,
	    double *h2d, double *d2h)
{
  if (okb_cuda_use_device (c, 0) != 0)
    return -1;
  CUdeviceptr d;
  CUresult r = c->api.cuMemAlloc (&d, n);
  if (r != CUDA_SUCCESS)
    return okb_cuda_fail (c, "cuMemAlloc", r);

  /* Check once that the bytes go there and back.  */
  unsigned char first = buf[0], last = buf[n - 1];
  r = c->api.cuMemcpyHtoD (d, buf, n);
  if (r == CUDA_SUCCESS)
    {
      buf[0] = first ^ 0xff;
      buf[n - 1] = last ^ 0xff;
      r = c->api.cuMemcpyDtoH (buf, d, n);
    }
  if (r != CUDA_SUCCESS)
    {
      c->api.cuMemFree (d);
      return okb_cuda_fail (c, "cuMemcpy", r);
    }
  if (buf[0] != first || buf[n - 1] != last)
    {
      c->api.cuMemFree (d);
      snprintf (c->why, sizeof c->why, "raw copy lost data");
      return -1;
    }

  for (int i = 0; i < reps && r == CUDA_SUCCESS; i++)
    {
      long long t0 = okb_now_ns ();
      r = c->api.cuMemcpyHtoD (d, buf, n);
      long long t1 = okb_now_ns ();
      if (r == CUDA_SUCCESS)
	r = c->api.cuMemcpyDtoH (buf, d, n);
      long long t2 = okb_now_ns ();
      h2d[i] = n / (double) (t1 - t0);
      d2h[i] = n / (double) (t2 - t1);
    }
  c->api.cuMemFree (d);
  if (r != CUDA_SUCCESS)
    return okb_cuda_fail (c, "cuMemcpy", r);
  return 0;
}

int
main (int argc, char **argv)
{
  size_t n = argc > 1 ? strtoull (argv[1], NULL, 0) : (size_t) 1 << 30;
  int reps = argc > 2 ? atoi (argv[2]) : 5;
  if (n < 2 || reps < 1 || reps > MAX_REPS)
    {
      fprintf (stderr, "usage: transfer [BYTES (>= 2) [REPS (1..%d)]]\n",
	       MAX_REPS);
      return 2;
    }
  unsigned char *buf = malloc (n);
  if (!buf)
    {
      fprintf (stderr, "transfer: cannot allocate %zu bytes\n", n);
      return 1;
    }
  /* Touch every page, so that page faults stay out of the timings.  */
  for (size_t i = 0; i < n; i++)
    buf[i] = (unsigned char) (i * 7 + 3);

  int on_device = 0;
#pragma omp target map(from: on_device)
  on_device = !omp_is_initial_device ();

  /* Untimed round: the region changes the device copy, and map(from:)
     must bring the change back.  */
  unsigned char first = buf[0], last = buf[n - 1];
#pragma omp target enter data map(to: buf[0:n])
#pragma omp target map(alloc: buf[0:n])
  {
    buf[0]++;
    buf[n - 1]++;
  }
#pragma omp target exit data map(from: buf[0:n])
  if (buf[0] != (unsigned char) (first + 1)
      || buf[n - 1] != (unsigned char) (last + 1))
    {
      fprintf (stderr, "transfer: map(from:) did not bring the data back\n");
      return 1;
    }

  double h2d[MAX_REPS], d2h[MAX_REPS];
  for (int i = 0; i < reps; i++)
    {
      long long t0 = okb_now_ns ();
#pragma omp target enter data map(to: buf[0:n])
      long long t1 = okb_now_ns ();
#pragma omp target exit data map(from: buf[0:n])
      long long t2 = okb_now_ns ();
      h2d[i] = n / (double) (t1 - t0);
      d2h[i] = n / (double) (t2 - t1);
    }
  printf ("okb-transfer-bytes %zu reps=%d\n", n, reps);
  report ("h2d", h2d, reps);
  report ("d2h", d2h, reps);

  struct okb_cuda c;
  if (okb_cuda_open (&c) != 0)
    printf ("okb-raw-skipped %s\n", c.why);
  else
    {
      if (raw_copies (&c, buf, n, reps, h2d, d2h) != 0)
	printf ("okb-raw-skipped %s\n", c.why);
      else
	{
	  report ("raw-h2d", h2d, reps);
	  report ("raw-d2h", d2h, reps);
	}
      okb_cuda_close (&c);
    }
  printf ("okb-on-device %d\n", on_device);
  free (buf);
  return 0;
}
