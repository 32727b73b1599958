/* AMD GPU code objects as the GCN plugin and the amdgcn mkoffload both
   name them: the ELF machine, the GPUs (EF_AMDGPU_MACH) that GCC 12 to 16
   build for or that ROCm agents may be, the generic targets that cover
   several of them, and the architecture number offloadkit's descriptors
   use (0x906 for gfx906).  */

#ifndef OFFLOADKIT_GCN_ARCH_H
#define OFFLOADKIT_GCN_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ELF e_machine of AMD GPU code objects.  */
#define OK_EM_AMDGPU 224u
/* e_flags bits 7:0 name the GPU (EF_AMDGPU_MACH); from code object v6,
   bits 31:24 are a generic target's version (EF_AMDGPU_GENERIC_VERSION,
   0 for a real GPU).  */
#define OK_EF_AMDGPU_MACH_MASK 0xffu
#define OK_EF_AMDGPU_GENERIC_VERSION_SHIFT 24
#define OK_EF_AMDGPU_MACH_GFX803 0x2au
#define OK_EF_AMDGPU_MACH_GFX900 0x2cu
#define OK_EF_AMDGPU_MACH_GFX906 0x2fu
#define OK_EF_AMDGPU_MACH_GFX908 0x30u
#define OK_EF_AMDGPU_MACH_GFX90A 0x3fu
#define OK_EF_AMDGPU_MACH_GFX1030 0x36u
#define OK_EF_AMDGPU_MACH_GFX9_GENERIC 0x51u
#define OK_EF_AMDGPU_MACH_GFX10_3_GENERIC 0x53u
#define OK_EF_AMDGPU_MACH_GFX11_GENERIC 0x54u
#define OK_EF_AMDGPU_MACH_GFX9_4_GENERIC 0x5fu

/* The architecture number of a generic target: this bit and its
   EF_AMDGPU_MACH (0x80000051 for gfx9-generic), which no gfxNNN number
   can be.  */
#define OK_GCN_ARCH_GENERIC 0x80000000u

/* GCC versions: an architecture still in the newest GCC has this as its
   last.  */
#define OK_GCN_GCC_STILL 99

struct ok_gcn_proc
{
  const char *name;		/* -march= and the agent's ISA: "gfx906".  */
  const char *alias;		/* Also accepted by our mkoffload, or NULL.  */
  uint32_t mach;		/* EF_AMDGPU_MACH.  */
  uint32_t arch;		/* 0x906; OK_GCN_ARCH_GENERIC | mach.  */
  uint32_t generic_mach;	/* The generic target that covers it, or 0.  */
  /* The GCC versions whose amdgcn back end builds for it (each version's
     gcn.opt, and gcn-devices.def from 15); 0, 0 when none does.  */
  int min_gcc, max_gcc;
};

/* The table.  EF_AMDGPU_MACH values from LLVM 20's AMDGPUUsage (the same
   in GCC 12 to 14's gcn mkoffload.cc and 15 and 16's gcn-devices.def); the
   generic targets' members from LLVM 20's "AMDGPU Generic Processors"
   table, as GCC 15 and 16's gcn-devices.def name them (gfx940 and gfx941,
   which no GCC builds for, are gfx9-4-generic's in LLVM).  Each member has
   been in its generic target since version 1, so a generic code object of
   any version runs on every member.  A function keeps the table out of
   the files that include this header without using it.  */
