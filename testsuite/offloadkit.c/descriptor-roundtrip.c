/* The descriptor our mkoffload writes is the one our plugins read.  This
   program is built through our mkoffload like any other, but defines its
   own GOMP_offload_register_ver / GOMP_offload_unregister_ver, which the
   wrapper's constructor and destructor then call instead of libgomp's.  It
   checks what it was handed with the plugins' own validation code
   (common/desc-check.c), against GCC's host table and the embedded PTX.
   libgomp never sees the image, so no target region is run.  */
/* { dg-do run } */
/* { dg-output "unregistered the registered descriptor" } */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/desc-check.c"
#include "okt-check.h"

OKT_BEGIN_DECLARE_TARGET
int counter = 42;
double table[4] = { 1, 2, 3, 4 };
int
twice (int x)
{
  return 2 * x;
}
#pragma omp end declare target
int linked[3] = { 7, 8, 9 };
#pragma omp declare target link(linked)

/* GCC's own host table (crtoffloadtable.o), for comparison.  */
extern const void *const __OFFLOAD_TABLE__[]
  __attribute__ ((visibility ("hidden")));

static unsigned reg_version;
static const void *reg_host, *reg_data;
static int reg_type, reg_calls;

void
GOMP_offload_register_ver (unsigned version, const void *host_table,
			   int target_type, const void *target_data)
{
  reg_calls++;
  reg_version = version;
  reg_host = host_table;
  reg_type = target_type;
  reg_data = target_data;
}

void
GOMP_offload_unregister_ver (unsigned version, const void *host_table,
			     int target_type, const void *target_data)
{
  OKT_CHECK (version == reg_version && host_table == reg_host
	     && target_type == reg_type && target_data == reg_data);
  printf ("unregistered the registered descriptor\n");
}

/* Target regions, so that the tables have functions; never run.  */
static void
regions (int *out)
{
#pragma omp target map(from: out[0:1])
  out[0] = twice (counter);
#pragma omp target map(tofrom: linked)
  linked[0] += (int) table[1];
}

/* Whether the image's PTX has NAME as a whole word after KEYWORD.  */
static int
ptx_declares (const struct ok_tgt_desc *t, const char *keyword,
	      const char *name)
{
  const char *p = (const char *) t->image_start;
  const char *end = (const char *) t->image_end;
  size_t n = strlen (name);
  for (; p < end; p += strlen (p) + 1)
    for (const char *q = strstr (p, keyword); q; q = strstr (q + 1, keyword))
      {
	const char *s = q + strlen (keyword);
	while (*s == ' ' || *s == '\t' || *s == '.' || (*s >= 'a' && *s <= 'z')
	       || (*s >= '0' && *s <= '9'))
	  {
	    /* Skip qualifiers such as ".align 8 .u32" before the name.  */
	    if (strncmp (s, name, n) == 0)
	      break;
	    s++;
	  }
	if (strncmp (s, name, n) == 0
	    && !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')
		 || s[n] == '_' || s[n] == '$'))
	  return 1;
      }
  return 0;
}

