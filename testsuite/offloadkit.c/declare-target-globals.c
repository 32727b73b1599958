/* File-scope declare target globals of every kind: uninitialised arrays
   (one of 4 MiB), initialised ones (one of 64 KiB, all non-zero), a
   struct, a static one, a const table and scalars, declared between
   declare target and end declare target and with the clause forms.  The
   device copy of each starts from the initializer (zero when there is
   none), device writes stay on the device until target update from, host
   writes reach it only with target update to.

   Why: for nvptx, ptxas puts uninitialised .global variables into a
   .nv.global section of NVIDIA's no-file-content type (0x70000007, like
   SHT_NOBITS), whose size may be far larger than the cubin itself (the
   4 MiB array here).  mkoffload's ELF check once took such a section for
   a truncated one, so that every program with an uninitialised declare
   target global failed to link when mkoffload built cubins (its default
   when ptxas and nvlink are on PATH); PTX-only builds
   (OFFLOADKIT_NVPTX_SASS=none) never showed it.  */
/* { dg-do run } */
/* { dg-set-target-env-var OFFLOADKIT_EMULATE 2 } */

#include "okt-check.h"

#include <string.h>

#define SMALL 512
#define BIG_ZERO (1 << 20)		/* ints: 4 MiB of .nv.global.  */
#define BIG_INIT 16384			/* ints: 64 KiB of initialised data.  */

/* BIG_INIT initialisers, element I being I + 1: any misplaced byte of the
   device copy shows.  */
#define V4(n) (n), (n) + 1, (n) + 2, (n) + 3
#define V16(n) V4 (n), V4 ((n) + 4), V4 ((n) + 8), V4 ((n) + 12)
#define V64(n) V16 (n), V16 ((n) + 16), V16 ((n) + 32), V16 ((n) + 48)
#define V256(n) V64 (n), V64 ((n) + 64), V64 ((n) + 128), V64 ((n) + 192)
#define V1024(n) V256 (n), V256 ((n) + 256), V256 ((n) + 512), \
    V256 ((n) + 768)
#define V4096(n) V1024 (n), V1024 ((n) + 1024), V1024 ((n) + 2048), \
    V1024 ((n) + 3072)
#define V16384(n) V4096 (n), V4096 ((n) + 4096), V4096 ((n) + 8192), \
    V4096 ((n) + 12288)

struct config
{
  int n;
  double scale;
  char tag[8];
};

OKT_BEGIN_DECLARE_TARGET
int g[SMALL];				/* Uninitialised.  */
int h[4] = { 1, 2, 3, 4 };
struct config cfg = { 3, 0.5, "dev" };
int big_zero[BIG_ZERO];
int big_init[BIG_INIT] = { V16384 (1) };
static int hits[64];			/* static, uninitialised.  */
long total;				/* Scalar, uninitialised.  */

/* Write into the globals on the device, from a function that no region
   names them in.  */
static void
fill (int k)
{
  for (int i = 0; i < SMALL; i++)
    g[i] = k * i;
  for (int i = 0; i < 64; i++)
    hits[i] += i;
}
#pragma omp end declare target

/* The clause forms: "enter", OpenMP 5.2's name for "to", from GCC 13
   (GCC 16 warns on "to"), and the plain list.  */
const unsigned char sbox[16] = { 7, 12, 0, 9, 3, 15, 1, 14,
				 5, 10, 2, 13, 6, 8, 11, 4 };
static double scalar = 1.25;		/* static, initialised.  */
int later[256];				/* Uninitialised.  */
#if __GNUC__ >= 13
#pragma omp declare target enter(sbox, scalar)
#else
#pragma omp declare target to(sbox, scalar)
#endif
#pragma omp declare target(later)

