/* Reading a whole file into memory.  */

#ifndef OFFLOADKIT_READ_FILE_H
#define OFFLOADKIT_READ_FILE_H

#include <stddef.h>

/* Read PATH entirely into a malloc'd buffer with a NUL after the last byte
   (so text can be used as a string; binary data may hold NULs too).  Store
   the length in *LENP when LENP is not NULL.  Return NULL with errno set
   when the file cannot be opened or read; the caller reports it.  */
char *ok_read_file (const char *path, size_t *lenp);

#endif
