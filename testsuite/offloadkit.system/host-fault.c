/* A fault of host code, with emulated devices that have run a region:
   it stays the host's.  With no argument the program's own handler, set
   before the devices start, gets it (and exits 7); with "default" the
   process dies of SIGSEGV as it would without the plugin.  Neither says
   a word of a device.  */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int *volatile nowhere;

static void
on_segv (int sig)
{
  (void) sig;
  static const char words[] = "host handler\n";
  if (write (2, words, sizeof words - 1) < 0)
    _exit (8);
  _exit (7);
}

int
main (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "default") != 0)
    signal (SIGSEGV, on_segv);
  int x = 0;
#pragma omp target map(tofrom: x)
  x += 1;
  printf ("region ran: %d\n", x);
  fflush (stdout);
  return *nowhere;
}
