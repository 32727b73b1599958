/* mkoffload driver: argument handling and orchestration; see mkoffload.h.

   lto-wrapper runs us as
     mkoffload [-save-temps] [-v] -o OUT.o INPUTS... OPTIONS... -dumpbase B
   (often through an @response file).  We check the inputs, let the
   target run its accel compiler on them, then write and compile the
   wrapper object OUT.o that carries the device image.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argv-expand.h"
#include "diag.h"
#include "elf-check.h"
#include "file-io.h"
#include "mkoffload.h"
#include "program-search.h"
#include "run-command.h"
#include "tempfile.h"
#include "wrapper.h"

/* Pass-through arguments of more bytes than this go to the accel compiler
   in a response file (pass_long_arguments_in_file).  Linux takes 2 MiB
   of arguments and environment by default (a quarter of the stack
   limit), and no single argument longer than 128 KiB.  */
#define MKO_MAX_INLINE_ARGS (64 * 1024)

void
mko_argv_push (struct mko_argv *a, const char *s)
{
  if (a->n + 1 >= a->cap)
    {
      a->cap = a->cap ? 2 * a->cap : 16;
      a->v = xrealloc (a->v, a->cap * sizeof *a->v);
    }
  a->v[a->n++] = s;
  a->v[a->n] = NULL;
}

void
mko_add_image (struct mko_ctx *ctx, const char *path, int add_nul,
	       uint32_t format, uint32_t arch)
{
  ctx->images = xrealloc (ctx->images,
			  (ctx->num_images + 1) * sizeof *ctx->images);
  struct mko_image *im = &ctx->images[ctx->num_images++];
  im->path = path;
  im->add_nul = add_nul;
  im->format = format;
  im->arch = arch;
  im->kernel_info = NULL;
  im->flags = 0;
  im->oacc_dims = NULL;
}

void
mko_note (const char *fmt, ...)
{
  va_list ap;
  fflush (stdout);
  fprintf (stderr, "%s: note: ", ok_progname ());
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  fflush (stderr);
}

const char *
mko_intermediate (struct mko_ctx *ctx, const char *suffix)
{
  if (ctx->save_temps)
    return xasprintf ("%s%s", ctx->dumpbase, suffix);
  return ok_tempfile_create (suffix);
}

/* The accel driver must find its own tools, not the host's: drop the
   host compilation's search paths, as GCC's mkoffload does.  */
const char *const mko_accel_unset_env[] = {
  "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", NULL
};

void
mko_accel_argv (struct mko_ctx *ctx, struct mko_argv *a,
		const char *const *inputs, const char *const *options,
		const char *dumpbase)
{
  mko_argv_push (a, ctx->accel_cc);
  if (ctx->save_temps)
    mko_argv_push (a, "-save-temps");
  if (ok_verbose)
    mko_argv_push (a, "-v");
  for (; inputs != NULL && *inputs != NULL; inputs++)
    mko_argv_push (a, *inputs);
  mko_argv_push (a, "-xlto");
  mko_argv_push (a, "-m64");
  if (ctx->fopenmp)
    mko_argv_push (a, "-mgomp");
  for (size_t i = 0; i < ctx->passthrough.n; i++)
    mko_argv_push (a, ctx->passthrough.v[i]);
  for (; options != NULL && *options != NULL; options++)
    mko_argv_push (a, *options);
  mko_argv_push (a, "-dumpdir");
  mko_argv_push (a, "");
  mko_argv_push (a, "-dumpbase");
  mko_argv_push (a, dumpbase);
  mko_argv_push (a, "-dumpbase-ext");
  mko_argv_push (a, "");
}

