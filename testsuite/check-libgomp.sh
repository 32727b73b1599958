#! /bin/sh
# check-libgomp.sh: run GCC 12's own libgomp offloading tests through two
# pipelines and compare.
#
#   BASELINE  gcc -fopenmp -foffload=nvptx-none (GCC's own mkoffload, with
#             a PATH that has no CUDA ptxas, which GCC 12's pipeline cannot
#             use), run with Debian's plugins only: host fallback.
#   OURS      the same with -B TOPBUILD/stage/ (our mkoffload), run with our
#             plugin first on LD_LIBRARY_PATH and OFFLOADKIT_EMULATE=1.
#
# The tests are taken at test time from the gcc-12-source package's tarball
# (only libgomp/testsuite is extracted, under OBJDIR/tmp); they are never
# part of offloadkit.  The selection rule is in check-libgomp.tcl and is
# printed at the start.  Exit status: 0 when no test that passes in the
# baseline fails with ours (but for the known limits listed, with reasons,
# in check-libgomp.known), 1 otherwise, 2 on a setup error.
#
# Usage: check-libgomp.sh --srcdir DIR --objdir DIR --topbuild DIR
#          [--jobs N] [--timeout S] [--tarball FILE] [--filter REGEX]
#          [--keep]
# (internal: check-libgomp.sh --job JOBDIR, with the settings exported)

set -u

# ------------------------------------------------------------ one test

# Compile and run one pipeline of the job in the current directory.
# $1: base|ours.  Prints the status word: PASS, FAIL:compile, FAIL:run,
# FAIL:output, FAIL:timeout.
run_pipeline () {
  which=$1
  mkdir -p "$which" && cd "$which" || { echo FAIL:setup; return; }
  # shellcheck disable=SC2086 # word splitting of option lists is intended
  set -f
  if [ "$which" = base ]; then
    env PATH="$CLG_NOPTXAS_PATH" timeout -k 5 "$CLG_COMPILE_TIMEOUT" \
      $DRIVER -fopenmp -foffload=nvptx-none $CLG_INCLUDE $OPTS $SRCS $LIBS \
      -o a.out > compile.log 2>&1 < /dev/null
  else
    timeout -k 5 "$CLG_COMPILE_TIMEOUT" \
      $DRIVER -fopenmp -foffload=nvptx-none -B"$CLG_STAGE" $CLG_INCLUDE \
      $OPTS $SRCS $LIBS -o a.out > compile.log 2>&1 < /dev/null
  fi
  crc=$?
  set +f
  if [ $crc -ne 0 ] || [ ! -x a.out ]; then
    cd ..; echo FAIL:compile; return
  fi

  if [ "$which" = base ]; then
    set -f
    env -u OFFLOADKIT_EMULATE -u OMP_TARGET_OFFLOAD \
      LD_LIBRARY_PATH="$CLG_BASE_LD_PATH" $ENVS \
      timeout -k 5 "$CLG_TIMEOUT" ./a.out > run.log 2>&1 < /dev/null
    rrc=$?
    set +f
  else
    set -f
    env -u OMP_TARGET_OFFLOAD \
      LD_LIBRARY_PATH="$CLG_OURS_LD_PATH" OFFLOADKIT_EMULATE=1 $ENVS \
      timeout -k 5 "$CLG_TIMEOUT" ./a.out > run.log 2>&1 < /dev/null
    rrc=$?
    set +f
  fi
  echo "exit status $rrc" >> run.log
  cd ..
  if [ $rrc -eq 124 ] || [ $rrc -eq 137 ]; then
    echo FAIL:timeout; return
  fi
  if [ "$SHOULDFAIL" = 1 ]; then
    # Must fail by itself (abort or non-zero exit), not by timeout.
    [ $rrc -ne 0 ] || { echo FAIL:run; return; }
  else
    [ $rrc -eq 0 ] || { echo FAIL:run; return; }
  fi
  if [ -f output.re ]; then
    tclsh "$CLG_TCL" match output.re "$which/run.log" \
      || { echo FAIL:output; return; }
  fi
  echo PASS
}

