/* A program that does not require reverse offload keeps its calls of
   GOMP_target_ext as they are: the emulated device redirects them (to run
   `target device (ancestor: 1)' regions on the host) only for programs
   that do.  Taking the function's address reads the program's GOT slot
   of it, which such a redirection would have changed.  */
/* { dg-do run } */

/* RTLD_DEFAULT.  */
#define _GNU_SOURCE 1
#include <dlfcn.h>

#include "okt-check.h"

/* libgomp's entry point, under another name than GCC's built-in.  */
extern void okt_target_ext (void) __asm__ ("GOMP_target_ext");

int
main (void)
{
  /* Runs regions: the images are loaded.  */
  okt_require_devices ();
  int x = 0;
#pragma omp target map(from: x)
  x = 1;
  OKT_CHECK (x == 1);
  void *libgomp = dlsym (RTLD_DEFAULT, "GOMP_target_ext");
  OKT_CHECK (libgomp != NULL);
  OKT_CHECK ((void *) okt_target_ext == libgomp);
  return 0;
}
