/* Settings of the GPU backends read from the environment.  */

#ifndef OFFLOADKIT_ENV_H
#define OFFLOADKIT_ENV_H

#include <stddef.h>

/* A size in bytes from environment variable NAME (a string constant): a
   decimal number, or one followed by K, M, G or T (binary multiples);
   DEFAULT_VALUE when it is unset or empty; a malformed value is reported
   once per variable and the default used.  */
size_t ok_env_size (const char *name, size_t default_value);

#endif
