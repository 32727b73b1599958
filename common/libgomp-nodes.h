/* Telling libgomp versions apart: each GCC from 13 adds a symbol-version
   node to libgomp.so.1, and a symbol in it.  Newest first; a libgomp
   with none of them is GCC 12's.  Shared by the plugins (which libgomp
   loaded them: libgomp-plugin/core/libgomp-abi.c) and offloadkit-info
   (which libgomp a program gets).  */

#ifndef OFFLOADKIT_LIBGOMP_NODES_H
#define OFFLOADKIT_LIBGOMP_NODES_H

static const struct
{
  int gcc;
  const char *symbol, *node;
} ok_libgomp_nodes[] = {
  { 16, "omp_target_memset", "GOMP_6.0.1" },
  { 15, "omp_get_device_from_uid", "GOMP_6.0" },
  { 15, "GOMP_interop", "GOMP_5.1.3" },
  { 14, "GOMP_add_alloc", "GOMP_5.1.2" },
  { 13, "GOMP_taskwait_depend_nowait", "GOMP_5.1.1" },
};

#endif /* OFFLOADKIT_LIBGOMP_NODES_H */
