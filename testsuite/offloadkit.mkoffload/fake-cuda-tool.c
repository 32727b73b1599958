/* Stand-in for NVIDIA's ptxas and nvlink in the mkoffload tests
   (aot.exp), which copy it to a directory of their own as "ptxas" and
   "nvlink": what it does is chosen by the name it was run as (ptxas*,
   nvlink*).  A link
   runs ptxas for every PTX module and architecture, the tests run
   thousands of links: a program, not a script, so that a run is one
   process start.

   ptxas accepts the command lines mkoffload gives it and writes, for
   "-o FILE", a small relocatable ELF64 object with e_machine 190
   (EM_CUDA), labelled for --gpu-name's architecture, whose symbol table
   defines a function for each ".entry" of the PTX file it is given (the
   last argument) and a variable for each of its "//:VAR_MAP" lines; it
   checks nothing.  nvlink writes, for "-o FILE", an ELF64 executable of
   the same kind, labelled for -arch's architecture, defining the
   functions and variables its input objects (named *.cubin, as nvlink
   of CUDA 11 needs them named) define.  The files are labelled as CUDA
   13's tools label theirs (common/elf-reader.h): OSABI 0x41, ABI
   version 8, the SM in bits 8-15 of e_flags.

   Like the real tools, each keeps a file of its own,
   tmpxft_PID_00000000, in $TMPDIR while it runs, and removes it when it
   ends normally (not when it is killed).  Controlled by:
     FAKE_PTXAS_LOG     file that gets one line per run, "ptxas ARGS"
                        (the temporary file exists by the time the line
                        is there)
     FAKE_PTXAS_ARCHS   sm numbers listed by --help (default: 75 80 90
                        100)
     FAKE_PTXAS_FAIL    glob: a run with an argument matching it prints
                        a message and exits with status 3
     FAKE_PTXAS_SLEEP   seconds to wait before writing the output
     FAKE_PTXAS_SLOW    glob: when set, only a run with an argument
                        matching it waits FAKE_PTXAS_SLEEP seconds (the
                        only way a --version run waits)
     FAKE_PTXAS_DONE_LOG file that gets "ptxas-done ARGS" when a run has
                        written its output (a --version run too)
     FAKE_PTXAS_OUTPUT  "none", "empty", "truncated", "nokernels" or
                        "othersm": exit with status 0 all the same, the
                        output removed, empty, cut in half (it still
                        starts like an ELF file), with one unrelated
                        function instead of those named, or labelled for
                        the next architecture
     FAKE_PTXAS_FUNCS   set: define a function for each ".visible .func"
                        definition as well, as the real one does (not
                        by default)
     FAKE_PTXAS_RELEASE the release --version names (default 0.0)
     FAKE_NVLINK_LOG, FAKE_NVLINK_FAIL (status 4), FAKE_NVLINK_SLEEP,
     FAKE_NVLINK_OUTPUT the same for nvlink (the log has no --version
                        runs); an input named *.o (a host object to
                        nvlink of CUDA 11) is an error, status 5; so is,
                        as with the real one, an input that cannot be
                        read, status 1
     FAKE_NVLINK_VERSION_LOG file that gets "nvlink --version" for each
                        such run  */

#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char tmpxft[4096];

/* Leave as the tool does: its temporary file removed.  */
static void
finish (int status)
{
  unlink (tmpxft);
  exit (status);
}

static void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n);
  if (!p)
    {
      fprintf (stderr, "fake tool: out of memory\n");
      finish (1);
    }
  return p;
}

/* A growing list of names.  */
struct names
{
  char **v;
  size_t n;
};

static void
names_add (struct names *l, const char *s, size_t len)
{
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  char *c = xrealloc (NULL, len + 1);
  memcpy (c, s, len);
  c[len] = '\0';
  l->v[l->n++] = c;
}

static bool
names_has (const struct names *l, const char *s)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->v[i], s) == 0)
      return true;
  return false;
}

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A growing byte buffer.  */
struct buf
{
  unsigned char *p;
  size_t n;
};

static size_t
buf_add (struct buf *b, const void *data, size_t len)
{
  size_t at = b->n;
  b->p = xrealloc (b->p, b->n + len);
  memcpy (b->p + at, data, len);
  b->n += len;
  return at;
}

static void
buf_zeros (struct buf *b, size_t len)
{
  b->p = xrealloc (b->p, b->n + len);
  memset (b->p + b->n, 0, len);
  b->n += len;
}

