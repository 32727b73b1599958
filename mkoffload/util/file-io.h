/* Reading whole files, and finishing written ones.  */

#ifndef OFFLOADKIT_FILE_IO_H
#define OFFLOADKIT_FILE_IO_H

#include <stddef.h>
#include <stdio.h>

/* Read PATH entirely into a malloc'd buffer with a NUL after the last byte
   (so text can be used as a string; binary data may hold NULs too).  Store
   the length in *LENP when LENP is not NULL.  Return NULL with errno set
   when the file cannot be opened or read; the caller reports it.  */
char *ok_read_file (const char *path, size_t *lenp);

/* The same for the open file descriptor FD, read to its end (a pipe, for
   instance); FD stays open.  */
char *ok_read_fd (int fd, size_t *lenp);

/* Close F, which was opened to write PATH, and check that everything
   written reached it; otherwise report one error naming PATH and return
   -1.  Set errno to 0 before the writes, so that a failed write can be
   told from a stale errno.  */
int ok_close_written (FILE *f, const char *path);

#endif
