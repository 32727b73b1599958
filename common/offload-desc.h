/* The image descriptor shared by mkoffload and the plugins.

   mkoffload emits one __OPENMP_TARGET__ descriptor per wrapper object and
   passes its address to GOMP_offload_register_ver twice: as HOST_TABLE,
   because it begins with the four words of GCC's __OFFLOAD_TABLE__ layout,
   and as TARGET_DATA, which libgomp hands unchanged to the plugin's
   GOMP_OFFLOAD_load_image.  After the host table come a magic, our own
   descriptor version and device version (a device version GCC never uses,
   also packed into the version word), the number of target descriptors and
   the descriptors themselves (split-table design: each has its image, a
   function table and a separate variable table).

   This header is self-contained (only <stdint.h>): mkoffload embeds its
   text in every wrapper it generates, so the emitted data and the plugin
   that reads it are compiled from the same declarations.  */

#ifndef OFFLOADKIT_OFFLOAD_DESC_H
#define OFFLOADKIT_OFFLOAD_DESC_H

#include <stdint.h>

/* "OKIT" in memory order on a little-endian host.  */
#define OK_DESC_MAGIC 0x54494b4fu
/* 2: struct ok_tgt_desc gained kernel_info.  3: it gained oacc_dims
   (plugins still read version 2, whose targets array has the shorter
   entries: common/desc-check.h).  4: struct ok_openmp_target gained
   device_exit_slot (its targets are version 3's).  */
#define OK_DESC_VERSION 4u
/* Low half of the GOMP version word for images built by offloadkit.  GCC 12
   uses 1 (nvptx) and 2 (gcn); GCC's plugins refuse anything above theirs,
   and ours tell the formats apart by it.  */
#define OK_DEV_VERSION 0x6f6bu

/* Image formats.  */
#define OK_IMAGE_PTX 1u     /* NUL-separated PTX modules, to JIT-link.  */
#define OK_IMAGE_CUBIN 2u   /* CUDA ELF for one sm_ARCH.  */
#define OK_IMAGE_GCN 3u     /* AMD GCN code object (ELF) for one gfxARCH.  */

/* Flags of a struct ok_tgt_desc.
   OK_TGT_GCN_KERNARGS_V3 (GCN code objects only): the device code was
   compiled by GCC 13 or newer, whose device runtime expects the kernel
   arguments of GCN device version 3 (GCC 13's libgomp/config/gcn/
   libgomp-gcn.h, struct kernargs_abi: stack and team-arena pointers and
   sizes after the heap pointer, the output buffer after them); clear:
   GCC 12's layout.  mkoffload sets it from the version of the GCC whose
   accel compiler built the image.  */
#define OK_TGT_GCN_KERNARGS_V3 0x1u

/* Every wrapper object also carries an ELF note, owner OK_NOTE_OWNER,
   type OK_NOTE_IMAGES, whose descriptor begins with the 32-bit device
   type (OK_GOMP_DEVICE_*) of its images: in an allocated note section, it
   lands in a PT_NOTE segment of the program or library, where a plugin
   finds which kinds of device the process has offloadkit images for
   (dl_iterate_phdr) without reading any descriptor, stripped binaries
   included.  Three more 32-bit words follow it (struct ok_note_images),
   for tools that describe a program without running it (offloadkit-info);
   the notes of earlier wrappers have the first word only.  */
#define OK_NOTE_OWNER "offloadkit"
#define OK_NOTE_IMAGES 1u

struct ok_note_images
{
  uint32_t device_type;		/* OK_GOMP_DEVICE_*.  */
  /* The version word the wrapper passes to GOMP_offload_register_ver:
     its high half is the libgomp interface version the images need (a
     libgomp of a lower one stops the program at start-up).  */
  uint32_t gomp_version;
  uint32_t gcc_major;		/* The GCC whose accel compiler built them.  */
  /* The program's OpenMP requires mask (GOMP_REQUIRES_*), as the accel
     compiler gave it to mkoffload; OK_NOTE_REQUIRES_UNKNOWN where it
     gives none (GCC 12).  */
  uint32_t omp_requires;
};
#define OK_NOTE_REQUIRES_UNKNOWN 0xffffffffu

/* How a region's code ends the program on an emulated device (version
   4's device_exit_slot): with STATUS, as the device's exit would.  Does
   not return.  */
typedef void ok_device_exit_fn (int status);

/* What a wrapper passes to GOMP_offload_register_ver: the tables of the
   link define it (mko_registration), the wrapper's fixed code, compiled
   apart (mkoffload/wrapper-runtime.c), registers it.  */
struct ok_wrapper_registration
{
  unsigned version;
  const void *host_table;
  int device_type;
  const void *target_data;
};

/* GCC's __OFFLOAD_TABLE__: bounds of the host function table (one address
   per function) and of the host variable table ((address, size) pairs).  */
struct ok_host_table
{
  void *const *funcs;
  void *const *funcs_end;
  void *const *vars;
  void *const *vars_end;
};

/* What a launch needs to know of one kernel that the device runtime
   cannot tell the plugin once the image is loaded: GCN kernels read from
   the code object's kernel descriptors by mkoffload (the registers bound
   how many wavefronts of a team fit on a compute unit).  Zero means
   unknown.  */
struct ok_kernel_info
{
  uint32_t sgprs;		/* Scalar registers per wavefront.  */
  uint32_t vgprs;		/* Vector registers per work-item.  */
  uint32_t group_segment_size;	/* LDS bytes per work-group.  */
  uint32_t private_segment_size; /* Scratch bytes per work-item.  */
  uint32_t kernarg_size;	/* Bytes of kernel arguments.  */
  uint32_t flags;		/* OK_KINFO_*; others must be 0.  */
};

