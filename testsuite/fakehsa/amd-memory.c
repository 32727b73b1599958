/* The fake HSA runtime: the AMD extensions over host memory (see
   fake-hsa.h).

   - hsa_amd_memory_lock pins host memory for agents and gives its address
     for them, which ROCr may choose apart from the host's: here always
     the host address plus FH_LOCK_ALIAS, an address no process maps, so
     that using the host pointer where the agent's is needed, or the
     agent's on the host, shows.  Locks are live handles ("lock") until
     hsa_amd_memory_unlock of the same host pointer.
   - hsa_amd_memory_async_copy_rect copies real bytes between device
     blocks and locked memory (through its agent address), row by row,
     after the checks of hsa_ext_amd.h: 4-byte aligned bases, pitches and
     slices, a GPU copy agent, each side accessible to it (a live block, or
     memory locked for it) in the direction given; then it decrements the
     completion signal.
   - hsa_amd_svm_attributes_set and _get keep shared virtual memory ranges
     of mapped host pages (page-aligned as the header says): the global
     flag and the agents given access.  A range whose pages were unmapped
     is forgotten, as KFD forgets it; a query of pages in no range fails,
     as for memory never registered with the runtime.  Whether an agent
     reaches SVM without being named is HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE
     _BY_DEFAULT, set by FAKEHSA_SVM_DEFAULT=1 (default false, as without
     XNACK).
   - hsa_amd_pointer_info answers for allocations (their region's agent
     owns them) and locked memory; anything else (loaded code too, which
     is not modelled) is of unknown type.  */

#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake-hsa.h"

#define FH_LOCK_ALIAS ((uintptr_t) 1 << 47)
#define FH_PAGE ((uintptr_t) 4096)

struct fh_lock
{
  uintptr_t host;
  size_t size;
  uint32_t agents;		/* Bit I: agent I may use it.  */
};

/* The agents of AGENTS[0, N), or every agent when AGENTS is NULL, as a
   mask; false when one is unknown.  */
static bool
fh_agent_mask (const hsa_agent_t *agents, int n, uint32_t *mask)
{
  *mask = 0;
  if (agents == NULL)
    {
      *mask = (1u << (fh_nagents + 1)) - 1;
      return true;
    }
  for (int i = 0; i < n; i++)
    {
      struct fh_agent *a = fh_agent_find (agents[i]);
      if (a == NULL)
	return false;
      *mask |= 1u << fh_agent_index (a);
    }
  return true;
}

