/* The fixed code of every wrapper object mkoffload generates (wrapper.c).
   It is compiled when offloadkit is built (wrapper-runtime-unit.c, after
   the descriptor declarations of common/offload-desc.h and the C
   library's headers), as position-independent assembler text at -O1,
   which mkoffload embeds in each wrapper before the tables of the link it
   wraps: a link compiles only those (about a tenth of the time).  The
   project also compiles it with the tables' simplest form
   (wrapper-runtime-check.c).

   It goes into the program or shared library whose images it registers,
   whatever GCC (12 to 16) links it, so it names nothing of the project's
   and keeps to what C and glibc give.  Everything here is static, or
   hidden and weak: several wrappers (a program's and its shared
   libraries') live in one process, and each reference in an object binds
   to its own wrapper's definitions.  What the tables name of it
   (host_var_init_copy and the slot functions) they declare extern and
   hidden, and the assembler binds to the static definitions here.  */

/* ---- Registration.  -------------------------------------------------- */

/* Bounds of the host tables, from GCC's crtoffloadbegin/end.o.  */
extern const void *const __offload_func_table[]
  __attribute__ ((visibility ("hidden")));
extern const void *const __offload_funcs_end[]
  __attribute__ ((visibility ("hidden")));
extern const void *const __offload_var_table[]
  __attribute__ ((visibility ("hidden")));
extern const void *const __offload_vars_end[]
  __attribute__ ((visibility ("hidden")));

/* What GOMP_offload_register_ver is given: the form of registration of
   the GCC that links the program (which links its libgomp or a newer
   one, which accepts it; an older one stops with "Library too old for
   offload").  Defined by the tables of the link, static there: the
   assembler binds this file's references to it, both being in the
   wrapper's one assembler file.  */
extern const struct ok_wrapper_registration mko_registration
  __attribute__ ((visibility ("hidden")));

/* Weak: a program that calls none of libgomp's functions is linked
   without libgomp where libraries are linked as needed (Debian's
   default), and then registers no image.  */
extern void GOMP_offload_register_ver (unsigned, const void *, int,
				       const void *) __attribute__ ((weak));
extern void GOMP_offload_unregister_ver (unsigned, const void *, int,
					 const void *) __attribute__ ((weak));
extern int omp_get_initial_device (void) __attribute__ ((weak));

/* The size word of a `declare target link' variable in the host table.  */
#define MKO_LINK_BIT ((uintptr_t) 1 << (sizeof (uintptr_t) * 8 - 1))

/* Snapshot of the initial values of the host variables, so that an
   emulated device can start from them however main changes the host
   copies (the descriptor's host_var_init).  Link variables are skipped:
   their device copy is a pointer that libgomp sets.  Only emulated
   devices read it, and they exist only with OFFLOADKIT_EMULATE set
   (emu-setting.c), so without it no snapshot is taken: a large declare
   target array would otherwise cost its size and a copy at every
   start-up on real GPUs.  (A program that sets OFFLOADKIT_EMULATE itself
   after start-up gets emulated devices that start from the host values
   at image load, as when the snapshot cannot be allocated.)  */
static const unsigned char *host_var_init_copy __attribute__ ((used));

static void __attribute__ ((constructor))
mko_register (void)
{
  const uintptr_t *vars = (const uintptr_t *) __offload_var_table;
  const uintptr_t *end = (const uintptr_t *) __offload_vars_end;
  const uintptr_t *p;
  const char *emulate = getenv ("OFFLOADKIT_EMULATE");
  size_t total = 0;
  unsigned char *copy = 0;

  if (emulate && *emulate)
    {
      for (p = vars; p + 1 < end; p += 2)
	if (!(p[1] & MKO_LINK_BIT))
	  total += p[1];
      copy = (unsigned char *) malloc (total ? total : 1);
    }
  if (copy)
    {
      size_t off = 0;
      for (p = vars; p + 1 < end; p += 2)
	if (!(p[1] & MKO_LINK_BIT))
	  {
	    memcpy (copy + off, (const void *) p[0], p[1]);
	    off += p[1];
	  }
      host_var_init_copy = copy;
    }
  /* Without libgomp there is nothing to register with, and nothing
     would offload.  */
  if (GOMP_offload_register_ver)
    GOMP_offload_register_ver (mko_registration.version,
			       mko_registration.host_table,
			       mko_registration.device_type,
			       mko_registration.target_data);
}

