/* The amdgcn-amdhsa offload target: GCC's amdgcn accel compiler compiles
   the LTO objects and links them (with LLVM's lld) into a code object, an
   AMD GPU ELF file for one GPU architecture, which we embed as it is.  One
   code object is built per -march asked for, so that one program runs on
   several GPU generations; the plugin picks the one of the device's ISA.

   Unlike GCC's mkoffload, which compiles to assembler, scrapes the text
   for the tables and register counts and then embeds the linked object
   as a C array, we let the accel driver link in one go and read the
   tables, kernel names and kernel descriptors from the linked object with
   libelf (common/gcn-code-object.c).

   The LTO objects must reach the accel driver as its only compiler
   inputs: it gives them to one lto1 (as a whole program, like GCC's
   mkoffload) only when every input it compiles is LTO.  With another
   source among them (our table labels as assembler, once) it
   compiles each object on its own, and then two units' static functions
   of the same name both define the global kernel descriptor NAME.kd and
   the link fails.  So the labels are assembled first, for each
   architecture, and given as an object.  */

#define _GNU_SOURCE 1
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "gcn-code-object.h"
#include "gomp-abi.h"
#include "mkoffload.h"
#include "offload-desc.h"
#include "run-command.h"

static int gcn_build (struct mko_ctx *ctx);
static int gcn_option (struct mko_ctx *ctx, const char *arg);

const struct mko_target mko_target = {
  .name = "amdgcn-amdhsa",
  .device_type = OK_GOMP_DEVICE_GCN,
  .accel_cc = OK_ACCEL_TRIPLET "-accel-amdgcn-amdhsa-gcc",
  .accel_cc_env = "OFFLOADKIT_GCN_CC",
  .package_suffix = "offload-amdgcn",
  .build = gcn_build,
  .option = gcn_option,
  .help_options =
"  -march=GPU[,GPU]...     GPU architectures to build code objects for:\n"
"                          fiji (also gfx803; GCC 12 to 14), gfx900, gfx906,\n"
"                          gfx908, gfx90a (GCC 13 and newer), gfx1030 (GCC 14\n"
"                          and newer); the option may be repeated, and every\n"
"                          architecture named gets its own code object in the\n"
"                          program (give it to gcc as -foffload-options=\n"
"                          amdgcn-amdhsa=-march=gfx900,gfx906); the default\n"
"                          is that of the running GCC's accel compiler: fiji\n"
"                          for GCC 12 and 13, gfx900 for 14 and 15, gfx90a\n"
"                          for 16\n",
  .help_env = NULL,
};

/* The architectures the amdgcn back ends of GCC 12 to 16 know and the
   plugin can load (from each version's gcn mkoffload.cc and
   gcn-devices.def), with the versions that have them: GCC 15 dropped
   fiji.  */
static const struct gcn_arch
{
  const char *name;		/* For the accel compiler's -march=.  */
  const char *alias;		/* Also accepted, or NULL.  */
  uint32_t mach;		/* ELF e_flags EF_AMDGPU_MACH_*.  */
  int min_gcc, max_gcc;		/* GCC versions that have it.  */
} gcn_archs[] = {
  { "fiji", "gfx803", OK_EF_AMDGPU_MACH_GFX803, 12, 14 },
  { "gfx900", NULL, OK_EF_AMDGPU_MACH_GFX900, 12, MKO_GCC_MAX },
  { "gfx906", NULL, OK_EF_AMDGPU_MACH_GFX906, 12, MKO_GCC_MAX },
  { "gfx908", NULL, OK_EF_AMDGPU_MACH_GFX908, 12, MKO_GCC_MAX },
  { "gfx90a", NULL, OK_EF_AMDGPU_MACH_GFX90A, 13, MKO_GCC_MAX },
  { "gfx1030", NULL, OK_EF_AMDGPU_MACH_GFX1030, 14, MKO_GCC_MAX },
};
#define NUM_ARCHS (sizeof gcn_archs / sizeof gcn_archs[0])

