/* declare target link arrays of which only a section is mapped, reached
   by name in a function that a region calls (GCC 16's
   libgomp.fortran/declare-target-link.f90 in C).  From GCC 15 on,
   libgomp stores in the device's link pointer the address that element 0
   of the whole object would have (the section's device address less the
   section's offset), so that element I is found I elements further; for
   a section that does not start at element 0 that address lies outside
   the mapping.  libgomp up to 14 stores the section's own address, where
   no device finds element I of such a section: those sections are tried
   only when GCC 15 or newer compiles the test (its programs run with
   libgomp 15 or newer).  */
/* { dg-do run } */

#include "okt-check.h"

#define N 100

int arr[N];
int arr2[4];
#pragma omp declare target link(arr, arr2)

OKT_BEGIN_DECLARE_TARGET
/* On the device: check that arr[LO..HI] holds LO..HI, fill arr2, and
   replace each arr[I] of the section with 3 - 10 * arr[I].  Return the
   sum of the section's new values and arr2's, or -1 - I for the first
   element I that was wrong.  */
static int
update_section (int lo, int hi)
{
  for (int i = 0; i < 4; i++)
    arr2[i] = 11 * (i + 1);
  for (int i = lo; i <= hi; i++)
    if (arr[i] != i)
      return -1 - i;
  int sum = arr2[0] + arr2[1] + arr2[2] + arr2[3];
  for (int i = lo; i <= hi; i++)
    {
      arr[i] = 3 - 10 * arr[i];
      sum += arr[i];
    }
  return sum;
}
#pragma omp end declare target

/* What update_section returns for the section LO..HI.  */
static int
expected_sum (int lo, int hi)
{
  int sum = 11 + 22 + 33 + 44;
  for (int i = lo; i <= hi; i++)
    sum += 3 - 10 * i;
  return sum;
}

/* Map arr[LO..HI] and all of arr2 with one enter data, run update_section
   in a region that names neither, copy the section back with exit data,
   and check that exactly the section changed.  */
static void
check_section (int lo, int hi)
{
  int len = hi - lo + 1;
  int res = 0;
  for (int i = 0; i < N; i++)
    arr[i] = i;

#pragma omp target enter data map(to: arr[lo:len]) map(alloc: arr2[0:4])
#pragma omp target map(from: res) firstprivate(lo, hi)
  res = update_section (lo, hi);
  OKT_CHECK (res == expected_sum (lo, hi));
  /* The device's writes stay on the device until the copy back.  */
  OKT_CHECK (arr[lo] == lo && arr[hi] == hi);
#pragma omp target exit data map(from: arr[lo:len]) map(delete: arr2[0:4])

  for (int i = 0; i < N; i++)
    if (i >= lo && i <= hi)
      OKT_CHECK (arr[i] == 3 - 10 * i);
    else
      OKT_CHECK (arr[i] == i);
}

int
main (void)
{
  okt_require_devices ();

  /* The whole array, and a section from its start: the pointer is the
     mapping's own address in every libgomp.  */
  check_section (0, N - 1);
  check_section (0, 40);
  /* Device memory made after the mapping may lie where the rest of the
     object would be, as malloc places blocks: it is not the mapping.  */
  int dev = omp_get_default_device ();
  void *after[4];
  for (int i = 0; i < N; i++)
    arr[i] = i;
#pragma omp target enter data map(to: arr[0:10]) map(alloc: arr2[0:4])
  for (int i = 0; i < 4; i++)
    {
      after[i] = omp_target_alloc (64, dev);
      OKT_CHECK (after[i] != NULL);
    }
  int res = 0;
#pragma omp target map(from: res)
  res = update_section (0, 9);
  OKT_CHECK (res == expected_sum (0, 9));
  OKT_CHECK (arr[0] == 0 && arr[9] == 9);
#pragma omp target exit data map(from: arr[0:10]) map(delete: arr2[0:4])
  for (int i = 0; i < 4; i++)
    omp_target_free (after[i], dev);
  for (int i = 0; i < N; i++)
    OKT_CHECK (arr[i] == (i < 10 ? 3 - 10 * i : i));
#if __GNUC__ >= 15
  /* Sections further in, as in the Fortran test (arr(10:50)), and one
     at the end, far from where the pointer points.  */
  check_section (9, 49);
  check_section (90, 99);
#endif
  return 0;
}
