/* The amdgcn-amdhsa offload target: GCC's amdgcn accel compiler compiles
   the LTO objects and links them (with LLVM's lld) into a code object, an
   AMD GPU ELF file for one GPU architecture, which we embed as it is.  One
   code object is built per -march asked for, so that one program runs on
   several GPU generations; the plugin picks the one of the device's ISA.

   Unlike GCC's mkoffload, which compiles to assembler, scrapes the text
   for the tables and register counts and then embeds the linked object
   as a C array, we let the accel driver link in one go and read the
   tables, kernel names and kernel descriptors from the linked object with
   libelf (common/gcn-code-object.c).  OpenACC programs are the exception:
   the launch dimensions the compiler fixed exist only as ";;
   OPENACC-DIMS:" comments in its assembler output, so for them the accel
   driver compiles to assembler first, which we read, and then assembles
   and links that (as GCC's mkoffload does).

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
#include "file-io.h"
#include "gcn-code-object.h"
#include "gcn-oacc-dims.h"
#include "gomp-abi.h"
#include "mkoffload.h"
#include "offload-desc.h"
#include "run-command.h"

static int gcn_build (struct mko_ctx *ctx);
static int gcn_option (struct mko_ctx *ctx, const char *arg);

const struct mko_target mko_target = {
  .name = "amdgcn-amdhsa",
  .device_type = OK_GOMP_DEVICE_GCN,
  .accel_cc_env = "OFFLOADKIT_GCN_CC",
  .build = gcn_build,
  .option = gcn_option,
  .help_options =
"  -march=GPU[,GPU]...     GPU architectures to build code objects for, each\n"
"                          that the running GCC's amdgcn back end knows: GCC\n"
"                          12 fiji (also gfx803), gfx900, gfx906, gfx908; 13\n"
"                          also gfx90a; 14 also gfx90c, gfx1030, gfx1036,\n"
"                          gfx1100, gfx1103; 15 without fiji, also gfx902,\n"
"                          gfx904, gfx909, gfx1031 to gfx1035, gfx1101,\n"
"                          gfx1102, gfx1150 to gfx1153 and the generic\n"
"                          targets gfx9-generic, gfx10-3-generic,\n"
"                          gfx11-generic; 16 also gfx942, gfx950 and\n"
"                          gfx9-4-generic.  The installed package must have\n"
"                          device libraries for it.  The option may be\n"
"                          repeated, and every architecture named gets its\n"
"                          own code object in the program (give it to gcc as\n"
"                          -foffload-options=amdgcn-amdhsa=-march=gfx900,\n"
"                          gfx906); the default is that of the running GCC's\n"
"                          accel compiler: fiji for GCC 12 and 13, gfx900\n"
"                          for 14 and 15, gfx90a for 16\n",
  .help_env = NULL,
};

/* The architectures are those of common/gcn-arch.h whose GCC version
   range has the running GCC.  */
static const struct ok_gcn_proc *gcn_archs;
static size_t num_archs;

#define MAX_ARCHS 64

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

static int
known_to (const struct ok_gcn_proc *arch, int version)
{
  return arch->min_gcc != 0 && version >= arch->min_gcc
	 && version <= arch->max_gcc;
}

/* The architecture GCC VERSION's accel compiler builds for without
   -march, as its mkoffload does: fiji in GCC 12 and 13
   (EF_AMDGPU_MACH_AMDGCN_GFX803 in their mkoffload.cc); gfx900 in 14 and
   15 (the default of mkoffload.cc and of gcn.opt in 15, whose default
   multilib "." is gfx900 in Debian's packages); gfx90a in 16 (gcn.opt's
   default: the multilib "." of Debian's gcc-16-offload-amdgcn is gfx90a,
   gfx900 being left to gfx9-generic).  */
static const char *
default_arch (int version)
{
  if (version <= 13)
    return "fiji";
  if (version <= 15)
    return "gfx900";
  return "gfx90a";
}

/* The architectures GCC VERSION knows, as "a, b, c" (malloc'd).  */
static char *
known_list (int version)
{
  char *known = xstrdup ("");
  for (size_t k = 0; k < num_archs; k++)
    if (known_to (&gcn_archs[k], version))
      {
	char *t = xasprintf ("%s%s%s%s%s", known, *known ? ", " : "",
			     gcn_archs[k].name,
			     gcn_archs[k].alias ? ", " : "",
			     gcn_archs[k].alias ? gcn_archs[k].alias : "");
	free (known);
	known = t;
      }
  return known;
}