/* The values of the -march= options, in order.  */
static struct mko_argv march_options;

static int
gcn_option (struct mko_ctx *ctx, const char *arg)
{
  (void) ctx;
  if (strncmp (arg, "-march=", 7) != 0)
    return 0;
  mko_argv_push (&march_options, arg + 7);
  return 1;
}

/* The architecture GCC VERSION's accel compiler builds for without
   -march, as its mkoffload does: fiji in GCC 12 and 13
   (EF_AMDGPU_MACH_AMDGCN_GFX803 in their mkoffload.cc); gfx900 in 14 and
   15 (mkoffload.cc's default, which Debian's configuration keeps: its
   default multilib "." is gfx900); gfx90a in 16 (configured as the
   default architecture: the multilib "." of Debian's
   gcc-16-offload-amdgcn is gfx90a, gfx900 being left to
   gfx9-generic).  */
static const char *
default_arch (int version)
{
  if (version <= 13)
    return "fiji";
  if (version <= 15)
    return "gfx900";
  return "gfx90a";
}

/* Turn the -march= options into the set of architectures SEL (indices
   into gcn_archs, ascending), the running GCC's default when none was
   given.  Return the count, or -1 after reporting one error.  */
static int
parse_marches (const struct mko_ctx *ctx, size_t *sel)
{
  int chosen[NUM_ARCHS] = { 0 };
  for (size_t i = 0; i < march_options.n; i++)
    for (const char *p = march_options.v[i];;)
      {
	const char *comma = strchr (p, ',');
	size_t len = comma ? (size_t) (comma - p) : strlen (p);
	size_t a;
	for (a = 0; a < NUM_ARCHS; a++)
	  if ((strlen (gcn_archs[a].name) == len
	       && memcmp (gcn_archs[a].name, p, len) == 0)
	      || (gcn_archs[a].alias && strlen (gcn_archs[a].alias) == len
		  && memcmp (gcn_archs[a].alias, p, len) == 0))
	    break;
	if (a == NUM_ARCHS || ctx->gcc_version < gcn_archs[a].min_gcc
	    || ctx->gcc_version > gcn_archs[a].max_gcc)
	  {
	    char *known = xstrdup ("");
	    for (size_t k = 0; k < NUM_ARCHS; k++)
	      if (ctx->gcc_version >= gcn_archs[k].min_gcc
		  && ctx->gcc_version <= gcn_archs[k].max_gcc)
		{
		  char *t = xasprintf ("%s%s%s%s%s", known, *known ? ", " : "",
				       gcn_archs[k].name,
				       gcn_archs[k].alias ? ", " : "",
				       gcn_archs[k].alias ? gcn_archs[k].alias
				       : "");
		  free (known);
		  known = t;
		}
	    ok_error ("-march=%s: %s GPU architecture '%.*s' (known to GCC"
		      " %d: %s)", march_options.v[i],
		      a == NUM_ARCHS ? "unknown" : "unsupported", (int) len, p,
		      ctx->gcc_version, known);
	    return -1;
	  }
	chosen[a] = 1;
	if (!comma)
	  break;
	p = comma + 1;
      }
  if (march_options.n == 0)
    for (size_t a = 0; a < NUM_ARCHS; a++)
      if (strcmp (gcn_archs[a].name, default_arch (ctx->gcc_version)) == 0)
	chosen[a] = 1;
  int n = 0;
  for (size_t a = 0; a < NUM_ARCHS; a++)
    if (chosen[a])
      sel[n++] = a;
  return n;
}

/* Debian's gcc-12-offload-amdgcn lacks the device libgomp for some
   architectures (gfx908): the link would then fail in ld with undefined
   GOMP_* symbols.  Ask the accel driver for its multilib directory of
   ARCH (where its libgcc.a is) and check that libgomp.a is there.  When
   the driver cannot tell, the compile itself will report.  */
