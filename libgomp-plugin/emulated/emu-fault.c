/* Faults of a region's code on an emulated device.

   On a GPU a kernel that touches memory it has no right to, or executes
   an illegal instruction, fails: the plugin that waits for it reports the
   driver's words and libgomp ends the program.  An emulated device runs
   the region's host-fallback code on host threads, where the same mistake
   raises SIGSEGV, SIGBUS, SIGILL or SIGFPE and the process dies with no
   word of which region did it.  So the plugin catches those four signals
   when they are raised by the hardware (si_code > 0) on a thread that
   runs a region's code: the region's own thread, or a thread of a
   parallel region in it.  Those threads are known by the wrappers'
   "current device" slots (offload-desc.h's device_num_slot, which the
   region's thread and, through the wrapper's interposed GOMP_parallel
   family, the threads of its teams set), read through the slot functions
   of every loaded image; the device's number leads to the running region
   (EMU_FAULT_ACTIVE).  A reverse-offload region's host code runs with
   the slots cleared, so its faults are the host's.

   A fault anywhere else is the host program's: the previous disposition
   is put back and, for a handler of the program's, called; for the
   default one the faulting instruction runs again and the process ends
   as it would have without the plugin.

   The report, once per process: the words of GCC's plugin for the GPU
   the device models (emu-gpu-*.c), then offloadkit's line naming the
   device, the kernel, the signal and the address, with a hint when no
   device memory is there.  Then the program ends as libgomp ends it after
   such a kernel.  When the region's thread faults outside any parallel
   region of its own, it leaves the region (as the device exit does,
   emu-run.c) and the report and the end come from the thread that waits
   for the region, outside the signal handler.  A fault on a thread of a
   parallel region cannot leave it (the team's other threads wait for it
   in libgomp): the handler reports and ends the process itself, with
   async-signal-safe calls only, so output the program buffered and did
   not flush is lost, as when a process is killed.  */

#define _GNU_SOURCE 1

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu-internal.h"

/* The signals a region's mistakes raise.  */
static const int emu_fault_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
#define EMU_FAULT_NSIGS \
  (sizeof emu_fault_signals / sizeof emu_fault_signals[0])

/* The dispositions before ours, by index in EMU_FAULT_SIGNALS.  */
static struct sigaction emu_fault_old[EMU_FAULT_NSIGS];

/* The running region of each device, by libgomp's number of the
   device.  */
#define EMU_FAULT_MAX_DEVICES 256
static struct emu_region *emu_fault_active[EMU_FAULT_MAX_DEVICES];

/* The slot functions of the loaded images' wrappers, each with the
   number of images that have it.  */
#define EMU_FAULT_MAX_SLOTS 64
static int *(*emu_fault_slots[EMU_FAULT_MAX_SLOTS]) (void);
static unsigned emu_fault_slot_refs[EMU_FAULT_MAX_SLOTS];
static pthread_mutex_t emu_fault_slot_lock = PTHREAD_MUTEX_INITIALIZER;

/* Set by the first fault reported: later ones wait for the end.  */
static int emu_fault_said;

/* ---- Messages, async-signal-safe.  ---------------------------------- */

void
emu_msg_str (struct emu_msg *m, const char *s)
{
  while (*s != '\0' && m->len < sizeof m->buf)
    m->buf[m->len++] = *s++;
}

void
emu_msg_hex (struct emu_msg *m, uintptr_t v)
{
  char digits[2 + 2 * sizeof v + 1];
  char *p = digits + sizeof digits - 1;
  *p = '\0';
  do
    {
      *--p = "0123456789abcdef"[v & 0xf];
      v >>= 4;
    }
  while (v != 0);
  *--p = 'x';
  *--p = '0';
  emu_msg_str (m, p);
}

void
emu_msg_dec (struct emu_msg *m, long v)
{
  char digits[24];
  char *p = digits + sizeof digits - 1;
  unsigned long u = v < 0 ? -(unsigned long) v : (unsigned long) v;
  *p = '\0';
  do
    {
      *--p = (char) ('0' + u % 10);
      u /= 10;
    }
  while (u != 0);
  if (v < 0)
    *--p = '-';
  emu_msg_str (m, p);
}

/* Write M to standard error as libgomp writes an error (gomp_verror):
   "\nlibgomp: ", the text, a newline.  LIBGOMP false: the text alone.  */