static void __attribute__ ((destructor))
mko_unregister (void)
{
  if (GOMP_offload_unregister_ver)
    GOMP_offload_unregister_ver (mko_registration.version,
				 mko_registration.host_table,
				 mko_registration.device_type,
				 mko_registration.target_data);
  free ((void *) host_var_init_copy);
  host_var_init_copy = 0;
}

/* ---- What a program asks about the device it runs on.  -------------- */

/* An emulated device runs the host-fallback code of a region, where
   libgomp would answer "the initial device": the wrapper interposes
   omp_get_device_num and omp_is_initial_device (C and gfortran's names),
   and OpenACC's acc_on_device (C and gfortran's), for the code linked
   with it.  They answer from a thread-local "current emulated device"
   that the plugin sets, through the descriptor's device_num_slot, on the
   thread running a region, and give libgomp's host answers otherwise.

   Initial-exec: the general model would need __tls_get_addr from the
   dynamic linker, which program links do not name; these few bytes of
   static TLS fit in what glibc keeps for dlopened libraries.  */
static __thread int mko_device_num
  __attribute__ ((tls_model ("initial-exec"))) = -1;
static __thread int mko_acc_device
  __attribute__ ((tls_model ("initial-exec")));

/* The descriptor names these (the tables' part): used, though nothing
   here calls them.  */
static int * __attribute__ ((used))
mko_device_num_slot (void)
{
  return &mko_device_num;
}

static int * __attribute__ ((used))
mko_acc_device_slot (void)
{
  return &mko_acc_device;
}

/* Outside an emulated region, libgomp's host answers, which are fixed:
   the host is the initial device, and its device number is
   omp_get_initial_device ().  */
#define MKO_HOST_DEVICE_NUM \
  (omp_get_initial_device ? omp_get_initial_device () : 0)
#define MKO_ANSWER(name, type, device_answer, host_answer)		\
  type name (void) __attribute__ ((weak, visibility ("hidden")));	\
  type									\
  name (void)								\
  {									\
    return mko_device_num >= 0 ? (device_answer) : (host_answer);	\
  }

MKO_ANSWER (omp_is_initial_device, int, 0, 1)
MKO_ANSWER (omp_get_device_num, int, mko_device_num, MKO_HOST_DEVICE_NUM)
MKO_ANSWER (omp_is_initial_device_, int32_t, 0, 1)
MKO_ANSWER (omp_get_device_num_, int32_t, mko_device_num,
	    MKO_HOST_DEVICE_NUM)

/* OpenACC: acc_on_device (DEV) is what libgomp's and the device
   compilers' __builtin_acc_on_device answer: on the host, DEV is
   acc_device_host (2) or acc_device_none (0); on a device,
   acc_device_not_host (4) or the device's own type.  gfortran's
   acc_on_device calls acc_on_device_h_ with the type's address and takes
   a default logical.  */
int acc_on_device (int) __attribute__ ((weak, visibility ("hidden")));

int
acc_on_device (int dev)
{
  if (mko_device_num >= 0)
    return dev == 4 || dev == mko_acc_device;
  return dev == 2 || dev == 0;
}

int32_t acc_on_device_h_ (const int32_t *)
  __attribute__ ((weak, visibility ("hidden")));

int32_t
acc_on_device_h_ (const int32_t *dev)
{
  return acc_on_device (*dev);
}

/* ---- The threads of parallel regions in a region.  ------------------ */

/* They run the region's code too, and ask the same questions: on a GPU
   every thread of the kernel answers as the device.  Their threads are
   libgomp's, so the plugin cannot tell their wrappers' slots; the
   wrapper interposes the entry points host code starts a team with
   (libgomp 12 to 16's GOMP_parallel family, libgomp_g.h), and while the
   calling thread runs a region of an emulated device, each thread of the
   team sets the caller's answers on itself before it runs the team's
   function.  It keeps them after: tasks of the team may run on it in the
   team's final barrier, after the function, and libgomp's threads of a
   region's team serve only that region's thread, which ends with the
   region (and takes its pool of threads with it).  A thread that started
   a team so keeps passing its answers, "host" ones included (a
   reverse-offload region, which runs host code on it, reuses the same
   threads), to every team it starts later.  Elsewhere the entry points
   are libgomp's, at the cost of a thread-local test.  libgomp's own
   teams (GOMP_teams_reg, the host's teams construct) run on the calling
   thread.  */
static __thread int mko_team_marked
  __attribute__ ((tls_model ("initial-exec")));

/* HEAD first: libgomp's GOMP_parallel_reductions reads the address of
   the reductions from the first word of the data it is given.  */
