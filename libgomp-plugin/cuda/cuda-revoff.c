/* Reverse offload (device code of GCC 13+, libgomp 13+): a region
   `target device (ancestor: 1)' inside a target region runs on the host
   while the kernel waits.

   As GCC's plugin-nvptx.c does it: for a program that requires reverse
   offload, libgomp asks load_image for the device addresses of the
   image's functions in host-table order, which GCC's nvptx mkoffload puts
   in the device table $offload_func_table (0 for a function no ancestor
   region can name); libgomp maps a requested address back to the host
   function.  The device code (GOMP_target_ext in GCC's libgomp/config/
   nvptx/target.c) asks through a block of page-locked host memory whose
   address the loader stores in its __gomp_rev_offload_var: it writes the
   region's arguments, then the function's address (a release store to
   system scope), and spins until the host sets that back to 0.  The
   block's layout is GCC's struct rev_offload (libgomp/config/nvptx/
   libgomp-nvptx.h).  Device code without the variable has no
   GOMP_target_ext and cannot ask.

   While a kernel of an image with a block runs, whoever waits for it
   (the launching thread, or the completion thread for target nowait)
   polls the stream and the block instead of blocking in the driver, and
   runs each request through libgomp (ok_target_rev).  GCC's plugin keeps
   one block per device and gives it to the first image only; here every
   image has its own, since each module's device code serialises its
   requests with a lock of its own, and a kernel's waiter serves its own
   image's block.  Two launches of the same image may wait at once: the
   BUSY flag lets one of them serve a request.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda-internal.h"

#define CUDA_REV_TABLE_VAR "$offload_func_table"
#define CUDA_REV_VAR "__gomp_rev_offload_var"

/* GCC's struct rev_offload.  */
struct cuda_rev_request
{
  uint64_t fn;			/* Set last by the device, cleared by us.  */
  uint64_t mapnum;
  uint64_t addrs;
  uint64_t sizes;
  uint64_t kinds;
  int32_t dev_num;
};
_Static_assert (sizeof (struct cuda_rev_request) == 48,
		"GCC's struct rev_offload has 48 bytes");

struct cuda_rev_block
{
  /* Page-locked, mapped into the device's address space.  */
  struct cuda_rev_request *req;
  /* A waiter is serving the request.  */
  bool busy;
};

/* Polling: start at 1 us (GCC's plugin polls every microsecond) and back
   off to this while no request comes, so that a long kernel does not
   keep a host core busy.  */
#define CUDA_REV_PAUSE_MAX_NS 100000

/* The device's table of IMG's NUM_FUNCS reverse-offload functions at P
   (BYTES long), malloc'd into *TABLE; NULL when every entry is 0.  */
static bool
cuda_rev_read_table (struct cuda_device *dev, CUdeviceptr p, size_t bytes,
		     size_t num_funcs, uint64_t **table)
{
  *table = NULL;
  if (bytes != num_funcs * sizeof (uint64_t))
    {
      ok_dev_error (&dev->base, "cannot load offload image: its table of"
		    " reverse-offload functions (" CUDA_REV_TABLE_VAR ") has"
		    " %zu bytes, expected %zu for %zu functions", bytes,
		    num_funcs * sizeof (uint64_t), num_funcs);
      return false;
    }
  uint64_t *t = GOMP_PLUGIN_malloc (bytes);
  if (!cuda_dev2host (&dev->base, t, (const void *) (uintptr_t) p, bytes))
    {
      free (t);
      return false;
    }
  for (size_t i = 0; i < num_funcs; i++)
    if (t[i] != 0)
      {
	*table = t;
	return true;
      }
  free (t);
  return true;
}

/* Give IMG's device code a request block through its variable at VAR
   (BYTES long).  */
static bool
cuda_rev_block_new (struct cuda_device *dev, struct cuda_image *img,
		    CUdeviceptr var, size_t bytes)
{
  if (bytes != sizeof (uint64_t))
    {
      ok_dev_error (&dev->base, "cannot load offload image: variable '"
		    CUDA_REV_VAR "' has %zu bytes on the device, expected a"
		    " pointer (8)", bytes);
      return false;
    }
  struct cuda_rev_block *b = calloc (1, sizeof *b);
  if (b == NULL)
    {
      ok_dev_error (&dev->base, "out of memory");
      return false;
    }
  void *req = NULL;
  CUresult r = ok_cuda.cuMemHostAlloc (&req, sizeof *b->req,
				       CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_SUCCESS)
    {
      free (b);
      ok_dev_call_error (&dev->base, "cannot allocate the block for"
			 " reverse-offload requests", "cuMemHostAlloc", r);
      return false;
    }
  memset (req, 0, sizeof *b->req);
  b->req = req;
  /* With unified addressing (every 64-bit platform CUDA supports) mapped
     page-locked memory has the same address on the device, which GCC's
     plugin relies on as well.  */
  uint64_t addr = (uint64_t) (uintptr_t) req;
  if (!cuda_host2dev (&dev->base, (void *) (uintptr_t) var, &addr,
		      sizeof addr))
    {
      ok_cuda.cuMemFreeHost (req);
      free (b);
      return false;
    }
  img->rev = b;
  OK_DEBUG ("%s: reverse-offload requests at %p", dev->base.label, req);
  return true;
}

