/* cuda-elf-check: read a CUDA ELF file that NVIDIA's ptxas or nvlink
   wrote with offloadkit's ELF reader (common/elf-reader.h), as mkoffload
   and the plugins read them, and check what the test that made it
   expects; toolkits.exp runs it on the objects and cubins of every CUDA
   toolkit it finds.

   Usage: cuda-elf-check [--sm N] [--type rel|exec] [--function NAME]...
			 [--variable NAME[=SIZE]]... [--reservation-past-end]
			 FILE

   --sm N          e_flags say sm_N
   --type T        ET_REL (ptxas' objects) or ET_EXEC (nvlink's cubins)
   --function F    F is defined as a function
   --variable V=S  V is defined as a variable (in a cubin an STT_OBJECT)
		   of S bytes when S is given
   --reservation-past-end
		   some section without contents in the file (SHT_NOBITS or
		   one of NVIDIA's memory reservations) reaches past the
		   end of the file: the case a bounds check that took it for
		   contents would refuse

   Prints one line describing the file ("FILE: ET_REL sm_90 abi 8 ...")
   and one line per failed expectation ("cuda-elf-check: FILE: ..."),
   and exits 0 when all hold, 1 when one does not, 2 on bad usage.  */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-reader.h"

#define MAX_NAMES 64

static int failures;

static void
fail (const char *file, const char *what)
{
  printf ("cuda-elf-check: %s: %s\n", file, what);
  failures++;
}

static unsigned char *
read_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;)
    {
      if (n == cap)
	{
	  cap = cap ? 2 * cap : 65536;
	  unsigned char *b = realloc (buf, cap);
	  if (b == NULL)
	    {
	      free (buf);
	      fclose (f);
	      return NULL;
	    }
	  buf = b;
	}
      size_t r = fread (buf + n, 1, cap - n, f);
      n += r;
      if (r == 0)
	break;
    }
  fclose (f);
  *size = n;
  return buf;
}

int
main (int argc, char **argv)
{
  unsigned sm = 0, type = ET_NONE;
  const char *funcs[MAX_NAMES], *vars[MAX_NAMES];
  uint64_t var_sizes[MAX_NAMES];
  int var_sized[MAX_NAMES];
  size_t nfuncs = 0, nvars = 0;
  int past_end = 0;
  const char *file = NULL;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--sm") == 0 && i + 1 < argc)
	sm = (unsigned) atoi (argv[++i]);
      else if (strcmp (a, "--type") == 0 && i + 1 < argc)
	{
	  a = argv[++i];
	  type = strcmp (a, "rel") == 0 ? ET_REL
		 : strcmp (a, "exec") == 0 ? ET_EXEC : ET_NONE;
	  if (type == ET_NONE)
	    {
	      fprintf (stderr, "cuda-elf-check: --type rel or exec\n");
	      return 2;
	    }
	}
      else if (strcmp (a, "--function") == 0 && i + 1 < argc
	       && nfuncs < MAX_NAMES)
	funcs[nfuncs++] = argv[++i];
      else if (strcmp (a, "--variable") == 0 && i + 1 < argc
	       && nvars < MAX_NAMES)
	{
	  char *v = argv[++i];
	  char *eq = strchr (v, '=');
	  var_sized[nvars] = eq != NULL;
	  var_sizes[nvars] = eq ? strtoull (eq + 1, NULL, 10) : 0;
	  if (eq)
	    *eq = '\0';
	  vars[nvars++] = v;
	}
      else if (strcmp (a, "--reservation-past-end") == 0)
	past_end = 1;
      else if (a[0] != '-' && file == NULL)
	file = a;
      else
	{
	  fprintf (stderr, "cuda-elf-check: bad argument '%s'\n", a);
	  return 2;
	}
    }
  if (file == NULL)
    {
      fprintf (stderr, "usage: cuda-elf-check [OPTIONS] FILE\n");
      return 2;
    }

  size_t size = 0;
  unsigned char *buf = read_file (file, &size);
  if (buf == NULL)
    {
      fprintf (stderr, "cuda-elf-check: cannot read '%s': %s\n", file,
	       strerror (errno));
      return 2;
    }
  struct ok_elf elf;
  char err[512];
  if (!ok_elf_open (&elf, buf, size, file, NULL, err, sizeof err)
      || !ok_elf_check_kind (&elf, OK_EM_CUDA, "EM_CUDA", type, err,
			     sizeof err)
      || !ok_elf_check_layout (&elf, true, err, sizeof err))
    {
      fail (file, err);
      free (buf);
      return 1;
    }

  /* What the file is, for the log.  */
  unsigned reservations = 0, beyond = 0;
  Elf64_Shdr sh;
  for (unsigned i = 0; ok_elf_section (&elf, i, &sh); i++)
    if (sh.sh_type != SHT_NULL && !ok_elf_has_contents (&elf, &sh))
      {
	reservations++;
	if ((unsigned __int128) sh.sh_offset + sh.sh_size > size)
	  beyond++;
      }
  unsigned ptx_sm = 0, toolkit = 0;
  int noted = ok_elf_cuda_info (&elf, &ptx_sm, &toolkit);
  printf ("%s: %s sm_%u osabi %#x abi %u e_flags %#x, %u sections without"
	  " contents (%u past the end)", file,
	  elf.eh.e_type == ET_REL ? "ET_REL" : elf.eh.e_type == ET_EXEC
	  ? "ET_EXEC" : "other", ok_elf_cuda_sm (&elf),
	  (unsigned) elf.eh.e_ident[EI_OSABI],
	  (unsigned) elf.eh.e_ident[EI_ABIVERSION], (unsigned) elf.eh.e_flags,
	  reservations, beyond);
  if (noted)
    printf (", cuinfo: PTX sm_%u, toolkit %u.%u", ptx_sm, toolkit / 10,
	    toolkit % 10);
  printf ("\n");

  if (sm != 0 && ok_elf_cuda_sm (&elf) != sm)
    {
      snprintf (err, sizeof err, "e_flags say sm_%u, expected sm_%u",
		ok_elf_cuda_sm (&elf), sm);
      fail (file, err);
    }
  if (past_end && beyond == 0)
    fail (file, "no section without contents reaches past the end");
  if (!ok_elf_check_defined (&elf, funcs, nfuncs, STT_FUNC, NULL,
			     "function", err, sizeof err))
    fail (file, err);
  struct ok_elf_symbol syms[MAX_NAMES];
  if (!ok_elf_find_symbols (&elf, vars, nvars, syms, err, sizeof err))
    fail (file, err);
  else
    for (size_t i = 0; i < nvars; i++)
      {
	if (!syms[i].found)
	  snprintf (err, sizeof err, "defines no variable '%s'", vars[i]);
	else if (elf.eh.e_type == ET_EXEC && syms[i].type != STT_OBJECT)
	  snprintf (err, sizeof err, "variable '%s' is of type %u, not"
		    " STT_OBJECT", vars[i], (unsigned) syms[i].type);
	else if (var_sized[i] && syms[i].size != var_sizes[i])
	  snprintf (err, sizeof err, "variable '%s' has %llu bytes, expected"
		    " %llu", vars[i], (unsigned long long) syms[i].size,
		    (unsigned long long) var_sizes[i]);
	else
	  continue;
	fail (file, err);
      }
  free (buf);
  return failures ? 1 : 0;
}
