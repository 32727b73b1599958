// { dg-do run { target usm } }
// Unified shared memory in C++ (libgomp 15+): objects made with new and
// a std::vector's buffer, with pointers between them, used in regions
// with no map, on emulated devices that are devices.

#include <omp.h>
#include <vector>

#include "okt-assert.h"

#pragma omp requires unified_shared_memory

struct node
{
  int value;
  node *next;
};

int
main ()
{
  int n = omp_get_num_devices ();
  OKT_CHECK (n >= 1);
  node *head = nullptr;
  for (int i = 1; i <= 10; i++)
    head = new node { i, head };
  std::vector<double> v (1000, 1.5);
  double *data = v.data ();
  for (int d = 0; d < n; d++)
    {
      int sum = 0, dev = -1;
#pragma omp target device(d) map(tofrom: sum, dev)
      {
	dev = omp_get_device_num ();
	for (node *p = head; p != nullptr; p = p->next)
	  {
	    sum += p->value;
	    p->value *= 2;
	  }
	for (int i = 0; i < 1000; i++)
	  data[i] += i;
      }
      OKT_CHECK (dev == d);
      OKT_CHECK (sum == 55 << d);
      for (int i = 0; i < 1000; i++)
	OKT_CHECK (v[i] == 1.5 + (d + 1) * i);
    }
  int total = 0;
  for (node *p = head; p != nullptr; p = p->next)
    total += p->value;
  OKT_CHECK (total == 55 << n);
  while (head != nullptr)
    {
      node *next = head->next;
      delete head;
      head = next;
    }
  return 0;
}
