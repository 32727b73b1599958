/* What one region sets with omp_set_* does not carry into the next:
   each region starts from the settings the first one saw, as kernels on
   a GPU and libgomp's host fallback do, though on an emulated device the
   regions run one after another on the same host thread.  Also checked:
   a region inside a teams construct of its own, and the host's settings
   untouched.  */
/* { dg-do run } */

#include "okt-check.h"

struct settings
{
  int dynamic, max_active_levels, sched_chunk, default_device, max_threads;
  omp_sched_t sched_kind;
  omp_allocator_handle_t allocator;
};

OKT_BEGIN_DECLARE_TARGET
static void
read_settings (struct settings *s)
{
  s->dynamic = omp_get_dynamic ();
  s->max_active_levels = omp_get_max_active_levels ();
  omp_get_schedule (&s->sched_kind, &s->sched_chunk);
  s->default_device = omp_get_default_device ();
  s->max_threads = omp_get_max_threads ();
  s->allocator = omp_get_default_allocator ();
}
#pragma omp end declare target

static int
same (const struct settings *a, const struct settings *b)
{
  return (a->dynamic == b->dynamic
	  && a->max_active_levels == b->max_active_levels
	  && a->sched_kind == b->sched_kind
	  && a->sched_chunk == b->sched_chunk
	  && a->default_device == b->default_device
	  && a->max_threads == b->max_threads
	  && a->allocator == b->allocator);
}

int
main (void)
{
  okt_require_devices ();
  struct settings host0, host1, first, later;
  read_settings (&host0);

#pragma omp target map(from: first)
  read_settings (&first);

  for (int round = 0; round < 3; round++)
    {
      /* Change every one of them in a region...  */
#pragma omp target
      {
	omp_set_dynamic (!omp_get_dynamic ());
	omp_set_max_active_levels (omp_get_max_active_levels () > 1 ? 1 : 2);
	omp_set_schedule (omp_sched_dynamic, 7);
	omp_set_default_device (omp_get_default_device () + 3);
	omp_set_num_threads (omp_get_max_threads () + 5);
	omp_set_default_allocator (omp_low_lat_mem_alloc);
      }
      /* ...the next one sees what the first saw.  */
#pragma omp target map(from: later)
      read_settings (&later);
      OKT_CHECK (same (&later, &first));
    }

  /* A teams construct in a region, then a region without one: one
     team, team number 0.  */
  int nteams = -1, team = -1;
#pragma omp target teams num_teams(4)
  {
  }
#pragma omp target map(from: nteams, team)
  {
    nteams = omp_get_num_teams ();
    team = omp_get_team_num ();
  }
  OKT_CHECK (nteams == 1 && team == 0);

  read_settings (&host1);
  OKT_CHECK (same (&host0, &host1));
  return 0;
}