hsa_status_t
hsa_amd_memory_lock (void *host_ptr, size_t size, hsa_agent_t *agents,
		     int num_agent, void **agent_ptr)
{
  ENTER (hsa_amd_memory_lock);
  NEED_INIT (hsa_amd_memory_lock);
  if (size == 0 || host_ptr == NULL || agent_ptr == NULL
      || (agents != NULL) != (num_agent != 0) || num_agent < 0)
    BAD (hsa_amd_memory_lock, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "size %zu, host_ptr %p, agent_ptr %p, %d agents at %p", size,
	 host_ptr, (void *) agent_ptr, num_agent, (void *) agents);
  uint32_t mask;
  if (!fh_agent_mask (agents, num_agent, &mask))
    BAD (hsa_amd_memory_lock, HSA_STATUS_ERROR_INVALID_AGENT,
	 "unknown agent");
  uintptr_t h = (uintptr_t) host_ptr;
  if (fh_block_find (h) != NULL || fh_block_find (h + size - 1) != NULL
      || h >= FH_LOCK_ALIAS)
    BAD (hsa_amd_memory_lock, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "%p+%zu is not host memory of the program's", host_ptr, size);
  struct fh_lock *l = fake_handle_new (&fh_handles, FH_H_LOCK, sizeof *l);
  if (l == NULL)
    RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  *l = (struct fh_lock) { h, size, mask };
  *agent_ptr = (void *) (h + FH_LOCK_ALIAS);
  fh_log ("lock %p %zu -> %p", host_ptr, size, *agent_ptr);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_amd_memory_unlock (void *host_ptr)
{
  ENTER (hsa_amd_memory_unlock);
  NEED_INIT (hsa_amd_memory_unlock);
  struct fh_lock *l;
  FAKE_HANDLES_EACH (&fh_handles, FH_H_LOCK, l)
    if (l->host == (uintptr_t) host_ptr)
      {
	fake_handle_free (&fh_handles, FH_H_LOCK, l);
	fh_log ("unlock %p", host_ptr);
	RETURN (HSA_STATUS_SUCCESS);
      }
  /* Undefined behaviour in ROCr.  */
  BAD (hsa_amd_memory_unlock, HSA_STATUS_ERROR_INVALID_ARGUMENT,
       "%p was not locked", host_ptr);
}

/* The host address of the N bytes at agent address P of memory locked
   for agent A, or 0.  */
static uintptr_t
fh_locked (uintptr_t p, size_t n, int a)
{
  if (p < FH_LOCK_ALIAS)
    return 0;
  uintptr_t h = p - FH_LOCK_ALIAS;
  struct fh_lock *l;
  FAKE_HANDLES_EACH (&fh_handles, FH_H_LOCK, l)
    if (h >= l->host && h - l->host <= l->size && n <= l->size - (h - l->host)
	&& (l->agents & (1u << a)))
      return h;
  return 0;
}

/* Where row ROW of plane Z of side PP (offset OFF) starts, for a copy
   of WIDTH bytes a row: the host address to copy, of a device block if
   DEVICE, else of memory locked for agent A; 0 when it is neither.  */
static uintptr_t
fh_rect_row (const hsa_pitched_ptr_t *pp, const hsa_dim3_t *off,
	     uint32_t z, uint32_t row, size_t width, bool device, int a)
{
  uintptr_t p = ((uintptr_t) pp->base + (off->z + (size_t) z) * pp->slice
		 + (off->y + (size_t) row) * pp->pitch + off->x);
  if (!device)
    return fh_locked (p, width, a);
  struct fake_block *b = fh_block_find (p);
  return (b != NULL && p + width <= b->base + b->size) ? p : 0;
}

hsa_status_t
hsa_amd_memory_async_copy_rect (const hsa_pitched_ptr_t *dst,
				const hsa_dim3_t *dst_offset,
				const hsa_pitched_ptr_t *src,
				const hsa_dim3_t *src_offset,
				const hsa_dim3_t *range, hsa_agent_t copy_agent,
				int dir, uint32_t num_dep_signals,
				const hsa_signal_t *dep_signals,
				hsa_signal_t completion_signal)
{
  ENTER (hsa_amd_memory_async_copy_rect);
  NEED_INIT (hsa_amd_memory_async_copy_rect);
  struct fh_agent *a = fh_agent_find (copy_agent);
  struct fh_signal *done = fh_signal_find (completion_signal);
  if (dst == NULL || src == NULL || dst_offset == NULL || src_offset == NULL
      || range == NULL || done == NULL || (num_dep_signals && !dep_signals))
    BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL argument or unknown completion signal");
  if (a == NULL || !a->gpu)
    BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_AGENT,
	 "the copy agent must be a GPU agent");
  if ((uintptr_t) dst->base % 4 || dst->pitch % 4 || dst->slice % 4
      || (uintptr_t) src->base % 4 || src->pitch % 4 || src->slice % 4)
    BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "base, pitch and slice must be 4-byte aligned");
  if (dir != hsaHostToDevice && dir != hsaDeviceToHost)
    BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "direction %d not modelled", dir);
  if (range->x == 0 || range->y == 0 || range->z == 0
      || range->x > dst->pitch || range->x > src->pitch
      || (range->z > 1 && (range->y > dst->slice / dst->pitch
			   || range->y > src->slice / src->pitch)))
    BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "range %u x %u x %u does not fit the pitches and slices", range->x,
	 range->y, range->z);
  for (uint32_t i = 0; i < num_dep_signals; i++)
    if (fh_signal_find (dep_signals[i]) == NULL)
      BAD (hsa_amd_memory_async_copy_rect, HSA_STATUS_ERROR_INVALID_SIGNAL,
	   "unknown dependency signal");
  int ai = fh_agent_index (a);
  bool h2d = dir == hsaHostToDevice;
  /* Every row checked before any is copied.  */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t z = 0; z < range->z; z++)
      for (uint32_t y = 0; y < range->y; y++)
	{
	  uintptr_t d = fh_rect_row (dst, dst_offset, z, y, range->x, h2d, ai);
	  uintptr_t s = fh_rect_row (src, src_offset, z, y, range->x, !h2d,
				     ai);
	  if (d == 0 || s == 0)
	    BAD (hsa_amd_memory_async_copy_rect,
		 HSA_STATUS_ERROR_INVALID_ARGUMENT, "row %u of slice %u: the"
		 " %s is not %s", y, z, d == 0 ? "destination" : "source",
		 (d == 0) == h2d ? "in one device block"
		 : "locked host memory for the copy agent");
	  if (pass == 1)
	    memmove ((void *) d, (const void *) s, range->x);
	}
  done->value -= 1;
  pthread_cond_broadcast (&fh_cond);
  fh_log ("copy_rect %s %u x %u x %u", h2d ? "h2d" : "d2h", range->x,
	  range->y, range->z);
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Shared virtual memory.  */

