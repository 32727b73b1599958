/* Device memory of launches, kept for reuse (see scratch.h).  */

#include <stdlib.h>

#include "plugin-core.h"
#include "scratch.h"

/* Free blocks kept per device.  */
#define SCRATCH_KEEP 4

void
ok_scratch_init (struct ok_scratch *s,
		 void *(*alloc) (struct ok_device *, size_t, const char *),
		 bool (*free) (struct ok_device *, void *))
{
  s->alloc = alloc;
  s->free = free;
  pthread_mutex_init (&s->lock, NULL);
  s->free_blocks = NULL;
  s->spare = NULL;
}

/* Free the blocks of LIST and their records.  */
static bool
scratch_free_list (struct ok_device *dev, struct ok_scratch *s,
		   struct ok_scratch_block *list)
{
  bool ok = true;
  while (list != NULL)
    {
      struct ok_scratch_block *next = list->next;
      ok &= s->free (dev, list->ptr);
      free (list);
      list = next;
    }
  return ok;
}

bool
ok_scratch_release (struct ok_device *dev, struct ok_scratch *s)
{
  struct ok_scratch_block *spare = __atomic_exchange_n (&s->spare, NULL,
							__ATOMIC_ACQUIRE);
  pthread_mutex_lock (&s->lock);
  struct ok_scratch_block *list = s->free_blocks;
  s->free_blocks = NULL;
  pthread_mutex_unlock (&s->lock);
  bool ok = scratch_free_list (dev, s, spare);
  return scratch_free_list (dev, s, list) && ok;
}

/* Put B among the free blocks, dropping the smallest beyond
   SCRATCH_KEEP.  */
static void
scratch_keep (struct ok_device *dev, struct ok_scratch *s,
	      struct ok_scratch_block *b)
{
  pthread_mutex_lock (&s->lock);
  b->next = s->free_blocks;
  s->free_blocks = b;
  size_t n = 0;
  struct ok_scratch_block **smallest = NULL;
  for (struct ok_scratch_block **p = &s->free_blocks; *p != NULL;
       p = &(*p)->next, n++)
    if (smallest == NULL || (*p)->size < (*smallest)->size)
      smallest = p;
  struct ok_scratch_block *drop = NULL;
  if (n > SCRATCH_KEEP)
    {
      drop = *smallest;
      *smallest = drop->next;
      drop->next = NULL;
    }
  pthread_mutex_unlock (&s->lock);
  scratch_free_list (dev, s, drop);
}

bool
ok_scratch_fini (struct ok_device *dev, struct ok_scratch *s)
{
  bool ok = ok_scratch_release (dev, s);
  pthread_mutex_destroy (&s->lock);
  return ok;
}

struct ok_scratch_block *
ok_scratch_take (struct ok_device *dev, struct ok_scratch *s, size_t size,
		 const char *kernel)
{
  struct ok_scratch_block *spare = __atomic_exchange_n (&s->spare, NULL,
							__ATOMIC_ACQUIRE);
  if (spare != NULL && spare->size >= size)
    return spare;
  if (spare != NULL)
    scratch_keep (dev, s, spare);
  pthread_mutex_lock (&s->lock);
  struct ok_scratch_block **best = NULL;
  for (struct ok_scratch_block **p = &s->free_blocks; *p != NULL;
       p = &(*p)->next)
    if ((*p)->size >= size && (best == NULL || (*p)->size < (*best)->size))
      best = p;
  struct ok_scratch_block *b = NULL;
  if (best != NULL)
    {
      b = *best;
      *best = b->next;
    }
  pthread_mutex_unlock (&s->lock);
  if (b != NULL)
    return b;

  b = malloc (sizeof *b);
  if (b == NULL)
    {
      ok_dev_error (dev, "out of memory");
      return NULL;
    }
  b->next = NULL;
  b->size = size;
  b->ptr = s->alloc (dev, size, kernel);
  if (b->ptr == NULL)
    {
      free (b);
      return NULL;
    }
  return b;
}

void
ok_scratch_give (struct ok_device *dev, struct ok_scratch *s,
		 struct ok_scratch_block *b)
{
  struct ok_scratch_block *empty = NULL;
  b->next = NULL;
  if (!__atomic_compare_exchange_n (&s->spare, &empty, b, false,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    scratch_keep (dev, s, b);
}
