/* Settings of the GPU backends read from the environment (see env.h).  */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "plugin-core.h"

/* Whether a malformed NAME was reported already: devices are initialised
   one by one, and each reads the settings; every variable is reported
   once.  */
static bool
env_first_report (const char *name)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static const char *said[8];
  bool first = true;
  pthread_mutex_lock (&lock);
  size_t i;
  for (i = 0; i < sizeof said / sizeof said[0] && said[i] != NULL; i++)
    if (strcmp (said[i], name) == 0)
      first = false;
  /* NAME is a string constant of the caller's.  */
  if (first && i < sizeof said / sizeof said[0])
    said[i] = name;
  pthread_mutex_unlock (&lock);
  return first;
}

size_t
ok_env_size (const char *name, size_t default_value)
{
  const char *env = getenv (name);
  if (env == NULL || *env == '\0')
    return default_value;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (env, &end, 10);
  /* A binary multiple: K, M, G or T (KiB, MiB, GiB, TiB).  */
  static const char units[] = "KMGT";
  const char *unit = *end != '\0' ? strchr (units, *end) : NULL;
  if (unit != NULL && end[1] == '\0')
    {
      unsigned shift = 10 * (unsigned) (unit - units + 1);
      end++;
      if (v > (SIZE_MAX / 2) >> shift)
	errno = ERANGE;
      v <<= shift;
    }
  if (errno != 0 || *end != '\0' || env[0] < '0' || env[0] > '9'
      || v > SIZE_MAX / 2)
    {
      if (env_first_report (name))
	ok_error ("%s=\"%s\" is not a size in bytes (a number, or one"
		  " followed by K, M, G or T); using %zu", name, env,
		  default_value);
      return default_value;
    }
  return (size_t) v;
}