/* The whole of FILE, NUL-terminated; NULL when it cannot be read.  */
static char *
read_file (const char *file, size_t *len)
{
  FILE *f = fopen (file, "rb");
  if (!f)
    return NULL;
  struct buf b = { 0 };
  char chunk[65536];
  size_t n;
  while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
    buf_add (&b, chunk, n);
  bool bad = ferror (f);
  fclose (f);
  if (bad)
    {
      free (b.p);
      return NULL;
    }
  buf_add (&b, "", 1);
  if (len)
    *len = b.n - 1;
  return (char *) b.p;
}

/* The environment variable NAME, "" when unset.  */
static const char *
env (const char *name)
{
  const char *v = getenv (name);
  return v ? v : "";
}

/* One line per run in the log LOG (when set): TOOL and the arguments.  */
static void
log_run (const char *log, const char *tool, int argc, char **argv)
{
  if (!*log)
    return;
  FILE *f = fopen (log, "a");
  if (!f)
    {
      fprintf (stderr, "fake %s: cannot open '%s'\n", tool, log);
      finish (1);
    }
  fputs (tool, f);
  fputc (' ', f);
  for (int i = 1; i < argc; i++)
    fprintf (f, i > 1 ? " %s" : "%s", argv[i]);
  fputc ('\n', f);
  fclose (f);
}

/* A run with an argument matching the glob FAIL fails as the tool
   would: "WHAT fake failure on 'ARG'", exit status STATUS.  */
static void
fail_on (const char *fail, int status, const char *what, const char *arg)
{
  if (*fail && fnmatch (fail, arg, 0) == 0)
    {
      fprintf (stderr, "%s fake failure on '%s'\n", what, arg);
      finish (status);
    }
}

