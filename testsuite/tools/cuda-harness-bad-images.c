/* cuda-harness: every image the plugin must refuse, with one clear
   error and nothing left behind: bad descriptors, truncated PTX or
   cubins, cubin headers a loader would index by, the wrong machine or
   architecture, sizes that differ, missing symbols, and JIT failures with
   the JIT's log.  See cuda-harness.h.  */

#define _GNU_SOURCE
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-harness.h"

void
test_bad_images (void)
{
  struct image im;
  struct ok_openmp_target d;

  d = main_im.d;
  d.magic = 0x12345678;
  bad_load ("bad magic", &d, version, "0x54494b4f", "0x12345678", NULL);
  d = main_im.d;
  d.desc_version = 7;
  bad_load ("bad descriptor version", &d, version, "version 7", NULL);
  bad_load ("newer libgomp version", &main_im.d,
	    OK_GOMP_VERSION_PACK (2, OK_DEV_VERSION), "version 2", NULL);
  image_init (&im);
  image_add_ptx (&im, ptx90)->device_type = OK_GOMP_DEVICE_GCN;
  bad_load ("wrong device type", &im.d, version, "device type", NULL);

  /* PTX cut short: no NUL inside the image.  */
  image_init (&im);
  image_add (&im, OK_IMAGE_PTX, 0, ptx90, strlen (ptx90) / 2);
  bad_load ("truncated PTX", &im.d, version, "PTX", NULL);

  /* PTX without .version: refused before or by the JIT.  */
  char *nover = strdup (ptx90);
  memcpy (strstr (nover, ".version"), "//ersion", 8);
  image_init (&im);
  image_add_ptx (&im, nover);
  bad_load ("PTX without .version", &im.d, version, ".version", NULL);

  /* Unbalanced braces: only the JIT sees it; its log is in the message.  */
  char *unbal = strdup (ptx90);
  *strrchr (unbal, '}') = ' ';
  image_init (&im);
  image_add_ptx (&im, unbal);
  bad_load ("PTX the JIT refuses", &im.d, version, "CUDA_ERROR_INVALID_PTX",
	    "fake ptxas", "unbalanced", NULL);

  char *ptx100 = make_ptx ("sm_100", "which_100");
  image_init (&im);
  image_add_ptx (&im, ptx100);
  bad_load ("PTX for a newer sm", &im.d, version, "sm_100", "sm_90", NULL);

  /* Cubins.  */
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, 1000 < cubin90_size
	     ? cubin90_size - 100 : 40);
  bad_load ("truncated cubin", &im.d, version, "truncated", NULL);

  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, 30);
  bad_load ("cubin shorter than an ELF header", &im.d, version, "cubin",
	    NULL);

  /* Header fields a loader indexes by: refused before the driver sees
     the cubin.  */
  {
    unsigned char *odd = malloc (cubin90_size);
    memcpy (odd, cubin90, cubin90_size);
    Elf64_Ehdr eh;
    memcpy (&eh, odd, sizeof eh);
    eh.e_shstrndx = eh.e_shnum + 3;
    memcpy (odd, &eh, sizeof eh);
    long loads = f_calls ("cuModuleLoadData");
    image_init (&im);
    image_add (&im, OK_IMAGE_CUBIN, 90, odd, cubin90_size);
    bad_load ("cubin whose e_shstrndx is out of range", &im.d, version,
	      "cubin for sm_90", "section name table", NULL);
    memcpy (&eh, cubin90, sizeof eh);
    eh.e_shnum = 0;
    memcpy (odd, &eh, sizeof eh);
    bad_load ("cubin with extended section numbering", &im.d, version,
	      "cubin for sm_90", "extended section numbering", NULL);
    check ("bad cubin headers: the driver never saw them",
	   f_calls ("cuModuleLoadData") == loads);
    free (odd);
  }

  size_t wsize;
  unsigned char *wrong = make_cubin (90, false, "which_x", 62, &wsize);
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, wrong, wsize);
  bad_load ("cubin with e_machine 62", &im.d, version, "190", "62", NULL);
  free (wrong);

  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 80, cubin80, cubin80_size);
  bad_load ("only a cubin for sm_80", &im.d, version, "sm_90", "sm_80",
	    NULL);

  /* The descriptor says sm_90, the cubin's e_flags say sm_100: refused
     before the driver sees it (which would refuse it too).  */
  size_t lsize;
  unsigned char *lie = make_cubin (100, false, "which_lie", 0, &lsize);
  image_init (&im);
  image_add (&im, OK_IMAGE_CUBIN, 90, lie, lsize);
  long loads = f_calls ("cuModuleLoadData");
  bad_load ("cubin whose ELF is for sm_100", &im.d, version,
	    "cubin for sm_90 is for sm_100 by its ELF header", NULL);
  check ("cubin whose ELF is for sm_100: the driver never saw it",
	 f_calls ("cuModuleLoadData") == loads);
  free (lie);

  /* Variable sizes: the host says 8 bytes, the device has 4.  */
  static void *const vars_bad[] = {
    &hv_counter, (void *) 8,
    hv_array, (void *) sizeof hv_array,
    hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
  };
  image_init (&im);
  im.d.host.vars = vars_bad;
  im.d.host.vars_end = vars_bad + 2 * NVARS;
  image_add_ptx (&im, ptx90);
  bad_load ("variable size differs", &im.d, version, "hv_counter", "8", "4",
	    NULL);

  /* A link variable whose device object is not a pointer.  */
  static const char *const var_names_bad[NVARS] = { "hv_counter",
						    "hv_link", "hv_array" };
  static void *const vars_link[] = {
    &hv_counter, (void *) sizeof hv_counter,
    hv_link, (void *) (sizeof hv_link | OK_GOMP_LINK_BIT),
    hv_array, (void *) (sizeof hv_array | OK_GOMP_LINK_BIT),
  };
  image_init (&im);
  im.d.host.vars = vars_link;
  im.d.host.vars_end = vars_link + 2 * NVARS;
  image_add_ptx (&im, ptx90)->var_names = var_names_bad;
  bad_load ("link variable of 32 bytes on the device", &im.d, version,
	    "hv_array", "32", "8", NULL);

  static const char *const fn_missing[NFUNCS] = { "k_plain", "k_gone",
						  "k_regs" };
  image_init (&im);
  image_add_ptx (&im, ptx90)->func_names = fn_missing;
  bad_load ("missing kernel", &im.d, version, "k_gone", NULL);

  static const char *const var_missing[NVARS] = { "hv_counter", "hv_gone",
						  "hv_link" };
  image_init (&im);
  image_add_ptx (&im, ptx90)->var_names = var_missing;
  bad_load ("missing variable", &im.d, version, "hv_gone", NULL);

  /* The same with cubins: checked before the driver sees them
     (ok_cubin_check), as the emulated nvidia device checks every cubin of
     an image.  */
  {
    long loads = f_calls ("cuModuleLoadData");
    image_init (&im);
    im.d.host.vars = vars_bad;
    im.d.host.vars_end = vars_bad + 2 * NVARS;
    image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, cubin90_size);
    bad_load ("cubin: variable size differs", &im.d, version,
	      "cubin for sm_90 has 4 bytes of variable 'hv_counter', expected 8",
	      NULL);
    image_init (&im);
    image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, cubin90_size)->func_names
      = fn_missing;
    bad_load ("cubin: missing kernel", &im.d, version,
	      "cubin for sm_90 defines no function 'k_gone'", NULL);
    image_init (&im);
    image_add (&im, OK_IMAGE_CUBIN, 90, cubin90, cubin90_size)->var_names
      = var_missing;
    bad_load ("cubin: missing variable", &im.d, version,
	      "cubin for sm_90 defines no variable 'hv_gone'", NULL);
    unsigned char *rel = malloc (cubin90_size);
    memcpy (rel, cubin90, cubin90_size);
    Elf64_Ehdr eh;
    memcpy (&eh, rel, sizeof eh);
    eh.e_type = ET_REL;
    memcpy (rel, &eh, sizeof eh);
    image_init (&im);
    image_add (&im, OK_IMAGE_CUBIN, 90, rel, cubin90_size);
    bad_load ("cubin: a relocatable object, not linked", &im.d, version,
	      "cubin for sm_90 has ELF type 1, not 2 (ET_EXEC)", NULL);
    free (rel);
    check ("cubin: the driver never saw the bad ones",
	   f_calls ("cuModuleLoadData") == loads);
  }

  /* The JIT linker fails.  */
  f_fail ("cuLinkComplete");
  image_init (&im);
  image_add_ptx (&im, ptx90);
  bad_load ("failed JIT link", &im.d, version, "cuLinkComplete",
	    "CUDA_ERROR_INVALID_PTX", "fake ptxas: injected failure", NULL);
  f_fail ("cuLinkAddData_v2");
  bad_load ("failed JIT input", &im.d, version, "cuLinkAddData",
	    "fake ptxas: injected failure", NULL);
  f_fail ("cuModuleLoadData");
  bad_load ("failed module load", &im.d, version, "cuModuleLoadData",
	    "CUDA_ERROR_INVALID_PTX", NULL);
  f_fail ("cuModuleGetGlobal_v2@2=500");
  bad_load ("variable lookup fails", &im.d, version, "CUDA_ERROR_NOT_FOUND",
	    NULL);
  /* The lookups: the clock tick first, as soon as the module is loaded,
     whose failure (other than its absence) fails the load; then the
     variables and __gomp_device_num.  */
  f_fail ("cuModuleGetGlobal_v2@1=1");
  bad_load ("clock tick lookup fails", &im.d, version, "__nvptx_clocktick",
	    "CUDA_ERROR_INVALID_VALUE", NULL);
  f_fail (NULL);

  free (nover);
  free (unbal);
  free (ptx100);
}
