#! /bin/sh
# bench/link.sh: offload link times, GCC 12's own pipeline against ours,
# on the same host objects in the same run (bench/README.md, "Link time").
#
# Each program's host object is compiled first (untimed); then only the
# link is timed,
#   gcc -fopenmp -foffload=nvptx-none [-B BUILD/stage/] [OPTS] OBJ -o OUT LIBS
# five ways, interleaved (GCC, cold, new, warm, PTX only, GCC, cold, ...):
#   GCC        GCC 12's mkoffload (PATH without CUDA's ptxas, no -B)
#   cold       ours (-B BUILD/stage/), mkoffload's default (cubins),
#              OFFLOADKIT_CACHE_DIR a fresh empty directory for every run
#   new        the same, with a cache that holds the library modules the
#              program uses, compiled, but nothing of the program's own:
#              a new program, or one whose device code changed, on a
#              machine where offloading programs were linked before (for
#              every run a copy of the entries that the untimed link
#              filling the warm cache names, with -v, as "library module
#              N"; skipped when it names none: no ptxas, or no cache)
#   warm       the same, with a cache filled by one untimed link first
#   PTX only   ours with OFFLOADKIT_NVPTX_SASS=none (a reference)
# Each link's wall time, and the peak resident memory of its largest
# single process (ru_maxrss of wait4, which covers the processes the link
# reaped; checked at the start), come from bench/link-timer.c.  Each linked
# program is run once, after the first round: GCC's with Debian's plugin
# (host fallback), ours on the emulated device (OFFLOADKIT_EMULATE=nvptx:1,
# OMP_TARGET_OFFLOAD=mandatory).
#
# Programs (--programs takes their names, comma-separated; --list lists
# them): examples/hello-offload.c, and GCC's libgomp tests taken from the
# gcc-N-source tarball (only libgomp/testsuite is extracted, into a scratch
# directory removed at the end), compiled with their dg-options (else -O2)
# and dg-additional-options.  --quick: hello and target-teams-1, 3 runs.
#
# Usage: bench/link.sh [--topbuild BUILD] [-n RUNS] [--quick]
#          [--gcc-source TARBALL] [--programs LIST] [--timeout S]
#          [--sass LIST] [--work DIR] [--out FILE]
#   --topbuild BUILD   offloadkit build tree with stage/ (default: the
#                      current directory when it has stage/, else ./build)
#   -n, --runs RUNS    timed links per pipeline and program (default 5)
#   --gcc-source FILE  GCC's source tarball (default:
#                      /usr/src/gcc-N/gcc-*.tar.*, package gcc-N-source)
#   --timeout S        per link and per program run (default 600); a link
#                      past it is reported as a timeout, its pipeline's
#                      remaining runs of that program are skipped
#   --sass LIST        cold, new and warm build cubins for LIST (as
#                      OFFLOADKIT_NVPTX_SASS, e.g. sm_90) instead of
#                      mkoffload's default architectures: what another
#                      default would cost
#   --work DIR         logs, raw numbers, table (default BUILD/bench/link)
#   --out FILE         write the Markdown table to FILE too
# Exit status: 0 when every link and every program run succeeded (slow or
# not, timeouts included), 1 when a link failed or a linked program did
# not run correctly, 2 on a usage or setup error.

set -u