static void
sleep_for (const char *secs)
{
  if (!*secs)
    return;
  double d = strtod (secs, NULL);
  struct timespec ts = { (time_t) d, (long) ((d - (time_t) d) * 1e9) };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* The ELF file: header, then .text (one byte per function), .data (8
   bytes per variable), the string tables, the symbol table, the section
   headers; or, with no symbols, the header, the section names and the
   section headers alone, as the tools write for a module without
   kernels.  */
static void
write_elf (const char *file, unsigned type, unsigned sm,
	   const struct names *funcs, const struct names *vars,
	   const char *mode)
{
  if (strcmp (mode, "othersm") == 0)
    sm++;
  struct names unrelated = { 0 }, none = { 0 };
  if (strcmp (mode, "nokernels") == 0)
    {
      names_add (&unrelated, "unrelated", 9);
      funcs = &unrelated;
      vars = &none;
    }
  bool bare = funcs->n == 0 && vars->n == 0;

  struct buf b = { 0 };
  buf_zeros (&b, sizeof (Elf64_Ehdr));
  enum { S_NULL, S_SHSTRTAB, S_TEXT, S_DATA, S_STRTAB, S_SYMTAB, S_N };
  int nsec = bare ? 2 : S_N;
  Elf64_Shdr sh[S_N];
  memset (sh, 0, sizeof sh);

  static const char shstr[] = "\0.shstrtab\0.text\0.data\0.strtab\0.symtab";
  size_t shstr_len = bare ? sizeof ".shstrtab" + 1 : sizeof shstr;
  sh[S_SHSTRTAB] = (Elf64_Shdr) { .sh_name = 1, .sh_type = SHT_STRTAB,
				  .sh_offset = b.n, .sh_size = shstr_len,
				  .sh_addralign = 1 };
  buf_add (&b, shstr, shstr_len);

  if (!bare)
    {
      sh[S_TEXT] = (Elf64_Shdr) { .sh_name = 11, .sh_type = SHT_PROGBITS,
				  .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				  .sh_offset = b.n, .sh_size = funcs->n,
				  .sh_addralign = 1 };
      for (size_t i = 0; i < funcs->n; i++)
	buf_add (&b, "\xc3", 1);
      sh[S_DATA] = (Elf64_Shdr) { .sh_name = 17, .sh_type = SHT_PROGBITS,
				  .sh_flags = SHF_ALLOC | SHF_WRITE,
				  .sh_offset = b.n, .sh_size = 8 * vars->n,
				  .sh_addralign = 1 };
      buf_zeros (&b, 8 * vars->n);

      struct buf str = { 0 };
      buf_add (&str, "", 1);
      size_t nsyms = 1 + funcs->n + vars->n;
      Elf64_Sym *syms = xrealloc (NULL, nsyms * sizeof *syms);
      memset (syms, 0, nsyms * sizeof *syms);
      size_t k = 1;
      for (size_t i = 0; i < funcs->n; i++, k++)
	syms[k] = (Elf64_Sym) {
	  .st_name = buf_add (&str, funcs->v[i], strlen (funcs->v[i]) + 1),
	  .st_info = ELF64_ST_INFO (STB_GLOBAL, STT_FUNC),
	  .st_shndx = S_TEXT, .st_value = i };
      for (size_t i = 0; i < vars->n; i++, k++)
	syms[k] = (Elf64_Sym) {
	  .st_name = buf_add (&str, vars->v[i], strlen (vars->v[i]) + 1),
	  .st_info = ELF64_ST_INFO (STB_GLOBAL, STT_OBJECT),
	  .st_shndx = S_DATA, .st_value = 8 * i, .st_size = 8 };
      sh[S_STRTAB] = (Elf64_Shdr) { .sh_name = 23, .sh_type = SHT_STRTAB,
				    .sh_offset = b.n, .sh_size = str.n,
				    .sh_addralign = 1 };
      buf_add (&b, str.p, str.n);
      free (str.p);
      buf_zeros (&b, (8 - b.n % 8) % 8);
      sh[S_SYMTAB] = (Elf64_Shdr) { .sh_name = 31, .sh_type = SHT_SYMTAB,
				    .sh_offset = b.n,
				    .sh_size = nsyms * sizeof *syms,
				    .sh_link = S_STRTAB, .sh_info = 1,
				    .sh_addralign = 8,
				    .sh_entsize = sizeof *syms };
      buf_add (&b, syms, nsyms * sizeof *syms);
      free (syms);
    }
  buf_zeros (&b, (8 - b.n % 8) % 8);
  size_t shoff = buf_add (&b, sh, nsec * sizeof *sh);

  Elf64_Ehdr eh = {
    .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
		 ELFDATA2LSB, EV_CURRENT, 0x41, 8 },
    .e_type = type, .e_machine = 190, .e_version = EV_CURRENT,
    .e_shoff = shoff, .e_flags = 0x06000004u | (sm & 0xff) << 8,
    .e_ehsize = sizeof eh, .e_shentsize = sizeof (Elf64_Shdr),
    .e_shnum = nsec, .e_shstrndx = S_SHSTRTAB };
  memcpy (b.p, &eh, sizeof eh);

  size_t len = b.n;
  if (strcmp (mode, "empty") == 0)
    len = 0;
  else if (strcmp (mode, "truncated") == 0)
    len /= 2;
  if (strcmp (mode, "none") != 0)
    {
      FILE *f = fopen (file, "wb");
      if (!f || fwrite (b.p, 1, len, f) != len || fclose (f) != 0)
	{
	  fprintf (stderr, "fake tool: cannot write '%s'\n", file);
	  finish (1);
	}
    }
  else
    unlink (file);
  free (b.p);
}

/* The names defined by lines of PTX that match: ".entry NAME" (the last
   on the line), and with FUNCS ".visible .func [(RETURN)] NAME" that is
   no declaration; and the variables, from '//:VAR_MAP "NAME"'.  */
static void
ptx_names (const char *ptx, bool funcs, struct names *kernels,
	   struct names *vars)
{
  struct names fns = { 0 };
  static const char blank[] = " \t";
  for (const char *line = ptx; *line; )
    {
      size_t len = strcspn (line, "\n");
      char *l = strndup (line, len);
      line += len + (line[len] == '\n');

      const char *e = NULL;
      for (const char *p = l; (p = strstr (p, ".entry")); p++)
	{
	  const char *q = p + 6;
	  size_t sp = strspn (q, blank);
	  if (sp > 0 && strcspn (q + sp, " \t(") > 0)
	    e = q + sp;
	}
      if (e)
	names_add (kernels, e, strcspn (e, " \t("));

      if (funcs && strncmp (l, ".visible", 8) == 0)
	{
	  char *q = l + 8, *end = l + strlen (l);
	  while (end > l && strchr (blank, end[-1]))
	    end--;
	  size_t sp = strspn (q, blank);
	  if (end > l && end[-1] != ';' && sp > 0
	      && strncmp (q + sp, ".func", 5) == 0)
	    {
	      q += sp + 5;
	      sp = strspn (q, blank);
	      q += sp;
	      if (sp > 0 && *q == '(' && strchr (q, ')'))
		{
		  q = strchr (q, ')') + 1;
		  q += strspn (q, blank);
		}
	      size_t nl = strcspn (q, " \t(");
	      if (sp > 0 && nl > 0)
		names_add (&fns, q, nl);
	    }
	}

      static const char vm[] = "//:VAR_MAP \"";
      if (strncmp (l, vm, sizeof vm - 1) == 0)
	{
	  char *q = l + sizeof vm - 1, *close = strchr (q, '"');
	  if (close)
	    names_add (vars, q, close - q);
	}
      free (l);
    }
  for (size_t i = 0; i < fns.n; i++)
    {
      names_add (kernels, fns.v[i], strlen (fns.v[i]));
      free (fns.v[i]);
    }
  free (fns.v);
}

