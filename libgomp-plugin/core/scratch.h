/* Device memory that a launch holds while it runs and gives back when it
   has finished: the CUDA backend's soft stacks, the HSA backend's team
   arenas.  Allocating it for every launch would cost each launch a driver
   call that may synchronise the device, so each device keeps the blocks
   that launches gave back, and a launch takes the smallest one that is
   large enough.  A few free blocks are kept at most, the smallest dropped
   first: the largest serve any launch.  The block given back last waits
   in a slot of its own, taken and filled without the lock: a program's
   launches one after another take and give it back again and again.
   Thread-safe.  */

#ifndef OFFLOADKIT_SCRATCH_H
#define OFFLOADKIT_SCRATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

struct ok_scratch_block
{
  struct ok_scratch_block *next;
  void *ptr;			/* Device memory.  */
  size_t size;
};

struct ok_scratch
{
  /* Device memory of SIZE bytes for a launch of KERNEL (a name, for
     messages), or NULL after a report; and back.  */
  void *(*alloc) (struct ok_device *dev, size_t size, const char *kernel);
  bool (*free) (struct ok_device *dev, void *ptr);
  pthread_mutex_t lock;		/* Guards FREE_BLOCKS.  */
  struct ok_scratch_block *free_blocks;
  struct ok_scratch_block *spare;	/* Atomic; the slot.  */
};

void ok_scratch_init (struct ok_scratch *s,
		      void *(*alloc) (struct ok_device *, size_t,
				      const char *),
		      bool (*free) (struct ok_device *, void *));
/* Free every kept block (at finalisation; and, for a backend whose
   driver says when memory runs short, before it tries again); false if
   freeing one failed.  */
bool ok_scratch_release (struct ok_device *dev, struct ok_scratch *s);
/* ok_scratch_release, then the lock.  */
bool ok_scratch_fini (struct ok_device *dev, struct ok_scratch *s);

/* A block of at least SIZE bytes for a launch of KERNEL on DEV; NULL
   after a report.  */
struct ok_scratch_block *ok_scratch_take (struct ok_device *dev,
					  struct ok_scratch *s, size_t size,
					  const char *kernel);
/* Give B back when the launch that took it has finished.  */
void ok_scratch_give (struct ok_device *dev, struct ok_scratch *s,
		      struct ok_scratch_block *b);

#endif /* OFFLOADKIT_SCRATCH_H */
