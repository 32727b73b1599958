/* AMD GPU code objects as the GCN plugin and the amdgcn mkoffload both
   name them: the ELF machine, the EF_AMDGPU_MACH values of the GPUs that
   GCC builds for or that ROCm agents may be, and the gfx number
   offloadkit's descriptors use (0x906 for gfx906).  */

#ifndef OFFLOADKIT_GCN_ARCH_H
#define OFFLOADKIT_GCN_ARCH_H

#include <stdint.h>

/* ELF e_machine of AMD GPU code objects.  */
#define OK_EM_AMDGPU 224u
/* e_flags bits 7:0 name the GPU (EF_AMDGPU_MACH).  */
#define OK_EF_AMDGPU_MACH_MASK 0xffu
#define OK_EF_AMDGPU_MACH_GFX803 0x2au
#define OK_EF_AMDGPU_MACH_GFX900 0x2cu
#define OK_EF_AMDGPU_MACH_GFX906 0x2fu
#define OK_EF_AMDGPU_MACH_GFX908 0x30u
/* Not built by GCC 12, but the GCN plugin matches an image's machine to
   an agent's ISA, and ROCm agents may be these.  */
#define OK_EF_AMDGPU_MACH_GFX90A 0x3fu
#define OK_EF_AMDGPU_MACH_GFX1030 0x36u

/* The gfx number (0x906 for gfx906) of EF_AMDGPU_MACH value MACH, or 0
   (LLVM's AMDGPUUsage).  */
static inline uint32_t
ok_gcn_arch_of_mach (uint32_t mach)
{
  switch (mach)
    {
    case OK_EF_AMDGPU_MACH_GFX803: return 0x803;
    case OK_EF_AMDGPU_MACH_GFX900: return 0x900;
    case OK_EF_AMDGPU_MACH_GFX906: return 0x906;
    case OK_EF_AMDGPU_MACH_GFX908: return 0x908;
    case OK_EF_AMDGPU_MACH_GFX90A: return 0x90a;
    case OK_EF_AMDGPU_MACH_GFX1030: return 0x1030;
    default: return 0;
    }
}

#endif /* OFFLOADKIT_GCN_ARCH_H */
