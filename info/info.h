/* offloadkit-info: will this program offload here, and if not, why.
   offloadkit-info.c reads the options and prints; info-machine.c asks
   the libgomp and plugins a program would get; info-program.c reads a
   program's offload images.  */

#ifndef OFFLOADKIT_INFO_H
#define OFFLOADKIT_INFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INFO_MAX_DEVICES 16
#define INFO_MAX_IMAGES 32

/* The kinds of offload device, as libgomp names their plugins.  */
enum info_kind { INFO_NVPTX, INFO_GCN, INFO_NKINDS };
extern const char *const info_kind_plugin[INFO_NKINDS];	/* "nvptx", "gcn" */
extern const char *const info_kind_target[INFO_NKINDS];	/* "nvptx-none", ... */

struct info_device
{
  char describe[160];		/* Ours only: "cuda: device 0 (..., sm_90)".  */
  char name[128], vendor[64], driver[64];
  size_t memory;
  unsigned sm;			/* From DESCRIBE: 90, or 0.  */
  char gfx[24];			/* From DESCRIBE: "gfx90a", or "".  */
  unsigned cuda_driver;		/* CUDA's: 1000 * major + 10 * minor, or 0.  */
  bool emulated;
};

struct info_plugin
{
  char path[PATH_MAX];		/* What libgomp's dlopen finds; "" none.  */
  bool ours;			/* offloadkit's (its offloadkit_plugin mark).  */
  char error[512];		/* Why it could not be loaded or asked.  */
  int num_devices;		/* -1: the program's requirements unmet.  */
  /* Devices counted for a program that requires unified shared memory
     (libgomp 15+): -1 none, -2 not asked.  */
  int usm_devices;
  int ndevs;
  struct info_device devs[INFO_MAX_DEVICES];
  char reasons[512];		/* What this machine lacks for it.  */
  char *log;			/* What it said with GOMP_DEBUG=1 (malloc).  */
};

struct info_machine
{
  char libgomp[PATH_MAX];	/* "" when the dynamic linker finds none.  */
  char libgomp_error[512];
  int gcc;			/* Its GCC, 12 to 16.  */
  struct info_plugin plugins[INFO_NKINDS];
};

/* One offload image found in a program.  */
enum info_image_form { INFO_PTX, INFO_CUBIN, INFO_GCN_CODE };
struct info_image
{
  enum info_kind kind;
  enum info_image_form form;
  unsigned arch;		/* sm (90) or EF_AMDGPU_MACH; PTX: .target sm.  */
  unsigned ptx_isa;		/* PTX: .version, 10 * major + minor; or 0.  */
};

struct info_program
{
  const char *path;
  bool offloadkit;		/* Registered by offloadkit's wrapper.  */
  bool gcc_format;		/* Registered by GCC's own mkoffload's.  */
  bool kinds[INFO_NKINDS];	/* Device kinds it has images for.  */
  unsigned desc_version;	/* offloadkit's descriptor; 0 unknown.  */
  /* The GCC that built the images: exactly (GCC_MAJOR, from offloadkit's
     note), or at least (GCC_MIN, from GCC's data); 0 unknown.  */
  unsigned gcc_major, gcc_min;
  /* The libgomp interface version the images need (the high half of
     their GOMP_offload_register_ver version); 0 unknown.  */
  unsigned gomp_lib;
  bool requires_known;
  uint32_t omp_requires;	/* GOMP_REQUIRES_* of the program.  */
  /* The GCC versions the .comment section names ("15.2.0, 16.2.0"): the
     compilers of the file's objects, the wrapper's among them; "" none.  */
  char comment_gccs[128];
  size_t num_funcs, num_vars;	/* The host table.  */
  int nimages;
  struct info_image images[INFO_MAX_IMAGES];
};

/* Ask the libgomp and the plugins a program started now would get;
   never fails (what goes wrong is in *M).  */
void info_machine_probe (struct info_machine *m);
void info_machine_free (struct info_machine *m);

/* Read program or library PATH into *P; false with one sentence in ERR
   (not ELF, truncated, a future descriptor version).  */
bool info_program_read (const char *path, struct info_program *p, char *err,
			size_t errlen);

/* Read what GCC's own mkoffload's registration data in ELF says of
   program P (its requires mask, GCC 13 or newer) into *P; nothing when
   it cannot be found.  */
struct ok_elf;
void info_gcc_data_read (const struct ok_elf *elf, struct info_program *p);

/* The first CUDA release whose driver JIT-compiles PTX of ISA version
   ISA (10 * major + minor), as 1000 * major + 10 * minor; 0 for a version
   this program does not know.  */
unsigned info_ptx_isa_cuda (unsigned isa);

/* "gfx90a" for EF_AMDGPU_MACH MACH, or "gfx?(0xNN)" in BUF.  */
const char *info_gcn_name (unsigned mach, char *buf, size_t len);

#endif /* OFFLOADKIT_INFO_H */