bool
cuda_rev_load (struct cuda_device *dev, struct cuda_image *img,
	       size_t num_funcs, uint64_t **rev_fns)
{
  *rev_fns = NULL;
  if (num_funcs == 0)
    return true;
  CUdeviceptr tab = 0, var = 0;
  size_t tab_bytes = 0, var_bytes = 0;
  bool has_tab, has_var;
  if (!cuda_module_global (dev, img->module, CUDA_REV_TABLE_VAR, &tab,
			   &tab_bytes, &has_tab)
      || !cuda_module_global (dev, img->module, CUDA_REV_VAR, &var, &var_bytes,
			      &has_var))
    return false;
  if (!has_var)
    {
      /* No GOMP_target_ext in the device code: nothing can be asked for,
	 so libgomp needs no table (GCC's plugin gives none either).  */
      OK_DEBUG ("%s: no " CUDA_REV_VAR ": no reverse offload from this"
		" image", dev->base.label);
      return true;
    }
  if (!has_tab)
    {
      /* Its device code could ask for a region that libgomp cannot find;
	 GCC's plugin stops the program here.  */
      ok_dev_error (&dev->base, "cannot load offload image for a program"
		    " that requires reverse offload: its device code can ask"
		    " for reverse-offload regions (" CUDA_REV_VAR "), but it"
		    " has no table of their functions (" CUDA_REV_TABLE_VAR
		    ")");
      return false;
    }
  uint64_t *table;
  if (!cuda_rev_read_table (dev, tab, tab_bytes, num_funcs, &table))
    return false;
  if (table == NULL)
    return true;
  if (!cuda_rev_block_new (dev, img, var, var_bytes))
    {
      free (table);
      return false;
    }
  *rev_fns = table;
  return true;
}

bool
cuda_rev_unload (struct cuda_device *dev, struct cuda_image *img)
{
  struct cuda_rev_block *b = img->rev;
  if (b == NULL)
    return true;
  img->rev = NULL;
  CUresult r = ok_cuda.cuMemFreeHost (b->req);
  free (b);
  return ok_dev_teardown_ok (&dev->base, r, "free the block for"
			     " reverse-offload requests", "cuMemFreeHost");
}

/* Serve the request in B, if there is one and no other waiter serves it:
   1 when one was served, 0 when there was none to serve, -1 after a
   reported failure.  */
static int
cuda_rev_serve (struct cuda_device *dev, struct cuda_rev_block *b)
{
  struct cuda_rev_request *q = b->req;
  if (__atomic_load_n (&q->fn, __ATOMIC_ACQUIRE) == 0
      || __atomic_exchange_n (&b->busy, true, __ATOMIC_ACQUIRE))
    return 0;
  int served = 0;
  /* Again: another waiter may have served it meanwhile.  The acquire
     load orders the reads of the arguments after it.  */
  uint64_t fn = __atomic_load_n (&q->fn, __ATOMIC_ACQUIRE);
  if (fn != 0)
    {
      OK_DEBUG ("%s: reverse-offload request: function %#llx, %llu"
		" mappings", dev->base.label, (unsigned long long) fn,
		(unsigned long long) q->mapnum);
      served = (ok_target_rev (&dev->base, fn, q->mapnum, q->addrs, q->sizes,
			       q->kinds, q->dev_num) ? 1 : -1);
      /* The kernel goes on.  */
      if (served > 0)
	__atomic_store_n (&q->fn, 0, __ATOMIC_RELEASE);
    }
  __atomic_store_n (&b->busy, false, __ATOMIC_RELEASE);
  return served;
}

bool
cuda_rev_wait (struct cuda_device *dev, struct cuda_image *img,
	       CUstream stream, CUresult *r)
{
  long pause_ns = 1000;
  for (;;)
    {
      *r = ok_cuda.cuStreamQuery (stream);
      if (*r != CUDA_ERROR_NOT_READY)
	return true;
      int served = cuda_rev_serve (dev, img->rev);
      if (served < 0)
	return false;
      if (served > 0)
	pause_ns = 1000;
      else if (pause_ns < CUDA_REV_PAUSE_MAX_NS)
	pause_ns *= 2;
      struct timespec ts = { 0, pause_ns };
      nanosleep (&ts, NULL);
    }
}
