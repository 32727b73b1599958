/* Device memory and copies of the HSA backend.

   Allocations come from the agent's coarse-grained data region;
   hsa_memory_allocate is a kernel-driver call, so the core's pool serves
   small requests from large chunks (OFFLOADKIT_GCN_POOL_MAX sets the
   largest pooled request, in bytes; 0 turns the pool off).  Copies use
   hsa_memory_copy, which accepts any mix of host and device pointers and
   returns when the copy is complete; libgomp 14's rectangles go to the
   runtime's rectangle copy where GCC's plugin uses it.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa-internal.h"

void *
gcn_region_alloc (struct gcn_device *dev, size_t size, const char *what)
{
  void *p = NULL;
  hsa_status_t s = ok_hsa.hsa_memory_allocate (dev->data_region,
					       size == 0 ? 1 : size, &p);
  if (s != HSA_STATUS_SUCCESS || p == NULL)
    {
      char buf[256];
      snprintf (buf, sizeof buf, "cannot allocate %zu bytes for %s", size,
		what);
      ok_dev_call_error (&dev->base, buf, "hsa_memory_allocate",
			 s != HSA_STATUS_SUCCESS ? s : HSA_STATUS_ERROR);
      return NULL;
    }
  return p;
}

bool
gcn_region_free (struct gcn_device *dev, void *ptr, const char *what)
{
  hsa_status_t s = ok_hsa.hsa_memory_free (ptr);
  if (s == HSA_STATUS_SUCCESS)
    return true;
  /* After a fault the runtime may refuse: not worth a message, nor a
     failure of the device's finalisation.  */
  char buf[160];
  snprintf (buf, sizeof buf, "free %s at %p", what, ptr);
  return ok_dev_teardown_ok (&dev->base, s, buf, "hsa_memory_free");
}

void *
gcn_raw_alloc (struct ok_device *dev, size_t size)
{
  return gcn_region_alloc (gcn_dev (dev), size, "device memory");
}

bool
gcn_raw_free (struct ok_device *dev, void *ptr)
{
  return gcn_region_free (gcn_dev (dev), ptr, "device memory");
}

static bool
gcn_copy (struct ok_device *dev, void *dst, const void *src, size_t n,
	  const char *dir)
{
  hsa_status_t s = ok_hsa.hsa_memory_copy (dst, src, n);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[160];
      snprintf (what, sizeof what, "cannot copy %zu bytes %s (%p to %p)", n,
		dir, src, dst);
      ok_dev_call_error (dev, what, "hsa_memory_copy", s);
      return false;
    }
  return true;
}

bool
gcn_host2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "to the device");
}

bool
gcn_dev2host (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "from the device");
}

bool
gcn_dev2dev (struct ok_device *dev, void *dst, const void *src, size_t n)
{
  return gcn_copy (dev, dst, src, n, "within the device");
}

/* libgomp 16's memset: hsa_amd_memory_fill sets whole, aligned 32-bit
   words; the 1 to 3 bytes before the first aligned word and after the
   last are copied from the host (the core's generic path), as is all of
   a range without a whole word or a runtime without the extension.  */
bool
gcn_memset (struct ok_device *dev, void *ptr, int val, size_t n)
{
  size_t head = (4 - (uintptr_t) ptr % 4) % 4;
  if (ok_hsa.hsa_amd_memory_fill == NULL || n < head + 4)
    return ok_memset_by_copy (dev, ptr, val, n);
  char *words = (char *) ptr + head;
  size_t count = (n - head) / 4, tail = (n - head) % 4;
  uint32_t v8 = (unsigned char) val;
  hsa_status_t s = ok_hsa.hsa_amd_memory_fill (words, v8 * 0x01010101u,
						count);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[96];
      snprintf (what, sizeof what, "cannot set %zu bytes at %p", count * 4,
		(void *) words);
      ok_dev_call_error (dev, what, "hsa_amd_memory_fill", s);
      return false;
    }
  return (ok_memset_by_copy (dev, ptr, val, head)
	  && ok_memset_by_copy (dev, words + count * 4, val, tail));
}

/* libgomp 15's device UID: the agent's HSA_AMD_AGENT_INFO_UUID, as GCC's
   gcn plugin answers ("GPU-" and 16 hexadecimal digits).  An agent without
   one answers "GPU-XX", the same for every device: then none, and libgomp
   makes one of the device number, which is unique.  */
char *
gcn_get_uid (struct ok_device *d)
{
  char buf[64] = { 0 };
  hsa_status_t s = ok_hsa.hsa_agent_get_info (gcn_dev (d)->agent,
					      HSA_AMD_AGENT_INFO_UUID, buf);
  if (s != HSA_STATUS_SUCCESS)
    {
      ok_dev_call_error (d, "cannot read the agent's UUID",
			 "hsa_agent_get_info", s);
      return NULL;
    }
  buf[sizeof buf - 1] = 0;
  if (buf[0] == 0 || strcmp (buf, "GPU-XX") == 0)
    {
      OK_DEBUG ("%s: the agent has no UUID (\"%s\")", d->label, buf);
      return NULL;
    }
  char *uid = GOMP_PLUGIN_malloc (strlen (buf) + 1);
  strcpy (uid, buf);
  return uid;
}

/* The pitched pointer and offset of one side of a rectangle that begins
   at P: the base aligned down to 4 bytes, as the runtime wants it, and
   the rest in the x offset, which is in bytes.  */
