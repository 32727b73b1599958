#! /bin/sh
# bench/run.sh: offloadkit's benchmarks, GCC 12's own pipeline against ours.
#
#   GCC   gcc -fopenmp -foffload=nvptx-none (GCC's mkoffload; PATH without
#         CUDA's ptxas, which GCC 12's pipeline cannot use), run with
#         Debian's libgomp-plugin-nvptx.so.1.
#   OURS  the same source with -B BUILD/stage/ (our mkoffload), run with our
#         libgomp-plugin-nvptx.so.1 first on LD_LIBRARY_PATH.
#
# Benchmarks (bench/README.md says what each measures and its goal):
#   start-up   process start to the end of the first target region, cold
#              (CUDA_CACHE_DISABLE=1) and warm; -foffload=disable as floor
#   region     an empty target region's round trip
#   transfer   map(to:)/map(from:) of 1 GiB beside raw cuMemcpy
#
# Without a GPU (no libcuda.so.1, or no device) ours runs on the emulated
# device (OFFLOADKIT_EMULATE=nvptx:1) and GCC's on host fallback: the table then
# says "no GPU: plumbing check, numbers meaningless" and is written to
# bench/results/ only with --save.  With a GPU it is written there unless
# --no-save.  --out FILE writes it (also) to FILE.
#
# Usage:
#   bench/run.sh [--topbuild BUILD] [--work DIR] [OPTIONS]   build and run
#   bench/run.sh --build-only [--topbuild BUILD] --work DIR    build only
#   bench/run.sh --run-only --work DIR [OPTIONS]               run only
# Options:
#   --topbuild BUILD   offloadkit build directory (default: the current
#                      directory when it has stage/, else ./build)
#   --work DIR         binaries, logs (default BUILD/bench)
#   --gcc-libdir DIR   directory with the libgomp.so.1 and Debian plugin to
#                      run GCC's binaries with (default: the system's)
#   --ours-libdir DIR  directory with our plugin (default
#                      BUILD/libgomp-plugin/.libs)
#   --emulate          run ours on the emulated device even with a GPU
#   --quick            fewer runs and a 64 MiB transfer (plumbing checks)
#   --runs N           start-up runs per measurement (default 10)
#   --bytes N          transfer size (default 1073741824)
#   --save | --no-save | --out FILE
# Exit status: 0 when everything ran (goals missed or not), 1 when a
# benchmark failed, 2 on a usage or setup error.

set -u

die () { echo "bench: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
mode=both topbuild= work= gcc_libdir= ours_libdir= emulate=0 save=auto
out= runs=10 bytes=1073741824 iters=2000 batches=7 reps=5
while [ $# -gt 0 ]; do
  case $1 in
    --build-only) mode=build; shift;;
    --run-only) mode=run; shift;;
    --topbuild) topbuild=$2; shift 2;;
    --work) work=$2; shift 2;;
    --gcc-libdir) gcc_libdir=$2; shift 2;;
    --ours-libdir) ours_libdir=$2; shift 2;;
    --emulate) emulate=1; shift;;
    --quick) runs=3 bytes=67108864 iters=500 batches=5 reps=3; shift;;
    --runs) runs=$2; shift 2;;
    --bytes) bytes=$2; shift 2;;
    --save) save=yes; shift;;
    --no-save) save=no; shift;;
    --out) out=$2; shift 2;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
done

if [ "$mode" != run ]; then
  if [ -z "$topbuild" ]; then
    if [ -d stage ]; then topbuild=.; else topbuild=./build; fi
  fi
  topbuild=$(cd "$topbuild" 2>/dev/null && pwd) \
    || die "no build directory '$topbuild': give --topbuild BUILD"
fi
[ -n "$work" ] || { [ -n "$topbuild" ] && work=$topbuild/bench; } \
  || die "--run-only needs --work DIR"
if [ "$mode" = run ]; then
  w=$(cd "$work" 2>/dev/null && pwd) || die "no directory '$work': build first (--build-only)"
  work=$w
else
  mkdir -p "$work" && work=$(cd "$work" && pwd) || die "cannot create $work"
fi

# ------------------------------------------------------------------ build