static void
usage (FILE *f)
{
  fprintf (f,
"Usage: mkoffload [OPTION]... -o OUTPUT.o INPUT... [COMPILER-OPTION]...\n"
"Build the %s offload image of the LTO objects INPUT with the accel\n"
"compiler and wrap it into the host object OUTPUT.o, which registers the\n"
"image with libgomp.  gcc's lto-wrapper runs this program when linking\n"
"with -foffload=%s.\n"
"\n"
"Options:\n"
"  -o FILE                 write the host object to FILE\n"
"  @FILE                   read more arguments from FILE\n"
"  -fopenmp | -fopenacc    offloading model (exactly one is required)\n"
"  -foffload-abi=lp64      host ABI (only lp64 is supported)\n"
"  -foffload-abi-host-opts=OPTS  the host ABI option to compile the\n"
"                          wrapper with (GCC 15 and newer; default -m64)\n"
"  -l_GCC_m, -l_GCC_gfortran, -l_GCC_stdc++  link the device's libm,\n"
"                          libgfortran, libstdc++ (GCC 14 and newer)\n"
"  -fPIC, -fpic            compile the wrapper object position-independent\n"
"  -save-temps             keep intermediate files, named after -dumpbase\n"
"  -dumpbase NAME          base name of intermediate and dump files\n"
"  -v                      print the commands run (and pass -v on)\n"
"  --help                  display this help and exit\n"
"  --version               output version information and exit\n"
"%s"
"Any other argument is passed to the accel compiler.\n"
"\n"
"One mkoffload serves GCC %d to %d: it asks COLLECT_GCC for its version\n"
"(-dumpversion) and runs that version's accel compiler, speaks its\n"
"protocol and registers the image in the form of its libgomp.  Under\n"
"GCC 12 and 13 it links the device libm, and libstdc++ or libgfortran\n"
"when COLLECT_GCC is g++ or gfortran, as GCC 14 and newer ask for.\n"
"\n"
"Environment:\n"
"  COLLECT_GCC             host driver that compiles the wrapper (required)\n"
"  COLLECT_GCC_OPTIONS     also read for -fPIC, -fpic, -save-temps and -v\n"
"  OFFLOADKIT_GCC_VERSION  the GCC version to speak instead of COLLECT_GCC's\n"
"  %-23s accel compiler to use (default %s-N,\n"
"                          N the GCC version, else %s of the\n"
"                          same version)\n"
"%s",
	   mko_target.name, mko_target.name,
	   mko_target.help_options ? mko_target.help_options : "",
	   MKO_GCC_MIN, MKO_GCC_MAX,
	   mko_target.accel_cc_env, mko_accel_cc (), mko_accel_cc (),
	   mko_target.help_env ? mko_target.help_env : "");
}

/* Options of GCC's driver whose value is the next argument: that value
   is neither an input file nor an option of ours.  */
static int
takes_separate_value (const char *opt)
{
  static const char *const opts[] = {
    "-dumpdir", "-dumpbase-ext", "-Xassembler", "-Xlinker",
    "-Xpreprocessor", "-include", "-imacros", "-isystem", "-iquote",
    "-idirafter", "-L", "-l", "-I", "-D", "-U", "-x", "-T", "-u", "-e",
    "-MF", "-MT", "-MQ", "-aux-info", "--param", "-wrapper", NULL
  };
  for (size_t i = 0; opts[i]; i++)
    if (strcmp (opt, opts[i]) == 0)
      return 1;
  return 0;
}

/* Whether OPT is for the accel link only: -lLIB, -LDIR, -Wl,...,
   -Xlinker (each alone or with a separate value).  */
static int
is_link_option (const char *opt)
{
  return strncmp (opt, "-l", 2) == 0 || strncmp (opt, "-L", 2) == 0
	 || strncmp (opt, "-Wl,", 4) == 0 || strcmp (opt, "-Xlinker") == 0;
}

/* Apply the flags we care about from COLLECT_GCC_OPTIONS, which the gcc
   driver writes as single-quoted words ('\'' stands for a quote).  */
static void
scan_collect_gcc_options (struct mko_ctx *ctx)
{
  const char *p = getenv ("COLLECT_GCC_OPTIONS");
  if (!p)
    return;
  char *word = xmalloc (strlen (p) + 1);
  while (*p)
    {
      while (*p == ' ')
	p++;
      if (!*p)
	break;
      size_t len = 0;
      int quoted = 0;
      for (; *p && (quoted || *p != ' '); p++)
	if (*p == '\'')
	  quoted = !quoted;
	else if (*p == '\\' && !quoted && p[1])
	  word[len++] = *++p;
	else
	  word[len++] = *p;
      word[len] = '\0';
      if (strcmp (word, "-fPIC") == 0)
	ctx->fPIC = 1;
      else if (strcmp (word, "-fpic") == 0)
	ctx->fpic = 1;
      else if (strcmp (word, "-save-temps") == 0)
	ctx->save_temps = 1;
      else if (strcmp (word, "-v") == 0)
	ok_verbose = 1;
    }
  free (word);
}