die () { echo "link: error: $*" >&2; exit 2; }
say () { echo "link: $*" >&2; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
srcroot=$(dirname "$here")

# name|language|source (@ = offloadkit's tree, else GCC's
# libgomp/testsuite)|what it stands for.  The libgomp tests are GCC 12's
# largest by device code (the program's own PTX, without library modules,
# as GCC's pipeline builds it): bench/README.md says how they were ranked.
programs_table='hello|c|@examples/hello-offload.c|small
target-teams-1|c|libgomp.c/target-teams-1.c|medium
for-24|c++|libgomp.c++/for-24.C|largest C++
struct-elem-map-1|fortran|libgomp.fortran/struct-elem-map-1.f90|largest Fortran
for-6|c|libgomp.c-c++-common/for-6.c|large
for-5|c|libgomp.c-c++-common/for-5.c|large
for-3|c|libgomp.c-c++-common/for-3.c|largest'
quick_programs=hello,target-teams-1

topbuild= runs= tarball= timeout=600 work= out= programs= quick=0 sass=
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild|-n|--runs|--gcc-source|--timeout|--work|--out|--programs|--sass)
      [ $# -ge 2 ] || die "$1 needs a value";;
  esac
  case $1 in
    --topbuild) topbuild=$2; shift 2;;
    -n|--runs) runs=$2; shift 2;;
    --gcc-source) tarball=$2; shift 2;;
    --timeout) timeout=$2; shift 2;;
    --work) work=$2; shift 2;;
    --out) out=$2; shift 2;;
    --programs) programs=$2; shift 2;;
    --sass) sass=$2; shift 2;;
    --quick) quick=1; shift;;
    --list) printf '%s\n' "$programs_table" \
              | awk -F'|' '{ printf "%-18s %-8s %-40s %s\n", $1, $2, $3, $4 }'
            exit 0;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
done
[ -n "$runs" ] || { [ $quick = 1 ] && runs=3; } || runs=5
# For link-timer: mkoffload's default architectures, or --sass's.
case $sass in
  '') sass_env="-u OFFLOADKIT_NVPTX_SASS";;
  *[!a-z0-9_,]*|none) die "--sass wants architectures such as sm_90 (not '$sass')";;
  *) sass_env="-s OFFLOADKIT_NVPTX_SASS=$sass";;
esac
case $runs in ''|*[!0-9]*|0) die "-n wants a positive number";; esac
case $timeout in ''|*[!0-9]*|0) die "--timeout wants a positive number of seconds";; esac
[ -n "$programs" ] || { [ $quick = 1 ] && programs=$quick_programs; } \
  || programs=$(printf '%s\n' "$programs_table" | cut -d'|' -f1 | paste -sd, -)
for p in $(echo "$programs" | tr , ' '); do
  printf '%s\n' "$programs_table" | grep -q "^$p|" \
    || die "no program '$p' (--list lists them)"
done

# ------------------------------------------------------------ set-up

if [ -z "$topbuild" ]; then
  if [ -d stage ]; then topbuild=.; else topbuild=./build; fi
fi
topbuild=$(cd "$topbuild" 2>/dev/null && pwd) \
  || die "no build directory '$topbuild': give --topbuild BUILD"
stage=$topbuild/stage/
[ -x "${stage}accel/nvptx-none/mkoffload" ] \
  || die "${stage}accel/nvptx-none/mkoffload missing: run 'make stage/accel/nvptx-none/mkoffload' in $topbuild"
plugindir=$topbuild/libgomp-plugin/.libs
[ -f "$plugindir/libgomp-plugin-nvptx.so.1" ] \
  || die "$plugindir/libgomp-plugin-nvptx.so.1 missing: run 'make' in $topbuild"
gcc_prog=$(command -v gcc) || die "gcc not found"
gcc_major=$("$gcc_prog" -dumpversion | cut -d. -f1)

[ -n "$work" ] || work=$topbuild/bench/link
mkdir -p "$work" && work=$(cd "$work" && pwd) || die "cannot create $work"
logs=$work/logs
scratch=$work/scratch
rm -rf "$logs" "$scratch" "$work/raw.tsv" "$work/summary.log" "$work/table.md"
mkdir -p "$logs" "$scratch/tmp" || die "cannot create $logs and $scratch"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM HUP
# Everything the links and programs write to TMPDIR (GCC's tools leave
# files behind) stays in the scratch directory.
ctmp=$scratch/tmp

