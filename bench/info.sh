#! /bin/sh
# bench/info.sh: how long offloadkit-info takes to answer, without a GPU.
# Goal: under 0.2 s in every case.
#
# Four cases, each timed as a whole command (posix_spawn to wait4, no
# shell: link-timer.c) RUNS times after one untimed run:
#   none      this machine with no CUDA driver and no HSA runtime found
#   fake      the fake libcuda.so.1 of testsuite/fakecuda/ with 2 devices
#   emulated  OFFLOADKIT_EMULATE=1 with no driver
#   program   the fake's 2 devices and a program built by offloadkit's
#             mkoffload (bench/empty-region.c, cubins where NVIDIA's ptxas
#             is installed), read and matched against them
# Our plugins come first on LD_LIBRARY_PATH, as installed ones would be
# found.  Each run asks both plugins in children of its own (they may load
# drivers), which is most of its time.
#
# Usage:
#   bench/info.sh [--topbuild BUILD] [--runs N] [--save] [--out FILE]
# BUILD: an offloadkit build tree with `make` and `make
# testsuite/fakecuda/libcuda.la` done (default: the current directory when
# it has libgomp-plugin/, else ./build).  --save also writes the table to
# bench/results/DATE-info-HOST.md (-2, -3, ... after the first of the
# day).  Exit status 0 when every run answered
# as expected, 1 when one did not, 2 on a usage or setup error.

set -u

die () { echo "bench: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
topbuild= runs=21 save=no out=
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild) topbuild=$2; shift 2;;
    --runs) runs=$2; shift 2;;
    --save) save=yes; shift;;
    --out) out=$2; shift 2;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
done
case $runs in ''|*[!0-9]*|0) die "--runs must be a positive integer";; esac
. "$here/bench-lib.sh"
topbuild=$(bench_topbuild "$topbuild") || exit 2
info=$topbuild/info/offloadkit-info
plugins=$topbuild/libgomp-plugin/.libs
fake=$topbuild/testsuite/fakecuda/.libs/libcuda.so.1
[ -x "$info" ] || die "no $info: build offloadkit first"
[ -f "$fake" ] \
  || die "no fake libcuda: run 'make testsuite/fakecuda/libcuda.la' in $topbuild"
[ -d "$topbuild/stage" ] || die "no $topbuild/stage: build offloadkit first"

work=$(mktemp -d "${TMPDIR:-/tmp}/okb-info.XXXXXX") \
  || die "cannot create a work directory"
trap 'rm -rf "$work"' EXIT
gcc -std=gnu11 -O2 -I"$here" "$here/link-timer.c" -o "$work/link-timer" \
  || die "cannot build link-timer"
prog=$work/empty-region
gcc -std=gnu11 -O2 -fopenmp -foffload=nvptx-none -B"$topbuild/stage/" \
  -I"$here" "$here/empty-region.c" -o "$prog" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; die "cannot build $prog"; }

none=$work/none/libcuda.so.1
nohsa=$work/none/libhsa-runtime64.so.1
# case NAME EXPECTED-STATUS ENV... -- ARGS...: one line "NAME median min
# max" (milliseconds), or a failure.
status=0
case_ () {
  name=$1 want=$2; shift 2
  envs=
  while [ "$1" != -- ]; do envs="$envs -s $1"; shift; done
  shift
  : > "$work/$name.times"
  i=0
  while [ $i -le "$runs" ]; do
    # shellcheck disable=SC2086 # ENV words are NAME=VALUE without spaces.
    line=$("$work/link-timer" -t 60 -o "$work/$name.out" \
             -u OFFLOADKIT_EMULATE -u GOMP_DEBUG -u OFFLOADKIT_INFO \
             -u FAKECUDA_DEVICES -u FAKECUDA_SM -u OMP_TARGET_OFFLOAD \
             -s LD_LIBRARY_PATH="$plugins" $envs -- "$info" "$@")
    st=$(echo "$line" | sed -n 's/.*status=\([^ ]*\).*/\1/p')
    if [ "$st" != "$want" ]; then
      echo "bench: $name: $line (expected status=$want); its output:" >&2
      cat "$work/$name.out" >&2
      status=1
      return
    fi
    [ $i -gt 0 ] && echo "$line" | sed -n 's/.*wall-s=\([^ ]*\).*/\1/p' \
      >> "$work/$name.times"
    i=$((i + 1))
  done
  sort -g "$work/$name.times" | awk -v n="$name" '{ v[NR] = $1 * 1000 }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
          printf "| %s | %.1f | %.1f | %.1f | %s |\n", n, m, v[1], v[NR],
            (m < 200) ? "met" : "NOT met" }' >> "$work/table"
}

: > "$work/table"
case_ none exit:1 OFFLOADKIT_CUDA_LIBRARY="$none" \
  OFFLOADKIT_HSA_LIBRARY="$nohsa" --
case_ fake ok OFFLOADKIT_CUDA_LIBRARY="$fake" FAKECUDA_DEVICES=2 \
  OFFLOADKIT_HSA_LIBRARY="$nohsa" --
case_ emulated ok OFFLOADKIT_EMULATE=1 OFFLOADKIT_CUDA_LIBRARY="$none" \
  OFFLOADKIT_HSA_LIBRARY="$nohsa" --
case_ program ok OFFLOADKIT_CUDA_LIBRARY="$fake" FAKECUDA_DEVICES=2 \
  OFFLOADKIT_HSA_LIBRARY="$nohsa" -- "$prog"

{
  echo "offloadkit-info, wall time per answer in ms: median, min, max of $runs runs ($(nproc) CPUs, $(date -u +%Y-%m-%d)); goal < 200 ms"
  echo
  echo "| case | median | min | max | goal |"
  echo "|---|---|---|---|---|"
  cat "$work/table"
} > "$work/report"
bench_report "$work/report" info "$out" "$save"
exit $status