void
emu_msg_say (struct emu_msg *m, bool libgomp)
{
  static const char prefix[] = "\nlibgomp: ";
  if ((libgomp && write (2, prefix, sizeof prefix - 1) < 0)
      || write (2, m->buf, m->len) < 0 || write (2, "\n", 1) < 0)
    return;			/* Nothing more to be done.  */
}

/* ---- Which region a thread runs.  ----------------------------------- */

void
emu_fault_watch (int *(*slot) (void))
{
  if (slot == NULL)
    return;
  pthread_mutex_lock (&emu_fault_slot_lock);
  int free_at = -1;
  for (int i = 0; i < EMU_FAULT_MAX_SLOTS; i++)
    if (emu_fault_slots[i] == slot)
      {
	emu_fault_slot_refs[i]++;
	pthread_mutex_unlock (&emu_fault_slot_lock);
	return;
      }
    else if (emu_fault_slots[i] == NULL && free_at < 0)
      free_at = i;
  if (free_at >= 0)
    {
      emu_fault_slot_refs[free_at] = 1;
      __atomic_store_n (&emu_fault_slots[free_at], slot, __ATOMIC_RELEASE);
    }
  else
    OK_DEBUG ("more than %d wrappers: faults in regions of some are the"
	      " host's", EMU_FAULT_MAX_SLOTS);
  pthread_mutex_unlock (&emu_fault_slot_lock);
}

void
emu_fault_unwatch (int *(*slot) (void))
{
  if (slot == NULL)
    return;
  pthread_mutex_lock (&emu_fault_slot_lock);
  for (int i = 0; i < EMU_FAULT_MAX_SLOTS; i++)
    if (emu_fault_slots[i] == slot && --emu_fault_slot_refs[i] == 0)
      __atomic_store_n (&emu_fault_slots[i], NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&emu_fault_slot_lock);
}

/* The region's thread takes the signal on a stack of its own, so that a
   region that overflows its stack is caught too.  */
static size_t
emu_fault_altstack_size (void)
{
  size_t size = 64 * 1024;
#ifdef _SC_SIGSTKSZ
  long min = sysconf (_SC_SIGSTKSZ);
  if (min > 0 && (size_t) min * 4 > size)
    size = (size_t) min * 4;
#endif
  return size;
}

/* The calling thread's stack's lowest address, or 0.  */
static uintptr_t
emu_fault_stack_lo (void)
{
  uintptr_t lo_addr = 0;
  pthread_attr_t attr;
  if (pthread_getattr_np (pthread_self (), &attr) == 0)
    {
      void *lo;
      size_t len;
      if (pthread_attr_getstack (&attr, &lo, &len) == 0)
	lo_addr = (uintptr_t) lo;
      pthread_attr_destroy (&attr);
    }
  return lo_addr;
}

/* A new signal stack for the calling thread, or NULL.  */
static void *
emu_fault_altstack_new (void)
{
  size_t size = emu_fault_altstack_size ();
  stack_t ss = { .ss_sp = malloc (size), .ss_flags = 0, .ss_size = size };
  if (ss.ss_sp != NULL && sigaltstack (&ss, NULL) == 0)
    return ss.ss_sp;
  free (ss.ss_sp);
  return NULL;
}

static void
emu_fault_altstack_free (void *altstack)
{
  if (altstack == NULL)
    return;
  stack_t ss = { .ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0 };
  sigaltstack (&ss, NULL);
  free (altstack);
}

/* A thread that runs one region after another (a device's worker) sets
   its signal stack up once: these are its, while it lasts.  */
static __thread bool emu_thread_ready;
static __thread void *emu_thread_altstack;
static __thread uintptr_t emu_thread_stack_lo;

void *
emu_fault_thread_begin (void)
{
  emu_thread_stack_lo = emu_fault_stack_lo ();
  emu_thread_altstack = emu_fault_altstack_new ();
  emu_thread_ready = true;
  return emu_thread_altstack;
}

void
emu_fault_thread_end (void)
{
  emu_fault_altstack_free (emu_thread_altstack);
  emu_thread_altstack = NULL;
  emu_thread_ready = false;
}