# GCC 12's pipeline runs ptxas for sm_35, which CUDA 13's refuses: its
# links get a PATH without any directory that has a ptxas.
. "$here/path-without-ptxas.sh"
noptxas_path=$(path_without_ptxas)
# GCC's programs run without our plugin's directory on the library path.
gcc_ld=
oldifs=$IFS; IFS=:
for d in ${LD_LIBRARY_PATH:-}; do
  [ -n "$d" ] && [ "$d" != "$plugindir" ] && gcc_ld=${gcc_ld:+$gcc_ld:}$d
done
IFS=$oldifs
ours_ld=$plugindir${gcc_ld:+:$gcc_ld}

# The ptxas our mkoffload finds (its documented search: OFFLOADKIT_PTXAS,
# PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin).
if [ -n "${OFFLOADKIT_PTXAS+set}" ]; then
  ptxas=$OFFLOADKIT_PTXAS
else
  ptxas=$(command -v ptxas) || ptxas=
  for d in ${CUDA_HOME:+$CUDA_HOME/bin} ${CUDA_PATH:+$CUDA_PATH/bin} \
           /usr/local/cuda/bin; do
    [ -z "$ptxas" ] && [ -x "$d/ptxas" ] && ptxas=$d/ptxas
  done
fi
if [ -n "$ptxas" ]; then
  ptxas_v="$("$ptxas" --version 2>/dev/null | grep -m 1 release) ($ptxas)"
else
  ptxas_v="none found: ours builds PTX only, cold and warm measure no cubins"
fi

tools=$scratch/tools
mkdir -p "$tools" || die "cannot create $tools"
"$gcc_prog" -std=gnu11 -O2 -Wall -Wextra -I"$here" -o "$tools/link-timer" \
  "$here/link-timer.c" || die "building link-timer failed"
lt=$tools/link-timer

# Does ru_maxrss cover the processes a command reaps, here?
maxrss_check=$("$lt" --check-maxrss 256 2>&1)
case $maxrss_check in
  *" ok") maxrss_note="ru_maxrss of wait4 covers reaped descendants: checked (a grandchild touched 256 MiB, $(echo "$maxrss_check" | sed -n 's/.*reported-mib=\([^ ]*\).*/\1/p') MiB reported)";;
  *) maxrss_note="ru_maxrss of wait4 does NOT cover reaped descendants here ($maxrss_check): peak memory is the driver's own only";;
esac
say "$maxrss_note"

# GCC's libgomp tests, when a program needs them.
need_tests=0
for p in $(echo "$programs" | tr , ' '); do
  printf '%s\n' "$programs_table" | grep -q "^$p|[^|]*|[^@]" && need_tests=1