static int
check_device_libgomp (struct mko_ctx *ctx, const struct gcn_arch *arch)
{
  char *march = xasprintf ("-march=%s", arch->name);
  const char *argv[] = { ctx->accel_cc, march, "-print-libgcc-file-name",
			 NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .unset_env = mko_accel_unset_env,
			    .out = &out, .quiet = 1 };
  int rc = 0;
  if (ok_run_command (&cmd) == 0 && out && out[0] == '/')
    {
      out[strcspn (out, "\n")] = '\0';
      char *slash = strrchr (out, '/');
      if (slash && strcmp (slash, "/libgcc.a") == 0
	  && access (out, F_OK) == 0)
	{
	  *slash = '\0';
	  char *libgomp = xasprintf ("%s/libgomp.a", out);
	  if (access (libgomp, F_OK) != 0)
	    {
	      ok_error ("-march=%s: the device libgomp '%s' is missing:"
			" gcc-%d-%s provides none for %s; build for another"
			" architecture (the default is %s) instead, or use an"
			" accel compiler that has it (OFFLOADKIT_GCN_CC)",
			arch->name, libgomp, ctx->gcc_version,
			mko_target.package_suffix, arch->name,
			default_arch (ctx->gcc_version));
	      rc = -1;
	    }
	  free (libgomp);
	}
    }
  free (out);
  free (march);
  return rc;
}

/* Assembler for an object linked before the device code: global labels
   at the start of the device's offload tables, as GCC's mkoffload adds
   (it edits the assembler text for them).  The HSA runtime loads no local
   symbols, so a "static" device variable cannot be found by name; through
   .offload_var_table a plugin reads the relocated table from device
   memory instead, as GCC's does.  .offload_func_table gives the device
   addresses of the functions, which a reverse-offload request names (GCC
   13+), and .offload_ind_func_table those of the `declare target
   indirect' functions (GCC 14+), which the plugin maps host addresses
   to.  Being the first contribution to each section (inputs are laid out
   in command-line order), every label is its table's start; read_image
   checks that of the variables.  */
static const char table_labels[] =
  "\t.section .gnu.offload_vars,\"aw\"\n"
  "\t.p2align 3\n"
  "\t.globl .offload_var_table\n"
  "\t.type .offload_var_table, @object\n"
  ".offload_var_table:\n"
  "\t.section .gnu.offload_funcs,\"aw\"\n"
  "\t.p2align 3\n"
  "\t.globl .offload_func_table\n"
  "\t.type .offload_func_table, @object\n"
  ".offload_func_table:\n"
  "\t.section .gnu.offload_ind_funcs,\"aw\"\n"
  "\t.p2align 3\n"
  "\t.globl .offload_ind_func_table\n"
  "\t.type .offload_ind_func_table, @object\n"
  ".offload_ind_func_table:\n";

/* The accel compiler command that assembles LABEL_SRC (table_labels)
   for ARCH into the object LABEL.  lld links only objects whose ELF flags
   agree (the architecture and its features, such as SRAM ECC), so the
   label is assembled with the machine and assembler options the device
   code gets.  */
static const char **
label_argv (struct mko_ctx *ctx, const struct gcn_arch *arch,
	    const char *label_src, const char *label)
{
  struct mko_argv a = { 0 };
  mko_argv_push (&a, ctx->accel_cc);
  if (ok_verbose)
    mko_argv_push (&a, "-v");
  for (size_t i = 0; i < ctx->asm_options.n; i++)
    mko_argv_push (&a, ctx->asm_options.v[i]);
  mko_argv_push (&a, xasprintf ("-march=%s", arch->name));
  mko_argv_push (&a, "-c");
  mko_argv_push (&a, "-xassembler");
  mko_argv_push (&a, label_src);
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, label);
  return a.v;
}

/* The accel compiler command that compiles CTX's LTO inputs for ARCH in
   one lto1 and links them into IMAGE, the object LABEL first.  */