void
emu_fault_enter (struct emu_region *region, int gomp_num)
{
  region->gomp_num = gomp_num;
  region->thread = pthread_self ();
  if (emu_thread_ready)
    {
      region->altstack = NULL;	/* The thread's, not the region's.  */
      region->stack_lo = emu_thread_stack_lo;
    }
  else
    {
      region->stack_lo = emu_fault_stack_lo ();
      region->altstack = emu_fault_altstack_new ();
    }
  if (gomp_num >= 0 && gomp_num < EMU_FAULT_MAX_DEVICES)
    __atomic_store_n (&emu_fault_active[gomp_num], region, __ATOMIC_RELEASE);
}

void
emu_fault_leave (struct emu_region *region)
{
  int n = region->gomp_num;
  if (n >= 0 && n < EMU_FAULT_MAX_DEVICES)
    __atomic_store_n (&emu_fault_active[n], NULL, __ATOMIC_RELEASE);
  emu_fault_altstack_free (region->altstack);
}

/* The region the calling thread runs the code of, or NULL.  */
static struct emu_region *
emu_fault_region (void)
{
  for (int i = 0; i < EMU_FAULT_MAX_SLOTS; i++)
    {
      int *(*slot) (void) = __atomic_load_n (&emu_fault_slots[i],
					     __ATOMIC_ACQUIRE);
      int *num = slot != NULL ? slot () : NULL;
      int n = num != NULL ? *num : -1;
      if (n >= 0 && n < EMU_FAULT_MAX_DEVICES)
	return __atomic_load_n (&emu_fault_active[n], __ATOMIC_ACQUIRE);
    }
  return NULL;
}

/* ---- The report.  ---------------------------------------------------- */

static const char *
emu_fault_signame (int sig)
{
  switch (sig)
    {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    }
  return "a signal";
}

/* What F is, in a few words.  */
static const char *
emu_fault_what (const struct emu_fault *f)
{
  switch (f->sig)
    {
    case SIGSEGV:
      return (f->code == SEGV_ACCERR ? "a memory access not allowed"
	      : "a memory access where nothing is mapped");
    case SIGBUS: return "a bus error";
    case SIGILL: return "an illegal instruction";
    case SIGFPE:
      return (f->code == FPE_INTDIV ? "an integer division by zero"
	      : f->code == FPE_INTOVF ? "an integer overflow"
	      : "an arithmetic exception");
    }
  return "a fault";
}

/* Whether ADDR lies in one of DEV's blocks.  Read without the lock: a
   block that comes or goes meanwhile only changes the hint.  */
static bool
emu_fault_in_device (struct emu_device *dev, uintptr_t addr)
{
  const struct emu_block *blocks = __atomic_load_n (&dev->blocks,
						   __ATOMIC_ACQUIRE);
  size_t n = __atomic_load_n (&dev->num_blocks, __ATOMIC_ACQUIRE);
  for (size_t i = 0; blocks != NULL && i < n; i++)
    if (addr >= (uintptr_t) blocks[i].start
	&& addr - (uintptr_t) blocks[i].start < blocks[i].size)
      return true;
  return false;
}

void
emu_fault_report (struct emu_device *dev, const struct emu_job *job,
		  const char *kernel)
{
  const struct emu_fault *f = &job->fault;
  struct emu_msg m = { .len = 0 };

  /* What GCC's plugin for the modelled GPU says, first.  */
  emu_gpu_fault_words (dev, f, job->openacc, &m);

  m.len = 0;
  emu_msg_str (&m, "offloadkit-");
  emu_msg_str (&m, ok_plugin.name);
  emu_msg_str (&m, ": ");
  emu_msg_str (&m, dev->base.label);
  emu_msg_str (&m, ": kernel '");
  if (kernel != NULL)
    emu_msg_str (&m, kernel);
  else
    emu_msg_hex (&m, (uintptr_t) job->fn);
  emu_msg_str (&m, "' faulted");
  if (f->in_team)
    emu_msg_str (&m, " on a thread of a parallel region in it");
  emu_msg_str (&m, ": ");
  emu_msg_str (&m, emu_fault_what (f));
  emu_msg_str (&m, " (");
  emu_msg_str (&m, emu_fault_signame (f->sig));
  emu_msg_str (&m, ") at ");
  emu_msg_hex (&m, f->addr);
  if (f->sig == SIGSEGV || f->sig == SIGBUS)
    {
      if (f->stack)
	emu_msg_str (&m, ", just below the region's stack: the region's"
		     " stack overflowed (too deep a recursion, or too large"
		     " local arrays?)");
      else if (f->addr < 65536)
	emu_msg_str (&m, ", near NULL: a pointer the region uses is NULL on"
		     " the device (was its data mapped?)");
      else if (!emu_fault_in_device (dev, f->addr))
	emu_msg_str (&m, ", which is no device memory: a host address that"
		     " no mapping covers (was the data mapped, or freed?)");
    }
  else if (f->sig == SIGFPE)
    emu_msg_str (&m, "; a GPU does not trap there, its result would be"
		 " undefined");
  emu_msg_say (&m, true);
}

