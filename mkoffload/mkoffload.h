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
/* wrapper-runtime.c compiled to assembler text when offloadkit was built
   (generated wrapper-runtime-asm.c), which every wrapper embeds.  */
extern const char mko_wrapper_runtime_asm[];

/* A growable, NULL-terminated vector of strings.  */
struct mko_argv
{
  const char **v;
  size_t n, cap;
};
void mko_argv_push (struct mko_argv *a, const char *s);

struct mko_ctx;
struct ok_kernel_info;
struct ok_oacc_dims;

struct mko_target
{
  const char *name;		/* "nvptx-none": the -foffload= target.  */
  int device_type;		/* OK_GOMP_DEVICE_*.  */
  /* Environment variable naming the accel compiler to use instead of
     mko_accel_cc's.  */
  const char *accel_cc_env;
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
  /* The part of PASSTHROUGH for the accel link alone (-l..., -L...,
     -Wl,..., -Xlinker X), for a target that links apart from compiling.  */
  struct mko_argv link_options;
  const char *collect_gcc;	/* Host driver compiling the wrapper.  */
  const char *accel_cc;		/* Resolved accel compiler.  */
  /* Major version of the GCC that runs us (COLLECT_GCC's), 12 to 16: it
     decides the accel compiler's name, the protocol with it and the form
     in which the wrapper registers (gcc-compat.c).  */
  int gcc_version;
  /* The value of -foffload-abi-host-opts= (GCC 15 and newer): the host
     ABI option the wrapper is compiled with; NULL: -m64.  */
  const char *host_abi_opts;
  /* The OpenMP requires mask (GOMP_REQUIRES_*) the accel compiler wrote
     (GCC 13 and newer; 0 before), for the wrapper's registration.  */
  uint32_t omp_requires;
  int have_omp_requires;
  /* GCC 12 and 13: the device library of the driver's language that
     mko_accel_libs links ("-lstdc++", "-lgfortran"; "" for none), once
     found out; NULL before.  */
  const char *accel_lang_lib;

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
  /* The descriptor's OK_TGT_* flags; mko_add_image sets 0.  */
  uint32_t flags;
  /* The OpenACC launch dimensions, one entry per function of FUNC_NAMES,
     for the descriptor's oacc_dims; NULL when no function is an OpenACC
     compute region.  Images may share one table.  mko_add_image sets it
     to NULL; the target fills it in afterwards.  */
  const struct ok_oacc_dims *oacc_dims;
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

/* "mkoffload: note: MSG" on stderr, whether or not -v was given: for
   something the user should know although the link goes on.  */
void mko_note (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* gcc-compat.c: what differs between the GCC versions we serve.  */

/* The oldest and newest GCC versions this mkoffload speaks.  */
#define MKO_GCC_MIN 12
#define MKO_GCC_MAX 16

/* Find out CTX's gcc_version (OFFLOADKIT_GCC_VERSION, else what
   COLLECT_GCC -dumpversion says) and its accel compiler (the target's
   environment variable, else the versioned name, else the plain one)
   into CTX->accel_cc.  Errors are fatal.  */
void mko_find_gcc (struct mko_ctx *ctx);

/* The target's accel compiler, as GCC names it, without its directory
   and version suffix: TRIPLET-accel-TARGET-gcc (Debian's is that with
   "-N" appended, N the running GCC's major version; upstream installs it
   as it is).  */
const char *mko_accel_cc (void);
/* The distribution package that provides it, less "gcc-N-": "offload-"
   and the target's CPU, offload-nvptx or offload-amdgcn.  */
const char *mko_accel_package (void);

/* Handle ARG, an argument for GCC N's mkoffload that is not one of the
   accel compiler's as it stands: -l_GCC_LIB is given back as -lLIB (GCC
   14's driver passes these for the host link's -lm, -lgfortran and, from
   15, -lstdc++); -foffload-abi-host-opts=OPTS is recorded in CTX and
   given back as it is (the accel compiler accepts it).  Return the
   argument to pass on.  */
const char *mko_translate_arg (struct mko_ctx *ctx, const char *arg);

/* Environment for an accel compiler run (NULL-terminated, for
   ok_command's set_env), or NULL.  From GCC 13, its lto1 writes the
   program's OpenMP requires mask into the file GCC_OFFLOAD_OMP_REQUIRES_FILE
   names (and fails without it): a new intermediate file
   DUMPBASE.mkoffload[.TAG].omp_requires, whose name is stored in
   *REQUIRES_FILE (NULL before GCC 13).  TAG may be NULL.  */
const char *const *mko_accel_env (struct mko_ctx *ctx, const char *tag,
				  const char **requires_file);

/* Read the requires mask from FILE (of mko_accel_env; nothing to do when
   NULL) into CTX; several runs must agree.  Return 0, or -1 after
   reporting one error.  */
int mko_read_requires (struct mko_ctx *ctx, const char *file);

/* Append to A the device libraries the host link implies where the
   driver does not say (GCC 12 and 13, which pass no -l_GCC_*): the
   device libm always, libgfortran when COLLECT_GCC is gfortran, libstdc++
   when it is g++ (when the accel compiler has them).  */
void mko_accel_libs (struct mko_ctx *ctx, struct mko_argv *a);

/* libgomp's library version (GOMP_VERSION) of CTX's GCC: 1 for 12, 2 for
   13, 3 for 14 and newer; the wrapper registers in its form.  */
unsigned mko_gomp_version (const struct mko_ctx *ctx);

#endif /* OFFLOADKIT_MKOFFLOAD_H */