/* Flags of a struct ok_kernel_info.
   OK_KINFO_DEVICE_FN (GCN code objects, GCC 13+): the function-table
   entry is an ordinary device function, not a kernel: the `nohost' clone
   of a `target device (ancestor: 1)' region (GCC's omp-expand.cc), which
   the table lists only so that the device's reverse-offload requests can
   name the region by its device address (the host table has the host's
   function in its place).  It has no kernel descriptor, is never
   launched, and the other fields are 0.  A flag of the per-function
   kernel_info rather than a new descriptor field: version 2 descriptors
   already have it (always 0 there, and no such function: mkoffload
   refused them), so both versions read the same, and it is what the
   plugin consults per function anyway.  */
#define OK_KINFO_DEVICE_FN 0x1u

/* The OpenACC launch dimensions the compiler fixed for one function:
   the nvptx back end writes them on its "//:FUNC_MAP" lines, the amdgcn
   one on ";; OPENACC-DIMS:" lines of its assembler output.  DIM: gang,
   worker, vector (GOMP_DIM_GANG, _WORKER, _VECTOR); 0 where the compiler
   left the size to run time (num_gangs (n) with n not constant, or no
   clause).  */
struct ok_oacc_dims
{
  uint16_t dim[3];
  uint16_t flags;		/* OK_OACC_*; others must be 0.  */
};

/* Flags of a struct ok_oacc_dims.
   OK_OACC_FN: the function is an OpenACC compute region; clear (and DIM
   0) for an OpenMP target region.  */
#define OK_OACC_FN 0x1u

/* One image of one target.  A target kind may have several (PTX and cubins
   for several architectures, or one GCN code object per -march); the plugin
   picks the one that suits the device.  The function and variable tables
   list device symbol names in host-table order.  */
struct ok_tgt_desc
{
  uint32_t device_type;      /* GOMP device type: 5 nvptx, 8 gcn.  */
  uint32_t image_format;     /* OK_IMAGE_*.  */
  uint32_t arch;             /* 0 for PTX, 80 for sm_80, 0x906 for gfx906.  */
  uint32_t flags;            /* OK_TGT_*; others must be 0.  */
  const unsigned char *image_start;
  const unsigned char *image_end;
  uint32_t num_funcs;
  uint32_t num_vars;
  const char *const *func_names;
  const char *const *var_names;
  /* NUM_FUNCS entries, in the order of FUNC_NAMES, or NULL (PTX and
     cubins need none: the CUDA driver reports the same).  */
  const struct ok_kernel_info *kernel_info;
  /* From version 3: NUM_FUNCS entries, in the order of FUNC_NAMES, or
     NULL when the image has no OpenACC function (OpenMP programs).  */
  const struct ok_oacc_dims *oacc_dims;
};

struct ok_openmp_target
{
  struct ok_host_table host;   /* Must stay first: GCC's layout.  */
  uint32_t magic;              /* OK_DESC_MAGIC.  */
  uint16_t desc_version;       /* OK_DESC_VERSION.  */
  uint16_t dev_version;        /* OK_DEV_VERSION.  */
  uint32_t num_targets;
  uint32_t flags;              /* None defined yet; must be 0.  */
  const struct ok_tgt_desc *targets;
  /* For host-fallback execution on an emulated device: the wrapper's
     constructor points *HOST_VAR_INIT at a copy of every non-link host
     variable, concatenated in table order, taken before main runs (only
     when OFFLOADKIT_EMULATE is set then), so that each device starts from
     the variables' initial values.  NULL while no copy was taken.  */
  const unsigned char *const *host_var_init;
  /* Also for emulated devices: returns the address of the calling
     thread's "current emulated device" int in the wrapper, -1 outside
     regions.  The wrapper defines weak omp_get_device_num and
     omp_is_initial_device (and gfortran's omp_get_device_num_ and
     omp_is_initial_device_) that answer from it as a device would while
     it is 0 or more, and otherwise forward to libgomp's.  The emulated
     device sets it around each region on the thread that runs it.  NULL
     when the wrapper has none.  */
  int *(*device_num_slot) (void);
  /* From version 3, for OpenACC on emulated devices: the address of the
     calling thread's "current emulated device type" int in the wrapper,
     the OpenACC device type (acc_device_t: 5 nvidia, 8 radeon, the same
     numbers as the GOMP device types) of the device whose region the
     thread runs, read while *DEVICE_NUM_SLOT () is 0 or more.  The
     wrapper defines weak acc_on_device (and gfortran's acc_on_device_h_)
     that answer from it as that device's own would; host-compiled code
     calls them where the compiler did not fold the answer (GCC folds
     acc_on_device when optimising).  NULL when the wrapper has none.  */
  int *(*acc_device_slot) (void);
  /* From version 4, for emulated devices: the address of the calling
     thread's "device exit" function pointer in the wrapper, which the
     emulated device sets on the thread running a region (NULL outside)
     to what ends a program from its device code.  The wrapper defines
     weak gfortran STOP and ERROR STOP entry points (_gfortran_stop_numeric
     and the like) that, while it and *DEVICE_NUM_SLOT () are set, do what
     the device's libgfortran does, GCC's minimal one (the statement's
     words on standard error, no "Error termination"), then call it with
     the exit status; elsewhere they are the program's libgfortran's.
     NULL when the wrapper has none.  */
  ok_device_exit_fn **(*device_exit_slot) (void);
};

#endif /* OFFLOADKIT_OFFLOAD_DESC_H */