int
main (int argc, char **argv)
{
  (void) argv;
  if (argc > 1000)
    {
      int out;
      regions (&out);
    }

  /* Change the variables first: the snapshot must still hold their
     initial values.  */
  counter = 1;
  table[0] = -1;

  /* One registration, as offloadkit's, for nvptx, in the form of the
     GCC that compiled this test: library version 1 for GCC 12 (one
     address for both the host table and the target data), 2 for GCC 13
     (the target data begins with the "requires" mask, which libgomp
     strips), 3 from GCC 14 (besides, a separate host table of six words:
     GCC's, with the indirect functions).  */
#if __GNUC__ >= 14
  const unsigned lib = 3;
  const int host_words = 6;
#elif __GNUC__ == 13
  const unsigned lib = 2;
  const int host_words = 4;
#else
  const unsigned lib = 1;
  const int host_words = 4;
#endif
  OKT_CHECK (reg_calls == 1);
  OKT_CHECK (reg_type == OK_GOMP_DEVICE_NVIDIA_PTX);
  OKT_CHECK (reg_version == OK_GOMP_VERSION_PACK (lib, OK_DEV_VERSION));
  const void *target_data = reg_data;
  if (lib >= 2)
    {
      /* A program with target regions: GOMP_REQUIRES_TARGET_USED.  */
      const uintptr_t *words = (const uintptr_t *) reg_data;
      OKT_CHECK ((words[0] & 0x200) != 0);
      target_data = &words[1];
    }
  if (lib >= 3)
    for (int i = 0; i < host_words; i++)
      OKT_CHECK (((const void *const *) reg_host)[i] == __OFFLOAD_TABLE__[i]);
  else
    OKT_CHECK (reg_host == target_data);

  char err[256];
  const struct ok_openmp_target *desc
    = ok_desc_check (reg_version, target_data, reg_type, err, sizeof err);
  if (desc == NULL)
    {
      fprintf (stderr, "ok_desc_check: %s\n", err);
      abort ();
    }

  /* It begins with GCC's host table.  */
  OKT_CHECK ((const void *) desc->host.funcs == __OFFLOAD_TABLE__[0]);
  OKT_CHECK ((const void *) desc->host.funcs_end == __OFFLOAD_TABLE__[1]);
  OKT_CHECK ((const void *) desc->host.vars == __OFFLOAD_TABLE__[2]);
  OKT_CHECK ((const void *) desc->host.vars_end == __OFFLOAD_TABLE__[3]);
  size_t nfuncs = (size_t) (desc->host.funcs_end - desc->host.funcs);
  size_t nvars = (size_t) (desc->host.vars_end - desc->host.vars) / 2;
  OKT_CHECK (nfuncs == 2);
  OKT_CHECK (nvars == 3);

  /* First a PTX image whose tables name entry points and variables that
     the PTX declares, in host-table order; then, when mkoffload found
     ptxas and was asked for SASS, one cubin per architecture with the
     same tables.  */
  OKT_CHECK (desc->num_targets >= 1 && desc->flags == 0);
  const struct ok_tgt_desc *t = ok_desc_target (desc, reg_type, 0);
  OKT_CHECK (t != NULL);
  OKT_CHECK (t->image_format == OK_IMAGE_PTX && t->arch == 0
	     && t->flags == 0);
  for (uint32_t i = 1; i < desc->num_targets; i++)
    {
      const struct ok_tgt_desc *c = ok_desc_target (desc, reg_type, i);
      OKT_CHECK (c != NULL && c->image_format == OK_IMAGE_CUBIN
		 && c->arch >= 30 && c->flags == 0);
      /* An ELF64 file for EM_CUDA (190).  */
      OKT_CHECK (c->image_end - c->image_start > 64
		 && memcmp (c->image_start, "\177ELF\2", 5) == 0
		 && c->image_start[18] == 190 && c->image_start[19] == 0);
      OKT_CHECK (c->num_funcs == t->num_funcs && c->num_vars == t->num_vars
		 && c->func_names == t->func_names
		 && c->var_names == t->var_names);
    }
  OKT_CHECK (ok_desc_target (desc, reg_type, desc->num_targets) == NULL);
  OKT_CHECK (t->image_end > t->image_start && t->image_end[-1] == '\0');
  OKT_CHECK (strstr ((const char *) t->image_start, ".version") != NULL);
  OKT_CHECK (t->num_funcs == nfuncs && t->num_vars == nvars);
  for (size_t i = 0; i < nfuncs; i++)
    OKT_CHECK (ptx_declares (t, ".entry", t->func_names[i]));
  for (size_t i = 0; i < nvars; i++)
    OKT_CHECK (ptx_declares (t, ".global", t->var_names[i]));

  /* Variables: sizes, the link bit, names in the same order as the host
     addresses, and the initial values in the snapshot (link variables
     have none).  */
  OKT_CHECK (*desc->host_var_init != NULL);
  const unsigned char *snap = *desc->host_var_init;
  int seen = 0;
  for (size_t i = 0; i < nvars; i++)
    {
      const void *addr = desc->host.vars[2 * i];
      uintptr_t size = (uintptr_t) desc->host.vars[2 * i + 1];
      const char *name = t->var_names[i];
      if (addr == &counter)
	{
	  OKT_CHECK (size == sizeof counter && strcmp (name, "counter") == 0);
	  int v;
	  memcpy (&v, snap, sizeof v);
	  OKT_CHECK (v == 42);
	  snap += size;
	  seen |= 1;
	}
      else if (addr == table)
	{
	  OKT_CHECK (size == sizeof table && strcmp (name, "table") == 0);
	  double v[4];
	  memcpy (v, snap, sizeof v);
	  OKT_CHECK (v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4);
	  snap += size;
	  seen |= 2;
	}
      else if (addr == linked)
	{
	  OKT_CHECK (size == (sizeof linked | OK_GOMP_LINK_BIT));
	  OKT_CHECK (strncmp (name, "linked", 6) == 0);
	  seen |= 4;
	}
    }
  OKT_CHECK (seen == 7);

  /* The device-number slot the emulated device sets inside regions.  */
  OKT_CHECK (desc->device_num_slot != NULL);
  int *slot = desc->device_num_slot ();
  OKT_CHECK (*slot == -1);
  OKT_CHECK (omp_is_initial_device ()
	     && omp_get_device_num () == omp_get_initial_device ());
  *slot = 3;
  /* GCC 15+ folds omp_is_initial_device () to 1 in host code, this is.  */
  OKT_CHECK (omp_is_initial_device () == (__GNUC__ >= 15)
	     && omp_get_device_num () == 3);
  *slot = -1;
  OKT_CHECK (omp_is_initial_device ());

  /* A damaged copy is refused with what was expected and found.  */
  struct ok_openmp_target bad = *desc;
  bad.magic ^= 1;
  OKT_CHECK (ok_desc_check (reg_version, &bad, reg_type, err, sizeof err)
	     == NULL);
  OKT_CHECK (strstr (err, "magic") && strstr (err, "expected"));
  bad = *desc;
  OKT_CHECK (ok_desc_check (reg_version, &bad, OK_GOMP_DEVICE_GCN, err,
			    sizeof err) == NULL);
  OKT_CHECK (strstr (err, "device type 8") && strstr (err, "found"));
  return 0;
}
