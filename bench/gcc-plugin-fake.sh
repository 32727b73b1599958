#! /bin/sh
# bench/gcc-plugin-fake.sh: GCC's own nvptx plugin against offloadkit's,
# both over the fake libcuda.so.1 of testsuite/fakecuda/, on the same
# GCC-built program: what a small target region costs on the host, in time
# and in driver calls, without a GPU.
#
#   GCC   Debian's libgomp-plugin-nvptx.so.1 (what libgomp finds with only
#         the fake's directory on LD_LIBRARY_PATH)
#   OURS  BUILD/libgomp-plugin/.libs/libgomp-plugin-nvptx.so.1, that
#         directory first on LD_LIBRARY_PATH
#
# The program (bench/regions.c) is built once, by GCC's own pipeline (GCC's
# mkoffload, PTX only; PATH without CUDA's ptxas, which GCC 12's pipeline
# cannot use): both plugins JIT-link its PTX through the fake.  Two kinds
# of region: an empty one, and one that maps 64 bytes tofrom.  The fake
# runs no kernel and its device memory is host memory: the times are the
# plugins' and libgomp's host work plus the fake's own small cost per call
# (the same for both), not a GPU's.
#
# For each kind: RUNS runs of each plugin, interleaved in pairs (GCC then
# ours, then ours then GCC, and so on), each timing BATCHES batches of ITERS regions after a warm-up and
# reporting its median batch's time per region; the table gives the median
# over the runs of each plugin and the median of the pairwise ratios
# ours/GCC.  Then the driver calls per region: the fake's call counts
# (FAKECUDA_CALLS) of a run of N regions and of one of 2N, subtracted,
# divided by N.  Each plugin's run is checked to be its own (the fake's
# log: GCC's plugin creates contexts, ours retains the primary one) and
# to launch one kernel per region.
#
# Usage:
#   bench/gcc-plugin-fake.sh [--topbuild BUILD] [OPTIONS]
# Options:
#   --topbuild BUILD  offloadkit build tree, built with make check's fake
#                     (testsuite/fakecuda/.libs/libcuda.so.1) (default: the
#                     current directory when it has libgomp-plugin/, else
#                     ./build)
#   --work DIR        binary, logs (default: a new directory
#                     okb-gcc-plugin-fake.XXXXXX in $TMPDIR or /tmp, kept
#                     and named at the end)
#   --runs N          timed runs of each plugin per kind (default 11)
#   --iters N         regions per batch (default 20000)
#   --batches N       batches per run (default 7)
#   --calls-n N       N for the call counts (default 1000)
#   --quick           --runs 3 --iters 2000 --batches 3
#   --save            also write the table to bench/results/DATE-gcc-plugin-fake-HOST.md
#                     (-2, -3, ... after the first of the day)
#   --out FILE        also write the table to FILE
# Exit status: 0 when everything ran, 1 when a run failed or was not what
# it should be, 2 on a usage or setup error.

set -u

die () { echo "bench: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
topbuild= work= runs=11 iters=20000 batches=7 calls_n=1000 save=no out=
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild) topbuild=$2; shift 2;;
    --work) work=$2; shift 2;;
    --runs) runs=$2; shift 2;;
    --iters) iters=$2; shift 2;;
    --batches) batches=$2; shift 2;;
    --calls-n) calls_n=$2; shift 2;;
    --quick) runs=3 iters=2000 batches=3; shift;;
    --save) save=yes; shift;;
    --out) out=$2; shift 2;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
done
for v in "$runs" "$iters" "$batches" "$calls_n"; do
  case $v in ''|*[!0-9]*|0) die "counts must be positive integers";; esac
done

. "$here/bench-lib.sh"
topbuild=$(bench_topbuild "$topbuild") || exit 2
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/okb-gcc-plugin-fake.XXXXXX") \
    || die "cannot create a work directory"
fi
mkdir -p "$work/logs" || die "cannot create $work/logs"
work=$(cd "$work" && pwd) || die "cannot enter $work"
logs=$work/logs

fake_dir=$topbuild/testsuite/fakecuda/.libs
ours_dir=$topbuild/libgomp-plugin/.libs
[ -f "$fake_dir/libcuda.so.1" ] \
  || die "no fake libcuda in $fake_dir: run 'make testsuite/fakecuda/libcuda.la' in $topbuild"
[ -f "$ours_dir/libgomp-plugin-nvptx.so.1" ] \
  || die "no libgomp-plugin-nvptx.so.1 in $ours_dir: build offloadkit first"