static inline const struct ok_gcn_proc *
ok_gcn_procs (size_t *n)
{
#define OK_GCN_G9 OK_EF_AMDGPU_MACH_GFX9_GENERIC
#define OK_GCN_G94 OK_EF_AMDGPU_MACH_GFX9_4_GENERIC
#define OK_GCN_G103 OK_EF_AMDGPU_MACH_GFX10_3_GENERIC
#define OK_GCN_G11 OK_EF_AMDGPU_MACH_GFX11_GENERIC
#define OK_GCN_GEN(M) (OK_GCN_ARCH_GENERIC | (M))
  static const struct ok_gcn_proc procs[] = {
    { "fiji", "gfx803", 0x2a, 0x803, 0, 12, 14 },
    { "gfx900", NULL, 0x2c, 0x900, OK_GCN_G9, 12, OK_GCN_GCC_STILL },
    { "gfx902", NULL, 0x2d, 0x902, OK_GCN_G9, 15, OK_GCN_GCC_STILL },
    { "gfx904", NULL, 0x2e, 0x904, OK_GCN_G9, 15, OK_GCN_GCC_STILL },
    { "gfx906", NULL, 0x2f, 0x906, OK_GCN_G9, 12, OK_GCN_GCC_STILL },
    { "gfx908", NULL, 0x30, 0x908, 0, 12, OK_GCN_GCC_STILL },
    { "gfx909", NULL, 0x31, 0x909, OK_GCN_G9, 15, OK_GCN_GCC_STILL },
    { "gfx90a", NULL, 0x3f, 0x90a, 0, 13, OK_GCN_GCC_STILL },
    { "gfx90c", NULL, 0x32, 0x90c, OK_GCN_G9, 14, OK_GCN_GCC_STILL },
    { "gfx940", NULL, 0x40, 0x940, OK_GCN_G94, 0, 0 },
    { "gfx941", NULL, 0x4b, 0x941, OK_GCN_G94, 0, 0 },
    { "gfx942", NULL, 0x4c, 0x942, OK_GCN_G94, 16, OK_GCN_GCC_STILL },
    { "gfx950", NULL, 0x4f, 0x950, OK_GCN_G94, 16, OK_GCN_GCC_STILL },
    { "gfx9-generic", NULL, OK_GCN_G9, OK_GCN_GEN (OK_GCN_G9), 0, 15,
      OK_GCN_GCC_STILL },
    { "gfx9-4-generic", NULL, OK_GCN_G94, OK_GCN_GEN (OK_GCN_G94), 0, 16,
      OK_GCN_GCC_STILL },
    { "gfx1030", NULL, 0x36, 0x1030, OK_GCN_G103, 14, OK_GCN_GCC_STILL },
    { "gfx1031", NULL, 0x37, 0x1031, OK_GCN_G103, 15, OK_GCN_GCC_STILL },
    { "gfx1032", NULL, 0x38, 0x1032, OK_GCN_G103, 15, OK_GCN_GCC_STILL },
    { "gfx1033", NULL, 0x39, 0x1033, OK_GCN_G103, 15, OK_GCN_GCC_STILL },
    { "gfx1034", NULL, 0x3e, 0x1034, OK_GCN_G103, 15, OK_GCN_GCC_STILL },
    { "gfx1035", NULL, 0x3d, 0x1035, OK_GCN_G103, 15, OK_GCN_GCC_STILL },
    { "gfx1036", NULL, 0x45, 0x1036, OK_GCN_G103, 14, OK_GCN_GCC_STILL },
    { "gfx10-3-generic", NULL, OK_GCN_G103, OK_GCN_GEN (OK_GCN_G103), 0, 15,
      OK_GCN_GCC_STILL },
    { "gfx1100", NULL, 0x41, 0x1100, OK_GCN_G11, 14, OK_GCN_GCC_STILL },
    { "gfx1101", NULL, 0x46, 0x1101, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx1102", NULL, 0x47, 0x1102, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx1103", NULL, 0x44, 0x1103, OK_GCN_G11, 14, OK_GCN_GCC_STILL },
    { "gfx1150", NULL, 0x43, 0x1150, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx1151", NULL, 0x4a, 0x1151, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx1152", NULL, 0x55, 0x1152, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx1153", NULL, 0x58, 0x1153, OK_GCN_G11, 15, OK_GCN_GCC_STILL },
    { "gfx11-generic", NULL, OK_GCN_G11, OK_GCN_GEN (OK_GCN_G11), 0, 15,
      OK_GCN_GCC_STILL },
  };
#undef OK_GCN_G9
#undef OK_GCN_G94
#undef OK_GCN_G103
#undef OK_GCN_G11
#undef OK_GCN_GEN
  *n = sizeof procs / sizeof procs[0];
  return procs;
}

/* The entry whose FIELD (mach or arch) is VALUE, or NULL.  */
static inline const struct ok_gcn_proc *
ok_gcn_proc_by_mach (uint32_t mach)
{
  size_t n;
  const struct ok_gcn_proc *p = ok_gcn_procs (&n);
  for (size_t i = 0; i < n; i++)
    if (p[i].mach == mach)
      return &p[i];
  return NULL;
}

static inline const struct ok_gcn_proc *
ok_gcn_proc_by_arch (uint32_t arch)
{
  size_t n;
  const struct ok_gcn_proc *p = ok_gcn_procs (&n);
  for (size_t i = 0; i < n; i++)
    if (p[i].arch == arch)
      return &p[i];
  return NULL;
}

/* The entry named NAME[0, LEN) (or so aliased), or NULL.  */
static inline const struct ok_gcn_proc *
ok_gcn_proc_by_name (const char *name, size_t len)
{
  size_t n;
  const struct ok_gcn_proc *p = ok_gcn_procs (&n);
  for (size_t i = 0; i < n; i++)
    if ((strlen (p[i].name) == len && memcmp (p[i].name, name, len) == 0)
	|| (p[i].alias && strlen (p[i].alias) == len
	    && memcmp (p[i].alias, name, len) == 0))
      return &p[i];
  return NULL;
}

/* The architecture number of EF_AMDGPU_MACH value MACH, or 0.  */
static inline uint32_t
ok_gcn_arch_of_mach (uint32_t mach)
{
  const struct ok_gcn_proc *p = ok_gcn_proc_by_mach (mach);
  return p ? p->arch : 0;
}

/* The name of architecture ARCH ("gfx906", "gfx9-generic"), or NULL.  */
static inline const char *
ok_gcn_arch_name (uint32_t arch)
{
  const struct ok_gcn_proc *p = ok_gcn_proc_by_arch (arch);
  return p ? p->name : NULL;
}

/* The architecture number of the generic target that covers ARCH, or 0.  */
static inline uint32_t
ok_gcn_generic_arch (uint32_t arch)
{
  const struct ok_gcn_proc *p = ok_gcn_proc_by_arch (arch);
  return p && p->generic_mach ? OK_GCN_ARCH_GENERIC | p->generic_mach : 0;
}

/* Whether a code object for architecture IMAGE runs on an agent of
   architecture AGENT: the same, or a generic target that covers it.  */
static inline int
ok_gcn_arch_runs_on (uint32_t image, uint32_t agent)
{
  return image == agent
	 || (image != 0 && image == ok_gcn_generic_arch (agent));
}

#endif /* OFFLOADKIT_GCN_ARCH_H */
