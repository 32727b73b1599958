/* Reading whole files, and finishing written ones.  */

#ifndef OFFLOADKIT_FILE_IO_H
#define OFFLOADKIT_FILE_IO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* Open PATH for reading, provided it is a regular file.  Anything else is
   refused without being opened: the open of a FIFO waits for a writer,
   a read of a terminal or /dev/stdin waits for input, a device may never
   end.  Return the descriptor, with PATH's status in *ST; or -1 when PATH
   cannot be opened (it does not exist, permissions...), -2 when it is no
   regular file, with errno set and the reason in *WHY, for a message
   "cannot read 'PATH': WHY" ("No such file or directory", "Is a
   directory", "it is a FIFO, not a regular file"...).  */
int ok_open_regular (const char *path, struct stat *st, const char **why);

/* Read the regular file PATH (see ok_open_regular) entirely into a
   malloc'd buffer with a NUL after the last byte (so text can be used as
   a string; binary data may hold NULs too).  Store the length in *LENP
   when LENP is not NULL.  Return NULL when the file cannot be opened or
   read, with errno set and the reason in *WHY when WHY is not NULL; the
   caller reports it.  */
char *ok_read_file (const char *path, size_t *lenp, const char **why);

/* The same for the open file descriptor FD, read to its end (a pipe, for
   instance); FD stays open.  */
char *ok_read_fd (int fd, size_t *lenp);

/* Close F, which was opened to write PATH, and check that everything
   written reached it; otherwise report one error naming PATH and return
   -1.  Set errno to 0 before the writes, so that a failed write can be
   told from a stale errno.  */
int ok_close_written (FILE *f, const char *path);

/* Write LEN bytes of DATA to PATH.  Return 0, or -1 after reporting
   one error.  */
int ok_write_file (const char *path, const void *data, size_t len);

#endif