struct fh_svm
{
  uintptr_t base;
  size_t size;
  uint64_t global_flag;
  uint32_t agents;		/* Bit I: agent I given access.  */
};

static struct fh_svm *fh_svms;
static size_t fh_nsvms, fh_svm_cap;

/* Whether the N bytes of host pages at P are all mapped in the
   process.  */
static bool
fh_pages_mapped (uintptr_t p, size_t n)
{
  unsigned char one, *v = n <= FH_PAGE ? &one : malloc (n / FH_PAGE + 1);
  bool ok = v != NULL && (mincore ((void *) p, n, v) == 0 || errno != ENOMEM);
  if (v != &one)
    free (v);
  return ok;
}

static bool
fh_page_mapped (uintptr_t p)
{
  return fh_pages_mapped (p, FH_PAGE);
}

/* Forget the ranges whose pages were unmapped.  */
static void
fh_svm_prune (void)
{
  size_t k = 0;
  for (size_t i = 0; i < fh_nsvms; i++)
    if (fh_page_mapped (fh_svms[i].base))
      fh_svms[k++] = fh_svms[i];
  fh_nsvms = k;
}

/* The range that holds page P, or NULL.  */
static struct fh_svm *
fh_svm_find (uintptr_t p)
{
  for (size_t i = 0; i < fh_nsvms; i++)
    if (p >= fh_svms[i].base && p - fh_svms[i].base < fh_svms[i].size)
      return &fh_svms[i];
  return NULL;
}

/* The range of exactly [BASE, BASE + SIZE), made if no page of it is in
   another; NULL when it overlaps one partly (not modelled) or when out
   of memory.  */
static struct fh_svm *
fh_svm_range (uintptr_t base, size_t size)
{
  for (size_t i = 0; i < fh_nsvms; i++)
    {
      struct fh_svm *r = &fh_svms[i];
      if (r->base == base && r->size == size)
	return r;
      if (base < r->base + r->size && r->base < base + size)
	return NULL;
    }
  if (fh_nsvms == fh_svm_cap)
    {
      size_t cap = fh_svm_cap ? 2 * fh_svm_cap : 16;
      struct fh_svm *v = realloc (fh_svms, cap * sizeof *v);
      if (v == NULL)
	return NULL;
      fh_svms = v;
      fh_svm_cap = cap;
    }
  struct fh_svm *r = &fh_svms[fh_nsvms++];
  *r = (struct fh_svm) { base, size, HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED,
			 0 };
  return r;
}

/* [PTR, PTR + SIZE) aligned to whole pages, as the header says both
   calls take it; false when empty or not mapped host memory.  */
static bool
fh_svm_pages (void *ptr, size_t size, uintptr_t *base, size_t *bytes)
{
  uintptr_t p = (uintptr_t) ptr;
  if (ptr == NULL || size == 0 || p + size < p)
    return false;
  *base = p & ~(FH_PAGE - 1);
  uintptr_t end = (p + size + FH_PAGE - 1) & ~(FH_PAGE - 1);
  *bytes = end - *base;
  /* Device blocks are host pages too, but no SVM: refuse ranges that
     begin or end in one.  */
  return (fh_pages_mapped (*base, *bytes) && fh_block_find (*base) == NULL
	  && fh_block_find (end - 1) == NULL);
}

static bool
fh_svm_by_default (void)
{
  const char *v = getenv ("FAKEHSA_SVM_DEFAULT");
  return v != NULL && strcmp (v, "1") == 0;
}