# Compile one benchmark: $1 pipeline (gcc|ours|host), $2 name, $3... extra
# sources and libraries.  Logs go to WORK/logs.
compile () {
  pipe=$1 name=$2; shift 2
  mkdir -p "$work/$pipe" "$work/logs"
  case $pipe in
    gcc) set -- env PATH="$noptxas_path" gcc -foffload=nvptx-none "$@";;
    ours) set -- gcc -foffload=nvptx-none -B"$topbuild/stage/" "$@";;
    # Ours without cubins: the driver JIT-compiles the PTX, as with GCC's.
    ours-ptx) set -- env OFFLOADKIT_NVPTX_SASS=none \
                gcc -foffload=nvptx-none -B"$topbuild/stage/" "$@";;
    host) set -- gcc -foffload=disable "$@";;
  esac
  if ! "$@" -std=gnu11 -O2 -fopenmp -I"$here" \
       -I"$srcroot/libgomp-plugin/cuda" -o "$work/$pipe/$name" \
       > "$work/logs/build-$pipe-$name.log" 2>&1 < /dev/null; then
    echo "bench: building $pipe/$name failed:" >&2
    tail -n 20 "$work/logs/build-$pipe-$name.log" >&2
    exit 1
  fi
}

build () {
  srcroot=$(cd "$here/.." && pwd)
  [ -x "$topbuild/stage/accel/nvptx-none/mkoffload" ] \
    || die "$topbuild/stage/accel/nvptx-none/mkoffload missing: run 'make stage/accel/nvptx-none/mkoffload' (or make check) in $topbuild"
  command -v gcc > /dev/null || die "gcc not found"
  # GCC 12's nvptx pipeline verifies PTX for sm_35, which CUDA 13's ptxas
  # refuses: build its binaries with a PATH that has no ptxas.
  . "$here/path-without-ptxas.sh"
  noptxas_path=$(path_without_ptxas)

  echo "bench: building into $work"
  for p in gcc ours; do
    compile $p startup "$here/startup.c"
    compile $p empty-region "$here/empty-region.c"
    compile $p transfer "$here/transfer.c" "$here/cuda-raw.c" -ldl
  done
  compile ours-ptx startup "$here/startup.c"
  compile host startup "$here/startup.c"
  mkdir -p "$work/tools"
  for t in spawn-timer cuda-info; do
    extra=
    [ $t = cuda-info ] && extra="$here/cuda-raw.c -ldl"
    # shellcheck disable=SC2086 # extra is a word list
    gcc -std=gnu11 -O2 -Wall -Wextra -I"$here" -I"$srcroot/libgomp-plugin/cuda" \
      -o "$work/tools/$t" "$here/$t.c" $extra \
      || die "building tools/$t failed"
  done
  {
    echo "built $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n)"
    echo "commit $(cd "$srcroot" && git describe --always --dirty 2>/dev/null || echo unknown)"
    echo "gcc $(gcc -dumpfullversion)"
    echo "OFFLOADKIT_NVPTX_SASS ${OFFLOADKIT_NVPTX_SASS-(unset: the mkoffload default)}"
  } > "$work/build-info"
}

# ------------------------------------------------------------------ run

# Field KEY (e.g. median) of the line starting with TAG in FILE; "" if none.
field () {
  sed -n "s/^$2 .*$1=\([^ ]*\).*/\1/p" "$3" | head -n 1
}

# Run a command with the environment of pipeline $1 (gcc|ours|ours-ptx|host);
# output to $2.  Returns the command's status.
run_in () {
  pipe=$1 log=$2; shift 2
  case $pipe in
    ours|ours-ptx) ld=$ours_libdir${gcc_libdir:+:$gcc_libdir}
          # shellcheck disable=SC2086 # word lists
          set -- env -u OMP_TARGET_OFFLOAD $ours_unset \
            LD_LIBRARY_PATH="$ld${extra_ld:+:$extra_ld}" $ours_set "$@";;
    *)    set -- env -u OMP_TARGET_OFFLOAD -u OFFLOADKIT_EMULATE \
            LD_LIBRARY_PATH="$gcc_libdir${extra_ld:+:$extra_ld}" "$@";;
  esac
  "$@" > "$log" 2>&1 < /dev/null
}

failed=0
# Record a failed benchmark and show its log.
failure () {
  echo "bench: $1 failed; the end of $2:" >&2
  tail -n 15 "$2" >&2
  failed=1
}

# Where a pipeline's regions ran, from an okb-on-device line in $2.
where () {
  v=$(sed -n 's/^okb-on-device \([0-9]*\).*/\1/p' "$2" | head -n 1)
  case $1:$v in
    *:) echo "?";;
    gcc:0|host:0|ours:0) echo "host fallback";;
    ours:*) [ "$gpu" = 1 ] && echo "GPU" || echo "emulated device";;
    *) echo "GPU";;
  esac
}

