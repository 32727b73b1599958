/* Freeing an address inside an allocation, not its start, is refused in
   the words of GCC's plugin for the device (libgomp's lib-11.c looks for
   them), and libgomp stops the program.  */
/* { dg-shouldfail "free of an inner address" } */

#include <openacc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int
main (void)
{
  void *d = acc_malloc (512);
  if (d == NULL)
    abort ();
  fprintf (stderr, "CheCKpOInT\n");
  acc_free ((void *) ((uintptr_t) d + 256));
  return 0;
}

/* { dg-output "CheCKpOInT(\n|\r\n|\r)+" } */
/* { dg-output "libgomp: invalid device address(\n|\r\n|\r)+" { target offload_nvptx } } */
/* { dg-output "libgomp: GCN fatal error: Could not free device memory(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "Runtime message: HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid\\.(\n|\r\n|\r)+" { target offload_amdgcn } } */
/* { dg-output "libgomp: error in freeing device memory in acc_free(\n|\r\n|\r)+$" } */
