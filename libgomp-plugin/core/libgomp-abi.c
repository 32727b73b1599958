/* Which libgomp loaded the plugin, so that every entry point answers in
   its ABI: GOMP_OFFLOAD_version must equal its GOMP_VERSION (1 in GCC 12,
   2 in 13, 3 from 14), get_num_devices and load_image take more
   arguments from 13 and 14, and load_image's trailing entry changed in
   13 (common/gomp-abi.h).

   libgomp says nothing of its version to a plugin, but each release adds
   a symbol-version node to libgomp.so.1 (libgomp/libgomp.map), which
   dlvsym can ask for: GOMP_5.1.1 (GCC 13), GOMP_5.1.2 (14), GOMP_5.1.3
   and GOMP_6.0 (15), GOMP_6.0.1 (16).  The libgomp asked is the object
   that defines the GOMP_PLUGIN_error the plugin is bound to (dladdr),
   not whichever one comes first in the global scope: a program may load
   libgomp privately, through a library dlopened RTLD_LOCAL.  (A callback
   the plugin calls anyway: taking the address of one it did not need
   would make the plugin unloadable by a program that lacks it.)

   The test harnesses stand in for libgomp in their own executable, which
   has no version nodes: an object that defines an int named
   offloadkit_standin_libgomp_gcc (no libgomp does) is taken to be the
   libgomp of that GCC version.  */

#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "libgomp-nodes.h"
#include "plugin-core.h"

static pthread_once_t abi_once = PTHREAD_ONCE_INIT;
static int abi_gcc = 12;
/* The libgomp's GOMP_PLUGIN_target_rev (13+), in the form of its version
   (ok_target_rev); NULL before 13.  Looked up, not linked: libgomp 12 has
   none, and a plugin that referenced it would not load there.  */
static void (*abi_target_rev) (void);

static void
abi_detect (void)
{
  Dl_info info;
  void *handle = NULL;
  const char *file = "?";
  if (dladdr ((void *) &GOMP_PLUGIN_error, &info) != 0
      && info.dli_fname != NULL)
    {
      file = info.dli_fname;
      handle = dlopen (info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }
  if (handle == NULL)
    /* GOMP_PLUGIN_error is the executable's (dladdr names it by argv[0],
       which dlopen cannot find): a test harness.  */
    handle = dlopen (NULL, RTLD_LAZY);
  if (handle == NULL)
    {
      OK_DEBUG ("cannot tell which libgomp loaded the plugin (%s);"
		" assuming GCC 12's", file);
      return;
    }

  const char *how = "no newer version node";
  const int *standin = dlsym (handle, "offloadkit_standin_libgomp_gcc");
  if (standin != NULL && *standin >= 12 && *standin <= 16)
    {
      abi_gcc = *standin;
      how = "a test stand-in";
    }
  else
    for (size_t i = 0;
	 i < sizeof ok_libgomp_nodes / sizeof ok_libgomp_nodes[0]; i++)
      if (dlvsym (handle, ok_libgomp_nodes[i].symbol,
		  ok_libgomp_nodes[i].node) != NULL)
	{
	  abi_gcc = ok_libgomp_nodes[i].gcc;
	  how = ok_libgomp_nodes[i].node;
	  break;
	}
  if (OK_GCC_HAS_REVERSE_OFFLOAD (abi_gcc))
    abi_target_rev = (void (*) (void)) dlsym (handle,
					       "GOMP_PLUGIN_target_rev");
  dlclose (handle);
  OK_DEBUG ("loaded by libgomp of GCC %d (%s in %s): plugin interface"
	    " version %d", abi_gcc, how, file,
	    OK_GOMP_VERSION_OF_GCC (abi_gcc));
}

int
ok_libgomp_gcc (void)
{
  pthread_once (&abi_once, abi_detect);
  return abi_gcc;
}

unsigned
ok_libgomp_version (void)
{
  return OK_GOMP_VERSION_OF_GCC (ok_libgomp_gcc ());
}

struct ok_trailing_var
ok_trailing_var (void)
{
  struct ok_trailing_var v;
  if (OK_GCC_HAS_ICV_BLOCK (ok_libgomp_gcc ()))
    {
      v.name = OK_GOMP_ICVS_VAR;
      v.size = OK_GOMP_ICVS_SIZE;
    }
  else
    {
      v.name = OK_GOMP_DEVICE_NUM_VAR;
      v.size = sizeof (int);
    }
  return v;
}

/* libgomp 13's GOMP_PLUGIN_target_rev copies the region's arguments and
   data through two callbacks of the plugin, with TOKEN; 14 and later copy
   through the plugin's own dev2host/host2dev entry points, given the
   device number.  */
typedef void (*abi_copy_fn) (void *, const void *, size_t, void *);
typedef void (*abi_target_rev_13) (uint64_t, uint64_t, uint64_t, uint64_t,
				   uint64_t, int, abi_copy_fn, abi_copy_fn,
				   void *);
typedef void (*abi_target_rev_14) (uint64_t, uint64_t, uint64_t, uint64_t,
				   uint64_t, int, void *);

static void
abi_rev_dev2host (void *dst, const void *src, size_t n, void *token)
{
  struct ok_device *dev = token;
  /* The callback cannot fail: after the backend's message, stop.  */
  if (n > 0 && !dev->backend->dev2host (dev, dst, src, n))
    GOMP_PLUGIN_fatal ("offloadkit-%s: the reverse-offload region cannot"
		       " go on", ok_plugin.name);
}

static void
abi_rev_host2dev (void *dst, const void *src, size_t n, void *token)
{
  struct ok_device *dev = token;
  if (n > 0 && !dev->backend->host2dev (dev, dst, src, n))
    GOMP_PLUGIN_fatal ("offloadkit-%s: the reverse-offload region cannot"
		       " go on", ok_plugin.name);
}

bool
ok_target_rev (struct ok_device *dev, uint64_t fn, uint64_t mapnum,
	       uint64_t devaddrs, uint64_t sizes, uint64_t kinds, int dev_num)
{
  int gcc = ok_libgomp_gcc ();
  if (abi_target_rev == NULL)
    {
      ok_dev_error (dev, "the device asked for a reverse-offload region,"
		    " but the libgomp that loaded the plugin (GCC %d's) has"
		    " no GOMP_PLUGIN_target_rev", gcc);
      return false;
    }
  if (OK_GCC_TARGET_REV_CALLBACKS (gcc))
    ((abi_target_rev_13) abi_target_rev) (fn, mapnum, devaddrs, sizes, kinds,
					  dev_num, abi_rev_dev2host,
					  abi_rev_host2dev, dev);
  else
    /* No asynchronous queue: libgomp copies synchronously.  */
    ((abi_target_rev_14) abi_target_rev) (fn, mapnum, devaddrs, sizes, kinds,
					  dev_num, NULL);
  return true;
}