struct mko_team
{
  void *head;
  void (*fn) (void *);
  void *data;
  int device_num, acc_device;
};

static void
mko_team_run (void *arg)
{
  const struct mko_team *t = (const struct mko_team *) arg;
  mko_device_num = t->device_num;
  mko_acc_device = t->acc_device;
  mko_team_marked |= t->device_num >= 0;
  t->fn (t->data);
}

/* Whether the calling thread's teams need their answers set, and so
   where: in *T.  */
static int
mko_team_wrap (struct mko_team *t, void (*fn) (void *), void *data)
{
  if (mko_device_num < 0 && !mko_team_marked)
    return 0;
  mko_team_marked = 1;
  t->head = 0;
  t->fn = fn;
  t->data = data;
  t->device_num = mko_device_num;
  t->acc_device = mko_acc_device;
  return 1;
}

/* After the next object in the lookup order (the program's own
   definitions are hidden, so not there), else anywhere: a library loaded
   before the one that has NAME has it after it.  */
static void *
mko_lookup (const char *name)
{
  void *fn = dlsym (RTLD_NEXT, name);
  return fn ? fn : dlsym (RTLD_DEFAULT, name);
}

/* libgomp's NAME, found once.  */
static void *
mko_libgomp (void **cache, const char *name)
{
  void *fn = __atomic_load_n (cache, __ATOMIC_ACQUIRE);
  if (fn)
    return fn;
  fn = mko_lookup (name);
  if (!fn)
    {
      fprintf (stderr, "offloadkit: libgomp has no %s\n", name);
      abort ();
    }
  __atomic_store_n (cache, fn, __ATOMIC_RELEASE);
  return fn;
}

/* Entry point NAME, returning RET, with PARAMS after its function and
   data (ARGS their names), through which the team's threads run;
   READS_HEAD: libgomp reads the first word of the data.  RET_KW is "return" or
   nothing, as RET is void or not.  */