int
main (void)
{
  /* Change host copies before any target construct: the device's start
     from the initializers all the same.  */
  h[0] = -1;
  cfg.n = -3;
  big_init[100] = 0;
  scalar = -8.0;

  okt_require_devices ();

  /* Initial values, read on the device: h, cfg, big_init and scalar
     their initializers, the uninitialised ones zero, sbox its table.  */
  int h_dev[4], cfg_n, cfg_tag_ok, init_bad = -1, zero_bad = -1;
  int other_zero;
  double cfg_scale, scalar_dev;
  unsigned sbox_sum = 0, sbox_mix = 0;
#pragma omp target map(from: h_dev, cfg_n, cfg_scale, cfg_tag_ok, \
		       init_bad, zero_bad, other_zero, scalar_dev, \
		       sbox_sum, sbox_mix)
  {
    for (int i = 0; i < 4; i++)
      h_dev[i] = h[i];
    cfg_n = cfg.n;
    cfg_scale = cfg.scale;
    cfg_tag_ok = cfg.tag[0] == 'd' && cfg.tag[1] == 'e' && cfg.tag[2] == 'v'
		 && cfg.tag[3] == '\0';
    init_bad = -1;
    for (int i = 0; i < BIG_INIT; i++)
      if (big_init[i] != i + 1)
	{
	  init_bad = i;
	  break;
	}
    zero_bad = -1;
    for (int i = 0; i < BIG_ZERO; i++)
      if (big_zero[i] != 0)
	{
	  zero_bad = i;
	  break;
	}
    other_zero = total == 0;
    for (int i = 0; i < SMALL; i++)
      other_zero &= g[i] == 0;
    for (int i = 0; i < 64; i++)
      other_zero &= hits[i] == 0;
    for (int i = 0; i < 256; i++)
      other_zero &= later[i] == 0;
    scalar_dev = scalar;
    sbox_sum = 0;
    sbox_mix = 0;
    for (int i = 0; i < 16; i++)
      {
	sbox_sum += sbox[i];
	sbox_mix = sbox_mix * 31 + sbox[sbox[i]];
      }
  }
  for (int i = 0; i < 4; i++)
    OKT_CHECK (h_dev[i] == i + 1);
  OKT_CHECK (cfg_n == 3);
  OKT_CHECK (cfg_scale == 0.5);
  OKT_CHECK (cfg_tag_ok);
  OKT_CHECK (init_bad == -1);
  OKT_CHECK (zero_bad == -1);
  OKT_CHECK (other_zero);
  OKT_CHECK (scalar_dev == 1.25);
  unsigned sum = 0, mix = 0;
  for (int i = 0; i < 16; i++)
    {
      sum += sbox[i];
      mix = mix * 31 + sbox[sbox[i]];
    }
  OKT_CHECK (sbox_sum == sum);
  OKT_CHECK (sbox_mix == mix);
  /* The host's copies are still its own.  */
  OKT_CHECK (h[0] == -1 && cfg.n == -3 && big_init[100] == 0);
  OKT_CHECK (scalar == -8.0);

  /* Device writes, to all of them but the const table.  */
#pragma omp target
  {
    fill (3);
    for (int i = 0; i < 4; i++)
      h[i] *= 10;
    cfg.n += 4;
    cfg.scale *= 3;
    cfg.tag[0] = 'D';
    for (int i = 0; i < BIG_ZERO; i += 4096)
      big_zero[i] = i / 4096 + 1;
    big_zero[BIG_ZERO - 1] = -7;
    for (int i = 0; i < BIG_INIT; i++)
      big_init[i] *= 2;
    long t = 0;
    for (int i = 0; i < 256; i++)
      {
	later[i] = sbox[i % 16] + i;
	t += later[i];
      }
    total = t;
    scalar *= 4;
  }

  /* None of it reached the host.  */
  OKT_CHECK (g[1] == 0 && g[SMALL - 1] == 0);
  OKT_CHECK (h[0] == -1 && h[1] == 2);
  OKT_CHECK (cfg.n == -3 && cfg.scale == 0.5 && cfg.tag[0] == 'd');
  OKT_CHECK (big_zero[0] == 0 && big_zero[BIG_ZERO - 1] == 0);
  OKT_CHECK (big_init[0] == 1 && big_init[100] == 0);
  OKT_CHECK (big_init[BIG_INIT - 1] == BIG_INIT);
  OKT_CHECK (later[5] == 0 && total == 0 && hits[5] == 0);
  OKT_CHECK (scalar == -8.0);

  /* A section of the big one first: the rest stays as the host has it.  */