run_job () {
  jobdir=$1
  cd "$jobdir" || exit 2
  . ./job.sh
  if [ -n "$UNSUPPORTED" ]; then
    base=UNSUPPORTED ours=UNSUPPORTED
  elif [ "$BASE_SKIP" = 1 ]; then
    # Needs a device with separate memory: ours only (DEVICE-ONLY).
    base=DEVICE-ONLY
    ours=$(run_pipeline ours)
  else
    base=$(run_pipeline base)
    ours=$(run_pipeline ours)
  fi
  # An expected failure that fails is not a pass, and not a regression.
  if [ "$XFAIL" = 1 ]; then
    case $base in FAIL:*) base="XFAIL($base)";; esac
    case $ours in FAIL:*) ours="XFAIL($ours)";; esac
  fi
  printf '%s\t%s\t%s\n' "$base" "$ours" "$ID" > result
  printf '%-14s %-14s %s\n' "$base" "$ours" "$ID"
  # Keep the logs of failures only.
  if [ "${CLG_KEEP:-0}" != 1 ]; then
    for w in base ours; do
      rm -f "$w/a.out" "$w"/*.o
      [ "$base$ours" = PASSPASS ] && rm -rf "$w"
    done
  fi
  exit 0
}

if [ "${1:-}" = --job ]; then
  run_job "$2"
fi

# ------------------------------------------------------------ driver

srcdir= objdir= topbuild= jobs=2 timeout=60 filter= keep=0
tarball=/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz
while [ $# -gt 0 ]; do
  case $1 in
    --srcdir) srcdir=$2; shift 2;;
    --objdir) objdir=$2; shift 2;;
    --topbuild) topbuild=$2; shift 2;;
    --jobs) jobs=$2; shift 2;;
    --timeout) timeout=$2; shift 2;;
    --tarball) tarball=$2; shift 2;;
    --filter) filter=$2; shift 2;;
    --keep) keep=1; shift;;
    *) echo "check-libgomp: unknown argument '$1'" >&2; exit 2;;
  esac
done
[ -n "$srcdir" ] || srcdir=$(dirname "$0")
[ -n "$objdir" ] || objdir=$(pwd)
[ -n "$topbuild" ] || topbuild=$(cd "$objdir/.." && pwd)
srcdir=$(cd "$srcdir" && pwd) || exit 2
objdir=$(cd "$objdir" && pwd) || exit 2
topbuild=$(cd "$topbuild" && pwd) || exit 2

die () { echo "check-libgomp: error: $*" >&2; exit 2; }

if [ ! -f "$tarball" ]; then
  die "$tarball not found: install Debian's gcc-12-source package (the tests are taken from it at test time), or give --tarball FILE"
fi
command -v tclsh > /dev/null || die "tclsh is needed (Debian package tcl)"
stage=$topbuild/stage/
[ -x "$stage/accel/nvptx-none/mkoffload" ] \
  || die "$stage/accel/nvptx-none/mkoffload missing: run 'make' (or 'make check-libgomp' from the top build directory) first"
plugindir=$topbuild/libgomp-plugin/.libs
[ -f "$plugindir/libgomp-plugin-nvptx.so.1" ] \
  || die "$plugindir/libgomp-plugin-nvptx.so.1 missing: run 'make' first"

work=$objdir/tmp/check-libgomp
rm -rf "$work" && mkdir -p "$work/src" "$work/jobs" || die "cannot create $work"

echo "check-libgomp: extracting libgomp/testsuite from $tarball"
# Also GCC's include/gomp-constants.h, which some tests include (GCC's
# testsuite compiles them with -I of that directory).
tar -xJf "$tarball" -C "$work/src" --wildcards '*/libgomp/testsuite/*' \
  '*/include/gomp-constants.h' \
  || die "cannot extract libgomp/testsuite from $tarball"
root=$(find "$work/src" -maxdepth 3 -type d -path '*/libgomp/testsuite' | head -n 1)
[ -n "$root" ] || die "no libgomp/testsuite in $tarball"
CLG_INCLUDE=-I$(cd "$root/../../include" && pwd) \
  || die "no include/gomp-constants.h in $tarball"
export CLG_INCLUDE