hsa_status_t
hsa_amd_svm_attributes_set (void *ptr, size_t size,
			    hsa_amd_svm_attribute_pair_t *attribute_list,
			    size_t attribute_count)
{
  ENTER (hsa_amd_svm_attributes_set);
  NEED_INIT (hsa_amd_svm_attributes_set);
  uintptr_t base;
  size_t bytes;
  if (attribute_list == NULL || attribute_count == 0
      || !fh_svm_pages (ptr, size, &base, &bytes))
    BAD (hsa_amd_svm_attributes_set, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "no attributes, or %p+%zu is not mapped host memory", ptr, size);
  fh_svm_prune ();
  struct fh_svm *r = fh_svm_range (base, bytes);
  if (r == NULL)
    BAD (hsa_amd_svm_attributes_set, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "%p+%zu overlaps a range set before in part (not modelled)", ptr,
	 size);
  for (size_t i = 0; i < attribute_count; i++)
    {
      uint64_t v = attribute_list[i].value;
      struct fh_agent *a = fh_agent_find ((hsa_agent_t) { v });
      switch (attribute_list[i].attribute)
	{
	case HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG:
	  if (v > HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED)
	    BAD (hsa_amd_svm_attributes_set,
		 HSA_STATUS_ERROR_INVALID_ARGUMENT, "global flag %llu",
		 (unsigned long long) v);
	  r->global_flag = v;
	  break;
	case HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE:
	case HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE:
	case HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS:
	  if (a == NULL)
	    BAD (hsa_amd_svm_attributes_set, HSA_STATUS_ERROR_INVALID_AGENT,
		 "unknown agent %#llx", (unsigned long long) v);
	  if (attribute_list[i].attribute == HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS)
	    r->agents &= ~(1u << fh_agent_index (a));
	  else
	    r->agents |= 1u << fh_agent_index (a);
	  break;
	default:
	  BAD (hsa_amd_svm_attributes_set, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	       "attribute %#llx not settable or not modelled",
	       (unsigned long long) attribute_list[i].attribute);
	}
    }
  fh_log ("svm set %#lx %zu flag %llu agents %#x", (unsigned long) base,
	  bytes, (unsigned long long) r->global_flag, r->agents);
  RETURN (HSA_STATUS_SUCCESS);
}

