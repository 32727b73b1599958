/* The images loaded on a device (see image-list.h).  */

#include <stddef.h>

#include "image-list.h"

void
ok_image_list_init (struct ok_image_list *l)
{
  pthread_mutex_init (&l->lock, NULL);
  l->head = NULL;
}

void
ok_image_list_destroy (struct ok_image_list *l)
{
  pthread_mutex_destroy (&l->lock);
}

void
ok_image_list_add (struct ok_image_list *l, struct ok_image_node *n)
{
  pthread_mutex_lock (&l->lock);
  n->next = l->head;
  l->head = n;
  pthread_mutex_unlock (&l->lock);
}

bool
ok_image_list_remove (struct ok_image_list *l, struct ok_image_node *n)
{
  pthread_mutex_lock (&l->lock);
  struct ok_image_node **link = &l->head;
  while (*link != NULL && *link != n)
    link = &(*link)->next;
  bool found = *link != NULL;
  if (found)
    *link = n->next;
  pthread_mutex_unlock (&l->lock);
  return found;
}

struct ok_image_node *
ok_image_list_take_all (struct ok_image_list *l)
{
  pthread_mutex_lock (&l->lock);
  struct ok_image_node *list = l->head;
  l->head = NULL;
  pthread_mutex_unlock (&l->lock);
  return list;
}