/* ---- The handler.  --------------------------------------------------- */

static int
emu_fault_index (int sig)
{
  for (size_t i = 0; i < EMU_FAULT_NSIGS; i++)
    if (emu_fault_signals[i] == sig)
      return (int) i;
  return -1;
}

/* Not the region's: the disposition before ours gets it.  */
static void
emu_fault_pass (int sig, siginfo_t *info, void *uc)
{
  int i = emu_fault_index (sig);
  if (i < 0)
    return;
  struct sigaction old = emu_fault_old[i];
  if (old.sa_handler == SIG_IGN && info->si_code <= 0)
    /* Sent with kill, to a program that ignores it: ignored.  */
    return;
  if (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)
    {
      /* The faulting instruction runs again and ends the process as it
	 would have (the kernel does not let a fault be ignored); a
	 signal sent with kill is delivered again.  */
      struct sigaction dfl;
      memset (&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigemptyset (&dfl.sa_mask);
      sigaction (sig, &dfl, NULL);
      if (info->si_code <= 0)
	raise (sig);
      return;
    }
  if (old.sa_flags & SA_SIGINFO)
    old.sa_sigaction (sig, info, uc);
  else
    old.sa_handler (sig);
}

static void
emu_fault_handler (int sig, siginfo_t *info, void *uc)
{
  int saved_errno = errno;
  struct emu_region *region = info->si_code > 0 ? emu_fault_region () : NULL;
  if (region == NULL)
    {
      emu_fault_pass (sig, info, uc);
      errno = saved_errno;
      return;
    }
  if (__atomic_exchange_n (&emu_fault_said, 1, __ATOMIC_ACQ_REL) != 0)
    /* Another thread's fault is being reported: the end comes.  */
    for (;;)
      pause ();

  struct emu_job *job = region->job;
  job->fault.sig = sig;
  job->fault.code = info->si_code;
  job->fault.addr = (uintptr_t) info->si_addr;
  bool own = pthread_equal (pthread_self (), region->thread);
  /* The guard pages below a thread's stack are where an overflow of it
     lands.  */
  job->fault.stack = (own && sig == SIGSEGV && region->stack_lo != 0
		      && job->fault.addr < region->stack_lo
		      && region->stack_lo - job->fault.addr < (1u << 20));
  if (own && emu_region_alone ())
    {
      /* Leave the region: its waiter reports and ends the program.  The
	 signal stays blocked after a longjmp out of its handler.  */
      sigset_t set;
      sigemptyset (&set);
      sigaddset (&set, sig);
      pthread_sigmask (SIG_UNBLOCK, &set, NULL);
      longjmp (region->exit_point, 2);
    }
  job->fault.in_team = true;
  /* The descriptors' tables are read only (the region holds the
     images); dladdr, which emu_fn_name falls back on, takes a lock.  */
  emu_fault_report (region->dev, job,
		    emu_image_fn_name (region->dev, (void *) job->fn));
  emu_gpu_fault_end (region->dev, job, true);
}

static pthread_once_t emu_fault_once = PTHREAD_ONCE_INIT;

static void
emu_fault_install_once (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = emu_fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset (&sa.sa_mask);
  for (size_t i = 0; i < EMU_FAULT_NSIGS; i++)
    if (sigaction (emu_fault_signals[i], &sa, &emu_fault_old[i]) != 0)
      OK_DEBUG ("cannot catch signal %d in regions", emu_fault_signals[i]);
}

void
emu_fault_install (void)
{
  pthread_once (&emu_fault_once, emu_fault_install_once);
}
