/* hsa-harness: what reaches the host from a kernel besides its data:
   device printf's buffer in the kernel arguments (a new block, an
   overflow) and the exit word (exit, abort, a signal, a normal end).  The
   fake runs nothing, so the test plays the device's part while the gate
   holds the kernel.  See hsa-harness.h.  */

#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hsa-harness.h"

/* Device printf's buffer in the kernel arguments, from the exit word on
   (GCC 12's struct output of its plugin-gcn.c and GCC 13's of
   libgomp-gcn.h are the same size; at V2_OUTPUT or V3_OUTPUT by the
   device code's layout).  */
struct print_entry
{
  int written;
  char msg[128];
  int type;
  union
  {
    int64_t ivalue;
    double dvalue;
    char text[128];
  } u;
};

struct print_buf
{
  int return_value;
  unsigned int next_output;
  struct print_entry queue[1024];
  unsigned int consumed;
};

/* The device claims entry 0 and writes it only after the host has polled
   for a while: a stale `written' would have been printed by then.  */
static void
print_late (struct print_buf *pb)
{
  __atomic_store_n (&pb->next_output, 1, __ATOMIC_RELEASE);
  struct timespec pause = { 0, 100 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  struct print_entry *e = &pb->queue[0];
  e->msg[0] = '\0';
  e->type = 2;
  strcpy (e->u.text, "fresh");
  __atomic_store_n (&e->written, 1, __ATOMIC_RELEASE);
}

/* Three entries written and left unread, then the device's index below
   what the host consumed, as when it wraps around: the host can only
   report the overflow.  (Only the host writes `consumed'; while
   next_output is 0 it reads nothing.)  */
static void
print_overflow (struct print_buf *pb)
{
  for (int i = 0; i < 3; i++)
    {
      struct print_entry *e = &pb->queue[i];
      e->msg[0] = '\0';
      e->type = 2;
      strcpy (e->u.text, "stale");
      __atomic_store_n (&e->written, 1, __ATOMIC_RELEASE);
    }
  __atomic_store_n (&pb->consumed, 5, __ATOMIC_RELEASE);
  __atomic_store_n (&pb->next_output, 3, __ATOMIC_RELEASE);
}

/* An asynchronous launch of FN on device 0, held by the gate while DEVICE
   plays the device's part in PB; what the plugin printed in OUT.  */
static bool
print_launch (void *fn, struct print_buf *pb,
	      void (*device) (struct print_buf *), char *out, size_t outlen)
{
  out[0] = '\0';
  char path[] = "/tmp/hsa-harness-XXXXXX";
  int fd = mkstemp (path);
  if (fd < 0)
    return false;
  unlink (path);
  fflush (stdout);
  int saved = dup (1);
  dup2 (fd, 1);
  completions_reset ();
  f_gate (1);
  int token;
  p_async_run (0, fn, NULL, NULL, &token);
  device (pb);
  f_gate (0);
  wait_completions (1, 10);
  fflush (stdout);
  dup2 (saved, 1);
  close (saved);
  ssize_t n = pread (fd, out, outlen - 1, 0);
  close (fd);
  out[n > 0 ? n : 0] = '\0';
  return completions_now () == 1;
}

static bool
print_all_clear (const struct print_buf *pb)
{
  for (int i = 0; i < 1024; i++)
    if (pb->queue[i].written != 0)
      return false;
  return true;
}

/* The plugin clears the print entries when it allocates a kernel-argument
   block (the fake fills fresh memory with 0xa5) and leaves them clear
   after each launch, an overflowed one too; a fresh plugin, so that the
   block is a new one.  */
void
child_print_buffer (void)
{
  check ("1 device", p_get_num_devices () == 1 && p_init_device (0));
  struct ok_addr_pair *t = load (0, our_desc);
  check ("loads", t != NULL);
  if (t == NULL)
    return;
  void *fn = (void *) t[0].start;
  struct dispatch d;
  bool ran = run_one (0, fn, NULL, NULL, &d);
  check ("a run", ran);
  if (ran)
    {
      /* The block the run used, reused by the next; the buffer where
	 the image's device code has it.  */
      bool v3 = tgt_is_v3 (target_for (our_desc, agent_arch[0]));
      struct print_buf *pb
	= (struct print_buf *) ((unsigned char *) (uintptr_t)
				d.p.kernarg_address + output_offset (v3));
      char out[512];
      bool ok = print_launch (fn, pb, print_late, out, sizeof out);
      if (strcmp (out, "fresh\n") != 0)
	fprintf (stderr, "  (printed: '%s')\n", out);
      check ("a new block: only what the device wrote is printed",
	     ok && strcmp (out, "fresh\n") == 0);
      ok = print_launch (fn, pb, print_overflow, out, sizeof out);
      check ("an overflow is reported",
	     ok && strcmp (out, "GCN print buffer overflowed.\n") == 0);
      check ("after an overflow every entry is clear", print_all_clear (pb));
      ok = print_launch (fn, pb, print_late, out, sizeof out);
      if (strcmp (out, "fresh\n") != 0)
	fprintf (stderr, "  (printed: '%s')\n", out);
      check ("after an overflow: nothing stale printed",
	     ok && strcmp (out, "fresh\n") == 0);
    }
  p_unload_image (0, ours->version, our_desc);
  free (t);
  check ("fini", p_fini_device (0));
}

/* What the device runtime leaves in the kernel arguments' exit word
   (0xffff0000 | signal << 8 | status after exit or abort; anything else
   after a normal end) decides how the host goes on: exit with the status,
   abort for any signal, or carry on.  The fake runs nothing, so the word
   is written in the kernel arguments the plugin reuses, where device 1's
   image's device code has it, while the gate holds the kernel.  Each case
   in a child of its own.  */
void
test_exit_values (void)
{
  static const struct
  {
    unsigned word;
    const char *name;
    bool sig;			/* The child must die of SIGABRT.  */
    int status;			/* Else its exit status.  */
  } cases[] = {
    { 0xffff0003u, "device exit(3): the program exits with 3", false, 3 },
    { 0xffff0b00u, "device killed by signal 11: abort", true, 0 },
    { 0xffff0600u, "device abort: abort", true, 0 },
    { 0xcafe0000u, "normal end: the region completes", false, 77 },
  };
  if (tab1 == NULL)
    return;
  unsigned out = output_offset (tgt_is_v3 (target_for (our_desc,
						       agent_arch[1])));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      fflush (NULL);
      pid_t pid = fork ();
      if (pid == 0)
	{
	  struct dispatch d;
	  if (!run_one (1, (void *) tab1[0].start, NULL, NULL, &d))
	    _exit (90);
	  unsigned char *ka = (unsigned char *) (uintptr_t) d.p.kernarg_address;
	  completions_reset ();
	  f_gate (1);
	  int token;
	  p_async_run (1, (void *) tab1[0].start, NULL, NULL, &token);
	  memcpy (ka + out, &cases[i].word, 4);
	  f_gate (0);
	  wait_completions (1, 10);
	  _exit (completions_now () == 1 ? 77 : 91);
	}
      int st = 0;
      bool ok = pid > 0 && waitpid (pid, &st, 0) == pid;
      if (cases[i].sig)
	ok = ok && WIFSIGNALED (st) && WTERMSIG (st) == SIGABRT;
      else
	ok = ok && WIFEXITED (st) && WEXITSTATUS (st) == cases[i].status;
      check (cases[i].name, ok);
    }
}
