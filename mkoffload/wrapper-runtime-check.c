/* wrapper-runtime.c compiled as the project compiles its own code, with
   its warnings, and with the tables of a link in their simplest form (one
   empty image): so that the fixed code and the tables' declarations of
   each other are checked together here.  The object is built, never
   linked.  */

/* The fixed code as the build compiles it for mkoffload.  */
#include "wrapper-runtime-unit.c"

/* The tables of a link, in their simplest form (GCC 12's registration).  */
static const unsigned char mko_image_0[1];

static const struct ok_tgt_desc mko_targets[1] = {
  {
    .device_type = 5,
    .image_format = OK_IMAGE_PTX,
    .image_start = mko_image_0,
    .image_end = mko_image_0 + sizeof mko_image_0,
  }
};

static const struct ok_openmp_target __OPENMP_TARGET__ = {
  .host = {
    (void *const *) __offload_func_table,
    (void *const *) __offload_funcs_end,
    (void *const *) __offload_var_table,
    (void *const *) __offload_vars_end
  },
  .magic = OK_DESC_MAGIC,
  .desc_version = OK_DESC_VERSION,
  .dev_version = OK_DEV_VERSION,
  .num_targets = 1,
  .targets = mko_targets,
  .host_var_init = &host_var_init_copy,
  .device_num_slot = mko_device_num_slot,
  .acc_device_slot = mko_acc_device_slot,
  .device_exit_slot = mko_device_exit_slot
};

/* Hidden rather than static here: the fixed code declares it so.  */
const struct ok_wrapper_registration mko_registration
  __attribute__ ((visibility ("hidden"))) = {
  (1u << 16) | OK_DEV_VERSION, &__OPENMP_TARGET__, 5, &__OPENMP_TARGET__
};
