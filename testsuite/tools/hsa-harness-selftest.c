/* hsa-harness: the fake HSA runtime itself, driven directly (no
   plugin): the "no invalid runtime call" checks prove nothing unless it
   refuses what the runtime refuses.  Runs in a child.  See
   hsa-harness.h.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "hsa-harness.h"

/* The fake's function NAME.  */
#define hsa(name) harness_fake_fn (name)

static uint64_t agents_seen[4];
static int nagents_seen;
static uint64_t regions_seen[4];
static int nregions_seen;

static int
collect_agent (uint64_t a, void *data)
{
  (void) data;
  if (nagents_seen < 4)
    agents_seen[nagents_seen++] = a;
  return 0;
}

static int
collect_region (uint64_t r, void *data)
{
  (void) data;
  if (nregions_seen < 4)
    regions_seen[nregions_seen++] = r;
  return 0;
}

void
child_fake_selftest (void)
{
  check ("hsa_init", hsa ("hsa_init") () == 0);
  hsa ("hsa_iterate_agents") (collect_agent, NULL);
  check ("a CPU agent and a GPU agent", nagents_seen == 2);
  if (nagents_seen != 2)
    return;
  uint64_t gpu = agents_seen[1];	/* The CPU agent comes first.  */
  hsa ("hsa_agent_iterate_regions") (gpu, collect_region, NULL);
  check ("three GPU regions", nregions_seen == 3);
  uint32_t flags = 0;
  hsa ("hsa_region_get_info") (regions_seen[0], 1, &flags);
  check ("the first is the kernarg region", (flags & 1) != 0);
  void *karg = NULL, *mem = NULL;
  hsa ("hsa_memory_allocate") (regions_seen[0], 4096, &karg);
  hsa ("hsa_memory_allocate") (regions_seen[1], 4096, &mem);
  long bad = bad_calls ();
  char buf[16];
  check ("a copy leaving its block is refused",
	 hsa ("hsa_memory_copy") ((char *) mem + 4090, buf, sizeof buf) != 0
	 && bad_calls () == bad + 1);
  check ("freeing what was not allocated is refused",
	 hsa ("hsa_memory_free") (buf) != 0 && bad_calls () == bad + 2);

  /* Device 1's code object on device 0's agent (gfx900 and gfx906 unless
     HSA_HARNESS_AGENTS says otherwise).  */
  const struct ok_tgt_desc *t1 = target_for (our_desc, agent_arch[1]);
  const struct ok_tgt_desc *t0 = target_for (our_desc, agent_arch[0]);
  if (t1 == NULL || t0 == NULL)
    {
      check ("images for both agents", false);
      return;
    }
  uint64_t exe = 0, reader = 0, reader0 = 0;
  hsa ("hsa_executable_create_alt") (0, 0, NULL, &exe);
  hsa ("hsa_code_object_reader_create_from_memory")
    (t1->image_start, (size_t) (t1->image_end - t1->image_start),
     &reader);
  checkf (hsa ("hsa_executable_load_agent_code_object") (exe, gpu, reader,
							 NULL, NULL)
	  == 0x100f,
	  "a %s code object on a %s agent: HSA_STATUS_ERROR_INVALID_ISA",
	  agent_name[1], agent_name[0]);
  hsa ("hsa_code_object_reader_create_from_memory")
    (t0->image_start, (size_t) (t0->image_end - t0->image_start),
     &reader0);
  checkf (hsa ("hsa_executable_load_agent_code_object") (exe, gpu, reader0,
							 NULL, NULL) == 0
	  && hsa ("hsa_executable_freeze") (exe, NULL) == 0,
	  "the %s one loads", agent_name[0]);
  uint64_t vsym = 0;
  check ("a static variable's local symbol is not found by name",
	 hsa ("hsa_executable_get_symbol_by_name") (exe, "hidden", &gpu,
						    &vsym) != 0);
  check ("the global label .offload_var_table is found by name",
	 hsa ("hsa_executable_get_symbol_by_name") (exe, ".offload_var_table",
						    &gpu, &vsym) == 0);
  char kd[160];
  snprintf (kd, sizeof kd, "%s.kd", t0->func_names[0]);
  uintptr_t obj = 0;
  uint64_t priv = 0, extra = 0;
  check ("its kernel has a descriptor",
	 f_symbol (kd, 0, &obj, &priv, NULL, &extra) && obj != 0);

  /* Dispatch packets through a queue.  */
  struct q
  {
    uint32_t type, features;
    void *base;
    uint64_t doorbell;
    uint32_t size, reserved;
    uint64_t id;
  } *queue = NULL;
  hsa ("hsa_queue_create") (gpu, 64u, 0u, NULL, NULL, 0u, 0u, &queue);
  check ("a queue", queue != NULL);
  if (queue == NULL)
    return;
  uint64_t sig = 0;
  hsa ("hsa_signal_create") ((int64_t) 1, 0u, NULL, &sig);
  typedef uint64_t (*add_fn) (void *, uint64_t);
  typedef void (*store_fn) (uint64_t, int64_t);
  typedef int64_t (*load_fn) (uint64_t);
  add_fn add;
  store_fn ring;
  load_fn sload;
  void *a = dlsym (fake, "hsa_queue_add_write_index_relaxed");
  void *r = dlsym (fake, "hsa_signal_store_relaxed");
  void *l = dlsym (fake, "hsa_signal_load_relaxed");
  memcpy (&add, &a, sizeof a);
  memcpy (&ring, &r, sizeof r);
  memcpy (&sload, &l, sizeof l);
  for (int round = 0; round < 2; round++)
    {
      uint64_t idx = add (queue, 1);
      struct packet *p = (struct packet *) queue->base + (idx & 63);
      memset ((char *) p + 4, 0, sizeof *p - 4);
      p->wg[0] = 1, p->wg[1] = 64, p->wg[2] = 4;
      p->grid[0] = 2, p->grid[1] = 64, p->grid[2] = 4;
      p->private_size = (uint32_t) priv;
      p->group_size = (uint32_t) (extra >> 32);
      p->kernel_object = round == 0 ? obj : obj + 8;
      p->kernarg_address = (uintptr_t) karg;
      p->completion_signal = sig;
      bad = bad_calls ();
      __atomic_store_n ((uint32_t *) p, 2u | (3u << 16), __ATOMIC_RELEASE);
      ring (queue->doorbell, (int64_t) idx);
      if (round == 0)
	check ("a well-formed dispatch: recorded, signal decremented, "
	       "no invalid call",
	       sload (sig) == 0 && bad_calls () == bad);
      else
	check ("a dispatch of no loaded kernel object is an invalid call",
	       bad_calls () > bad);
    }
  hsa ("hsa_signal_destroy") (sig);
  hsa ("hsa_queue_destroy") (queue);
  hsa ("hsa_executable_destroy") (exe);
  hsa ("hsa_code_object_reader_destroy") (reader);
  hsa ("hsa_code_object_reader_destroy") (reader0);
  hsa ("hsa_memory_free") (karg);
  hsa ("hsa_memory_free") (mem);
  check_no_leaks ("the fake after cleanup");
}