cat <<'EOF'
check-libgomp: selection rule: a file of libgomp.c, libgomp.c++,
  libgomp.c-c++-common or libgomp.fortran (with subdirectories) is a test when
  it has a line starting '#pragma omp target', '#pragma omp declare target'
  (Fortran: '!$omp target', '!$omp declare target', case-insensitive), its
  dg-do is run (the default; dg-do compile/link files are left out), no file
  names it in dg-additional-sources and, for C/C++, it defines main.
  libgomp.c-c++-common tests run twice, as C and as C++.  Options: -O2 unless
  dg-options says otherwise, plus dg-additional-options and -I of GCC's
  include/ (for gomp-constants.h) (Fortran runs once,
  at -O2, not over GCC's torture list, linked with -foffload=-lgfortran as
  GCC's testsuite does).  Selectors are evaluated once for
  both pipelines as on the baseline machine: offload_target_nvptx true,
  offload_device* false.  Tests that are unsupported only for want of
  offload_device / offload_device_nonshared_as run with ours alone
  (DEVICE-ONLY, with those true) and are reported separately.
EOF

tclsh "$srcdir/check-libgomp.tcl" plan "$root" "$work/jobs" "$filter" \
  > "$work/joblist" || die "planning failed"

# PATH for GCC's own pipeline: drop directories that provide a ptxas.
noptxas=
oldifs=$IFS; IFS=:
for d in $PATH; do
  [ -n "$d" ] || continue
  [ -e "$d/ptxas" ] && continue
  noptxas=${noptxas:+$noptxas:}$d
done
# Library path without our plugin for the baseline run.
baseld=
for d in ${LD_LIBRARY_PATH:-}; do
  [ -n "$d" ] || continue
  [ "$d" = "$plugindir" ] && continue
  baseld=${baseld:+$baseld:}$d
done
IFS=$oldifs

CLG_NOPTXAS_PATH=$noptxas
CLG_BASE_LD_PATH=$baseld
CLG_OURS_LD_PATH=$plugindir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
CLG_STAGE=$stage
CLG_TIMEOUT=$timeout
CLG_COMPILE_TIMEOUT=$((timeout * 3))
CLG_TCL=$srcdir/check-libgomp.tcl
CLG_KEEP=$keep
export CLG_NOPTXAS_PATH CLG_BASE_LD_PATH CLG_OURS_LD_PATH CLG_STAGE \
  CLG_TIMEOUT CLG_COMPILE_TIMEOUT CLG_TCL CLG_KEEP

total=$(wc -l < "$work/joblist")
echo "check-libgomp: $total test instances, $jobs parallel jobs, ${timeout}s run timeout"
printf '%-14s %-14s %s\n' BASELINE OURS TEST
start=$(date +%s)
xargs -P "$jobs" -n 1 sh "$0" --job < "$work/joblist"
end=$(date +%s)

# ------------------------------------------------------------ summary

cat "$work"/jobs/*/result > "$work/results.tsv" 2>/dev/null
# Results also go to OBJDIR/check-libgomp.sum in DejaGnu's format, which
# CI adds up with the other .sum files.
awk -F '\t' -v total="$total" -v secs=$((end - start)) \
    -v sum="$objdir/check-libgomp.sum" '
  FILENAME != ARGV[2] {
    if ($0 !~ /^#/ && NF >= 2) known[$1] = $2
    next
  }
  { n++ }
  $1 == "UNSUPPORTED" { uns++; next }
  $1 == "DEVICE-ONLY" {
    dev++
    if ($2 == "PASS") devp++; else devf[++ndf] = $3 " (" $2 ")"
    next
  }
  { run++ }
  $1 == "PASS" { bp++ }
  $2 == "PASS" { op++ }
  $1 == "PASS" && $2 != "PASS" {
    if ($3 in known) { xf[++nxf] = $3 " (" $2 "): " known[$3]; next }
    reg[++nr] = $3 " (" $2 ")"
  }
  $1 != "PASS" && $2 == "PASS" { better[++nb] = $3 " (baseline " $1 ")" }
  $2 == "PASS" && ($3 in known) { xp[++nxp] = $3 }
  $1 != "PASS" && $2 != "PASS" { both[++nboth] = $3 }
  END {
    printf "\t\t=== check-libgomp Summary ===\n\n" > sum
    printf "# of expected passes\t\t%d\n", op + devp > sum
    printf "# of unexpected failures\t%d\n", nr + (total - n) > sum
    printf "# of unexpected successes\t%d\n", nxp > sum
    printf "# of expected failures\t\t%d\n", nxf > sum
    printf "# of untested testcases\t\t%d\n", nboth + uns + ndf > sum
    close (sum)
    if (n != total) printf "check-libgomp: warning: %d of %d results missing\n", total - n, total
    printf "\ncheck-libgomp: tests that pass in the baseline but not with ours:\n"
    for (i = 1; i <= nr; i++) printf "  %s\n", reg[i]
    if (nr == 0) printf "  (none)\n"
    printf "check-libgomp: known limits of the emulated device (check-libgomp.known):\n"
    for (i = 1; i <= nxf; i++) printf "  %s\n", xf[i]
    if (nxf == 0) printf "  (none)\n"
    for (i = 1; i <= nxp; i++) printf "check-libgomp: %s passes now: take it off check-libgomp.known\n", xp[i]
    printf "check-libgomp: tests that pass with ours but not in the baseline:\n"
    for (i = 1; i <= nb; i++) printf "  %s\n", better[i]
    if (nb == 0) printf "  (none)\n"
    printf "check-libgomp: device-only tests (need a device with separate memory; ours only, not counted above) that fail with ours:\n"
    for (i = 1; i <= ndf; i++) printf "  %s\n", devf[i]
    if (ndf == 0) printf "  (none)\n"
    printf "\ncheck-libgomp: device-only tests: %d run with ours, %d passed\n", dev, devp
    printf "check-libgomp: %d tests (%d run on both, %d device-only, %d unsupported): baseline passed %d, ours passed %d, regressions %d, known limits %d (%d s)\n", n, run, dev, uns, bp, op, nr, nxf, secs
    exit (nr > 0 || nxp > 0 || n != total) ? 1 : 0
  }' "$srcdir/check-libgomp.known" "$work/results.tsv"
status=$?
echo "check-libgomp: results in $work/results.tsv; logs of failures under $work/jobs"
rm -rf "$work/src"
exit $status
