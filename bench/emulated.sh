#! /bin/sh
# bench/emulated.sh: what a small region costs on the emulated device,
# beside the same program's host fallback.  Goal: at most 5 us of host
# time per synchronous target region and per OpenACC async launch.
#
# bench/regions.c, built by offloadkit's mkoffload twice (-fopenmp, and
# -fopenacc for acc-async), runs three kinds of region: an empty target
# region, one that maps 64 bytes tofrom, and an empty OpenACC compute
# region launched async on one queue (a batch's launches, then one wait
# for them).  Each run times BATCHES batches of ITERS regions after a
# warm-up and reports its median batch's time per region; RUNS runs of
# each kind, the emulated device and the host fallback interleaved; the
# table gives the medians over the runs.
#   emulated       OFFLOADKIT_EMULATE=1, OMP_TARGET_OFFLOAD=mandatory, our
#                  plugins first on LD_LIBRARY_PATH
#   host fallback  OMP_TARGET_OFFLOAD=disabled (ACC_DEVICE_TYPE=host for
#                  acc-async)
# Both check where their regions ran (the program's okb-on-device line).
#
# Usage:
#   bench/emulated.sh [--topbuild BUILD] [--runs N] [--iters N]
#                     [--batches N] [--save] [--out FILE]
# BUILD: an offloadkit build tree with `make` done (default: the current
# directory when it has libgomp-plugin/, else ./build).  Defaults: 7 runs
# of 7 batches of 20000 regions.  --save also writes the table to
# bench/results/DATE-emulated-HOST.md (-2, -3, ... after the first of the
# day).  Exit status 0 when everything ran
# where it should, 1 when a run failed, 2 on a usage or setup error.

set -u

die () { echo "bench: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
topbuild= runs=7 iters=20000 batches=7 save=no out=
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild) topbuild=$2; shift 2;;
    --runs) runs=$2; shift 2;;
    --iters) iters=$2; shift 2;;
    --batches) batches=$2; shift 2;;
    --save) save=yes; shift;;
    --out) out=$2; shift 2;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
done
for v in "$runs" "$iters" "$batches"; do
  case $v in ''|*[!0-9]*|0) die "counts must be positive integers";; esac
done
. "$here/bench-lib.sh"
topbuild=$(bench_topbuild "$topbuild") || exit 2
plugins=$topbuild/libgomp-plugin/.libs
[ -f "$plugins/libgomp-plugin-nvptx.so.1" ] || die "no plugin in $plugins"
[ -d "$topbuild/stage" ] || die "no $topbuild/stage: build offloadkit first"

work=$(mktemp -d "${TMPDIR:-/tmp}/okb-emulated.XXXXXX") \
  || die "cannot create a work directory"
trap 'rm -rf "$work"' EXIT
for model in openmp openacc; do
  gcc -std=gnu11 -O2 -f$model -foffload=nvptx-none -B"$topbuild/stage/" \
    -I"$here" "$here/regions.c" -o "$work/regions-$model" \
    > "$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; die "cannot build regions ($model)"; }
done

status=0
# run WHERE KIND: one run's median ns per region, appended to
# $work/WHERE-KIND.
run () {
  where=$1 kind=$2
  case $kind in acc-async) exe=$work/regions-openacc;;
                *) exe=$work/regions-openmp;; esac
  want=0
  if [ "$where" = emulated ]; then
    want=1
    set -- env OFFLOADKIT_EMULATE=1 OMP_TARGET_OFFLOAD=mandatory \
      LD_LIBRARY_PATH="$plugins"
  elif [ "$kind" = acc-async ]; then
    set -- env -u OFFLOADKIT_EMULATE ACC_DEVICE_TYPE=host
  else
    set -- env -u OFFLOADKIT_EMULATE OMP_TARGET_OFFLOAD=disabled
  fi
  # Neither run needs another kind of device: GCC's gcn plugin of libgomp
  # 14 and later stops programs where the HSA runtime is installed
  # without an AMD GPU.
  "$@" HSA_RUNTIME_LIB=/nonexistent/libhsa-runtime64.so.1 \
    OFFLOADKIT_HSA_LIBRARY=/nonexistent/libhsa-runtime64.so.1 \
    "$exe" "$kind" "$iters" "$batches" > "$work/out" 2>&1 < /dev/null
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q "^okb-on-device $want\$" "$work/out"; then
    echo "bench: $where $kind: exit status $rc, or not on the expected" \
      "device; its output:" >&2
    cat "$work/out" >&2
    status=1
    return
  fi
  sed -n 's/^okb-region-ns median=\([^ ]*\).*/\1/p' "$work/out" \
    >> "$work/$where-$kind"
}

kinds="empty map64 acc-async"
i=0
while [ $i -lt "$runs" ]; do
  for kind in $kinds; do
    if [ $((i % 2)) -eq 0 ]; then
      run emulated "$kind"; run host "$kind"
    else
      run host "$kind"; run emulated "$kind"
    fi
  done
  i=$((i + 1))
done

median () {
  sort -g "$1" 2>/dev/null | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3f", m / 1000 }'
}

{
  echo "Emulated device: host time per region, us (median of $runs runs, each the median of $batches batches of $iters regions; $(nproc) CPUs, $(date -u +%Y-%m-%d)); goal <= 5 us"
  echo
  echo "| region | emulated device | host fallback | goal |"
  echo "|---|---|---|---|"
  for kind in $kinds; do
    e=$(median "$work/emulated-$kind") h=$(median "$work/host-$kind")
    goal=$(echo "$e" | awk '{ print ($1 != "-" && $1 <= 5) ? "met" : "NOT met" }')
    case $kind in
      empty) name="empty target region";;
      map64) name="target map(tofrom:) 64 bytes";;
      acc-async) name="OpenACC parallel async, per launch";;
    esac
    echo "| $name | $e | $h | $goal |"
  done
} > "$work/report"
bench_report "$work/report" emulated "$out" "$save"
exit $status
