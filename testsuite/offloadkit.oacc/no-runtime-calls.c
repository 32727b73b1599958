/* A program with OpenACC declarations but no call of libgomp's: linked
   with libraries as needed (Debian's default), it gets no libgomp, and
   the wrapper object our mkoffload links in (whose references to libgomp
   are weak) must not stop the link.  GCC's own nvptx pipeline fails this
   link ("undefined reference to GOMP_offload_register_ver").  */
/* { dg-options "-O2 -Wl,--as-needed" } */

#include <stdlib.h>

static float c[16];
#pragma acc declare device_resident (c)

#pragma acc routine
static float
sum (float a)
{
  for (int i = 0; i < 16; i++)
    c[i] = 2.0f;
  for (int i = 0; i < 16; i++)
    a += c[i];
  return a;
}

int
main (void)
{
  if (sum (1.0f) != 33.0f)
    abort ();
  return 0;
}
