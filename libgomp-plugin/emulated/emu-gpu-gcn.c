/* The GPU the emulated device of the gcn plugin models, for OpenACC
   launches: their dimensions are chosen and reported (the profiling
   events) as GCC's gcn plugin does on a GPU (core/gcn-acc-dims.c, which
   the HSA backend uses), so that a program or a tool sees the launch a
   radeon device would make.  The GPU has 104 compute units.  */

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu-internal.h"
#include "gcn-acc-dims.h"

#define EMU_GPU_COMPUTE_UNITS 104

bool
emu_gpu_acc_dims (const char *name, const unsigned fixed[OK_ACC_DIMS],
		  bool known, const unsigned given[OK_ACC_DIMS],
		  unsigned dims[OK_ACC_DIMS])
{
  (void) known;			/* GCC's gcn plugin checks nothing.  */
  ok_gcn_acc_dims (EMU_GPU_COMPUTE_UNITS, fixed, given, dims);
  OK_DEBUG ("OpenACC kernel %s: %u gangs of %u workers", name,
	    dims[OK_ACC_GANG], dims[OK_ACC_WORKER]);
  return true;
}

void
emu_gpu_acc_launched (const char *name)
{
  (void) name;
}

bool
emu_gpu_check_images (struct emu_device *dev, const struct ok_image_load *ld,
		      char *what, size_t len)
{
  (void) dev;
  (void) ld;
  if (len > 0)
    what[0] = '\0';
  return true;
}

/* A kernel that exits stops with the status in its return value, and
   GCC's gcn plugin ends the process with its low byte, as the HSA
   backend does.  */
bool
emu_gpu_region_exited (struct emu_device *dev, const char *kernel,
		       int status)
{
  OK_DEBUG ("%s: kernel %s called exit (%d)", dev->base.label, kernel,
	    status & 0xff);
  ok_device_exit (status & 0xff);
}

/* A kernel that touches memory it may not makes the GPU raise a memory
   fault, and ROCm's runtime, which GCC's gcn plugin leaves to it, prints
   its line and aborts the process ("Memory access fault by GPU node-N
   (Agent handle: H) on address A. Reason: R.", A the faulting page; the
   CPU is node 0).  An illegal instruction, or an exception the host
   traps on (a GPU does not trap on an integer division by zero), fails
   the kernel's queue instead: GCC's gcn plugin's queue callback reports
   the runtime's status string ("GCN fatal error: Asynchronous queue
   error", then "Runtime message: ...") and libgomp exits.  */
void
emu_gpu_fault_words (struct emu_device *dev, const struct emu_fault *f,
		     bool openacc, struct emu_msg *m)
{
  (void) openacc;
  switch (f->sig)
    {
    case SIGSEGV:
    case SIGBUS:
      emu_msg_str (m, "Memory access fault by GPU node-");
      emu_msg_dec (m, 1 + dev->base.local);
      emu_msg_str (m, " (Agent handle: ");
      emu_msg_hex (m, (uintptr_t) dev);
      emu_msg_str (m, ") on address ");
      emu_msg_hex (m, f->addr & ~(uintptr_t) 0xfff);
      emu_msg_str (m, ". Reason: ");
      emu_msg_str (m, (f->sig == SIGBUS ? "Unknown"
		       : f->code == SEGV_ACCERR
		       ? "Write access to a read-only page"
		       : "Page not present or supervisor privilege"));
      emu_msg_str (m, ".");
      emu_msg_say (m, false);
      return;
    default:
      emu_msg_str (m, "GCN fatal error: Asynchronous queue error\n"
		   "Runtime message: ");
      emu_msg_str (m, (f->sig == SIGILL
		       ? "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent"
			 " attempted to execute an illegal shader instruction."
		       : "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation"
			 " resulted in a hardware exception."));
      emu_msg_str (m, "\n");
      emu_msg_say (m, true);
      return;
    }
}

/* The runtime aborts after a memory fault; libgomp exits after the
   queue callback's fatal error.  */
void
emu_gpu_fault_end (struct emu_device *dev, const struct emu_job *job,
		   bool in_handler)
{
  (void) dev;
  if (job->fault.sig == SIGSEGV || job->fault.sig == SIGBUS)
    abort ();
  if (in_handler)
    _exit (EXIT_FAILURE);
  ok_device_exit (EXIT_FAILURE);
}