run_all () {
  for f in gcc/startup ours/startup ours-ptx/startup host/startup \
           gcc/empty-region \
           ours/empty-region gcc/transfer ours/transfer tools/spawn-timer \
           tools/cuda-info; do
    [ -x "$work/$f" ] || die "$work/$f missing: build first (bench/run.sh --build-only)"
  done
  [ -n "$ours_libdir" ] || ours_libdir=${topbuild:+$topbuild/libgomp-plugin/.libs}
  [ -f "$ours_libdir/libgomp-plugin-nvptx.so.1" ] \
    || die "no libgomp-plugin-nvptx.so.1 in '$ours_libdir': give --ours-libdir"
  # The caller's library path (it may be how libcuda.so.1 is found) comes
  # last, without our plugin's directory.
  extra_ld=
  oldifs=$IFS; IFS=:
  for d in ${LD_LIBRARY_PATH:-}; do
    [ -n "$d" ] && [ "$d" != "$ours_libdir" ] && extra_ld=${extra_ld:+$extra_ld:}$d
  done
  IFS=$oldifs
  logs=$work/logs
  mkdir -p "$logs"

  # The device: the first CUDA device, through the same driver the plugins
  # load.
  run_in host "$logs/cuda-info.log" "$work/tools/cuda-info"
  ndev=$(sed -n 's/^okb-cuda-devices //p' "$logs/cuda-info.log")
  gpu=0
  if [ "${ndev:-0}" -gt 0 ] && [ $emulate = 0 ]; then
    gpu=1
    device=$(sed -n 's/^okb-cuda-device 0 //p' "$logs/cuda-info.log")
    driver=$(sed -n 's/^okb-cuda-driver //p' "$logs/cuda-info.log")
    ours_unset="-u OFFLOADKIT_EMULATE" ours_set=
    label="$device (CUDA driver ${driver:-?}; $ndev device(s), device 0 used)"
  else
    ours_unset= ours_set=OFFLOADKIT_EMULATE=nvptx:1
    why=$(sed -n 's/^okb-cuda-why //p' "$logs/cuda-info.log")
    [ "${ndev:-0}" -gt 0 ] && why="--emulate given"
    label="no GPU: plumbing check, numbers meaningless ($why; ours on the emulated device, GCC's on host fallback)"
  fi
  echo "bench: device: $label"

  # 1. start-up.
  st=$work/tools/spawn-timer
  for p in gcc ours ours-ptx host; do
    echo "bench: start-up, $p"
    run_in $p "$logs/startup-cold-$p.log" "$st" -n "$runs" -w 1 \
      -s CUDA_CACHE_DISABLE=1 -- "$work/$p/startup" \
      || failure "start-up (cold, $p)" "$logs/startup-cold-$p.log"
    run_in $p "$logs/startup-warm-$p.log" "$st" -n "$runs" -w 2 \
      -u CUDA_CACHE_DISABLE -- "$work/$p/startup" \
      || failure "start-up (warm, $p)" "$logs/startup-warm-$p.log"
  done
  # 2. empty region; 3. transfer.
  for p in gcc ours; do
    echo "bench: empty region, $p"
    run_in $p "$logs/region-$p.log" "$work/$p/empty-region" "$iters" \
      "$batches" || failure "empty region ($p)" "$logs/region-$p.log"
    echo "bench: transfer of $bytes bytes, $p"
    run_in $p "$logs/transfer-$p.log" "$work/$p/transfer" "$bytes" "$reps" \
      || failure "transfer ($p)" "$logs/transfer-$p.log"
  done

  table > "$work/table.md"
  cat "$work/table.md"
  if [ "$save" = yes ] || { [ "$save" = auto ] && [ $gpu = 1 ]; }; then
    slug=$(printf '%s' "${device:-no-gpu}" | tr -cs 'A-Za-z0-9' '-' \
             | sed 's/^-*//; s/-*$//' | tr 'A-Z' 'a-z')
    mkdir -p "$here/results"
    f=$here/results/$(date -u +%Y-%m-%d)-$slug.md
    cp "$work/table.md" "$f" && echo "bench: written to $f"
  fi
  if [ -n "$out" ]; then
    cp "$work/table.md" "$out" && echo "bench: written to $out"
  fi
}