static void
parse_args (struct mko_ctx *ctx, int argc, char **argv,
	    struct mko_argv *inputs)
{
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "-o") == 0 || strcmp (a, "-dumpbase") == 0)
	{
	  if (i + 1 >= argc)
	    ok_fatal ("missing argument to '%s'", a);
	  if (a[1] == 'o')
	    ctx->outname = argv[++i];
	  else
	    ctx->dumpbase = argv[++i];
	  continue;
	}
      if (strcmp (a, "-save-temps") == 0)
	{
	  ctx->save_temps = 1;
	  continue;
	}
      if (strcmp (a, "-v") == 0)
	{
	  ok_verbose = 1;
	  continue;
	}

      if (ctx->target->option && ctx->target->option (ctx, a))
	continue;

      if (strcmp (a, "-fopenmp") == 0)
	ctx->fopenmp = 1;
      else if (strcmp (a, "-fno-openmp") == 0)
	ctx->fopenmp = 0;
      else if (strcmp (a, "-fopenacc") == 0)
	ctx->fopenacc = 1;
      else if (strcmp (a, "-fno-openacc") == 0)
	ctx->fopenacc = 0;
      else if (strcmp (a, "-fPIC") == 0)
	ctx->fPIC = 1;
      else if (strcmp (a, "-fpic") == 0)
	ctx->fpic = 1;
      else if (strncmp (a, "-foffload-abi=", 14) == 0)
	{
	  const char *abi = a + 14;
	  if (strcmp (abi, "ilp32") == 0)
	    ok_fatal ("-foffload-abi=ilp32: only lp64 is supported");
	  else if (strcmp (abi, "lp64") != 0)
	    ok_fatal ("unknown -foffload-abi '%s'", abi);
	}
      else if (a[0] == '-' && a[1] != '\0')
	{
	  a = mko_translate_arg (ctx, a);
	  if (takes_separate_value (a) && i + 1 < argc)
	    {
	      mko_argv_push (&ctx->passthrough, a);
	      if (strcmp (a, "-Xassembler") == 0)
		{
		  mko_argv_push (&ctx->asm_options, a);
		  mko_argv_push (&ctx->asm_options, argv[i + 1]);
		}
	      else if (is_link_option (a))
		{
		  mko_argv_push (&ctx->link_options, a);
		  mko_argv_push (&ctx->link_options, argv[i + 1]);
		}
	      a = argv[++i];
	    }
	  else if (a[1] == 'm' || strncmp (a, "-Wa,", 4) == 0)
	    mko_argv_push (&ctx->asm_options, a);
	  else if (is_link_option (a))
	    mko_argv_push (&ctx->link_options, a);
	}
      else
	mko_argv_push (inputs, a);
      mko_argv_push (&ctx->passthrough, a);
    }
}

/* Whether the files of status A and B are the same file.  */
static int
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Check the INPUTS (a damaged one should be named here, not deep inside
   lto1), and that CTX's output is none of them, which compiling the
   wrapper would overwrite: compared by identity, so that another path
   to the same file or a symbolic link to it counts too.  Return 0, or -1
   after reporting one error.  */
static int
check_inputs (const struct mko_ctx *ctx, const struct mko_argv *inputs)
{
  struct stat out;
  /* An output that does not exist yet is no input.  */
  int have_out = stat (ctx->outname, &out) == 0;
  for (size_t i = 0; i < inputs->n; i++)
    {
      struct stat in;
      if (ok_elf_check_input (inputs->v[i], &in) < 0)
	return -1;
      if (have_out && same_file (&in, &out))
	{
	  ok_error ("-o '%s' is the input file '%s' (it would be"
		    " overwritten)", ctx->outname, inputs->v[i]);
	  return -1;
	}
    }
  return 0;
}

