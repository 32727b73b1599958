/* Settings of the GPU backends read from the environment (see env.h).  */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "env.h"
#include "plugin-core.h"

size_t
ok_env_size (const char *name, size_t default_value)
{
  const char *env = getenv (name);
  if (env == NULL || *env == '\0')
    return default_value;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (env, &end, 10);
  if (errno != 0 || *end != '\0' || env[0] < '0' || env[0] > '9'
      || v > SIZE_MAX / 2)
    {
      /* Devices are initialised one by one: say it once.  */
      static int said;
      if (!__atomic_exchange_n (&said, 1, __ATOMIC_RELAXED))
	GOMP_PLUGIN_error ("offloadkit-%s: %s=\"%s\" is not a size in bytes;"
			   " using %zu", ok_plugin.name, name, env,
			   default_value);
      return default_value;
    }
  return (size_t) v;
}
