/* hsa-harness: the images the plugin must refuse, with one clear error,
   nothing left in the runtime and no invalid runtime call: variants of
   our descriptor with a damaged code object or descriptor.  See
   hsa-harness.h.  */

#define _GNU_SOURCE
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn-arch.h"
#include "hsa-harness.h"

/* A copy of our descriptor whose image for device 0's agent is
   BYTES[0, SIZE), the only target.  */
struct variant
{
  struct ok_openmp_target d;
  struct ok_tgt_desc t;
  unsigned char *bytes;
  void **vars;
};

static void
variant_init (struct variant *v, const struct ok_tgt_desc *src)
{
  memset (v, 0, sizeof *v);
  v->d = *our_desc;
  v->t = *src;
  size_t size = (size_t) (src->image_end - src->image_start);
  v->bytes = malloc (size);
  memcpy (v->bytes, src->image_start, size);
  v->t.image_start = v->bytes;
  v->t.image_end = v->bytes + size;
  v->d.targets = &v->t;
  v->d.num_targets = 1;
}

static void
variant_free (struct variant *v)
{
  free (v->bytes);
  free (v->vars);
}

/* Set the st_size of every symbol NAME in the symbol tables of the
   ELF64 image BYTES[0, SIZE) to NEW_SIZE; the number changed.  */
static int
set_symbol_size (unsigned char *bytes, size_t size, const char *name,
		 uint64_t new_size)
{
  Elf64_Ehdr eh;
  if (size < sizeof eh)
    return 0;
  memcpy (&eh, bytes, sizeof eh);
  if (eh.e_shentsize != sizeof (Elf64_Shdr) || eh.e_shoff > size
      || (size - eh.e_shoff) / sizeof (Elf64_Shdr) < eh.e_shnum)
    return 0;
  int changed = 0;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    {
      Elf64_Shdr sh, str;
      memcpy (&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
      if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
	  || sh.sh_link >= eh.e_shnum || sh.sh_offset > size
	  || sh.sh_size > size - sh.sh_offset)
	continue;
      memcpy (&str, bytes + eh.e_shoff + sh.sh_link * sizeof str,
	      sizeof str);
      if (str.sh_offset > size || str.sh_size > size - str.sh_offset)
	continue;
      for (size_t k = 0; k + sizeof (Elf64_Sym) <= sh.sh_size;
	   k += sizeof (Elf64_Sym))
	{
	  Elf64_Sym sym;
	  unsigned char *at = bytes + sh.sh_offset + k;
	  memcpy (&sym, at, sizeof sym);
	  size_t len = strlen (name);
	  if (sym.st_name < str.sh_size && str.sh_size - sym.st_name > len
	      && memcmp (bytes + str.sh_offset + sym.st_name, name,
			 len + 1) == 0)
	    {
	      sym.st_size = new_size;
	      memcpy (at, &sym, sizeof sym);
	      changed++;
	    }
	}
    }
  return changed;
}

/* V with its code object's EF_AMDGPU_MACH made MACH.  */
static void
relabel (struct variant *v, uint32_t mach)
{
  Elf64_Ehdr eh;
  memcpy (&eh, v->bytes, sizeof eh);
  eh.e_flags = (eh.e_flags & ~0xffu) | mach;
  memcpy (v->bytes, &eh, sizeof eh);
}