command -v gcc > /dev/null || die "gcc not found"
gcc_plugin=$(gcc -print-file-name=libgomp-plugin-nvptx.so.1)
case $gcc_plugin in
  /*) [ -f "$gcc_plugin" ] \
        && gcc_plugin=$(cd "$(dirname "$gcc_plugin")" && pwd -P)/${gcc_plugin##*/} \
        || gcc_plugin=;;
  *) gcc_plugin=;;
esac
[ -n "$gcc_plugin" ] \
  || die "GCC's libgomp-plugin-nvptx.so.1 not found (Debian: libgomp-plugin-nvptx1)"

# ------------------------------------------------------------------ build

. "$here/path-without-ptxas.sh"
exe=$work/regions
echo "bench: building $exe with GCC's own nvptx pipeline"
if ! env PATH="$(path_without_ptxas)" gcc -std=gnu11 -O2 -fopenmp \
     -foffload=nvptx-none -I"$here" -o "$exe" "$here/regions.c" \
     > "$logs/build.log" 2>&1 < /dev/null; then
  echo "bench: building regions failed:" >&2
  tail -n 20 "$logs/build.log" >&2
  exit 1
fi

# ------------------------------------------------------------------ run

# Run the program with plugin $1 (gcc|ours) over the fake, output to $2,
# arguments $3 (kind) $4 (iterations) $5 (batches); the other arguments
# are variables (NAME=VALUE) for it.  GCC's gcn plugin (libgomp 14 and
# later) stops programs where the HSA runtime is installed without an AMD
# GPU: it finds none here.
run_with () {
  plugin=$1 log=$2 kind=$3 n=$4 b=$5; shift 5
  case $plugin in
    gcc) ld=$fake_dir;;
    ours) ld=$ours_dir:$fake_dir;;
  esac
  env -u OFFLOADKIT_EMULATE -u OFFLOADKIT_CUDA_LIBRARY -u GOMP_DEBUG \
    -u OMP_DEFAULT_DEVICE -u OFFLOADKIT_INFO -u OFFLOADKIT_PROFILE \
    -u FAKECUDA_DEVICES -u FAKECUDA_SM -u FAKECUDA_SMS -u FAKECUDA_MEM \
    -u FAKECUDA_FAIL -u FAKECUDA_LOG -u FAKECUDA_CALLS \
    -u FAKECUDA_CHECK_LEAKS -u FAKECUDA_PAGEABLE \
    LD_LIBRARY_PATH="$ld" HSA_RUNTIME_LIB=/nonexistent/libhsa-runtime64.so.1 \
    OMP_TARGET_OFFLOAD=mandatory "$@" "$exe" "$kind" "$n" "$b" \
    > "$log" 2>&1 < /dev/null
}

failed=0
failure () {
  echo "bench: $1; the end of $2:" >&2
  tail -n 15 "$2" >&2
  failed=1
}

# Calls per region of plugin $1, kind $2: "TOTAL SYM=N ..." (N with two
# decimals, most frequent first) in $logs/calls-$1-$2.txt.  Also checks
# that the run was the plugin's own and that each region launched one
# kernel.
count_calls () {
  p=$1 k=$2
  for n in 1 2; do
    f=$logs/calls-$p-$k-$n.raw
    rm -f "$f" "$logs/fake-$p-$k-$n.log"
    run_with "$p" "$logs/count-$p-$k-$n.log" "$k" $((n * calls_n)) 0 \
      FAKECUDA_CALLS="$f" FAKECUDA_LOG="$logs/fake-$p-$k-$n.log" \
      || { failure "counting run ($p, $k) failed" "$logs/count-$p-$k-$n.log"; return; }
  done
  case $p in
    gcc) mark='^context create ';;
    ours) mark='^context retain ';;
  esac
  grep -q "$mark" "$logs/fake-$p-$k-1.log" \
    || { failure "the $p run did not use the $p plugin" "$logs/fake-$p-$k-1.log"; return; }
  awk -v n="$calls_n" '
    FNR == NR { a[$1] = $2; next }
    { d = $2 - a[$1]; if (d != 0) b[$1] = d / n }
    END {
      t = 0; s = ""
      for (k in b) t += b[k]
      # Most frequent first (a small selection sort: few symbols).
      while (1) {
        m = ""; for (k in b) if (m == "" || b[k] > b[m] || (b[k] == b[m] && k < m)) m = k
        if (m == "") break
        s = s sprintf (" %s=%.2f", m, b[m]); delete b[m]
      }
      printf "%.2f%s\n", t, s
    }' "$logs/calls-$p-$k-1.raw" "$logs/calls-$p-$k-2.raw" \
    > "$logs/calls-$p-$k.txt"
  launches=$(sed -n 's/.* cuLaunchKernel=\([0-9.]*\).*/\1/p' "$logs/calls-$p-$k.txt")
  [ "$launches" = 1.00 ] \
    || failure "$p, $k: $launches kernel launches per region, not 1" "$logs/calls-$p-$k.txt"
}