#pragma omp target update from(big_zero[4096:8192])
  OKT_CHECK (big_zero[0] == 0);
  OKT_CHECK (big_zero[4096] == 2 && big_zero[8192] == 3);
  OKT_CHECK (big_zero[12288] == 0 && big_zero[BIG_ZERO - 1] == 0);

#pragma omp target update from(g, h, cfg, big_zero, big_init, hits, \
			       total, later, scalar)
  long t = 0;
  for (int i = 0; i < SMALL; i++)
    OKT_CHECK (g[i] == 3 * i);
  for (int i = 0; i < 4; i++)
    OKT_CHECK (h[i] == 10 * (i + 1));
  OKT_CHECK (cfg.n == 7 && cfg.scale == 1.5);
  OKT_CHECK (strcmp (cfg.tag, "Dev") == 0);
  for (int i = 0; i < BIG_ZERO; i++)
    OKT_CHECK (big_zero[i] == (i == BIG_ZERO - 1 ? -7
			       : i % 4096 == 0 ? i / 4096 + 1 : 0));
  for (int i = 0; i < BIG_INIT; i++)
    OKT_CHECK (big_init[i] == 2 * (i + 1));
  for (int i = 0; i < 64; i++)
    OKT_CHECK (hits[i] == i);
  for (int i = 0; i < 256; i++)
    {
      OKT_CHECK (later[i] == sbox[i % 16] + i);
      t += later[i];
    }
  OKT_CHECK (total == t);
  OKT_CHECK (scalar == 5.0);

  /* Host writes reach the device with update to only.  */
  for (int i = 0; i < SMALL; i++)
    g[i] = -i;
  big_zero[BIG_ZERO / 2 + 1] = 99;
  long g_sum = -1;
  int mid = -1;
#pragma omp target map(from: g_sum, mid)
  {
    g_sum = 0;
    for (int i = 0; i < SMALL; i++)
      g_sum += g[i];
    mid = big_zero[BIG_ZERO / 2 + 1];
  }
  OKT_CHECK (g_sum == 3L * SMALL * (SMALL - 1) / 2);
  OKT_CHECK (mid == 0);
#pragma omp target update to(g, big_zero[BIG_ZERO / 2 + 1:1])
#pragma omp target map(from: g_sum, mid)
  {
    g_sum = 0;
    for (int i = 0; i < SMALL; i++)
      g_sum += g[i];
    mid = big_zero[BIG_ZERO / 2 + 1];
  }
  OKT_CHECK (g_sum == -(long) SMALL * (SMALL - 1) / 2);
  OKT_CHECK (mid == 99);

  /* Always present: map(tofrom:) copies nothing either way.  */
  h[2] = 1000;
#pragma omp target map(tofrom: h)
  h[2] += 1;
  OKT_CHECK (h[2] == 1000);
#pragma omp target update from(h)
  OKT_CHECK (h[2] == 31);

  /* Every device has its own copy, from the initializers: what device 0
     wrote is not on the others.  */
  for (int d = 1; d < omp_get_num_devices (); d++)
    {
      int first = 0, zero = -1;
#pragma omp target device(d) map(from: first, zero)
      {
	first = big_init[BIG_INIT - 1];
	zero = g[SMALL - 1];
      }
      OKT_CHECK (first == BIG_INIT);
      OKT_CHECK (zero == 0);
    }
  return 0;
}
