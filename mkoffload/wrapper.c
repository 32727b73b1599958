/* Generating and compiling the wrapper object; see wrapper.h.

   The image is not turned into a C array (which is slow to compile and
   doubles the size of the intermediate file for big images): a top-level
   asm statement pulls the file in with .incbin, between two labels that
   the descriptor points at.  */

#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "file-io.h"
#include "gomp-abi.h"
#include "offload-desc.h"
#include "run-command.h"
#include "wrapper.h"

/* Write S as the body of a C string literal, escaping what C needs.  */
static void
put_c_chars (FILE *f, const char *s)
{
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p == '"' || *p == '\\')
      fprintf (f, "\\%c", *p);
    else if (*p < ' ' || *p >= 0x7f)
      fprintf (f, "\\%03o", *p);
    else
      fputc (*p, f);
}

/* Write S as a C string literal containing the assembler string literal
   "S": escaped once for the assembler, then once more for C.  */
static void
put_asm_string (FILE *f, const char *s)
{
  size_t len = strlen (s);
  char *as = xmalloc (4 * len + 3);
  char *q = as;
  *q++ = '"';
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p == '"' || *p == '\\')
      {
	*q++ = '\\';
	*q++ = *p;
      }
    else if (*p < ' ' || *p >= 0x7f)
      q += sprintf (q, "\\%03o", *p);
    else
      *q++ = *p;
  *q++ = '"';
  *q = '\0';
  put_c_chars (f, as);
  free (as);
}

static void
put_name_table (FILE *f, const char *var, const struct mko_argv *names)
{
  if (names->n == 0)
    return;
  fprintf (f, "static const char *const %s[%zu] = {\n", var, names->n);
  for (size_t i = 0; i < names->n; i++)
    {
      fputs ("  \"", f);
      put_c_chars (f, names->v[i]);
      fputs ("\",\n", f);
    }
  fputs ("};\n\n", f);
}

/* The first image whose OpenACC dimensions are image I's table: the
   one the wrapper emits it for.  */
static size_t
oacc_dims_owner (const struct mko_ctx *ctx, size_t i)
{
  for (size_t k = 0; k < i; k++)
    if (ctx->images[k].oacc_dims == ctx->images[i].oacc_dims)
      return k;
  return i;
}

static const char *
image_format_name (uint32_t fmt)
{
  switch (fmt)
    {
    case OK_IMAGE_PTX: return "OK_IMAGE_PTX";
    case OK_IMAGE_CUBIN: return "OK_IMAGE_CUBIN";
    case OK_IMAGE_GCN: return "OK_IMAGE_GCN";
    default: return NULL;
    }
}

/* What a program asks about the device it runs on.  An emulated device
   runs the host-fallback code of a region, where libgomp would answer
   "the initial device": the wrapper interposes omp_get_device_num and
   omp_is_initial_device (C and gfortran's names), and OpenACC's
   acc_on_device (C and gfortran's), for the code linked with it.  They are hidden, so every reference in the same program or shared
   library binds to them whatever the load order, and weak, so several
   wrappers can be linked together.  They answer from a thread-local
   "current emulated device" that the plugin sets, through the
   descriptor's device_num_slot, on the thread running a region, and
   give libgomp's host answers otherwise.  */