static void
gcn_rect_side (char *p, size_t pitch, size_t height, hsa_pitched_ptr_t *pp,
	       hsa_dim3_t *off)
{
  uintptr_t skew = (uintptr_t) p % 4;
  pp->base = p - skew;
  pp->pitch = pitch;
  pp->slice = pitch * height;
  *off = (hsa_dim3_t) { (uint32_t) skew, 0, 0 };
}

/* Copy R between the host memory that HOST_AGENT (its address for the
   device) stands for and the device with one
   hsa_amd_memory_async_copy_rect, waiting for its signal.  -1 when the
   runtime refused it (nothing copied; the row loop can still do it).  */
static int
gcn_rect_locked (struct gcn_device *dev, const struct ok_rect *r,
		 char *host_agent)
{
  bool h2d = r->dir == OK_COPY_H2D;
  hsa_pitched_ptr_t dst, src;
  hsa_dim3_t dst_off, src_off;
  hsa_dim3_t range = { (uint32_t) r->width, (uint32_t) r->rows,
		       (uint32_t) r->planes };
  gcn_rect_side (h2d ? (char *) r->dst : host_agent, r->dst_pitch,
		 r->dst_height, &dst, &dst_off);
  gcn_rect_side (h2d ? host_agent : (char *) r->src, r->src_pitch,
		 r->src_height, &src, &src_off);
  hsa_signal_t signal;
  hsa_status_t s = ok_hsa.hsa_signal_create (1, 0, NULL, &signal);
  if (s != HSA_STATUS_SUCCESS)
    {
      OK_DEBUG ("%s: rectangular copy: hsa_signal_create failed (%#x):"
		" rows instead", dev->base.label, (unsigned) s);
      return -1;
    }
  s = ok_hsa.hsa_amd_memory_async_copy_rect (&dst, &dst_off, &src, &src_off,
					     &range, dev->agent,
					     h2d ? hsaHostToDevice
					     : hsaDeviceToHost, 0, NULL,
					     signal);
  int done = 1;
  if (s != HSA_STATUS_SUCCESS)
    {
      OK_DEBUG ("%s: hsa_amd_memory_async_copy_rect refused the rectangle"
		" (%#x): rows instead", dev->base.label, (unsigned) s);
      done = -1;
    }
  else
    {
      /* The copy engine's, not the program's: it ends.  A negative value
	 is its failure, as GCC's plugin reads it.  */
      hsa_signal_value_t v;
      while ((v = ok_hsa.hsa_signal_wait_scacquire
	      (signal, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
	       HSA_WAIT_STATE_BLOCKED)) > 0)
	;
      if (v < 0)
	{
	  OK_DEBUG ("%s: the rectangular copy failed (signal %lld): rows"
		    " instead", dev->base.label, (long long) v);
	  done = -1;
	}
    }
  ok_hsa.hsa_signal_destroy (signal);
  return done;
}

/* libgomp 14's rectangular copies, as GCC's plugin-gcn.c
   GOMP_OFFLOAD_memcpy2d and memcpy3d do them: between the host and the
   device only, with 4-byte aligned pitches, through the runtime's SDMA
   rectangle copy once the host memory it spans is locked.  Everything
   else, a runtime without the calls, host memory that cannot be locked
   or a rectangle the runtime refuses, is -1: the core copies row by row
   (GCC's libgomp does the same on its side).  */
int
gcn_copy_rect (struct ok_device *d, const struct ok_rect *r)
{
  struct gcn_device *dev = gcn_dev (d);
  if (ok_hsa.hsa_amd_memory_lock == NULL
      || ok_hsa.hsa_amd_memory_unlock == NULL
      || ok_hsa.hsa_amd_memory_async_copy_rect == NULL
      || r->dir == OK_COPY_D2D
      || r->dst_pitch % 4 != 0 || r->src_pitch % 4 != 0
      || r->width > UINT32_MAX || r->rows > UINT32_MAX
      || r->planes > UINT32_MAX)
    return -1;
  bool h2d = r->dir == OK_COPY_H2D;
  char *host = h2d ? (char *) r->src : r->dst;
  size_t pitch = h2d ? r->src_pitch : r->dst_pitch;
  size_t height = h2d ? r->src_height : r->dst_height;
  /* The bytes from the first copied to the last, which the core checked
     fit a size_t: only they are locked.  */
  size_t span = (r->planes - 1) * height * pitch + (r->rows - 1) * pitch
		+ r->width;
  void *agent_ptr = NULL;
  hsa_status_t s = ok_hsa.hsa_amd_memory_lock (host, span, &dev->agent, 1,
					       &agent_ptr);
  if (s != HSA_STATUS_SUCCESS)
    {
      OK_DEBUG ("%s: cannot lock %zu bytes of host memory at %p for a"
		" rectangular copy (%#x): rows instead", d->label, span,
		(void *) host, (unsigned) s);
      return -1;
    }
  int done = gcn_rect_locked (dev, r, agent_ptr);
  s = ok_hsa.hsa_amd_memory_unlock (host);
  if (s != HSA_STATUS_SUCCESS)
    {
      char what[96];
      snprintf (what, sizeof what, "cannot unlock host memory at %p after"
		" a rectangular copy", (void *) host);
      ok_dev_call_error (d, what, "hsa_amd_memory_unlock", s);
      return 0;
    }
  return done;
}