#define MKO_TEAM_ENTRY(name, ret, ret_kw, reads_head, params, args)		\
  ret name (void (*) (void *), void *, params)				\
    __attribute__ ((weak, visibility ("hidden")));			\
  ret									\
  name (void (*fn) (void *), void *data, params)			\
  {									\
    static void *cache;							\
    ret (*lib) (void (*) (void *), void *, params)			\
      = (ret (*) (void (*) (void *), void *, params))			\
	mko_libgomp (&cache, #name);					\
    struct mko_team t;							\
    if (!mko_team_wrap (&t, fn, data))					\
      ret_kw lib (fn, data, args);					\
    else								\
      {									\
	if (reads_head)							\
	  t.head = *(void **) data;					\
	ret_kw lib (mko_team_run, &t, args);				\
      }									\
  }
/* A list of parameters as one macro argument.  */
#define MKO_P(...) __VA_ARGS__

MKO_TEAM_ENTRY (GOMP_parallel, void, , 0,
		MKO_P (unsigned num_threads, unsigned flags),
		MKO_P (num_threads, flags))
MKO_TEAM_ENTRY (GOMP_parallel_reductions, unsigned, return, 1,
		MKO_P (unsigned num_threads, unsigned flags),
		MKO_P (num_threads, flags))
MKO_TEAM_ENTRY (GOMP_parallel_sections, void, , 0,
		MKO_P (unsigned num_threads, unsigned count, unsigned flags),
		MKO_P (num_threads, count, flags))
#define MKO_LOOP_CHUNKED(kind)						\
  MKO_TEAM_ENTRY (GOMP_parallel_loop_##kind, void, , 0,			\
		  MKO_P (unsigned num_threads, long start, long end,	\
			 long incr, long chunk, unsigned flags),	\
		  MKO_P (num_threads, start, end, incr, chunk, flags))
#define MKO_LOOP_RUNTIME(kind)						\
  MKO_TEAM_ENTRY (GOMP_parallel_loop_##kind, void, , 0,			\
		  MKO_P (unsigned num_threads, long start, long end,	\
			 long incr, unsigned flags),			\
		  MKO_P (num_threads, start, end, incr, flags))
MKO_LOOP_CHUNKED (static)
MKO_LOOP_CHUNKED (dynamic)
MKO_LOOP_CHUNKED (guided)
MKO_LOOP_CHUNKED (nonmonotonic_dynamic)
MKO_LOOP_CHUNKED (nonmonotonic_guided)
MKO_LOOP_RUNTIME (runtime)
MKO_LOOP_RUNTIME (nonmonotonic_runtime)
MKO_LOOP_RUNTIME (maybe_nonmonotonic_runtime)

/* ---- Fortran STOP in a region.  ------------------------------------- */

/* gfortran's STOP and ERROR STOP statements call libgfortran, which ends
   the program.  Device code links the device's libgfortran instead,
   GCC's minimal one (libgfortran/runtime/minimal.c): it prints the
   statement's words on standard error, but neither the floating-point
   exceptions signalling nor the "Error termination" the host's adds, and
   then calls the device's exit, which on an nvidia device traps (GCC 12
   and 14 map exit to abort there, PR85463; GCC 16's exit traps) and on a
   radeon device ends the process with the status's low byte.  The
   wrapper interposes the four entry points: in an emulated region they
   print as the minimal libgfortran does and call the device exit
   function that the plugin sets in the thread-local mko_device_exit
   (descriptor version 4's device_exit_slot); elsewhere they call
   libgfortran's.  The signatures are libgfortran's (runtime/stop.c) in
   GCC 12 to 16.  */
static __thread ok_device_exit_fn *mko_device_exit
  __attribute__ ((tls_model ("initial-exec")));

static ok_device_exit_fn ** __attribute__ ((used))
mko_device_exit_slot (void)
{
  return &mko_device_exit;
}

/* As the minimal libgfortran's estr_write: straight to file descriptor
   2.  The results are looked at only because glibc asks for it: with
   standard error gone there is nothing left to do.  */
static void
mko_stop_words (const char *what, const char *string, size_t len)
{
  if (write (2, what, strlen (what)) < 0
      || (len > 0 && write (2, string, len) < 0)
      || write (2, "\n", 1) < 0)
    return;
}

/* The device's exit, or, where no libgfortran was found outside a
   region, the host's.  */
static void __attribute__ ((noreturn))
mko_stop_exit (int status)
{
  if (mko_device_num >= 0 && mko_device_exit)
    mko_device_exit (status);
  exit (status);
}

/* Outside a region: libgfortran's NAME with ARGS, which does not return
   when there is one.  */
#define MKO_STOP_HOST(name, params, args)				\
  if (mko_device_num < 0 || !mko_device_exit)				\
    {									\
      void (*lib) (params) = (void (*) (params)) mko_lookup (#name);	\
      if (lib)								\
	lib (args);							\
    }

void _gfortran_stop_numeric (int, _Bool)
  __attribute__ ((weak, visibility ("hidden"), noreturn));

void
_gfortran_stop_numeric (int code, _Bool quiet)
{
  MKO_STOP_HOST (_gfortran_stop_numeric, MKO_P (int, _Bool),
		 MKO_P (code, quiet))
  if (!quiet)
    {
      char num[16];
      snprintf (num, sizeof num, "%d", code);
      mko_stop_words ("STOP ", num, strlen (num));
    }
  mko_stop_exit (code);
}

void _gfortran_stop_string (const char *, size_t, _Bool)
  __attribute__ ((weak, visibility ("hidden"), noreturn));

void
_gfortran_stop_string (const char *string, size_t len, _Bool quiet)
{
  MKO_STOP_HOST (_gfortran_stop_string,
		 MKO_P (const char *, size_t, _Bool),
		 MKO_P (string, len, quiet))
  /* A blank STOP says nothing.  */
  if (!quiet && string)
    mko_stop_words ("STOP ", string, len);
  mko_stop_exit (0);
}

void _gfortran_error_stop_numeric (int, _Bool)
  __attribute__ ((weak, visibility ("hidden"), noreturn));

void
_gfortran_error_stop_numeric (int code, _Bool quiet)
{
  MKO_STOP_HOST (_gfortran_error_stop_numeric, MKO_P (int, _Bool),
		 MKO_P (code, quiet))
  if (!quiet)
    {
      char num[16];
      snprintf (num, sizeof num, "%d", code);
      mko_stop_words ("ERROR STOP ", num, strlen (num));
    }
  mko_stop_exit (code);
}

void _gfortran_error_stop_string (const char *, size_t, _Bool)
  __attribute__ ((weak, visibility ("hidden"), noreturn));

void
_gfortran_error_stop_string (const char *string, size_t len, _Bool quiet)
{
  MKO_STOP_HOST (_gfortran_error_stop_string,
		 MKO_P (const char *, size_t, _Bool),
		 MKO_P (string, len, quiet))
  if (!quiet)
    mko_stop_words ("ERROR STOP ", string, len);
  mko_stop_exit (1);
}