done
if [ $need_tests = 1 ]; then
  if [ -z "$tarball" ]; then
    tarball=$(ls /usr/src/gcc-"$gcc_major"/gcc-*.tar.* 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || die "no /usr/src/gcc-$gcc_major/gcc-*.tar.*: install Debian's gcc-$gcc_major-source package, or give --gcc-source TARBALL"
  fi
  [ -f "$tarball" ] || die "no file '$tarball' (--gcc-source)"
  say "extracting libgomp/testsuite from $tarball"
  mkdir -p "$scratch/src" \
    && tar -xf "$tarball" -C "$scratch/src" --wildcards '*/libgomp/testsuite/*' \
    || die "cannot extract libgomp/testsuite from $tarball"
  testroot=$(find "$scratch/src" -maxdepth 3 -type d -path '*/libgomp/testsuite' | head -n 1)
  [ -n "$testroot" ] || die "no libgomp/testsuite in $tarball"
fi

# ------------------------------------------------------------ options

# The options GCC's libgomp testsuite compiles test $1 (language $2) with:
# dg-options (else -O2), then every dg-additional-options, for those
# without a target selector or with one this configuration meets (c, c++,
# offload_target_nvptx).  Others are left out, with a note on stderr.
test_options () {
  awk -v lang="$2" -v file="$1" '
  function applies(sel,   w) {
    if (sel == "") return 1
    gsub (/[{}]/, " ", sel)
    n = split (sel, w, " ")
    if (n == 2 && w[1] == "target") {
      if (w[2] == lang || w[2] == "offload_target_nvptx") return 1
      if (w[2] == "c" || w[2] == "c++") return 0
    }
    printf "link: note: %s: selector {%s} not understood, directive left out\n", file, sel > "/dev/stderr"
    return 0
  }
  match ($0, /\{ *dg-(additional-)?options +"[^"]*"/) {
    d = substr ($0, RSTART, RLENGTH)
    rest = substr ($0, RSTART + RLENGTH)
    o = d; sub (/^[^"]*"/, "", o); sub (/"$/, "", o)
    sel = ""
    if (match (rest, /^ *\{ *target +(\{[^}]*\}|[^ }]+) *\}/)) {
      sel = substr (rest, RSTART, RLENGTH)
      sub (/^ *\{ */, "", sel); sub (/ *\}$/, "", sel)
    }
    if (!applies(sel)) next
    if (d ~ /dg-options/) { base = o; have = 1 }
    else add = add " " o
  }
  END { if (!have) base = "-O2"; print base add }' "$1"
}

# Of the options $@, those the link needs too (the testsuite passes all of
# them to its one compile-and-link command): all but -std=, -D, -U, -I,
# -W (not -Wl,) and -fdump-.
link_options () {
  for o in "$@"; do
    case $o in
      -std=*|-D*|-U*|-I*|-fdump-*) ;;
      -Wl,*) printf '%s\n' "$o";;
      -W*) ;;
      *) printf '%s\n' "$o";;
    esac
  done
}

# ------------------------------------------------------------ links

raw=$work/raw.tsv
printf 'program\tpipeline\trun\tstatus\twall_s\tmaxrss_mib\n' > "$raw"

# Link program $1 ($2: its directory) with pipeline $3 (gcc|cold|new|warm|ptx)
# as run $4 ("fill", "ptxsize" or a number): output $2/$3.out, log under
# $logs.  Appends to $raw for numbered runs.  Sets $status (ok, timeout,
# exit:N, signal:N) and returns 0 unless the link failed.
link_once () {
  name=$1 dir=$2 pipe=$3 run=$4
  log=$logs/$name-$pipe-$run.log
  case $pipe in
    gcc) set -- -s PATH="$noptxas_path";;
    cold) rm -rf "$scratch/cache-cold" && mkdir "$scratch/cache-cold" \
            || die "cannot create $scratch/cache-cold"
          set -- -B"$stage" $sass_env \
            -s OFFLOADKIT_CACHE_DIR="$scratch/cache-cold";;
    new) rm -rf "$scratch/cache-new" \
           && cp -R "$dir/cache-lib" "$scratch/cache-new" \
           || die "cannot create $scratch/cache-new"
         set -- -B"$stage" $sass_env \
           -s OFFLOADKIT_CACHE_DIR="$scratch/cache-new";;
    warm) set -- -B"$stage" $sass_env \
            -s OFFLOADKIT_CACHE_DIR="$dir/cache-warm";;
    ptx) rm -rf "$scratch/cache-ptx" && mkdir "$scratch/cache-ptx" \
           || die "cannot create $scratch/cache-ptx"
         set -- -B"$stage" -s OFFLOADKIT_NVPTX_SASS=none \
           -s OFFLOADKIT_CACHE_DIR="$scratch/cache-ptx";;
  esac
  # -B (ours) goes to gcc, the rest to link-timer.
  case ${1:-} in -B*) bopt=$1; shift;; *) bopt=;; esac
  outfile=$dir/$pipe.out
  [ "$run" = ptxsize ] && outfile=$dir/ptxsize/gcc.out
  rm -f "$outfile"
  # shellcheck disable=SC2086 # LINKOPTS and LIBS are word lists
  res=$(set -f; cd "$(dirname "$outfile")" && "$lt" -t "$timeout" -o "$log" \
          -s TMPDIR="$ctmp" "$@" -- "$gcc_prog" -fopenmp -foffload=nvptx-none \
          ${bopt:+"$bopt"} $linkopts $savetemps "$obj" -o "$outfile" $libs)
  lrc=$?
  status=$(echo "$res" | sed -n 's/^okb-link status=\([^ ]*\).*/\1/p')
  wall=$(echo "$res" | sed -n 's/.* wall-s=\([^ ]*\).*/\1/p')
  rss=$(echo "$res" | sed -n 's/.* maxrss-mib=\([^ ]*\).*/\1/p')
  [ -n "$status" ] || { [ $lrc -ge 128 ] && exit 130; }
  [ -n "$status" ] || die "link-timer failed for $name ($pipe): $res"
  case $pipe-$run in
    cold-*) rm -rf "$scratch/cache-cold";;
    new-*) rm -rf "$scratch/cache-new";;
    ptx-*) rm -rf "$scratch/cache-ptx";;
  esac
  case $run in
    [0-9]*) printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$pipe" "$run" \
              "$status" "$wall" "$rss" >> "$raw";;
  esac
  say "  $name $pipe $run: $status ${wall}s ${rss} MiB"
  case $status in
    ok|timeout) return 0;;
  esac
  return 1
}