# Median of the numbers on standard input.
median () {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit
    printf "%.1f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for k in empty map64; do
  for p in gcc ours; do
    echo "bench: driver calls per region, $k, $p plugin"
    count_calls "$p" "$k"
  done
  echo "bench: $k region, $runs interleaved runs of each plugin"
  : > "$logs/times-$k.tsv"
  i=1
  while [ $i -le "$runs" ]; do
    order="gcc ours"
    [ $((i % 2)) = 0 ] && order="ours gcc"
    for p in $order; do
      run_with $p "$logs/time-$k-$p-$i.log" "$k" "$iters" "$batches" \
        || failure "timed run $i ($p, $k) failed" "$logs/time-$k-$p-$i.log"
    done
    g=$(sed -n 's/^okb-region-ns median=\([^ ]*\).*/\1/p' "$logs/time-$k-gcc-$i.log")
    o=$(sed -n 's/^okb-region-ns median=\([^ ]*\).*/\1/p' "$logs/time-$k-ours-$i.log")
    [ -n "$g" ] && [ -n "$o" ] && printf '%s\t%s\t%s\n' "$i" "$g" "$o" \
      >> "$logs/times-$k.tsv"
    i=$((i + 1))
  done
done

# ------------------------------------------------------------------ table

table () {
  echo "# GCC's nvptx plugin vs offloadkit's over the fake libcuda, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- Host: $(uname -n), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs; no GPU used: both plugins over testsuite/fakecuda (kernels not run, device memory on the host)"
  echo "- Program: bench/regions.c built by $(gcc -dumpfullversion)'s own nvptx pipeline (PTX, JIT-linked by the fake for both plugins)"
  echo "- GCC = $gcc_plugin; ours = $ours_dir/libgomp-plugin-nvptx.so.1 (commit $(cd "$here/.." && git describe --always --dirty 2>/dev/null || echo unknown))"
  echo "- Times: ns of host time per region, median over $runs runs (each the median of $batches batches of $iters regions), runs interleaved; ratio: median of the per-pair ratios ours/GCC"
  echo "- Calls: driver calls per region (fake's counts, runs of $((2 * calls_n)) minus $calls_n regions, / $calls_n)"
  echo
  echo "| region | GCC's plugin, ns | offloadkit's, ns | ours/GCC | GCC's calls/region | ours calls/region |"
  echo "|---|---|---|---|---|---|"
  for k in empty map64; do
    t=$logs/times-$k.tsv
    g=$(cut -f2 "$t" | median)
    o=$(cut -f3 "$t" | median)
    r=$(awk -F '\t' '$2 > 0 { printf "%.4f\n", $3 / $2 }' "$t" | sort -g \
          | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    gc=$(cut -d' ' -f1 "$logs/calls-gcc-$k.txt" 2>/dev/null)
    oc=$(cut -d' ' -f1 "$logs/calls-ours-$k.txt" 2>/dev/null)
    case $k in
      empty) label="empty target region";;
      map64) label="map(tofrom:) 64 bytes";;
    esac
    echo "| $label | ${g:--} | ${o:--} | ${r:--} | ${gc:--} | ${oc:--} |"
  done
  echo
  echo "Driver calls per region, by function:"
  echo
  for k in empty map64; do
    for p in gcc ours; do
      echo "- $k, $p: $(cut -d' ' -f2- "$logs/calls-$p-$k.txt" 2>/dev/null)"
    done
  done
  echo
  echo "Each run's median, ns (run: GCC's / ours):"
  echo
  for k in empty map64; do
    echo "- $k: $(awk -F '\t' '{ printf "%s%s: %s / %s", sep, $1, $2, $3; sep = "; " }' "$logs/times-$k.tsv")"
  done
  [ $failed = 0 ] || { echo; echo "Some runs FAILED: see $logs."; }
}

table > "$work/table.md"
bench_report "$work/table.md" gcc-plugin-fake "$out" "$save"
echo "bench: binary and logs in $work"
exit $failed
