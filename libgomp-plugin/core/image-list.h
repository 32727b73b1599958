/* The images loaded on a device of a GPU backend: a list guarded by its
   own lock, since libgomp may load and unload images while other threads
   launch kernels.  */

#ifndef OFFLOADKIT_IMAGE_LIST_H
#define OFFLOADKIT_IMAGE_LIST_H

#include <pthread.h>
#include <stdbool.h>

/* The first member of a backend's image.  */
struct ok_image_node
{
  struct ok_image_node *next;
};

struct ok_image_list
{
  pthread_mutex_t lock;		/* Guards HEAD.  */
  struct ok_image_node *head;
};

void ok_image_list_init (struct ok_image_list *l);
void ok_image_list_destroy (struct ok_image_list *l);
void ok_image_list_add (struct ok_image_list *l, struct ok_image_node *n);
/* Take N off the list; false when it was not on it.  */
bool ok_image_list_remove (struct ok_image_list *l, struct ok_image_node *n);
/* Take every image off the list; the first of them, linked by NEXT.  */
struct ok_image_node *ok_image_list_take_all (struct ok_image_list *l);

#endif