hsa_status_t
hsa_amd_svm_attributes_get (void *ptr, size_t size,
			    hsa_amd_svm_attribute_pair_t *attribute_list,
			    size_t attribute_count)
{
  ENTER (hsa_amd_svm_attributes_get);
  NEED_INIT (hsa_amd_svm_attributes_get);
  uintptr_t base;
  size_t bytes;
  if (attribute_list == NULL || attribute_count == 0)
    BAD (hsa_amd_svm_attributes_get, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "no attributes");
  if (!fh_svm_pages (ptr, size, &base, &bytes))
    RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
  fh_svm_prune ();
  bool by_default = fh_svm_by_default ();
  for (size_t i = 0; i < attribute_count; i++)
    {
      hsa_amd_svm_attribute_pair_t *at = &attribute_list[i];
      if (at->attribute != HSA_AMD_SVM_ATTRIB_ACCESS_QUERY
	  && at->attribute != HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG)
	BAD (hsa_amd_svm_attributes_get, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	     "attribute %#llx not gettable or not modelled",
	     (unsigned long long) at->attribute);
      struct fh_agent *a = fh_agent_find ((hsa_agent_t) { at->value });
      if (at->attribute == HSA_AMD_SVM_ATTRIB_ACCESS_QUERY && a == NULL)
	BAD (hsa_amd_svm_attributes_get, HSA_STATUS_ERROR_INVALID_AGENT,
	     "unknown agent %#llx", (unsigned long long) at->value);
      bool access = true;
      uint64_t flag = HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE;
      for (uintptr_t q = base; q < base + bytes; q += FH_PAGE)
	{
	  struct fh_svm *r = fh_svm_find (q);
	  /* Memory never registered with the runtime.  */
	  if (r == NULL)
	    RETURN (HSA_STATUS_ERROR_INVALID_ARGUMENT);
	  if (q == base)
	    flag = r->global_flag;
	  else if (flag != r->global_flag)
	    flag = HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE;
	  if (a != NULL)
	    access &= (!a->gpu || by_default
		       || (r->agents & (1u << fh_agent_index (a))) != 0);
	}
      if (at->attribute == HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG)
	at->value = flag;
      else
	at->attribute = (access ? HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE
			 : HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS);
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Pointer information.  */

/* Fill INFO (whose SIZE the caller set) for P and, when asked, the
   agents that reach it.  */
hsa_status_t
hsa_amd_pointer_info (const void *ptr, hsa_amd_pointer_info_t *info,
		      void *(*alloc) (size_t), uint32_t *num_agents_accessible,
		      hsa_agent_t **accessible)
{
  ENTER (hsa_amd_pointer_info);
  NEED_INIT (hsa_amd_pointer_info);
  if (ptr == NULL || info == NULL)
    BAD (hsa_amd_pointer_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "NULL ptr or info");
  if (info->size < offsetof (hsa_amd_pointer_info_t, global_flags))
    BAD (hsa_amd_pointer_info, HSA_STATUS_ERROR_INVALID_ARGUMENT,
	 "info->size %u not set", info->size);
  hsa_amd_pointer_info_t r = { .size = sizeof r };
  uint32_t mask = 0;
  uintptr_t p = (uintptr_t) ptr;
  struct fake_block *b = fh_block_find (p);
  struct fh_lock *l;
  if (b != NULL && b->kind == FH_BLOCK_MEM)
    {
      /* Memory of a region of its agent's; the kernarg region's is
	 fine-grained, which the host reaches too.  */
      struct fh_region *reg = b->owner;
      struct fh_agent *owner = reg->agent;
      bool host_too = reg->kind != FH_COARSE;
      r.type = HSA_EXT_POINTER_TYPE_HSA;
      r.agentBaseAddress = (void *) b->base;
      r.hostBaseAddress = host_too ? (void *) b->base : NULL;
      r.sizeInBytes = b->size;
      r.agentOwner.handle = (uintptr_t) owner;
      mask = 1u << fh_agent_index (owner);
      if (host_too)
	mask |= 1u << fh_nagents;
    }
  else if (b == NULL)
    FAKE_HANDLES_EACH (&fh_handles, FH_H_LOCK, l)
      if (p >= l->host && p - l->host < l->size)
	{
	  r.type = HSA_EXT_POINTER_TYPE_LOCKED;
	  r.agentBaseAddress = (void *) (l->host + FH_LOCK_ALIAS);
	  r.hostBaseAddress = (void *) l->host;
	  r.sizeInBytes = l->size;
	  r.agentOwner.handle = (uintptr_t) &fh_agents[fh_nagents];
	  mask = l->agents | 1u << fh_nagents;
	  break;
	}
  uint32_t size = info->size < sizeof r ? info->size : (uint32_t) sizeof r;
  memcpy (info, &r, size);
  info->size = size;
  if (alloc != NULL && num_agents_accessible != NULL && accessible != NULL)
    {
      uint32_t n = (uint32_t) __builtin_popcount (mask);
      hsa_agent_t *v = alloc (n ? n * sizeof *v : 1);
      if (v == NULL)
	RETURN (HSA_STATUS_ERROR_OUT_OF_RESOURCES);
      n = 0;
      for (int i = 0; i <= fh_nagents; i++)
	if (mask & (1u << i))
	  v[n++].handle = (uintptr_t) &fh_agents[i];
      *num_agents_accessible = n;
      *accessible = v;
    }
  RETURN (HSA_STATUS_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* For the tests (exported, fakehsa_*).  */

/* Whether host address P is in a live SVM range: then its start and
   size, global flag and the mask of agents given access (bit I: agent I,
   the GPU agents from 0) into those pointers that are not NULL.  */
int
fakehsa_svm (uintptr_t p, uintptr_t *base, size_t *size, uint64_t *flag,
	     unsigned *agents)
{
  pthread_mutex_lock (&fh_lock);
  fh_svm_prune ();
  struct fh_svm *r = fh_svm_find (p);
  if (r != NULL)
    {
      if (base != NULL)
	*base = r->base;
      if (size != NULL)
	*size = r->size;
      if (flag != NULL)
	*flag = r->global_flag;
      if (agents != NULL)
	*agents = r->agents;
    }
  pthread_mutex_unlock (&fh_lock);
  return r != NULL;
}
