/* Two target regions with map clauses of known sizes, for trace.exp.

   A is 1 MiB and B 512 KiB: above the size up to which libgomp gathers
   small copies into one, so each is copied by a transfer of its own and
   the trace must show exactly these byte counts: A to the device and back
   (map(tofrom:)), B only to the device (map(to:)).  The second region
   asks for 2 teams, which the trace shows as its grid.  */

#include <omp.h>
#include <stdio.h>

#define NA (1024 * 1024 / (int) sizeof (int))
#define NB (512 * 1024 / (int) sizeof (int))

static int a[NA];
static int b[NB];

int
main (void)
{
  if (omp_get_num_devices () < 1)
    {
      fprintf (stderr, "two-regions: no device\n");
      return 2;
    }
  for (int i = 0; i < NA; i++)
    a[i] = i;
  for (int i = 0; i < NB; i++)
    b[i] = 1;

#pragma omp target map(tofrom: a)
  for (int i = 0; i < NA; i++)
    a[i] += 1;

  long sum = 0;
#pragma omp target teams distribute num_teams(2) map(to: b) \
		   map(tofrom: sum) reduction(+: sum)
  for (int i = 0; i < NB; i++)
    sum += b[i];

  for (int i = 0; i < NA; i++)
    if (a[i] != i + 1)
      {
	fprintf (stderr, "two-regions: a[%d] is %d\n", i, a[i]);
	return 1;
      }
  if (sum != NB)
    {
      fprintf (stderr, "two-regions: sum is %ld\n", sum);
      return 1;
    }
  puts ("two-regions: ok");
  return 0;
}