# One table row with a ratio: $1 label, $2 GCC value, $3 ours value,
# $4 kind of ratio (speedup: gcc/ours, higher is better; time: ours/gcc,
# lower is better), $5 goal (number), $6 goal text.
row () {
  awk -v label="$1" -v g="$2" -v o="$3" -v kind="$4" -v goal="$5" \
      -v gtext="$6" -v gpu="$gpu" 'BEGIN {
    r = "n/a"; met = "n/a"
    if (g != "" && o != "" && g + 0 > 0 && o + 0 > 0) {
      if (kind == "speedup") {
        v = g / o
        r = (v >= 1) ? sprintf ("%.2fx faster", v) : sprintf ("%.2fx slower", 1 / v)
      }
      else { v = o / g; r = sprintf ("%.2fx GCC'"'"'s time", v) }
      if (goal != "") {
        ok = (kind == "speedup") ? v >= goal : v <= goal
        met = ok ? "yes" : "no"
      } else met = "-"
      if (!gpu) met = met " (no GPU)"
    }
    printf "| %s | %s | %s | %s | %s | %s |\n", label, g == "" ? "-" : g,
      o == "" ? "-" : o, r, gtext, met
  }'
}

# A transfer row: $1 label, $2 tag (h2d|d2h).
transfer_row () {
  gv=$(field median "okb-$2-gbs" "$logs/transfer-gcc.log")
  ov=$(field median "okb-$2-gbs" "$logs/transfer-ours.log")
  gr=$(field median "okb-raw-$2-gbs" "$logs/transfer-gcc.log")
  orw=$(field median "okb-raw-$2-gbs" "$logs/transfer-ours.log")
  awk -v label="$1" -v g="$gv" -v o="$ov" -v gr="$gr" -v orw="$orw" \
      -v gpu="$gpu" 'BEGIN {
    gs = (g == "") ? "-" : g; os = (o == "") ? "-" : o
    if (gr != "") gs = sprintf ("%s (raw %s: %.0f%%)", g, gr, 100 * g / gr)
    if (orw != "") os = sprintf ("%s (raw %s)", o, orw)
    r = "n/a"; met = "n/a"
    if (o != "" && orw != "" && orw + 0 > 0) {
      v = o / orw; r = sprintf ("%.0f%% of raw", 100 * v)
      met = (v >= 0.9) ? "yes" : "no"
      if (!gpu) met = met " (no GPU)"
    } else if (!gpu) met = "n/a (no GPU: raw path skipped)"
    printf "| %s | %s | %s | %s | >= 90%% of raw cuMemcpy | %s |\n", label,
      gs, os, r, met
  }'
}

table () {
  mb=$(awk -v b="$bytes" 'BEGIN { printf "%g MiB", b / 1048576 }')
  echo "# offloadkit benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- Device: $label"
  echo "- Host: $(uname -n), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs"
  [ -f "$work/build-info" ] && sed 's/^/- Binaries /' "$work/build-info"
  echo "- Regions ran on: GCC's $(where gcc "$logs/startup-warm-gcc.log"), ours $(where ours "$logs/startup-warm-ours.log")"
  echo "- GCC = GCC 12's mkoffload + Debian's libgomp-plugin-nvptx.so.1; ours = offloadkit's mkoffload + plugin; same sources (bench/), same run"
  echo
  echo "| benchmark | GCC 12 | offloadkit | ratio | goal | met |"
  echo "|---|---|---|---|---|---|"
  row "start-up cold (CUDA_CACHE_DISABLE=1), ms to end of first region, median of $runs" \
    "$(field median okb-first-region-ms "$logs/startup-cold-gcc.log")" \
    "$(field median okb-first-region-ms "$logs/startup-cold-ours.log")" \
    speedup 10 ">= 10x faster"
  row "start-up warm, ms to end of first region, median of $runs" \
    "$(field median okb-first-region-ms "$logs/startup-warm-gcc.log")" \
    "$(field median okb-first-region-ms "$logs/startup-warm-ours.log")" \
    speedup "" "-"
  row "start-up cold, ours with PTX only (OFFLOADKIT_NVPTX_SASS=none: JIT as GCC's), ms" \
    "$(field median okb-first-region-ms "$logs/startup-cold-gcc.log")" \
    "$(field median okb-first-region-ms "$logs/startup-cold-ours-ptx.log")" \
    speedup "" "-"
  fl=$(field median okb-first-region-ms "$logs/startup-warm-host.log")
  echo "| start-up floor: -foffload=disable, ms (same measure) | ${fl:--} | | | | |"
  row "empty target region round trip, us (median of $batches batches of $iters)" \
    "$(field median okb-region-us "$logs/region-gcc.log")" \
    "$(field median okb-region-us "$logs/region-ours.log")" \
    time 0.8 "<= 0.8x GCC's time"
  transfer_row "map(to:) $mb, enter data, GB/s (median of $reps)" h2d
  transfer_row "map(from:) $mb, exit data, GB/s (median of $reps)" d2h
  echo
  for p in gcc ours; do
    s=$(sed -n 's/^okb-raw-skipped //p' "$logs/transfer-$p.log" | head -n 1)
    [ -n "$s" ] && echo "Raw cuMemcpy skipped ($p run): $s"
  done
  echo "Exit times (process start to exit, ms, median, warm): GCC $(field median okb-exit-ms "$logs/startup-warm-gcc.log"), ours $(field median okb-exit-ms "$logs/startup-warm-ours.log"), floor $(field median okb-exit-ms "$logs/startup-warm-host.log")."
  [ $failed = 0 ] || echo "Some benchmarks FAILED: see $logs."
}

case $mode in
  build) build;;
  run) run_all;;
  both) build; run_all;;
esac
exit $failed