static const char **
accel_argv (struct mko_ctx *ctx, const struct gcn_arch *arch,
	    const char *image, const char *label)
{
  /* The requires mask file comes with the command's environment.  */
  struct mko_argv a = { 0 };
  /* -xnone: LABEL is a linker input, not a source to compile.  */
  const char *const inputs[] = { "-xnone", label, NULL };
  const char *const options[] = {
    xasprintf ("-march=%s", arch->name), NULL
  };
  mko_accel_argv (ctx, &a, inputs, options,
		  xasprintf ("%s.mkoffload.%s", ctx->dumpbase, arch->name));
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, image);
  /* The device runtime; GCC's mkoffload links it explicitly too.  */
  mko_argv_push (&a, "-lgomp");
  mko_accel_libs (ctx, &a);
  return a.v;
}

/* Read IMAGE, built for ARCH, and record its tables in CTX (the first
   image) or check that they are the same (the others: every image must
   list the same functions and variables in the same order, since the
   descriptor's name tables are shared).  Store the kernel information of
   the functions, in table order, in *INFO.  */
static int
read_image (struct mko_ctx *ctx, const struct gcn_arch *arch,
	    const char *image, int first, struct ok_kernel_info **info)
{
  struct ok_gcn_code_object co;
  if (ok_gcn_read_code_object_file (image, &co) < 0)
    return -1;
  int rc = -1;
  if (co.mach != arch->mach)
    {
      ok_error ("'%s': the accel compiler built a code object for GPU"
		" %#x (ELF flags %#x), not for %s (%#x)", image,
		(unsigned) co.mach, (unsigned) co.e_flags, arch->name,
		(unsigned) arch->mach);
      goto out;
    }
  if (co.num_vars
      && (!co.has_var_table_sym || co.var_table_sym != co.var_table_addr))
    {
      ok_error ("'%s': the global label .offload_var_table is %s the start"
		" of the variable table (%#" PRIx64 ")", image,
		co.has_var_table_sym ? "not at" : "missing from",
		co.var_table_addr);
      goto out;
    }
  if (!first
      && (co.num_funcs != ctx->func_names.n
	  || co.num_vars != ctx->var_names.n))
    {
      ok_error ("'%s': the code object for %s has %zu functions and %zu"
		" variables, the first one %zu and %zu", image, arch->name,
		co.num_funcs, co.num_vars, ctx->func_names.n,
		ctx->var_names.n);
      goto out;
    }
  for (size_t i = 0; i < co.num_funcs; i++)
    {
      const char *nm = co.kernels[co.funcs[i]].name;
      if (first)
	mko_argv_push (&ctx->func_names, xstrdup (nm));
      else if (strcmp (nm, ctx->func_names.v[i]) != 0)
	{
	  ok_error ("'%s': function %zu of the code object for %s is '%s',"
		    " of the first one '%s'", image, i, arch->name, nm,
		    ctx->func_names.v[i]);
	  goto out;
	}
    }
  for (size_t i = 0; i < co.num_vars; i++)
    {
      const char *nm = co.vars[i].name;
      if (first)
	mko_argv_push (&ctx->var_names, xstrdup (nm));
      else if (strcmp (nm, ctx->var_names.v[i]) != 0)
	{
	  ok_error ("'%s': variable %zu of the code object for %s is '%s',"
		    " of the first one '%s'", image, i, arch->name, nm,
		    ctx->var_names.v[i]);
	  goto out;
	}
    }
  *info = xcalloc (co.num_funcs ? co.num_funcs : 1, sizeof **info);
  for (size_t i = 0; i < co.num_funcs; i++)
    (*info)[i] = co.kernels[co.funcs[i]].info;
  if (ok_verbose)
    for (size_t i = 0; i < co.num_funcs; i++)
      ok_inform ("%s: kernel %s: %u SGPRs, %u VGPRs, %u bytes LDS, %u bytes"
		 " private", arch->name, ctx->func_names.v[i],
		 (*info)[i].sgprs, (*info)[i].vgprs,
		 (*info)[i].group_segment_size,
		 (*info)[i].private_segment_size);
  rc = 0;
out:
  ok_gcn_code_object_free (&co);
  return rc;
}

