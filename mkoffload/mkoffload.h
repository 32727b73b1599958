/* mkoffload: turns the LTO objects lto-wrapper hands over into a host
   object that embeds the device image and registers it with libgomp.

   mkoffload.c is the driver, shared by all targets: it parses the
   arguments, checks the inputs, finds the accel compiler, and writes and
   compiles the wrapper (wrapper.c).  Everything specific to one offload
   target (its compiler, extra flags, image format, verification) sits
   behind struct mko_target, one target-*.c file each.  */

#ifndef OFFLOADKIT_MKOFFLOAD_H
#define OFFLOADKIT_MKOFFLOAD_H

#include <stddef.h>
#include <stdint.h>

/* Text of common/offload-desc.h (generated desc-header.c).  */
extern const char mko_desc_header[];

/* A growable, NULL-terminated vector of strings.  */
struct mko_argv
{
  const char **v;
  size_t n, cap;
};
void mko_argv_push (struct mko_argv *a, const char *s);

struct mko_ctx;
struct ok_kernel_info;

struct mko_target
{
  const char *name;		/* "nvptx-none": the -foffload= target.  */
  int device_type;		/* OK_GOMP_DEVICE_*.  */
  const char *accel_cc;		/* Default accel compiler (no directory).  */
  const char *accel_cc_env;	/* Environment variable overriding it.  */
  const char *package;		/* Distribution package providing it.  */
  /* Run the accel compiler on CTX's inputs and add CTX's images
     (mko_add_image).  Return 0, or -1 after reporting one error.  */
  int (*build) (struct mko_ctx *ctx);
  /* Options mkoffload itself handles for this target (they arrive through
     -foffload-options=TARGET=... but are not the accel compiler's): return
     1 when ARG is one (it is then not passed on), 0 otherwise.  NULL when
     the target has none.  A malformed value is reported by build ().  */
  int (*option) (struct mko_ctx *ctx, const char *arg);
  /* Lines for --help describing those options and the target's own
     environment variables, or NULL.  */
  const char *help_options;
  const char *help_env;
};

/* The one target this program is built for (target-*.c).  */
extern const struct mko_target mko_target;

struct mko_ctx
{
  const struct mko_target *target;

  /* From the command line and COLLECT_GCC_OPTIONS.  */
  int fopenmp, fopenacc;
  int fpic, fPIC;
  int save_temps;
  const char *outname;		/* -o: the host object to produce.  */
  const char *dumpbase;		/* -dumpbase, else OUTNAME.  */
  /* Arguments for the accel compiler, in order (everything but -o OUT,
     -dumpbase X, -save-temps and -v, which the target adds itself); or,
     when they are long, one "@FILE" that holds them.  */
  struct mko_argv passthrough;
  /* The part of PASSTHROUGH that decides what the accel assembler makes
     (-m..., -Wa,..., -Xassembler X), for a target that assembles a file
     of its own to link with the device code.  */
  struct mko_argv asm_options;
  const char *collect_gcc;	/* Host driver compiling the wrapper.  */
  const char *accel_cc;		/* Resolved accel compiler.  */

  /* Filled in by the target's build (): the images of the device code,
     in the order the descriptor lists them (one struct ok_tgt_desc
     each), and the device names of the functions and variables, which all
     images share.  */
  struct mko_image *images;
  size_t num_images;
  struct mko_argv func_names;
  struct mko_argv var_names;
};

/* One image: a file embedded as it is, for one format and architecture
   (e.g. the PTX of all architectures, or a cubin for sm_90).  */
struct mko_image
{
  const char *path;		/* File embedded with .incbin.  */
  /* Add a NUL byte after the file's contents (the image format wants
     NUL-terminated pieces and the file lacks the last one).  */
  int add_nul;
  uint32_t format;		/* OK_IMAGE_*.  */
  uint32_t arch;		/* As in struct ok_tgt_desc; 0 for PTX.  */
  /* One entry per function of the context's FUNC_NAMES, in that order,
     for the descriptor's kernel_info; NULL when the format needs none.
     mko_add_image sets it to NULL; the target fills it in afterwards.  */
  const struct ok_kernel_info *kernel_info;
};

/* Append an image to CTX's list (PATH is not copied).  */
void mko_add_image (struct mko_ctx *ctx, const char *path, int add_nul,
		    uint32_t format, uint32_t arch);

/* Name of an intermediate file: DUMPBASE.SUFFIX, kept, with -save-temps;
   otherwise a registered temporary file ending in SUFFIX.  */
const char *mko_intermediate (struct mko_ctx *ctx, const char *suffix);

/* Environment variables unset for the accel compiler (NULL-terminated).  */
extern const char *const mko_accel_unset_env[];

/* Start the accel compiler's command line in A: CTX's accel compiler,
   the host compilation's -save-temps and -v, INPUTS (NULL-terminated,
   may be NULL: files before the LTO objects), -xlto -m64, -mgomp for
   OpenMP, the options passed through from the host compilation, then
   OPTIONS (as INPUTS) and DUMPBASE as -dumpbase, with no dump directory
   or extension.  The target adds its own -o and libraries.  */
void mko_accel_argv (struct mko_ctx *ctx, struct mko_argv *a,
		     const char *const *inputs, const char *const *options,
		     const char *dumpbase);

/* Find PROG like GCC finds its helpers: PROG itself when it has a '/',
   else in the directory of COLLECT_GCC, the COMPILER_PATH entries and
   PATH, in that order.  NULL when it is nowhere executable.  */
char *mko_find_program (const char *prog);

/* Write LEN bytes of DATA to PATH.  Return 0, or -1 after reporting
   one error.  */
int mko_write_file (const char *path, const char *data, size_t len);

/* "mkoffload: note: MSG" on stderr, whether or not -v was given: for
   something the user should know although the link goes on.  */
void mko_note (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Look for PROG in the ':'-separated directory list DIRS (an empty entry
   means the current directory, as in PATH).  NULL when absent.  */
char *mko_search_path (const char *prog, const char *dirs);

#endif /* OFFLOADKIT_MKOFFLOAD_H */