void
test_bad_images (void)
{
  /* T0 and T1 are the images of device 0's and device 1's agents
     (gfx906 and gfx900 unless HSA_HARNESS_AGENTS says otherwise).  */
  const struct ok_tgt_desc *t0 = target_for (our_desc, agent_arch[0]);
  const struct ok_tgt_desc *t1 = target_for (our_desc, agent_arch[1]);
  if (t0 == NULL || t1 == NULL)
    {
      check ("bad images: images for both agents to start from", false);
      return;
    }
  const char *a0 = agent_name[0], *a1 = agent_name[1];
  char name[128];
  struct variant v;

  variant_init (&v, t0);
  v.t.image_end = v.t.image_start + 100;
  bad_load ("truncated code object (100 bytes)", 0, &v.d, NULL);
  v.t.image_end = v.t.image_start + 40;
  bad_load ("truncated code object (40 bytes)", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.bytes[1] = 'X';
  bad_load ("bad ELF magic", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.bytes[4] = 1;			/* ELFCLASS32.  */
  bad_load ("32-bit ELF", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.bytes[18] = 62;			/* e_machine: EM_X86_64.  */
  v.bytes[19] = 0;
  bad_load ("e_machine not EM_AMDGPU", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  /* e_shoff (offset 40, 8 bytes) far beyond the end.  */
  memset (v.bytes + 40, 0x7f, 6);
  bad_load ("section headers outside the image", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  /* e_phoff (offset 32) beyond the end.  */
  memset (v.bytes + 32, 0x7f, 6);
  bad_load ("program headers outside the image", 0, &v.d, NULL);
  variant_free (&v);

  /* Header fields the runtime's loader indexes by.  */
  Elf64_Ehdr eh;
  variant_init (&v, t0);
  memcpy (&eh, v.bytes, sizeof eh);
  eh.e_shstrndx = eh.e_shnum + 3;
  memcpy (v.bytes, &eh, sizeof eh);
  bad_load ("e_shstrndx out of range", 0, &v.d, "code object",
	    "section name table", NULL);
  variant_free (&v);

  variant_init (&v, t0);
  memcpy (&eh, v.bytes, sizeof eh);
  eh.e_shnum = 0;
  memcpy (v.bytes, &eh, sizeof eh);
  bad_load ("extended section numbering", 0, &v.d, "code object",
	    "extended section numbering", NULL);
  variant_free (&v);

  /* A gfx90a code object (EF_AMDGPU_MACH 0x3f; gfx1030's, 0x36, when
     device 0 is a gfx90a) labelled as device 0's: its machine is known,
     so the plugin refuses it for device 0's agent.  */
  bool is90a = agent_arch[0] == 0x90a;
  const char *other = is90a ? "gfx1030" : "gfx90a";
  variant_init (&v, t0);
  relabel (&v, is90a ? 0x36 : 0x3f);
  snprintf (name, sizeof name, "%s code object labelled %s", other, a0);
  bad_load (name, 0, &v.d, other, NULL);
  variant_free (&v);

  /* Device 1's code object labelled as device 0's: the ELF machine
     decides.  */
  variant_init (&v, t1);
  v.t.arch = agent_arch[0];
  snprintf (name, sizeof name, "%s code object labelled %s", a1, a0);
  bad_load (name, 0, &v.d, NULL);
  variant_free (&v);

  /* Only device 1's image, on device 0.  */
  variant_init (&v, t1);
  snprintf (name, sizeof name, "only a %s image for a %s agent", a1, a0);
  bad_load (name, 0, &v.d, a0, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.d.magic ^= 1;
  bad_load ("wrong descriptor magic", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.d.desc_version = 99;
  bad_load ("wrong descriptor version", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.t.device_type = OK_GOMP_DEVICE_NVIDIA_PTX;
  v.d.num_targets = 1;
  bad_load ("nvptx device type only", 0, &v.d, NULL);
  variant_free (&v);

  variant_init (&v, t0);
  v.t.image_format = OK_IMAGE_PTX;
  bad_load ("PTX image format for a gcn target", 0, &v.d, NULL);
  variant_free (&v);

  /* Only OK_TGT_GCN_KERNARGS_V3 is defined.  */
  variant_init (&v, t0);
  v.t.flags = OK_TGT_GCN_KERNARGS_V3 | 0x2;
  bad_load ("image flag 0x2", 0, &v.d, "flags 0x3",
	    "expected 0 or OK_TGT_GCN_KERNARGS_V3", NULL);
  variant_free (&v);

  /* A variable whose host size differs from the code object's.  */
  if (nvars > 0)
    {
      variant_init (&v, t0);
      const struct ok_host_table *h = &our_desc->host;
      v.vars = malloc (2 * nvars * sizeof *v.vars);
      memcpy (v.vars, h->vars, 2 * nvars * sizeof *v.vars);
      v.vars[1] = (void *) ((uintptr_t) v.vars[1] + 4);
      v.d.host.vars = v.vars;
      v.d.host.vars_end = v.vars + 2 * nvars;
      char size[32];
      snprintf (size, sizeof size, "%lu", (unsigned long) (uintptr_t)
		v.vars[1]);
      bad_load ("variable size mismatch", 0, &v.d, t0->var_names[0],
		size, NULL);
      variant_free (&v);
    }

  /* A code object without the variable table's label (renamed in the
     string tables), then one whose label is too small (st_size 8 in the
     symbol tables).  */
  if (nvars > 0)
    {
      variant_init (&v, t0);
      size_t size = (size_t) (v.t.image_end - v.t.image_start);
      int renamed = 0;
      for (unsigned char *p = v.bytes;
	   (p = memmem (p, size - (size_t) (p - v.bytes),
			".offload_var_table", 19)) != NULL; p += 19)
	p[1] = 'Q', renamed++;
      check ("bad images: the variable table's label found", renamed > 0);
      bad_load ("no .offload_var_table", 0, &v.d, ".offload_var_table",
		"no global symbol", NULL);
      variant_free (&v);

      variant_init (&v, t0);
      char need[64];
      snprintf (need, sizeof need, "need %zu bytes", nvars * 16);
      check ("bad images: the variable table's label resized",
	     set_symbol_size (v.bytes, size, ".offload_var_table", 8) > 0);
      bad_load (".offload_var_table of 8 bytes", 0, &v.d,
		".offload_var_table", "found 8 bytes", need, NULL);
      variant_free (&v);
    }

  /* A kernel the code object does not have.  */
  {
    variant_init (&v, t0);
    const char **names = malloc (nfuncs * sizeof *names);
    memcpy (names, t0->func_names, nfuncs * sizeof *names);
    names[0] = "no_such_kernel";
    v.t.func_names = names;
    bad_load ("missing kernel", 0, &v.d, "no_such_kernel", NULL);
    free (names);
    variant_free (&v);
  }
}

/* ------------------------------------------------------------------ */
/* Generic targets (GCC 15+'s gfx9-generic...): a code object for one
   runs on every GPU of its family.  Our code object for device 0
   relabelled as gfx9-generic (e_flags machine 0x51, generic version 1)
   plays one: the fake, as ROCr, loads it on a member agent only.  */

/* V from T0, made a code object for the generic target of
   EF_AMDGPU_MACH MACH, labelled so in the descriptor.  */
static void
generic_variant (struct variant *v, const struct ok_tgt_desc *t0,
		 uint32_t mach)
{
  Elf64_Ehdr eh;
  variant_init (v, t0);
  memcpy (&eh, v->bytes, sizeof eh);
  eh.e_flags = (eh.e_flags & ~0xff0000ffu) | mach
	       | (1u << 24);	/* EF_AMDGPU_GENERIC_VERSION 1.  */
  memcpy (v->bytes, &eh, sizeof eh);
  v->t.arch = OK_GCN_ARCH_GENERIC | mach;
}

/* Load D on DEV and unload it: whether it loaded.  */
static bool
load_and_unload (int dev, const struct ok_openmp_target *d)
{
  struct ok_addr_pair *t = load (dev, d);
  if (t == NULL)
    return false;
  free (t);
  return p_unload_image (dev, ours->version, d);
}

/* On a gfx906 and a gfx900 agent, members of gfx9-generic (whatever GPUs
   the test libraries are built for: GCC 16's are not members).  */
void
child_generic_images (void)
{
  check ("2 devices", p_get_num_devices () == 2);
  check ("init", p_init_device (0) && p_init_device (1));
  const struct ok_tgt_desc *t0 = target_for (our_desc, agent_arch[0]);
  if (t0 == NULL)
    {
      check ("generic targets: an image to start from", false);
      return;
    }
  long bad = bad_calls ();
  struct variant v, exact;
  generic_variant (&v, t0, 0x51);
  check ("a gfx9-generic image loads on a gfx906 agent",
	 load_and_unload (0, &v.d));
  check ("a gfx9-generic image loads on a gfx900 agent",
	 load_and_unload (1, &v.d));

  /* The exact architecture first: a broken gfx9-generic image listed
     before a gfx906 one (device 0's code object, a gfx906 one when the
     libraries are built for it) is never tried on the gfx906 agent.  */
  variant_init (&exact, t0);
  relabel (&exact, 0x2f);
  exact.t.arch = 0x906;
  struct ok_tgt_desc both[2] = { v.t, exact.t };
  memset (v.bytes, 0, 64);
  v.d.targets = both;
  v.d.num_targets = 2;
  check ("gfx9-generic and gfx906 images: the gfx906 one is chosen",
	 load_and_unload (0, &v.d));
  bad_load ("a broken gfx9-generic image, the only one for a gfx900 agent",
	    1, &v.d, NULL);
  variant_free (&exact);
  variant_free (&v);

  /* The ELF machine decides, as for the others.  */
  generic_variant (&v, t0, 0x53);
  v.t.arch = OK_GCN_ARCH_GENERIC | 0x51;
  bad_load ("a gfx10-3-generic code object labelled gfx9-generic", 0, &v.d,
	    "gfx10-3-generic", "gfx906", NULL);
  variant_free (&v);
  check_no_bad_calls ("generic targets: no invalid runtime call", bad);
  check ("fini", p_fini_device (0) && p_fini_device (1));
  check_no_leaks ("after fini");
}

/* A gfx908 agent is no gfx9-generic member (LLVM's AMDGPUUsage).  */
void
child_generic_not_member (void)
{
  check ("1 device", p_get_num_devices () == 1);
  check ("init", p_init_device (0));
  const struct ok_tgt_desc *t0 = target_for (our_desc, agent_arch[0]);
  if (t0 != NULL)
    {
      struct variant v;
      generic_variant (&v, t0, 0x51);
      bad_load ("a gfx9-generic image on a gfx908 agent", 0, &v.d,
		"gfx9-generic", "gfx908", NULL);
      variant_free (&v);
    }
  else
    check ("an image to start from", false);
  check ("fini", p_fini_device (0));
  check_no_leaks ("after fini");
}
