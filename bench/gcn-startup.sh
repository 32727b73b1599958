#! /bin/sh
# bench/gcn-startup.sh: what loading offloadkit's two plugins costs a
# program at start-up on a machine without a GPU (the goal: within 1.5x of
# the same program built with -foffload=disable; GCC's two plugins cost
# about 7x, mostly hsa_init in its gcn plugin).
#
#   bench/gcn-startup.sh [--topbuild BUILD] [--runs N]
#
# Builds bench/startup.c (one small target region) three ways:
#   host   gcc -fopenmp -foffload=disable, run with OMP_TARGET_OFFLOAD=
#          disabled (else libgomp still loads every plugin it finds)
#   ours   gcc -fopenmp -foffload=nvptx-none,amdgcn-amdhsa -B BUILD/stage/
#          run with BUILD/libgomp-plugin/.libs first on LD_LIBRARY_PATH
#   gcc    gcc -fopenmp -foffload=nvptx-none,amdgcn-amdhsa (GCC's
#          mkoffloads; CUDA's ptxas hidden from PATH, as bench/run.sh
#          does), run with Debian's plugins
# and times N runs of each (default 30, after 3 untimed) with spawn-timer
# (process start to the end of the first region, and to exit).  BUILD
# (default: the current directory) is a build tree where `make` and
# `make stage/accel/nvptx-none/mkoffload stage/accel/amdgcn-amdhsa/mkoffload`
# (or `make check`) have run.  Needs gcc-12-offload-nvptx and
# gcc-12-offload-amdgcn.  Prints the medians and minima and the ratios to
# the host build.  Exit status: 0, or 2 on setup errors.

set -u

die () { echo "gcn-startup: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find the script's directory"
build=$(pwd)
runs=30
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild) [ $# -ge 2 ] || die "--topbuild needs a value"; build=$2; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
case $runs in ''|*[!0-9]*|0) die "--runs wants a positive number" ;; esac
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
stage="$build/stage/"
plugins="$build/libgomp-plugin/.libs"
for t in nvptx-none amdgcn-amdhsa; do
  [ -x "${stage}accel/$t/mkoffload" ] \
    || die "${stage}accel/$t/mkoffload is missing: run 'make check' in $build"
done
for p in nvptx gcn; do
  [ -e "$plugins/libgomp-plugin-$p.so.1" ] \
    || die "$plugins/libgomp-plugin-$p.so.1 is missing: run 'make' in $build"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gcn-startup.XXXXXX") || die "cannot create a work directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 2' INT TERM HUP

gcc -std=gnu11 -O2 -I"$here" "$here/spawn-timer.c" -o "$work/spawn-timer" \
  || die "cannot build spawn-timer"
src="$here/startup.c"
gcc -fopenmp -O2 -I"$here" -foffload=disable "$src" -o "$work/host" \
  || die "cannot build the host-only program"
gcc -fopenmp -O2 -I"$here" -foffload=nvptx-none,amdgcn-amdhsa -B "$stage" \
  "$src" -o "$work/ours" > "$work/ours.log" 2>&1 \
  || { cat "$work/ours.log" >&2; die "cannot build through offloadkit's mkoffloads"; }
# GCC 12's nvptx pipeline cannot use a newer CUDA's ptxas: hide it.
. "$here/path-without-ptxas.sh"
noptxas_path=$(path_without_ptxas)
env PATH="$noptxas_path" gcc -fopenmp -O2 -I"$here" \
  -foffload=nvptx-none,amdgcn-amdhsa "$src" -o "$work/gcc" > "$work/gcc.log" 2>&1 \
  || { cat "$work/gcc.log" >&2; die "cannot build through GCC's mkoffloads"; }

# time NAME PROGRAM ENV-OPTIONS...: spawn-timer's report for PROGRAM.
time_it () {
  name=$1 prog=$2
  shift 2
  "$work/spawn-timer" -n "$runs" -w 3 -u OFFLOADKIT_EMULATE \
    -u OFFLOADKIT_HSA_LIBRARY -u OFFLOADKIT_CUDA_LIBRARY -u GOMP_DEBUG \
    -u OMP_TARGET_OFFLOAD \
    "$@" -- "$prog" > "$work/$name.t" 2>&1 \
    || { cat "$work/$name.t" >&2; die "a run of the $name program failed"; }
}
# libgomp loads every plugin it finds at the first target region, even in
# a program built with -foffload=disable; only OMP_TARGET_OFFLOAD=disabled
# keeps it from loading any: that is the floor.
time_it host "$work/host" -u LD_LIBRARY_PATH -s OMP_TARGET_OFFLOAD=disabled
time_it ours "$work/ours" -s LD_LIBRARY_PATH="$plugins"
time_it gcc "$work/gcc" -u LD_LIBRARY_PATH

# field FILE KEY WHICH: WHICH (median, min) of line KEY of FILE.
field () { sed -n "s/^$2 .*$3=\([0-9.]*\).*/\1/p" "$1"; }

echo "runs: $runs each (after 3 untimed); milliseconds, process start to exit"
printf '%-44s %10s %10s %8s %8s\n' program median min "x host" "x host"
printf '%-44s %10s %10s %8s %8s\n' "" "" "" median min
hmed=$(field "$work/host.t" okb-exit-ms median)
hmin=$(field "$work/host.t" okb-exit-ms min)
for p in host ours gcc; do
  case $p in
    host) label="-foffload=disable, no plugin loaded" ;;
    ours) label="offloadkit's plugins (nvptx + gcn)" ;;
    gcc) label="GCC's plugins (nvptx + gcn)" ;;
  esac
  med=$(field "$work/$p.t" okb-exit-ms median)
  min=$(field "$work/$p.t" okb-exit-ms min)
  printf '%-44s %10s %10s %8s %8s\n' "$label" "$med" "$min" \
    "$(echo "$med $hmed" | awk '{ printf "%.2f", $1 / $2 }')" \
    "$(echo "$min $hmin" | awk '{ printf "%.2f", $1 / $2 }')"
done
echo "first region (ms, median): host $(field "$work/host.t" okb-first-region-ms median)," \
  "ours $(field "$work/ours.t" okb-first-region-ms median)," \
  "GCC's $(field "$work/gcc.t" okb-first-region-ms median)"