static int
ptxas (int argc, char **argv)
{
  log_run (env ("FAKE_PTXAS_LOG"), "ptxas", argc, argv);
  const char *slow = env ("FAKE_PTXAS_SLOW");
  if (argc > 1 && strcmp (argv[1], "--version") == 0)
    {
      if (*slow && fnmatch (slow, argv[1], 0) == 0)
	sleep_for (env ("FAKE_PTXAS_SLEEP"));
      const char *release = getenv ("FAKE_PTXAS_RELEASE");
      printf ("fake ptxas for offloadkit's tests, release %s\n",
	      release && *release ? release : "0.0");
      fflush (stdout);
      log_run (env ("FAKE_PTXAS_DONE_LOG"), "ptxas-done", argc, argv);
      finish (0);
    }
  if (argc > 1 && strcmp (argv[1], "--help") == 0)
    {
      printf ("Usage: ptxas [options] <ptx file>\n\n"
	      "--gpu-name <gpu name>      (-arch)\n"
	      "        Specify name of NVIDIA GPU to generate code for.\n"
	      "        Allowed values for this option:  'compute_75'");
      const char *archs = getenv ("FAKE_PTXAS_ARCHS");
      if (!archs || !*archs)
	archs = "75 80 90 100";
      char *list = strdup (archs);
      for (char *s, *a = strtok_r (list, " \t", &s); a;
	   a = strtok_r (NULL, " \t", &s))
	printf (",'sm_%s','sm_%sa'", a, a);
      free (list);
      printf (".\n        Default value:  'sm_75'.\n");
      finish (0);
    }

  const char *out = NULL;
  unsigned sm = 0;
  int sleeps = !*slow;
  for (int i = 1; i < argc; i++)
    {
      fail_on (env ("FAKE_PTXAS_FAIL"), 3, "ptxas fatal   :", argv[i]);
      if (i > 1 && strcmp (argv[i - 1], "-o") == 0)
	out = argv[i];
      if (i > 1 && strcmp (argv[i - 1], "--gpu-name") == 0)
	sm = atoi (argv[i] + (strncmp (argv[i], "sm_", 3) == 0 ? 3 : 0));
      if (*slow && fnmatch (slow, argv[i], 0) == 0)
	sleeps = 1;
    }
  if (sleeps)
    sleep_for (env ("FAKE_PTXAS_SLEEP"));
  if (out)
    {
      char *ptx = argc > 1 ? read_file (argv[argc - 1], NULL) : NULL;
      if (!ptx)
	{
	  fprintf (stderr, "ptxas fatal   : cannot read the PTX file\n");
	  finish (1);
	}
      struct names kernels = { 0 }, vars = { 0 };
      ptx_names (ptx, *env ("FAKE_PTXAS_FUNCS"), &kernels, &vars);
      free (ptx);
      write_elf (out, ET_REL, sm, &kernels, &vars,
		 env ("FAKE_PTXAS_OUTPUT"));
    }
  log_run (env ("FAKE_PTXAS_DONE_LOG"), "ptxas-done", argc, argv);
  finish (0);
  return 0;
}

/* Add the defined global functions and variables of the ELF file FILE
   to FUNCS and VARS (a file that is no such ELF file adds nothing, as
   nm's complaint about it went nowhere).  */