/* Turn the -march= options into the set of architectures SEL (indices
   into gcn_archs, ascending), the running GCC's default when none was
   given.  Return the count, or -1 after reporting one error.  */
static int
parse_marches (const struct mko_ctx *ctx, size_t *sel)
{
  int chosen[MAX_ARCHS] = { 0 };
  for (size_t i = 0; i < march_options.n; i++)
    for (const char *p = march_options.v[i];;)
      {
	const char *comma = strchr (p, ',');
	size_t len = comma ? (size_t) (comma - p) : strlen (p);
	const struct ok_gcn_proc *a = ok_gcn_proc_by_name (p, len);
	if (a == NULL || !known_to (a, ctx->gcc_version))
	  {
	    char *known = known_list (ctx->gcc_version);
	    ok_error ("-march=%s: %s GPU architecture '%.*s' (known to GCC"
		      " %d: %s)", march_options.v[i],
		      a == NULL ? "unknown" : "unsupported", (int) len, p,
		      ctx->gcc_version, known);
	    free (known);
	    return -1;
	  }
	chosen[a - gcn_archs] = 1;
	if (!comma)
	  break;
	p = comma + 1;
      }
  if (march_options.n == 0)
    for (size_t a = 0; a < num_archs; a++)
      if (strcmp (gcn_archs[a].name, default_arch (ctx->gcc_version)) == 0)
	chosen[a] = 1;
  int n = 0;
  for (size_t a = 0; a < num_archs; a++)
    if (chosen[a])
      sel[n++] = a;
  return n;
}

/* The directory of the accel compiler's device libraries for ARCH (where
   its libgcc.a is: the multilib directory that -march=ARCH selects), or
   NULL when the driver cannot tell (then the compile itself will
   report).  malloc'd.  */
static char *
device_lib_dir (struct mko_ctx *ctx, const struct ok_gcn_proc *arch)
{
  char *march = xasprintf ("-march=%s", arch->name);
  const char *argv[] = { ctx->accel_cc, march, "-print-libgcc-file-name",
			 NULL };
  char *out = NULL;
  struct ok_command cmd = { .argv = argv, .unset_env = mko_accel_unset_env,
			    .out = &out, .quiet = 1 };
  char *dir = NULL;
  if (ok_run_command (&cmd) == 0 && out && out[0] == '/')
    {
      out[strcspn (out, "\n")] = '\0';
      char *slash = strrchr (out, '/');
      if (slash && strcmp (slash, "/libgcc.a") == 0
	  && access (out, F_OK) == 0)
	{
	  *slash = '\0';
	  dir = xstrdup (out);
	}
    }
  free (out);
  free (march);
  return dir;
}

/* Whether the package has a device libgomp built for ARCH itself.  */
static int
package_links (struct mko_ctx *ctx, const struct ok_gcn_proc *arch)
{
  char *dir = device_lib_dir (ctx, arch);
  if (dir == NULL)
    return 0;
  char *libgomp = xasprintf ("%s/libgomp.a", dir);
  uint32_t mach;
  int ok = ok_gcn_library_mach (libgomp, &mach) == 0 && mach == arch->mach;
  free (libgomp);
  free (dir);
  return ok;
}

/* What to build for instead of ARCH, whose device libraries the package
   lacks: its generic target when the package has that, else the list of
   the architectures it has (malloc'd).  Only on the way to an error: it
   asks the driver about every architecture.  */
static char *
instead_of (struct mko_ctx *ctx, const struct ok_gcn_proc *arch)
{
  if (arch->generic_mach)
    {
      const struct ok_gcn_proc *g = ok_gcn_proc_by_mach (arch->generic_mach);
      if (g && known_to (g, ctx->gcc_version) && package_links (ctx, g))
	return xasprintf ("build for its generic target instead"
			  " (-march=%s), whose code runs on %s too",
			  g->name, arch->name);
    }
  char *have = xstrdup ("");
  for (size_t k = 0; k < num_archs; k++)
    if (known_to (&gcn_archs[k], ctx->gcc_version)
	&& package_links (ctx, &gcn_archs[k]))
      {
	char *t = xasprintf ("%s%s%s", have, *have ? ", " : "",
			     gcn_archs[k].name);
	free (have);
	have = t;
      }
  char *r = xasprintf ("build for %s instead, or use an accel compiler"
		       " that has it (OFFLOADKIT_GCN_CC)",
		       *have ? have : "another architecture");
  free (have);
  return r;
}