static void
put_device_identity (FILE *f)
{
  /* Initial-exec: the general model would need __tls_get_addr from the
     dynamic linker, which program links do not name; 4 bytes of static
     TLS fit in what glibc keeps for dlopened libraries.  */
  fputs ("static __thread int mko_device_num"
	 " __attribute__ ((tls_model (\"initial-exec\"))) = -1;\n"
	 "static __thread int mko_acc_device"
	 " __attribute__ ((tls_model (\"initial-exec\")));\n\n"
	 "static int *\n"
	 "mko_device_num_slot (void)\n"
	 "{\n"
	 "  return &mko_device_num;\n"
	 "}\n\n"
	 "static int *\n"
	 "mko_acc_device_slot (void)\n"
	 "{\n"
	 "  return &mko_acc_device;\n"
	 "}\n\n"
	 /* Weak: a program that calls none of libgomp's functions is
	    linked without libgomp where libraries are linked as needed
	    (Debian's default), and then registers no image.  */
	 "extern int omp_get_initial_device (void)"
	 " __attribute__ ((weak));\n\n", f);
  /* C and Fortran entry points.  Outside an emulated region they give
     libgomp's host answers, which are fixed: the host is the initial
     device, and its device number is omp_get_initial_device ().  */
  static const struct
  {
    const char *name, *type, *device_answer, *host_answer;
  } fns[] = {
    { "omp_is_initial_device", "int", "0", "1" },
    { "omp_get_device_num", "int", "mko_device_num",
      "omp_get_initial_device ? omp_get_initial_device () : 0" },
    { "omp_is_initial_device_", "int32_t", "0", "1" },
    { "omp_get_device_num_", "int32_t", "mko_device_num",
      "omp_get_initial_device ? omp_get_initial_device () : 0" },
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    fprintf (f, "%s %s (void)"
	     " __attribute__ ((weak, visibility (\"hidden\")));\n\n"
	     "%s\n"
	     "%s (void)\n"
	     "{\n"
	     "  return mko_device_num >= 0 ? %s : %s;\n"
	     "}\n\n",
	     fns[i].type, fns[i].name, fns[i].type, fns[i].name,
	     fns[i].device_answer, fns[i].host_answer);
  /* OpenACC: acc_on_device (DEV) is what libgomp's and the device
     compilers' __builtin_acc_on_device answer: on the host, DEV is
     acc_device_host (2) or acc_device_none (0); on a device,
     acc_device_not_host (4) or the device's own type.  gfortran's
     acc_on_device calls acc_on_device_h_ with the type's address and
     takes a default logical.  */
  fputs ("int acc_on_device (int)"
	 " __attribute__ ((weak, visibility (\"hidden\")));\n\n"
	 "int\n"
	 "acc_on_device (int dev)\n"
	 "{\n"
	 "  if (mko_device_num >= 0)\n"
	 "    return dev == 4 || dev == mko_acc_device;\n"
	 "  return dev == 2 || dev == 0;\n"
	 "}\n\n"
	 "int32_t acc_on_device_h_ (const int32_t *)"
	 " __attribute__ ((weak, visibility (\"hidden\")));\n\n"
	 "int32_t\n"
	 "acc_on_device_h_ (const int32_t *dev)\n"
	 "{\n"
	 "  return acc_on_device (*dev);\n"
	 "}\n\n", f);
}

/* The threads of a parallel region inside an emulated region run the
   region's code too, and ask the same questions: on a GPU every thread
   of the kernel answers as the device.  Their threads are libgomp's, so
   the plugin cannot tell their wrappers' slots; the wrapper interposes
   the entry points host code starts a team with (libgomp 12 to 16's
   GOMP_parallel family, libgomp_g.h; hidden and weak, as above), and
   while the calling thread runs a region of an emulated device, each
   thread of the team sets the caller's answers on itself before it runs
   the team's function.  It keeps them after: tasks of the team may run
   on it in the team's final barrier, after the function, and libgomp's
   threads of a region's team serve only that region's thread, which
   ends with the region (and takes its pool of threads with it).  A
   thread that started a team so keeps passing its answers, "host" ones
   included (a reverse-offload region, which runs host code on it,
   reuses the same threads), to every team it starts later.  Elsewhere
   the entry points are libgomp's, at the cost of a thread-local test.
   libgomp's own teams (GOMP_teams_reg, the host's teams construct) run
   on the calling thread.  */
static void
put_team_identity (FILE *f)
{
  fputs ("static __thread int mko_team_marked"
	 " __attribute__ ((tls_model (\"initial-exec\")));\n\n"
	 /* HEAD first: libgomp's GOMP_parallel_reductions reads the
	    address of the reductions from the first word of the data it
	    is given.  */
	 "struct mko_team\n"
	 "{\n"
	 "  void *head;\n"
	 "  void (*fn) (void *);\n"
	 "  void *data;\n"
	 "  int device_num, acc_device;\n"
	 "};\n\n"
	 "static void\n"
	 "mko_team_run (void *arg)\n"
	 "{\n"
	 "  const struct mko_team *t = arg;\n"
	 "  mko_device_num = t->device_num;\n"
	 "  mko_acc_device = t->acc_device;\n"
	 "  mko_team_marked |= t->device_num >= 0;\n"
	 "  t->fn (t->data);\n"
	 "}\n\n"
	 /* Whether the calling thread's teams need their answers set, and
	    so where: in *T.  */
	 "static int\n"
	 "mko_team_wrap (struct mko_team *t, void (*fn) (void *), void *data)\n"
	 "{\n"
	 "  if (mko_device_num < 0 && !mko_team_marked)\n"
	 "    return 0;\n"
	 "  mko_team_marked = 1;\n"
	 "  t->head = NULL;\n"
	 "  t->fn = fn;\n"
	 "  t->data = data;\n"
	 "  t->device_num = mko_device_num;\n"
	 "  t->acc_device = mko_acc_device;\n"
	 "  return 1;\n"
	 "}\n\n"
	 /* libgomp's NAME, found once (as mko_libgfortran finds
	    libgfortran's).  */
	 "static void *\n"
	 "mko_libgomp (void **cache, const char *name)\n"
	 "{\n"
	 "  void *fn = __atomic_load_n (cache, __ATOMIC_ACQUIRE);\n"
	 "  if (fn)\n"
	 "    return fn;\n"
	 "  fn = dlsym (RTLD_NEXT, name);\n"
	 "  if (!fn)\n"
	 "    fn = dlsym (RTLD_DEFAULT, name);\n"
	 "  if (!fn)\n"
	 "    {\n"
	 "      fprintf (stderr, \"offloadkit: libgomp has no %s\\n\", name);\n"
	 "      abort ();\n"
	 "    }\n"
	 "  __atomic_store_n (cache, fn, __ATOMIC_RELEASE);\n"
	 "  return fn;\n"
	 "}\n\n", f);
  /* Each: its name, return type, parameters after FN and DATA, and their
     names; HEAD: libgomp reads the first word of DATA.  */
  static const struct
  {
    const char *name, *ret, *params, *args;
    bool head;
  } fns[] = {
    { "GOMP_parallel", "void", "unsigned num_threads, unsigned flags",
      "num_threads, flags", false },
    { "GOMP_parallel_reductions", "unsigned",
      "unsigned num_threads, unsigned flags", "num_threads, flags", true },
    { "GOMP_parallel_sections", "void",
      "unsigned num_threads, unsigned count, unsigned flags",
      "num_threads, count, flags", false },
#define MKO_LOOP_CHUNKED(kind)						\
    { "GOMP_parallel_loop_" kind, "void",				\
      "unsigned num_threads, long start, long end, long incr, long chunk, "\
      "unsigned flags", "num_threads, start, end, incr, chunk, flags", false }
#define MKO_LOOP_RUNTIME(kind)						\
    { "GOMP_parallel_loop_" kind, "void",				\
      "unsigned num_threads, long start, long end, long incr, "	\
      "unsigned flags", "num_threads, start, end, incr, flags", false }
    MKO_LOOP_CHUNKED ("static"),
    MKO_LOOP_CHUNKED ("dynamic"),
    MKO_LOOP_CHUNKED ("guided"),
    MKO_LOOP_CHUNKED ("nonmonotonic_dynamic"),
    MKO_LOOP_CHUNKED ("nonmonotonic_guided"),
    MKO_LOOP_RUNTIME ("runtime"),
    MKO_LOOP_RUNTIME ("nonmonotonic_runtime"),
    MKO_LOOP_RUNTIME ("maybe_nonmonotonic_runtime"),
#undef MKO_LOOP_CHUNKED
#undef MKO_LOOP_RUNTIME
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    {
      bool is_void = strcmp (fns[i].ret, "void") == 0;
      fprintf (f, "%s %s (void (*) (void *), void *, %s)"
	       " __attribute__ ((weak, visibility (\"hidden\")));\n\n"
	       "%s\n"
	       "%s (void (*fn) (void *), void *data, %s)\n"
	       "{\n"
	       "  static void *cache;\n"
	       "  %s (*lib) (void (*) (void *), void *, %s)\n"
	       "    = (%s (*) (void (*) (void *), void *, %s))"
	       " mko_libgomp (&cache, \"%s\");\n"
	       "  struct mko_team t;\n"
	       "  if (!mko_team_wrap (&t, fn, data))\n"
	       "    %slib (fn, data, %s);\n"
	       "%s"
	       "%s"
	       "  %slib (mko_team_run, &t, %s);\n"
	       "}\n\n",
	       fns[i].ret, fns[i].name, fns[i].params,
	       fns[i].ret, fns[i].name, fns[i].params,
	       fns[i].ret, fns[i].params, fns[i].ret, fns[i].params,
	       fns[i].name,
	       is_void ? "{\n      " : "return ", fns[i].args,
	       is_void ? "      return;\n    }\n" : "",
	       fns[i].head ? "  t.head = *(void **) data;\n" : "",
	       is_void ? "" : "return ", fns[i].args);
    }
}

/* gfortran's STOP and ERROR STOP statements call libgfortran, which ends
   the program.  Device code links the device's libgfortran instead, GCC's
   minimal one (libgfortran/runtime/minimal.c): it prints the statement's
   words on standard error, but neither the floating-point exceptions
   signalling nor the "Error termination" the host's adds, and then calls
   the device's exit, which on an nvidia device traps (GCC 12 and 14 map
   exit to abort there, PR85463; GCC 16's exit traps) and on a radeon
   device ends the process with the status's low byte.  The wrapper
   interposes the four entry points (hidden and weak, as above): in an
   emulated region they print as the minimal libgfortran does and call the
   device exit function that the plugin sets in the thread-local
   mko_device_exit (descriptor version 4's device_exit_slot); elsewhere
   they call libgfortran's, found with dlsym.  The signatures are
   libgfortran's (runtime/stop.c) in GCC 12 to 16.  */
static void
put_fortran_stop (FILE *f)
{
  /* Initial-exec, as mko_device_num (put_device_identity); one more
     pointer of static TLS.  */
  fputs ("static __thread ok_device_exit_fn *mko_device_exit"
	 " __attribute__ ((tls_model (\"initial-exec\")));\n\n"
	 "static ok_device_exit_fn **\n"
	 "mko_device_exit_slot (void)\n"
	 "{\n"
	 "  return &mko_device_exit;\n"
	 "}\n\n"
	 /* After the next object in the lookup order (the program's own
	    definitions are hidden, so not there), else anywhere: a
	    library loaded before libgfortran has it after it.  */
	 "static void *\n"
	 "mko_libgfortran (const char *name)\n"
	 "{\n"
	 "  void *fn = dlsym (RTLD_NEXT, name);\n"
	 "  return fn ? fn : dlsym (RTLD_DEFAULT, name);\n"
	 "}\n\n"
	 /* As the minimal libgfortran's estr_write: straight to file
	    descriptor 2.  The results are looked at only because glibc
	    asks for it: with standard error gone there is nothing left
	    to do.  */
	 "static void\n"
	 "mko_stop_words (const char *what, const char *string, size_t len)\n"
	 "{\n"
	 "  if (write (2, what, strlen (what)) < 0\n"
	 "      || (len > 0 && write (2, string, len) < 0)\n"
	 "      || write (2, \"\\n\", 1) < 0)\n"
	 "    return;\n"
	 "}\n\n"
	 /* The device's exit, or, where no libgfortran was found outside
	    a region, the host's.  */
	 "static void __attribute__ ((noreturn))\n"
	 "mko_stop_exit (int status)\n"
	 "{\n"
	 "  if (mko_device_num >= 0 && mko_device_exit)\n"
	 "    mko_device_exit (status);\n"
	 "  exit (status);\n"
	 "}\n\n", f);
  static const struct
  {
    const char *name, *params, *args, *words, *status;
    bool numeric;
  } fns[] = {
    { "_gfortran_stop_numeric", "int code, _Bool quiet", "code, quiet",
      "STOP ", "code", true },
    { "_gfortran_stop_string", "const char *string, size_t len, _Bool quiet",
      "string, len, quiet", "STOP ", "0", false },
    { "_gfortran_error_stop_numeric", "int code, _Bool quiet", "code, quiet",
      "ERROR STOP ", "code", true },
    { "_gfortran_error_stop_string",
      "const char *string, size_t len, _Bool quiet", "string, len, quiet",
      "ERROR STOP ", "1", false },
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    {
      fprintf (f, "void %s (%s)"
	       " __attribute__ ((weak, visibility (\"hidden\"), noreturn));\n\n"
	       "void\n"
	       "%s (%s)\n"
	       "{\n"
	       "  if (mko_device_num < 0 || !mko_device_exit)\n"
	       "    {\n"
	       "      void (*lib) (%s) = (void (*) (%s)) mko_libgfortran (\"%s\");\n"
	       "      if (lib)\n"
	       "        lib (%s);\n"
	       "    }\n"
	       "  if (!quiet)\n",
	       fns[i].name, fns[i].params, fns[i].name, fns[i].params,
	       fns[i].params, fns[i].params, fns[i].name, fns[i].args);
      if (fns[i].numeric)
	fprintf (f, "    {\n"
		 "      char num[16];\n"
		 "      snprintf (num, sizeof num, \"%%d\", code);\n"
		 "      mko_stop_words (\"%s\", num, strlen (num));\n"
		 "    }\n", fns[i].words);
      else if (strcmp (fns[i].words, "STOP ") == 0)
	/* A blank STOP says nothing.  */
	fprintf (f, "    {\n"
		 "      if (string)\n"
		 "        mko_stop_words (\"%s\", string, len);\n"
		 "    }\n", fns[i].words);
      else
	fprintf (f, "    mko_stop_words (\"%s\", string, len);\n",
		 fns[i].words);
      fprintf (f, "  mko_stop_exit (%s);\n"
	       "}\n\n", fns[i].status);
    }
}

static void
put_wrapper (FILE *f, const struct mko_ctx *ctx)
{
  /* The form of registration of the GCC that compiles this wrapper (the
     program links its libgomp or a newer one, which accepts it; an older
     one stops with "Library too old for offload").  */
  unsigned lib = mko_gomp_version (ctx);
  unsigned version = OK_GOMP_VERSION_PACK (lib, OK_DEV_VERSION);

  fprintf (f, "/* Generated by mkoffload (offloadkit %s) for %s;"
	   " do not edit.  */\n\n", PACKAGE_VERSION, ctx->target->name);
  /* dlsym's RTLD_NEXT and RTLD_DEFAULT (put_fortran_stop).  */
  fputs ("#define _GNU_SOURCE 1\n\n", f);
  fputs (mko_desc_header, f);
  fputs ("\n#include <dlfcn.h>\n#include <stddef.h>\n#include <stdio.h>\n"
	 "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n\n",
	 f);

  /* The images, in the read-only data of this object only: the labels
     are not global, so several wrappers can be linked together.  Each
     image starts 8-byte aligned (a cubin is an ELF file, read in place).  */
  fputs ("__asm__ (\"\\t.pushsection .rodata\\n\"\n", f);
  for (size_t i = 0; i < ctx->num_images; i++)
    {
      const struct mko_image *im = &ctx->images[i];
      fprintf (f, "\t \"\\t.balign 8\\n\"\n"
	       "\t \"mko_image_%zu_start:\\n\"\n"
	       "\t \"\\t.incbin ", i);
      put_asm_string (f, im->path);
      fputs ("\\n\"\n", f);
      if (im->add_nul)
	fputs ("\t \"\\t.byte 0\\n\"\n", f);
      fprintf (f, "\t \"mko_image_%zu_end:\\n\"\n", i);
    }
  fputs ("\t \"\\t.popsection\\n\");\n\n", f);
  /* The note that says which kind of device the images are for (see
     OK_NOTE_OWNER): name size (with its NUL), descriptor size, type,
     name, descriptor, each padded to 4 bytes.  */
  fprintf (f, "__asm__ (\"\\t.pushsection .note.offloadkit,\\\"a\\\",%%note\\n\"\n"
	   "\t \"\\t.balign 4\\n\"\n"
	   "\t \"\\t.long %zu, 4, %u\\n\"\n"
	   "\t \"\\t.asciz \\\"%s\\\"\\n\"\n"
	   "\t \"\\t.balign 4\\n\"\n"
	   "\t \"\\t.long %d\\n\"\n"
	   "\t \"\\t.popsection\\n\");\n\n",
	   sizeof OK_NOTE_OWNER, OK_NOTE_IMAGES, OK_NOTE_OWNER,
	   ctx->target->device_type);
  for (size_t i = 0; i < ctx->num_images; i++)
    fprintf (f, "extern const unsigned char mko_image_%zu_start[]"
	     " __attribute__ ((visibility (\"hidden\")));\n"
	     "extern const unsigned char mko_image_%zu_end[]"
	     " __attribute__ ((visibility (\"hidden\")));\n", i, i);
  fputs ("\n", f);

  /* Bounds of the host tables, from GCC's crtoffloadbegin/end.o.  */
  static const char *const tables[] = {
    "__offload_func_table", "__offload_funcs_end",
    "__offload_var_table", "__offload_vars_end"
  };
  for (size_t i = 0; i < 4; i++)
    fprintf (f, "extern const void *const %s[]"
	     " __attribute__ ((visibility (\"hidden\")));\n", tables[i]);
  fputs ("\n", f);

  put_name_table (f, "mko_func_names", &ctx->func_names);
  put_name_table (f, "mko_var_names", &ctx->var_names);

  /* Per-image kernel information (GCN: registers and segment sizes read
     from the code object's kernel descriptors), one entry per function.  */
  for (size_t i = 0; i < ctx->num_images; i++)
    {
      const struct ok_kernel_info *ki = ctx->images[i].kernel_info;
      if (!ki || ctx->func_names.n == 0)
	continue;
      fprintf (f, "static const struct ok_kernel_info mko_kernel_info_%zu"
	       "[%zu] = {\n", i, ctx->func_names.n);
      for (size_t k = 0; k < ctx->func_names.n; k++)
	fprintf (f, "  { %uu, %uu, %uu, %uu, %uu, %uu },\n",
		 (unsigned) ki[k].sgprs, (unsigned) ki[k].vgprs,
		 (unsigned) ki[k].group_segment_size,
		 (unsigned) ki[k].private_segment_size,
		 (unsigned) ki[k].kernarg_size, (unsigned) ki[k].flags);
      fputs ("};\n\n", f);
    }

  /* Per-image OpenACC launch dimensions, one entry per function; images
     with the same table (the PTX and its cubins) share one.  */
  for (size_t i = 0; i < ctx->num_images; i++)
    {
      const struct ok_oacc_dims *od = ctx->images[i].oacc_dims;
      if (!od || ctx->func_names.n == 0 || oacc_dims_owner (ctx, i) != i)
	continue;
      fprintf (f, "static const struct ok_oacc_dims mko_oacc_dims_%zu"
	       "[%zu] = {\n", i, ctx->func_names.n);
      for (size_t k = 0; k < ctx->func_names.n; k++)
	fprintf (f, "  { { %uu, %uu, %uu }, %#xu },\n",
		 (unsigned) od[k].dim[0], (unsigned) od[k].dim[1],
		 (unsigned) od[k].dim[2], (unsigned) od[k].flags);
      fputs ("};\n\n", f);
    }

  /* One descriptor per image; they share the name tables.  */
  fprintf (f, "static const struct ok_tgt_desc mko_targets[%zu] = {\n",
	   ctx->num_images);
  for (size_t i = 0; i < ctx->num_images; i++)
    {
      const struct mko_image *im = &ctx->images[i];
      const char *fmt_name = image_format_name (im->format);
      fputs ("  {\n", f);
      fprintf (f, "    .device_type = %d,\n", ctx->target->device_type);
      if (fmt_name)
	fprintf (f, "    .image_format = %s,\n", fmt_name);
      else
	fprintf (f, "    .image_format = %uu,\n", (unsigned) im->format);
      fprintf (f, "    .arch = %uu,\n", (unsigned) im->arch);
      fprintf (f, "    .flags = %#xu,\n"
	       "    .image_start = mko_image_%zu_start,\n"
	       "    .image_end = mko_image_%zu_end,\n", (unsigned) im->flags,
	       i, i);
      fprintf (f, "    .num_funcs = %zu,\n", ctx->func_names.n);
      fprintf (f, "    .num_vars = %zu,\n", ctx->var_names.n);
      fprintf (f, "    .func_names = %s,\n",
	       ctx->func_names.n ? "mko_func_names" : "0");
      fprintf (f, "    .var_names = %s,\n",
	       ctx->var_names.n ? "mko_var_names" : "0");
      if (im->kernel_info && ctx->func_names.n)
	fprintf (f, "    .kernel_info = mko_kernel_info_%zu,\n", i);
      else
	fputs ("    .kernel_info = 0,\n", f);
      if (im->oacc_dims && ctx->func_names.n)
	fprintf (f, "    .oacc_dims = mko_oacc_dims_%zu\n",
		 oacc_dims_owner (ctx, i));
      else
	fputs ("    .oacc_dims = 0\n", f);
      fputs (i + 1 < ctx->num_images ? "  },\n" : "  }\n", f);
    }
  fputs ("};\n\n", f);

  put_device_identity (f);
  put_team_identity (f);
  put_fortran_stop (f);

  fputs ("static const unsigned char *host_var_init_copy;\n\n", f);
  /* The descriptor begins with the 4-word host table of GCC 12 (the
     plugin reads it there in every form).  */
  static const char desc_init[] =
	 "  .host = {\n"
	 "    (void *const *) __offload_func_table,\n"
	 "    (void *const *) __offload_funcs_end,\n"
	 "    (void *const *) __offload_var_table,\n"
	 "    (void *const *) __offload_vars_end\n"
	 "  },\n"
	 "  .magic = OK_DESC_MAGIC,\n"
	 "  .desc_version = OK_DESC_VERSION,\n"
	 "  .dev_version = OK_DEV_VERSION,\n"
	 "  .num_targets = sizeof mko_targets / sizeof mko_targets[0],\n"
	 "  .flags = 0,\n"
	 "  .targets = mko_targets,\n"
	 "  .host_var_init = &host_var_init_copy,\n"
	 "  .device_num_slot = mko_device_num_slot,\n"
	 "  .acc_device_slot = mko_acc_device_slot,\n"
	 "  .device_exit_slot = mko_device_exit_slot\n";
  if (lib == 1)
    {
      /* GCC 12: the descriptor is both host_table and target data.  */
      fprintf (f, "static const struct ok_openmp_target __OPENMP_TARGET__ = {"
	       "\n%s};\n\n", desc_init);
      fputs ("#define MKO_HOST_TABLE (&__OPENMP_TARGET__)\n"
	     "#define MKO_TARGET_DATA (&__OPENMP_TARGET__)\n", f);
    }
  else
    {
      /* GCC 13 and newer: libgomp reads the first word of the target data
	 as the OpenMP requires mask and gives the plugin the address of
	 the second, our unchanged descriptor.  */
      fprintf (f, "static const struct mko_target_data\n"
	       "{\n"
	       "  uintptr_t omp_requires_mask;\n"
	       "  struct ok_openmp_target desc;\n"
	       "} mko_target_data = {\n"
	       "  %#xu,\n"
	       "  {\n%s  }\n"
	       "};\n\n"
	       "_Static_assert (offsetof (struct mko_target_data, desc)"
	       " == sizeof (void *),\n"
	       "                \"libgomp passes the plugin &data[1]\");\n\n",
	       (unsigned) ctx->omp_requires, desc_init);
      fputs ("#define MKO_TARGET_DATA (&mko_target_data)\n", f);
      if (lib == 2)
	fputs ("#define MKO_HOST_TABLE (&mko_target_data.desc)\n", f);
      else
	{
	  /* GCC 14 and newer: libgomp reads a 6-word host table, with
	     the indirect functions' table of crtoffloadbegin/end.o.  */
	  fputs ("extern const void *const __offload_ind_func_table[]"
		 " __attribute__ ((visibility (\"hidden\")));\n"
		 "extern const void *const __offload_ind_funcs_end[]"
		 " __attribute__ ((visibility (\"hidden\")));\n\n"
		 "static const void *const mko_host_table[6] = {\n"
		 "  __offload_func_table, __offload_funcs_end,\n"
		 "  __offload_var_table, __offload_vars_end,\n"
		 "  __offload_ind_func_table, __offload_ind_funcs_end\n"
		 "};\n\n"
		 "#define MKO_HOST_TABLE (mko_host_table)\n", f);
	}
    }

  fprintf (f, "#define MKO_VERSION %#xu\n", version);
  fprintf (f, "#define MKO_DEVICE_TYPE %d\n", ctx->target->device_type);
  fputs ("#define MKO_LINK_BIT ((uintptr_t) 1 << (sizeof (uintptr_t) * 8 - 1))"
	 "\n\n"
	 "extern void GOMP_offload_register_ver (unsigned, const void *, int,"
	 " const void *) __attribute__ ((weak));\n"
	 "extern void GOMP_offload_unregister_ver (unsigned, const void *, int,"
	 " const void *) __attribute__ ((weak));\n\n", f);

  /* Snapshot of the initial values of the host variables, so that an
     emulated device can start from them however main changes the host
     copies.  Link variables are skipped: their device copy is a pointer
     that libgomp sets.  Only emulated devices read it, and they exist
     only with OFFLOADKIT_EMULATE set (emu-setting.c), so without it no
     snapshot is taken: a large declare target array would otherwise cost
     its size and a copy at every start-up on real GPUs.  (A program that
     sets OFFLOADKIT_EMULATE itself after start-up gets emulated devices
     that start from the host values at image load, as when the snapshot
     cannot be allocated.)  */
  fputs ("static void __attribute__ ((constructor))\n"
	 "mko_register (void)\n"
	 "{\n"
	 "  const uintptr_t *vars = (const uintptr_t *) __offload_var_table;\n"
	 "  const uintptr_t *end = (const uintptr_t *) __offload_vars_end;\n"
	 "  const uintptr_t *p;\n"
	 "  const char *emulate = getenv (\"OFFLOADKIT_EMULATE\");\n"
	 "  size_t total = 0;\n"
	 "  unsigned char *copy = 0;\n\n"
	 "  if (emulate && *emulate)\n"
	 "    {\n"
	 "      for (p = vars; p + 1 < end; p += 2)\n"
	 "        if (!(p[1] & MKO_LINK_BIT))\n"
	 "          total += p[1];\n"
	 "      copy = (unsigned char *) malloc (total ? total : 1);\n"
	 "    }\n"
	 "  if (copy)\n"
	 "    {\n"
	 "      size_t off = 0;\n"
	 "      for (p = vars; p + 1 < end; p += 2)\n"
	 "        if (!(p[1] & MKO_LINK_BIT))\n"
	 "          {\n"
	 "            memcpy (copy + off, (const void *) p[0], p[1]);\n"
	 "            off += p[1];\n"
	 "          }\n"
	 "      host_var_init_copy = copy;\n"
	 "    }\n"
	 "  /* Without libgomp (see omp_get_initial_device above) there is\n"
	 "     nothing to register with, and nothing would offload.  */\n"
	 "  if (GOMP_offload_register_ver)\n"
	 "    GOMP_offload_register_ver (MKO_VERSION, MKO_HOST_TABLE,\n"
	 "                               MKO_DEVICE_TYPE, MKO_TARGET_DATA);\n"
	 "}\n\n"
	 "static void __attribute__ ((destructor))\n"
	 "mko_unregister (void)\n"
	 "{\n"
	 "  if (GOMP_offload_unregister_ver)\n"
	 "    GOMP_offload_unregister_ver (MKO_VERSION, MKO_HOST_TABLE,\n"
	 "                                 MKO_DEVICE_TYPE, MKO_TARGET_DATA);\n"
	 "  free ((void *) host_var_init_copy);\n"
	 "  host_var_init_copy = 0;\n"
	 "}\n", f);
}

int
mko_write_wrapper (const struct mko_ctx *ctx, const char *cfile)
{
  FILE *f = fopen (cfile, "w");
  if (!f)
    {
      ok_error ("cannot create '%s': %s", cfile, strerror (errno));
      return -1;
    }
  errno = 0;
  put_wrapper (f, ctx);
  return ok_close_written (f, cfile);
}

int
mko_compile_wrapper (const struct mko_ctx *ctx, const char *cfile)
{
  struct mko_argv a = { 0 };
  /* Aux files (-save-temps) are named after the C file, as GCC's
     mkoffloads do.  */
  char *dumpbase = xstrdup (cfile);

  mko_argv_push (&a, ctx->collect_gcc);
  if (ctx->save_temps)
    mko_argv_push (&a, "-save-temps");
  if (ok_verbose)
    mko_argv_push (&a, "-v");
  mko_argv_push (&a, "-c");
  mko_argv_push (&a, "-O1");
  /* Always position-independent: the same object may end up in a shared
     library; -fpic only when that was all the user asked for.  */
  mko_argv_push (&a, ctx->fpic && !ctx->fPIC ? "-fpic" : "-fPIC");
  /* GCC 15 and newer name the host's ABI option (the one we gave the
     accel compiler, -foffload-abi=lp64, is the device's view of it).  */
  mko_argv_push (&a, ctx->host_abi_opts ? ctx->host_abi_opts : "-m64");
  mko_argv_push (&a, "-dumpdir");
  mko_argv_push (&a, "");
  mko_argv_push (&a, "-dumpbase");
  mko_argv_push (&a, dumpbase);
  mko_argv_push (&a, "-dumpbase-ext");
  mko_argv_push (&a, ".c");
  /* COLLECT_GCC may be g++, which would compile a .c file as C++.  */
  mko_argv_push (&a, "-xc");
  mko_argv_push (&a, cfile);
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, ctx->outname);
  int rc = ok_run_argv (a.v, NULL);
  free (a.v);
  free (dumpbase);
  return rc;
}