/* Run the N commands CMDS, in parallel, for the architectures SEL;
   WHAT says what each does, for the message when one fails.  Return 0
   when all exited with 0, else -1 after reporting one error.  */
static int
run_for_archs (struct ok_command *cmds, int n, const size_t *sel,
	       const char *what)
{
  size_t i;
  int status;
  int rc = ok_run_commands_checked (cmds, n, &i, &status);
  if (rc > 0)
    {
      ok_error ("'%s' exited with status %d (%s for %s)", cmds[i].argv[0],
		status, what, gcn_archs[sel[i]].name);
      return -1;
    }
  return rc;
}

static int
gcn_build (struct mko_ctx *ctx)
{
  size_t sel[NUM_ARCHS];
  int n = parse_marches (ctx, sel);
  if (n < 0)
    return -1;

  for (int i = 0; i < n; i++)
    if (check_device_libgomp (ctx, &gcn_archs[sel[i]]) < 0)
      return -1;

  const char *label_src = mko_intermediate (ctx, ".mkoffload.vartable.s");
  if (mko_write_file (label_src, table_labels,
		      sizeof table_labels - 1) < 0)
    return -1;

  struct ok_command labels[NUM_ARCHS], links[NUM_ARCHS];
  const char *images[NUM_ARCHS];
  const char *requires_files[NUM_ARCHS];
  memset (labels, 0, sizeof labels);
  memset (links, 0, sizeof links);
  for (int i = 0; i < n; i++)
    {
      const struct gcn_arch *arch = &gcn_archs[sel[i]];
      char *suffix = xasprintf (".mkoffload.%s.vartable.o", arch->name);
      const char *label = mko_intermediate (ctx, suffix);
      free (suffix);
      labels[i].argv = label_argv (ctx, arch, label_src, label);
      labels[i].unset_env = mko_accel_unset_env;
      suffix = xasprintf (".mkoffload.%s.hsaco", arch->name);
      images[i] = mko_intermediate (ctx, suffix);
      free (suffix);
      links[i].argv = accel_argv (ctx, arch, images[i], label);
      links[i].unset_env = mko_accel_unset_env;
      /* One requires file per architecture: they are built at once.  */
      links[i].set_env = mko_accel_env (ctx, arch->name, &requires_files[i]);
    }

  /* The architectures are built in parallel: each link is a whole LTO
     compile of the device code.  */
  if (run_for_archs (labels, n, sel, "assembling the variable table label")
      < 0
      || run_for_archs (links, n, sel, "building the code object") < 0)
    return -1;
  for (int i = 0; i < n; i++)
    if (mko_read_requires (ctx, requires_files[i]) < 0)
      return -1;

  for (int i = 0; i < n; i++)
    {
      const struct gcn_arch *arch = &gcn_archs[sel[i]];
      struct ok_kernel_info *info;
      if (read_image (ctx, arch, images[i], i == 0, &info) < 0)
	return -1;
      mko_add_image (ctx, images[i], 0, OK_IMAGE_GCN,
		     ok_gcn_arch_of_mach (arch->mach));
      ctx->images[ctx->num_images - 1].kernel_info = info;
      /* The device runtime linked in is the running GCC's: from 13 on
	 it reads the kernel arguments of GCN device version 3.  */
      if (ctx->gcc_version >= 13)
	ctx->images[ctx->num_images - 1].flags = OK_TGT_GCN_KERNARGS_V3;
    }
  for (int i = 0; i < n; i++)
    {
      free ((void *) labels[i].argv);
      free ((void *) links[i].argv);
    }
  return 0;
}