/* The device libraries for ARCH must be there and built for ARCH: lld
   links only objects of one GPU, and a package has libraries for some
   architectures only.  Debian's gcc-12-offload-amdgcn has no libgomp for
   gfx908 (the link would fail in ld with undefined GOMP_* symbols); in
   gcc-14-offload-amdgcn the default multilib ".", which -march=fiji
   selects, is gfx900's (and its LLVM cannot assemble for fiji); in
   gcc-16-offload-amdgcn, gfx900 and gfx906 select "." too, gfx90a's,
   their code being left to gfx9-generic, as GCC 16's own mkoffload says
   ("consider compiling for the associated generic architecture").  So
   ask the accel driver for the multilib directory of ARCH and read the
   GPU of the libgomp.a there.  When the driver or the library cannot
   tell, the compile itself will report.  */
static int
check_device_libs (struct mko_ctx *ctx, const struct ok_gcn_proc *arch)
{
  char *dir = device_lib_dir (ctx, arch);
  if (dir == NULL)
    return 0;
  char *libgomp = xasprintf ("%s/libgomp.a", dir);
  int rc = 0;
  uint32_t mach;
  if (access (libgomp, F_OK) != 0)
    {
      char *alt = instead_of (ctx, arch);
      ok_error ("-march=%s: the device libgomp '%s' is missing: gcc-%d-%s"
		" provides none for %s; %s", arch->name, libgomp,
		ctx->gcc_version, mko_accel_package (), arch->name, alt);
      free (alt);
      rc = -1;
    }
  else if (ok_gcn_library_mach (libgomp, &mach) == 0 && mach != arch->mach)
    {
      const struct ok_gcn_proc *other = ok_gcn_proc_by_mach (mach);
      char *alt = instead_of (ctx, arch);
      ok_error ("-march=%s: gcc-%d-%s has no device libraries for %s: the"
		" ones -march=%s selects, '%s', are for %s; %s", arch->name,
		ctx->gcc_version, mko_accel_package (), arch->name,
		arch->name, libgomp,
		other ? other->name : "another GPU", alt);
      free (alt);
      rc = -1;
    }
  free (libgomp);
  free (dir);
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
label_argv (struct mko_ctx *ctx, const struct ok_gcn_proc *arch,
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
accel_argv (struct mko_ctx *ctx, const struct ok_gcn_proc *arch,
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

/* OpenACC: the accel compiler command that compiles CTX's LTO inputs for
   ARCH in one lto1 into the assembler file ASM, where the OpenACC launch
   dimensions are.  */
static const char **
asm_argv (struct mko_ctx *ctx, const struct ok_gcn_proc *arch,
	  const char *asm_file)
{
  struct mko_argv a = { 0 };
  const char *const options[] = {
    xasprintf ("-march=%s", arch->name), "-S", NULL
  };
  mko_accel_argv (ctx, &a, NULL, options,
		  xasprintf ("%s.mkoffload.%s", ctx->dumpbase, arch->name));
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, asm_file);
  return a.v;
}

/* OpenACC: the accel driver command that assembles ASM (of asm_argv) for
   ARCH and links it into IMAGE, the object LABEL first, with the
   assembler and link options of the host compilation.  */
static const char **
asm_link_argv (struct mko_ctx *ctx, const struct ok_gcn_proc *arch,
	       const char *asm_file, const char *image, const char *label)
{
  struct mko_argv a = { 0 };
  mko_argv_push (&a, ctx->accel_cc);
  if (ctx->save_temps)
    mko_argv_push (&a, "-save-temps");
  if (ok_verbose)
    mko_argv_push (&a, "-v");
  for (size_t i = 0; i < ctx->asm_options.n; i++)
    mko_argv_push (&a, ctx->asm_options.v[i]);
  for (size_t i = 0; i < ctx->link_options.n; i++)
    mko_argv_push (&a, ctx->link_options.v[i]);
  mko_argv_push (&a, xasprintf ("-march=%s", arch->name));
  mko_argv_push (&a, label);
  mko_argv_push (&a, "-xassembler");
  mko_argv_push (&a, asm_file);
  mko_argv_push (&a, "-xnone");
  mko_argv_push (&a, "-dumpdir");
  mko_argv_push (&a, "");
  mko_argv_push (&a, "-dumpbase");
  mko_argv_push (&a, xasprintf ("%s.mkoffload.%s", ctx->dumpbase,
				arch->name));
  mko_argv_push (&a, "-dumpbase-ext");
  mko_argv_push (&a, "");
  mko_argv_push (&a, "-o");
  mko_argv_push (&a, image);
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
read_image (struct mko_ctx *ctx, const struct ok_gcn_proc *arch,
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
      const struct ok_gcn_kernel *k = &co.kernels[co.funcs[i]];
      const char *nm = k->name;
      /* Reverse offload, whose ancestor regions put device functions in
	 the table, came with GCC 13: GCC 12's device code has no such
	 entries, and its device runtime could not serve them.  */
      if ((k->info.flags & OK_KINFO_DEVICE_FN)
	  && !OK_GCC_HAS_REVERSE_OFFLOAD (ctx->gcc_version))
	{
	  ok_error ("'%s': function table entry %zu, '%s', is a device"
		    " function, not a kernel (an ancestor region's, which"
		    " GCC %d does not have)", image, i, nm, ctx->gcc_version);
	  goto out;
	}
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
  for (size_t i = 0; ok_verbose && i < co.num_funcs; i++)
    if ((*info)[i].flags & OK_KINFO_DEVICE_FN)
      ok_inform ("%s: device function %s (for reverse offload)", arch->name,
		 ctx->func_names.v[i]);
    else
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
  int rc = ok_run_commands_checked (cmds, n, 0, &i, &status);
  if (rc > 0)
    {
      ok_error ("'%s' exited with status %d (%s for %s)", cmds[i].argv[0],
		status, what, gcn_archs[sel[i]].name);
      return -1;
    }
  return rc;
}

/* The first line of OUT that says what went wrong (LLVM's "LLVM ERROR:
   ..." or an "error:" of the driver or assembler), or its first line;
   malloc'd, without the newline.  */
static char *
first_error_line (const char *out)
{
  const char *pick = out;
  for (const char *l = out; *l != '\0';)
    {
      size_t len = strcspn (l, "\n");
      if (memmem (l, len, "LLVM ERROR", 10) || memmem (l, len, "error:", 6))
	{
	  pick = l;
	  break;
	}
      l += len + (l[len] == '\n');
    }
  return xasprintf ("%.*s", (int) strcspn (pick, "\n"), pick);
}

/* Assemble the table labels for ARCH with CMD, its output held back: the
   first thing assembled for ARCH, it finds out whether the accel
   compiler's toolchain can assemble for it at all (the LLVM 19 of Debian
   13's gcc-14-offload-amdgcn cannot for fiji: "LLVM ERROR: Unsupported
   AMDHSA Code Object Version", GCC's own pipeline alike), which is then
   one error of ours instead of the assembler's crash.  What it printed
   otherwise (-v) is passed on.  */
static int
assemble_labels (struct ok_command *cmd, const struct ok_gcn_proc *arch)
{
  char *out = NULL;
  cmd->out = &out;
  cmd->err_to_out = 1;
  int status = ok_run_command (cmd);
  cmd->out = NULL;
  int rc = 0;
  if (status > 0)
    {
      char *why = first_error_line (out ? out : "");
      ok_error ("-march=%s: the accel compiler's toolchain cannot assemble"
		" code for %s ('%s' exited with status %d: %s)", arch->name,
		arch->name, cmd->argv[0], status, *why ? why : "no message");
      free (why);
      rc = -1;
    }
  else if (status < 0)
    rc = -1;
  else if (out && *out)
    fputs (out, stderr);
  free (out);
  return rc;
}

static int
gcn_build (struct mko_ctx *ctx)
{
  gcn_archs = ok_gcn_procs (&num_archs);
  if (num_archs > MAX_ARCHS)
    num_archs = MAX_ARCHS;
  size_t sel[MAX_ARCHS];
  int n = parse_marches (ctx, sel);
  if (n < 0)
    return -1;

  for (int i = 0; i < n; i++)
    if (check_device_libs (ctx, &gcn_archs[sel[i]]) < 0)
      return -1;

  const char *label_src = mko_intermediate (ctx, ".mkoffload.vartable.s");
  if (ok_write_file (label_src, table_labels,
		      sizeof table_labels - 1) < 0)
    return -1;

  struct ok_command labels[MAX_ARCHS], links[MAX_ARCHS], compiles[MAX_ARCHS];
  const char *images[MAX_ARCHS];
  const char *asm_files[MAX_ARCHS];
  const char *requires_files[MAX_ARCHS];
  memset (labels, 0, sizeof labels);
  memset (links, 0, sizeof links);
  memset (compiles, 0, sizeof compiles);
  for (int i = 0; i < n; i++)
    {
      const struct ok_gcn_proc *arch = &gcn_archs[sel[i]];
      char *suffix = xasprintf (".mkoffload.%s.vartable.o", arch->name);
      const char *label = mko_intermediate (ctx, suffix);
      free (suffix);
      labels[i].argv = label_argv (ctx, arch, label_src, label);
      labels[i].unset_env = mko_accel_unset_env;
      suffix = xasprintf (".mkoffload.%s.hsaco", arch->name);
      images[i] = mko_intermediate (ctx, suffix);
      free (suffix);
      links[i].unset_env = mko_accel_unset_env;
      /* One requires file per architecture: they are built at once.  */
      const char *const *env = mko_accel_env (ctx, arch->name,
					      &requires_files[i]);
      if (ctx->fopenacc)
	{
	  suffix = xasprintf (".mkoffload.%s.s", arch->name);
	  asm_files[i] = mko_intermediate (ctx, suffix);
	  free (suffix);
	  compiles[i].argv = asm_argv (ctx, arch, asm_files[i]);
	  compiles[i].unset_env = mko_accel_unset_env;
	  compiles[i].set_env = env;
	  links[i].argv = asm_link_argv (ctx, arch, asm_files[i], images[i],
					 label);
	}
      else
	{
	  links[i].argv = accel_argv (ctx, arch, images[i], label);
	  links[i].set_env = env;
	}
    }

  /* The labels take milliseconds, one after the other; the architectures
     are built in parallel: each link is a whole LTO compile of the device
     code.  */
  for (int i = 0; i < n; i++)
    if (assemble_labels (&labels[i], &gcn_archs[sel[i]]) < 0)
      return -1;
  if (ctx->fopenacc
      && run_for_archs (compiles, n, sel, "compiling the device code") < 0)
    return -1;
  if (run_for_archs (links, n, sel, "building the code object") < 0)
    return -1;
  for (int i = 0; i < n; i++)
    if (mko_read_requires (ctx, requires_files[i]) < 0)
      return -1;

  for (int i = 0; i < n; i++)
    {
      const struct ok_gcn_proc *arch = &gcn_archs[sel[i]];
      struct ok_kernel_info *info;
      if (read_image (ctx, arch, images[i], i == 0, &info) < 0)
	return -1;
      mko_add_image (ctx, images[i], 0, OK_IMAGE_GCN, arch->arch);
      ctx->images[ctx->num_images - 1].kernel_info = info;
      if (ctx->fopenacc)
	{
	  struct ok_oacc_dims *dims;
	  if (mko_gcn_read_dims (ctx, asm_files[i], &dims) < 0)
	    return -1;
	  ctx->images[ctx->num_images - 1].oacc_dims = dims;
	}
      /* The device runtime linked in is the running GCC's: from 13 on
	 it reads the kernel arguments of GCN device version 3.  */
      if (OK_GCC_GCN_KERNARGS_V3 (ctx->gcc_version))
	ctx->images[ctx->num_images - 1].flags = OK_TGT_GCN_KERNARGS_V3;
    }
  for (int i = 0; i < n; i++)
    {
      free ((void *) labels[i].argv);
      free ((void *) links[i].argv);
      free ((void *) compiles[i].argv);
    }
  return 0;
}
