/* OpenACC's CUDA handles: libgomp's GOMP_OFFLOAD_openacc_cuda_* entry
   points, which back acc_get_current_cuda_device, _context,
   acc_get_cuda_stream and acc_set_cuda_stream.  Only the nvptx plugin has
   them, as only GCC's nvptx plugin does (libgomp takes all four or none
   of a plugin), so this file is in that plugin alone.  A backend without
   the hooks answers as libgomp does for a plugin without the entry
   points: no handle.  */

#include "core-internal.h"
#include "oacc-abi.h"

void *
GOMP_OFFLOAD_openacc_cuda_get_current_device (void)
{
  struct ok_device *dev = GOMP_PLUGIN_acc_thread ();
  if (dev == NULL || dev->backend->acc_cuda == NULL)
    return NULL;
  return dev->backend->acc_cuda->device (dev);
}

void *
GOMP_OFFLOAD_openacc_cuda_get_current_context (void)
{
  struct ok_device *dev = GOMP_PLUGIN_acc_thread ();
  if (dev == NULL || dev->backend->acc_cuda == NULL)
    return NULL;
  return dev->backend->acc_cuda->context (dev);
}

void *
GOMP_OFFLOAD_openacc_cuda_get_stream (struct goacc_asyncqueue *aq)
{
  struct ok_acc_queue *q = (struct ok_acc_queue *) aq;
  if (q == NULL || q->dev->backend->acc_cuda == NULL)
    return NULL;
  return q->dev->backend->acc_cuda->stream (q);
}

/* 1 when AQ's work goes to STREAM from now on, 0 when not (libgomp's
   acc_set_cuda_stream answers it).  */
int
GOMP_OFFLOAD_openacc_cuda_set_stream (struct goacc_asyncqueue *aq,
				      void *stream)
{
  struct ok_acc_queue *q = (struct ok_acc_queue *) aq;
  if (q == NULL || q->dev->backend->acc_cuda == NULL)
    return 0;
  return q->dev->backend->acc_cuda->set_stream (q, stream);
}