static void
elf_symbols (const char *file, struct names *funcs, struct names *vars)
{
  size_t len;
  unsigned char *p = (unsigned char *) read_file (file, &len);
  if (!p)
    return;
  Elf64_Ehdr eh;
  if (len < sizeof eh || memcmp (p, ELFMAG, SELFMAG) != 0)
    goto done;
  memcpy (&eh, p, sizeof eh);
  if (eh.e_shentsize != sizeof (Elf64_Shdr)
      || eh.e_shoff > len || eh.e_shnum > (len - eh.e_shoff) / sizeof (Elf64_Shdr))
    goto done;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh, str;
      memcpy (&sh, p + eh.e_shoff + i * sizeof sh, sizeof sh);
      if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum
	  || sh.sh_offset > len || sh.sh_size > len - sh.sh_offset)
	continue;
      memcpy (&str, p + eh.e_shoff + sh.sh_link * sizeof str, sizeof str);
      if (str.sh_offset > len || str.sh_size > len - str.sh_offset
	  || str.sh_size == 0 || p[str.sh_offset + str.sh_size - 1] != '\0')
	continue;
      for (size_t k = 0; k + 1 <= sh.sh_size / sizeof (Elf64_Sym); k++)
	{
	  Elf64_Sym s;
	  memcpy (&s, p + sh.sh_offset + k * sizeof s, sizeof s);
	  if (s.st_shndx == SHN_UNDEF || s.st_name >= str.sh_size
	      || ELF64_ST_BIND (s.st_info) != STB_GLOBAL)
	    continue;
	  const char *name = (const char *) p + str.sh_offset + s.st_name;
	  struct names *l = ELF64_ST_TYPE (s.st_info) == STT_FUNC ? funcs
			    : ELF64_ST_TYPE (s.st_info) == STT_OBJECT ? vars
			    : NULL;
	  if (l && *name && !names_has (l, name))
	    names_add (l, name, strlen (name));
	}
    }
 done:
  free (p);
}

static int
nvlink (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--version") == 0)
    {
      log_run (env ("FAKE_NVLINK_VERSION_LOG"), "nvlink", argc, argv);
      puts ("fake nvlink for offloadkit's tests, release 0.0");
      finish (0);
    }
  log_run (env ("FAKE_NVLINK_LOG"), "nvlink", argc, argv);
  const char *out = NULL;
  unsigned sm = 0;
  struct names inputs = { 0 };
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      size_t n = strlen (a);
      fail_on (env ("FAKE_NVLINK_FAIL"), 4, "nvlink error   :", a);
      if (i > 1 && strcmp (argv[i - 1], "-o") == 0)
	out = a;
      else if (strncmp (a, "-arch=sm_", 9) == 0)
	sm = atoi (a + 9);
      else if (n >= 6 && strcmp (a + n - 6, ".cubin") == 0)
	{
	  if (access (a, R_OK) != 0)
	    {
	      fprintf (stderr, "nvlink fatal   : Could not open input file"
		       " '%s'\n", a);
	      finish (1);
	    }
	  names_add (&inputs, a, n);
	}
      else if (n >= 2 && strcmp (a + n - 2, ".o") == 0)
	{
	  /* nvlink of CUDA 11 takes it for a host object and links
	     nothing of it; so does this one, loudly.  */
	  fprintf (stderr, "fake nvlink: '%s' is named like a host object\n",
		   a);
	  finish (5);
	}
    }
  sleep_for (env ("FAKE_NVLINK_SLEEP"));
  if (out)
    {
      struct names funcs = { 0 }, vars = { 0 };
      for (size_t i = 0; i < inputs.n; i++)
	elf_symbols (inputs.v[i], &funcs, &vars);
      qsort (funcs.v, funcs.n, sizeof *funcs.v, cmp_names);
      qsort (vars.v, vars.n, sizeof *vars.v, cmp_names);
      write_elf (out, ET_EXEC, sm, &funcs, &vars,
		 env ("FAKE_NVLINK_OUTPUT"));
    }
  finish (0);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *tmp = getenv ("TMPDIR");
  snprintf (tmpxft, sizeof tmpxft, "%s/tmpxft_%ld_00000000",
	    tmp && *tmp ? tmp : "/tmp", (long) getpid ());
  FILE *f = fopen (tmpxft, "w");
  if (!f)
    return 1;
  fclose (f);

  const char *name = strrchr (argv[0], '/');
  name = name ? name + 1 : argv[0];
  if (strncmp (name, "ptxas", 5) == 0)
    return ptxas (argc, argv);
  if (strncmp (name, "nvlink", 6) == 0)
    return nvlink (argc, argv);
  fprintf (stderr, "fake tool: run as ptxas or nvlink, not '%s'\n", name);
  finish (2);
  return 2;
}