/* Bytes that the arguments A take on a command line.  */
static size_t
argv_size (const struct mko_argv *a)
{
  size_t size = 0;
  for (size_t i = 0; i < a->n; i++)
    size += strlen (a->v[i]) + 1 + sizeof (char *);
  return size;
}

/* A big link's inputs (thousands of objects with long paths) would make
   the accel compiler's command line longer than the kernel takes
   (E2BIG).  When CTX's pass-through arguments, the inputs among them, are
   long, write them to a response file (DUMPBASE.mkoffload.args with
   -save-temps, else a temporary one) and pass it as "@FILE" in their
   place: the accel compiler is a GCC driver, which reads it, and hands
   the inputs on to lto1 in a response file of its own.  Short ones stay
   on the command line, where -v shows them.  Return 0, or -1 after
   reporting one error.  */
static int
pass_long_arguments_in_file (struct mko_ctx *ctx)
{
  if (argv_size (&ctx->passthrough) <= MKO_MAX_INLINE_ARGS)
    return 0;
  size_t len;
  char *text = ok_response_file_text (ctx->passthrough.v, &len);
  const char *file = mko_intermediate (ctx, ".mkoffload.args");
  int rc = ok_write_file (file, text, len);
  free (text);
  if (rc < 0)
    return -1;
  ok_inform ("the accel compiler gets %zu arguments in the response file"
	     " '%s'", ctx->passthrough.n, file);
  ctx->passthrough.n = 0;
  mko_argv_push (&ctx->passthrough, xasprintf ("@%s", file));
  return 0;
}

int
main (int argc, char **argv)
{
  static struct mko_ctx ctx;
  struct mko_argv inputs = { 0 };

  ok_set_progname ("mkoffload");
  ctx.target = &mko_target;

  if (argc < 2)
    {
      ok_error ("no arguments given");
      fprintf (stderr, "Try 'mkoffload --help' for more information.\n");
      return 1;
    }
  if (ok_expand_argv (&argc, &argv) < 0)
    return 1;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--help") == 0)
      {
	usage (stdout);
	return fflush (stdout) != 0 || ferror (stdout) ? 1 : 0;
      }
    else if (strcmp (argv[i], "--version") == 0)
      {
	printf ("mkoffload (offloadkit) %s\n", PACKAGE_VERSION);
	printf ("Offload target: %s\n", mko_target.name);
	return fflush (stdout) != 0 || ferror (stdout) ? 1 : 0;
      }

  parse_args (&ctx, argc, argv, &inputs);
  scan_collect_gcc_options (&ctx);

  if (ctx.fopenmp && ctx.fopenacc)
    ok_fatal ("-fopenmp and -fopenacc cannot be used together");
  if (!ctx.fopenmp && !ctx.fopenacc)
    ok_fatal ("either -fopenmp or -fopenacc must be given");
  if (!ctx.outname)
    ok_fatal ("no output file given (-o)");
  if (!ctx.dumpbase)
    ctx.dumpbase = ctx.outname;
  if (inputs.n == 0)
    ok_fatal ("no input files");
  if (check_inputs (&ctx, &inputs) < 0)
    return 1;

  ctx.collect_gcc = getenv ("COLLECT_GCC");
  if (!ctx.collect_gcc || !*ctx.collect_gcc)
    ok_fatal ("COLLECT_GCC is not set; mkoffload is run by gcc's"
	      " lto-wrapper");

  mko_find_gcc (&ctx);

  /* Every command runs with a private TMPDIR inside ours, which goes
     with whatever is in it when we exit, signals included: ptxas and
     nvlink leave their tmpxft_* files behind when they are killed, and
     so can GCC's driver, lto1 and collect2 theirs.  */
  ok_run_set_tmpdir (ok_tempdir_create ());

  if (pass_long_arguments_in_file (&ctx) < 0
      || mko_target.build (&ctx) < 0)
    return 1;

  const char *cfile = mko_intermediate (&ctx, ".c");
  if (mko_write_wrapper (&ctx, cfile) < 0
      || mko_compile_wrapper (&ctx, cfile) < 0)
    return 1;
  return 0;
}