# The one message of a failed link.
link_failed () {
  why=$status
  case $status in
    signal:9) why="killed by signal 9 (out of memory?)";;
    signal:*) why="killed by signal ${status#signal:}";;
    exit:*) why="exit status ${status#exit:}";;
  esac
  echo "link: FAILED: the $2 link of $1 failed ($why); the end of $log:" >&2
  tail -n 15 "$log" >&2
  exit 1
}

# Run $1's program $2/$3.out once, as pipeline $3 runs its programs.
check_run () {
  name=$1 dir=$2 pipe=$3
  log=$logs/$name-$pipe-run.log
  if [ "$pipe" = gcc ]; then
    set -- -u OFFLOADKIT_EMULATE -u OMP_TARGET_OFFLOAD
    if [ -n "$gcc_ld" ]; then set -- "$@" -s LD_LIBRARY_PATH="$gcc_ld"
    else set -- "$@" -u LD_LIBRARY_PATH; fi
  else
    set -- -s OFFLOADKIT_EMULATE=nvptx:1 -s OMP_TARGET_OFFLOAD=mandatory \
      -s LD_LIBRARY_PATH="$ours_ld"
  fi
  res=$(cd "$dir" && "$lt" -t "$timeout" -o "$log" -s TMPDIR="$ctmp" "$@" \
          -- "./$pipe.out")
  st=$(echo "$res" | sed -n 's/^okb-link status=\([^ ]*\).*/\1/p')
  secs=$(echo "$res" | sed -n 's/.* wall-s=\([^ ]*\).*/\1/p')
  case $st in
    ok) say "  $name $pipe: the program ran correctly (${secs}s)"
        echo "$name $pipe run ok ${secs}s" >> "$work/summary.log";;
    *) case $pipe in
         gcc) where="on host fallback";;
         *) where="on the emulated device";;
       esac
       echo "link: FAILED: $name linked by the $pipe pipeline does not run correctly $where (${st:-$res}); the end of $log:" >&2
       tail -n 15 "$log" >&2
       exit 1;;
  esac
}

# Median, minimum and maximum of the wall times, and the largest peak
# memory, of program $1 and pipeline $2: "MEDIAN MIN MAX RSS N TIMEOUTS"
# (- where no run finished).
stats () {
  awk -F '\t' -v p="$1" -v q="$2" '
  $1 == p && $2 == q && $4 == "ok" { v[++n] = $5; if ($6 > r) r = $6 }
  $1 == p && $2 == q && $4 == "timeout" { t++ }
  END {
    if (!n) { printf "- - - - 0 %d\n", t; exit }
    for (i = 1; i <= n; i++)
      for (j = i + 1; j <= n; j++)
        if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
    m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf "%.2f %.2f %.2f %.0f %d %d\n", m, v[1], v[n], r, n, t
  }' "$raw"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
started=$(date +%s)
: > "$scratch/ptx-sizes"
unchecked=

for name in $(echo "$programs" | tr , ' '); do
  line=$(printf '%s\n' "$programs_table" | grep "^$name|")
  lang=$(echo "$line" | cut -d'|' -f2)
  srcname=$(echo "$line" | cut -d'|' -f3)
  case $srcname in
    @*) srcname=${srcname#@} src=$srcroot/$srcname;;
    *) src=$testroot/$srcname srcname="$srcname (GCC's libgomp/testsuite)";;
  esac
  if [ ! -f "$src" ]; then
    say "$name: no $srcname in $tarball: skipped"
    echo "$name skipped (not in $tarball)" >> "$work/summary.log"
    continue
  fi
  dir=$scratch/$name
  mkdir -p "$dir/ptxsize" || die "cannot create $dir"
  case $lang in
    c) driver=gcc libs=-lm;;
    c++) driver=g++ libs="-lstdc++ -lm";;
    fortran) driver=gfortran libs="-lgfortran -lm -foffload=-lgfortran";;
  esac
  command -v "$driver" > /dev/null || die "$driver not found (needed for $name)"
  opts=$(test_options "$src" "$lang")
  # shellcheck disable=SC2086 # option lists
  linkopts=$(set -f; link_options $opts | paste -sd' ' -)
  obj=$dir/$name.o
  say "$name: compiling $srcname ($driver $opts)"
  # shellcheck disable=SC2086
  (set -f; cd "$dir" && env TMPDIR="$ctmp" "$driver" -fopenmp \
     -foffload=nvptx-none $opts -c "$src" -o "$obj" \
     > "$logs/$name-compile.log" 2>&1 < /dev/null) \
    || { echo "link: FAILED: compiling $srcname failed; the end of $logs/$name-compile.log:" >&2
         tail -n 15 "$logs/$name-compile.log" >&2; exit 1; }
  {
    echo "$name: $srcname ($lang)"
    echo "  compile: $driver -fopenmp -foffload=nvptx-none $opts -c"
    echo "  link: gcc -fopenmp -foffload=nvptx-none [-B $stage] $linkopts OBJ -o OUT $libs"
  } >> "$work/summary.log"

  # Untimed: GCC's link with -save-temps, for the size of its PTX (the
  # program's own module, then the library modules, NUL-separated).
  savetemps=-save-temps
  link_once "$name" "$dir" gcc ptxsize || link_failed "$name" "GCC (-save-temps)"
  savetemps=
  ptxf=$(ls "$dir"/ptxsize/*.xnvptx-none.mkoffload 2>/dev/null | head -n 1)
  if [ "$status" = ok ] && [ -n "$ptxf" ]; then
    tr '\000' '\n' < "$ptxf" | awk -v n="$name" '
      /^\/\/ BEGIN PREAMBLE/ { m++ } { b[m > 1] += length + 1 }
      END { printf "%s %.0f %.0f\n", n, b[0] / 1024, b[1] / 1024 }' \
      >> "$scratch/ptx-sizes"
    awk -v n="$name" '$1 == n { printf "  GCC'"'"'s PTX: program %s KiB, library modules %s KiB\n", $2, $3 }' \
      "$scratch/ptx-sizes" >> "$work/summary.log"
  fi
  rm -rf "$dir/ptxsize"

  # Untimed: fill the warm cache (-v: mkoffload names what it caches).
  mkdir -p "$dir/cache-warm" || die "cannot create $dir/cache-warm"
  savetemps=-v
  link_once "$name" "$dir" warm fill || link_failed "$name" "warm (filling the cache)"
  savetemps=
  skip=" "
  if [ "$status" = timeout ]; then
    skip=" new warm "
    echo "$name warm fill timeout" >> "$work/summary.log"
    unchecked="$unchecked, $name (warm and new: filling the cache timed out)"
  else
    # The library modules alone, for the "new" pipeline.
    mkdir -p "$dir/cache-lib" || die "cannot create $dir/cache-lib"
    # ("library module 30", or "library modules 2-29, 31-41" merged.)
    sed -n "s/^mkoffload: library modules* [-0-9, ]* for sm_[0-9]*: cached '.*' as '\(.*\)'\$/\1/p" \
      "$log" > "$dir/lib-entries"
    if [ -s "$dir/lib-entries" ]; then
      while IFS= read -r e; do
        cp "$e" "$dir/cache-lib/" || die "cannot copy $e"
      done < "$dir/lib-entries"
    else
      skip=" new "
      echo "$name new: no library module cached (no ptxas, or no cache)" \
        >> "$work/summary.log"
      unchecked="$unchecked, $name (new: no library module was cached)"
    fi
  fi

  r=1
  while [ $r -le "$runs" ]; do
    for pipe in gcc cold new warm ptx; do
      case $skip in *" $pipe "*) continue;; esac
      link_once "$name" "$dir" $pipe $r || link_failed "$name" "$pipe"
      if [ "$status" = timeout ]; then
        skip="$skip$pipe "
        [ $r = 1 ] && unchecked="$unchecked, $name ($pipe: the link timed out)"
      elif [ $r = 1 ]; then
        check_run "$name" "$dir" $pipe
      fi
    done
    r=$((r + 1))
  done
  rm -rf "$dir"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
ended=$(date +%s)

# ------------------------------------------------------------ report

for name in $(echo "$programs" | tr , ' '); do
  for pipe in gcc cold new warm ptx; do
    set -- $(stats "$name" $pipe)
    [ "$5" -gt 0 ] || [ "$6" -gt 0 ] || continue
    echo "$name $pipe wall-s median=$1 min=$2 max=$3 maxrss-mib=$4 runs=$5 timeouts=$6"
  done
done >> "$work/summary.log"

table () {
  cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
  model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
  mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
  echo "# offloadkit link times, $date_start"
  echo
  echo "- Machine: $(uname -n), $cpus CPUs${model:+ ($model)}, ${mem:-?} memory; load average ${load_start:-?} at the start, ${load_end:-?} at the end"
  echo "- gcc $("$gcc_prog" -dumpfullversion) ($("$gcc_prog" --version | head -n 1)); ptxas: $ptxas_v"
  echo "- offloadkit: commit $(cd "$srcroot" && git describe --always --dirty 2>/dev/null || echo unknown), build $topbuild"
  echo "- Timed: the link only, \`gcc -fopenmp -foffload=nvptx-none [-B BUILD/stage/] OBJ -o OUT\` plus the test's options and -lm, -lstdc++ or -lgfortran; $runs runs per pipeline, interleaved; medians in seconds (min/max in $work/summary.log, every run in $raw); $((ended - started)) s in all"
  echo "- GCC: GCC 12's mkoffload, PTX only (PATH without ptxas). Cold: ours, ${sass:+cubins for $sass only (--sass) instead of }mkoffload's default (cubins), an empty OFFLOADKIT_CACHE_DIR for every run. New: the same with a cache of the library modules the program uses, not its own cubins (a new or changed program). Warm: ours, the cache filled by one untimed link. PTX only: ours with OFFLOADKIT_NVPTX_SASS=none"
  echo "- Peak memory: the largest ru_maxrss of any single process of the link, the largest over the runs; $maxrss_note"
  echo "- Every linked program ran once correctly: GCC's on host fallback (Debian's plugin), ours on the emulated device (OFFLOADKIT_EMULATE=nvptx:1, OMP_TARGET_OFFLOAD=mandatory)${unchecked:+; not run: ${unchecked#, }}"
  echo "- Goals: ours with default cubins at most 3x GCC's link time cold and at most 1.5x warm; peak memory of any process under 1 GiB"
  echo
  echo "| program | GCC's PTX, KiB (program + libraries) | GCC, s | ours cold, s | cold / GCC (<= 3x) | ours new, s | new / GCC | ours warm, s | warm / GCC (<= 1.5x) | ours PTX only, s | peak MiB: GCC / cold / new / warm / PTX only (< 1024) | goals met |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for name in $(echo "$programs" | tr , ' '); do
    line=$(printf '%s\n' "$programs_table" | grep "^$name|")
    lang=$(echo "$line" | cut -d'|' -f2)
    src=$(echo "$line" | cut -d'|' -f3)
    what=$(echo "$line" | cut -d'|' -f4)
    src=${src#@}
    label="$src ($(echo "$lang" | sed 's/^c$/C/; s/^c++$/C++/; s/^fortran$/Fortran/'), $what)"
    if grep -q "^$name skipped" "$work/summary.log"; then
      echo "| $label | not in this GCC's tests | | | | | | | | | | |"
      continue
    fi
    ptx=$(awk -v n="$name" '$1 == n { print $2 " + " $3 }' "$scratch/ptx-sizes")
    set -- $(stats "$name" gcc); gm=$1 gr=$4
    set -- $(stats "$name" cold); cm=$1 cr=$4 ct=$6
    set -- $(stats "$name" new); nm=$1 nr=$4 nt=$6
    set -- $(stats "$name" warm); wm=$1 wr=$4 wt=$6
    grep -q "^$name warm fill timeout" "$work/summary.log" && wt=fill nt=fill
    set -- $(stats "$name" ptx); pm=$1 pr=$4 pt=$6
    awk -v label="$label" -v ptx="${ptx:-?}" -v gm="$gm" -v cm="$cm" \
        -v wm="$wm" -v pm="$pm" -v gr="$gr" -v cr="$cr" -v wr="$wr" \
        -v pr="$pr" -v ct="$ct" -v wt="$wt" -v pt="$pt" -v to="$timeout" \
        -v nm="$nm" -v nr="$nr" -v nt="$nt" '
    function cell(m, t) {
      if (m != "-") return m
      if (t == "fill") return "timeout (> " to " s) filling the cache"
      return t > 0 ? "timeout (> " to " s)" : "-"
    }
    function ratio(m, t) {
      if (gm == "-" || gm + 0 <= 0) return "-"
      if (m == "-") return t == "fill" || t > 0 ? sprintf ("> %.0fx", to / gm) : "-"
      return sprintf ("%.2fx", m / gm)
    }
    function met(m, t, goal) {
      if (t == "fill" || t > 0) return "no"
      if (m == "-" || gm == "-" || gm + 0 <= 0) return "?"
      return m / gm <= goal ? "yes" : "no"
    }
    BEGIN {
      mem = "yes"; n = split (gr " " cr " " nr " " wr " " pr, r, " ")
      for (i = 1; i <= n; i++)
        if (r[i] == "-") unknown = 1
        else if (r[i] + 0 >= 1024) mem = "no"
      if (mem == "yes" && unknown) mem = "?"
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s / %s | cold: %s, warm: %s, memory: %s |\n",
        label, ptx, cell(gm, 0), cell(cm, ct), ratio(cm, ct), cell(nm, nt),
        ratio(nm, nt), cell(wm, wt), ratio(wm, wt), cell(pm, pt),
        gr, cr, nr, wr, pr, met(cm, ct, 3), met(wm, wt, 1.5), mem
    }'
  done
}

table > "$work/table.md"
cat "$work/table.md"
if [ -n "$out" ]; then
  cp "$work/table.md" "$out" || die "cannot write $out"
  say "table written to $out"
fi
say "logs, every run's numbers and the table in $work"
exit 0
