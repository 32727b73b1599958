#! /bin/sh
# check-libgomp.sh: run GCC's own libgomp offloading tests through two
# pipelines and compare.  The GCC is the gcc first on PATH (make
# check-libgomp GCC_VERSION=N puts gcc-N there), its tests those of its
# version (gcc-N-source).
#
#   BASELINE  gcc -fopenmp -foffload=nvptx-none (GCC's own mkoffload, with
#             a PATH that has no CUDA ptxas, which GCC 12's pipeline cannot
#             use), run with Debian's plugins only: host fallback.
#   OURS      the same with -B TOPBUILD/stage/ (our mkoffload), run with our
#             plugin first on LD_LIBRARY_PATH and OFFLOADKIT_EMULATE=nvptx:1.
#
# The tests are taken at test time from the gcc-N-source package's tarball
# (only libgomp/testsuite is extracted, under OBJDIR/tmp); they are never
# part of offloadkit.  The selection rule is in check-libgomp.tcl and is
# printed at the start.  Exit status: 0 when no test that passes in the
# baseline fails with ours (but for the known limits listed, with reasons,
# in check-libgomp.known), 1 otherwise, 2 on a setup error.
#
# Usage: check-libgomp.sh --srcdir DIR --objdir DIR --topbuild DIR
#          [--jobs N] [--timeout S] [--tarball FILE] [--filter REGEX]
#          [--keep] [--device] [--models openmp,openacc]
#          [--baseline failures|all]
#
# --baseline failures (the default): ours runs first, the baseline only
#   where ours does not pass (only there does it decide anything: a
#   regression is a test the baseline passes and ours does not); it is
#   SKIPPED elsewhere.  --baseline all runs both everywhere.
#
# Split mode, to compile here and run on another machine (a GPU machine
# without GCC: doc/gpu-runs.md):
#   check-libgomp.sh --compile-only KIT [--device] [the options above]
#       plans and compiles both pipelines into KIT (binaries, KIT/manifest
#       listing the job directories, KIT/plan-info); runs nothing.
#   check-libgomp.sh --run-only KIT [--results DIR] [--jobs N]
#       [--timeout S] [--base-libdir DIR] [--ours-libdir DIR]
#       [--emulate N] [--known FILE] [--tclsh PROG] [--deadline T]
#       runs KIT's binaries (only sh, coreutils, awk, xargs and tclsh for
#       dg-output needed) and writes the same report, results.tsv and
#       check-libgomp.sum under DIR (default KIT/results).  Baseline
#       binaries run with --base-libdir first on LD_LIBRARY_PATH (Debian's
#       libgomp and plugin), ours with --ours-libdir (our plugin) then
#       --base-libdir; neither gets OFFLOADKIT_EMULATE unless --emulate N
#       is given (ours only).  Expected failures come from --known FILE
#       (default: check-libgomp.known with --emulate, none without).
#       Jobs that would start after T (seconds since the epoch) are
#       reported NOT-RUN (and the status is 1), to fit a time limit.
# --device plans as on a machine with an offload device: offload_device and
#   offload_device_nonshared_as are true for both pipelines, so there are
#   no DEVICE-ONLY tests.
# (internal: check-libgomp.sh --job JOBDIR, with the settings exported)

set -u

# ------------------------------------------------------------ one test

# A job starts no process it can do without: on a slow machine a process
# start costs a few milliseconds of CPU, as much as a small test's run,
# and the compiler's dozen per test are the work itself.

# Compile pipeline $1 (base|ours) of the job in the current directory into
# $1/a.out, log in $1/compile.log.  Returns 0 when it built.
compile_pipeline () {
  which=$1
  mkdir -p "$which" || return 1
  # shellcheck disable=SC2086 # word splitting of option lists is intended
  set -f
  # The peak memory of the link's largest process, in KiB, goes to
  # $which/peak-rss (when the measuring tool is there).
  if [ "$which" = base ]; then
    ( cd "$which" && PATH=$CLG_NOPTXAS_PATH && export PATH &&
      $CLG_PEAK_RSS timeout -k 5 "$CLG_COMPILE_TIMEOUT" \
      $DRIVER $BASE_MODEL $CLG_INCLUDE $BASE_OPTS $SRCS \
      $LIBS -o a.out > compile.log 2>&1 < /dev/null )
  else
    ( cd "$which" && $CLG_PEAK_RSS timeout -k 5 "$CLG_COMPILE_TIMEOUT" \
      $DRIVER $OURS_MODEL -B"$CLG_STAGE" $CLG_INCLUDE \
      $OURS_OPTS $SRCS $LIBS -o a.out > compile.log 2>&1 < /dev/null )
  fi
  crc=$?
  set +f
  [ $crc -eq 0 ] && [ -x "$which/a.out" ]
}

# Run EXE ($2) as pipeline $1 (base|ours) in directory $1 (created) of the
# current directory, with the job's environment for it; $3 is the job's
# directory (for output-base.re or output-ours.re).  Sets st to the status
# word: PASS, FAIL:run, FAIL:output, FAIL:timeout; where the output test
# is expected to fail (a dg-output marked xfail), XPASS for output that
# matches and XFAIL(FAIL:output) for output that does not.
exec_pipeline () {
  which=$1 exe=$2 jd=$3
  # (Kits planned before OUTPUT_XFAIL existed have none.)
  if [ "$which" = base ]; then
    ENVS=$BASE_ENVS SHOULDFAIL=$BASE_SHOULDFAIL
    OUTPUT_XFAIL=${BASE_OUTPUT_XFAIL:-0}
  else
    ENVS=$OURS_ENVS SHOULDFAIL=$OURS_SHOULDFAIL
    OUTPUT_XFAIL=${OURS_OUTPUT_XFAIL:-0}
  fi
  { [ -d "$which" ] || mkdir -p "$which"; } && cd "$which" ||
    { st=FAIL:setup; return; }
  # DejaGnu runs the tests on a terminal, where libgfortran writes each
  # line at once; into run.log it would hold them until exit, after
  # libgomp's messages, which the tests' dg-output expects after them.
  ENVS="GFORTRAN_UNBUFFERED_PRECONNECTED=y $ENVS"
  set -f
  # The environment is set in a subshell (no env program to start).  The
  # shell's own word for a program a signal ended ("Aborted") goes to its
  # standard error, here set aside: the status says it, and it is no
  # output of the program's.
  exec 9>&2 2> /dev/null
  ( unset OFFLOADKIT_EMULATE OMP_TARGET_OFFLOAD
    if [ "$which" = base ]; then
      # GCC's gcn plugin (libgomp 14 and later) stops every program with
      # "GCN fatal error: Run-time could not be initialized" where the HSA
      # runtime is installed but no AMD GPU: the baseline runs as on a
      # machine without that runtime, where the plugin offers no device.
      HSA_RUNTIME_LIB=/nonexistent/libhsa-runtime64.so.1
      LD_LIBRARY_PATH=$CLG_BASE_LD_PATH
      export HSA_RUNTIME_LIB
    else
      LD_LIBRARY_PATH=$CLG_OURS_LD_PATH
      if [ -n "$CLG_OURS_EMULATE" ]; then
        OFFLOADKIT_EMULATE=$CLG_OURS_EMULATE
        export OFFLOADKIT_EMULATE
      fi
    fi
    export LD_LIBRARY_PATH $ENVS
    exec timeout -k 5 "$CLG_TIMEOUT" "$exe" ) > run.log 2>&1 < /dev/null
  rrc=$?
  exec 2>&9 9>&-
  set +f
  # Beside the output, not in it: dg-output patterns may end with $.
  echo "exit status $rrc" > run.status
  cd ..
  if [ $rrc -eq 124 ] || [ $rrc -eq 137 ]; then
    st=FAIL:timeout; return
  fi
  if [ "$SHOULDFAIL" = 1 ]; then
    # Must fail by itself (abort or non-zero exit), not by timeout.
    [ $rrc -ne 0 ] || { st=FAIL:run; return; }
  else
    [ $rrc -eq 0 ] || { st=FAIL:run; return; }
  fi
  if [ -f "$jd/output-$which.re" ]; then
    if $CLG_TCLSH "$CLG_TCL" match "$jd/output-$which.re" "$which/run.log"
    then
      # Output that a pattern marked xfail expects to be missing is there.
      [ "$OUTPUT_XFAIL" = 1 ] && { st=XPASS; return; }
    else
      [ "$OUTPUT_XFAIL" = 1 ] && { st="XFAIL(FAIL:output)"; return; }
      st=FAIL:output; return
    fi
  fi
  st=PASS
}

# Compile and run one pipeline of the job in the current directory.
# $1: base|ours.  Sets st to the status word: FAIL:compile, or
# exec_pipeline's.
run_pipeline () {
  # Where the time goes, for the summary: ms compiling, ms running.
  now_ms t0
  if compile_pipeline "$1"; then
    now_ms t1
    exec_pipeline "$1" "$PWD/$1/a.out" "$PWD"
    now_ms t2
  else
    now_ms t1
    t2=$t1
    st=FAIL:compile
  fi
  printf '%s\t%s\t%s\t%s\n' "$1" $((t1 - t0)) $((t2 - t1)) "$ID" >> times
}

# Set the variable named $1 to a time in milliseconds: since boot, from
# /proc/uptime (read without starting a process; to 10 ms), else since
# the epoch (GNU date); 0 where neither is known.
now_ms () {
  _ms=
  if { read -r _ms _ < /proc/uptime; } 2> /dev/null; then
    case $_ms in
      [1-9]*.[0-9][0-9]) _ms=${_ms%.*}${_ms#*.}0;;
      *) _ms=;;
    esac
  fi
  [ -n "$_ms" ] || _ms=$(date +%s%3N 2> /dev/null)
  case $_ms in *[!0-9]*|'') _ms=0;; esac
  eval "$1=\$_ms"
}

# Write the job's result line; $1 its directory for results.
finish_job () {
  # An expected failure that fails is not a pass, and not a regression.
  if [ "$BASE_XFAIL" = 1 ]; then
    case $base in FAIL:*) base="XFAIL($base)";; esac
  fi
  if [ "$OURS_XFAIL" = 1 ]; then
    case $ours in FAIL:*) ours="XFAIL($ours)";; esac
  fi
  printf '%s\t%s\t%s\n' "$base" "$ours" "$ID" > "$1/result"
  printf '%-14s %-14s %s\n' "$base" "$ours" "$ID"
}

# Set base and ours for the job sourced: $1 runs one of its pipelines
# ($1 base|ours) and sets st to its status word.
run_pipelines () {
  if [ -n "$UNSUPPORTED" ]; then
    base=UNSUPPORTED ours=UNSUPPORTED
  elif [ "$BASE_SKIP" = 1 ]; then
    # Needs a device with separate memory: ours only (DEVICE-ONLY).
    base=DEVICE-ONLY
    $1 ours; ours=$st
  elif [ "$OURS_SKIP" = 1 ]; then
    # Only for a machine without an offload device: not compared.
    base=HOST-ONLY ours=HOST-ONLY
  elif [ "${CLG_BASELINE:-all}" = failures ]; then
    # The baseline decides only whether a failure of ours is a
    # regression: where ours passes, it is not run (SKIPPED).
    $1 ours; ours=$st
    case $ours in
      PASS|XPASS) base=SKIPPED;;
      *) $1 base; base=$st;;
    esac
  else
    $1 base; base=$st
    $1 ours; ours=$st
  fi
}

run_job () {
  jobdir=$1
  cd "$jobdir" || exit 2
  . ./job.sh
  run_pipelines run_pipeline
  finish_job .
  # The links' peak memory (KiB; - when not measured), for the summary.
  { read -r pb < base/peak-rss; } 2> /dev/null || pb=-
  { read -r po < ours/peak-rss; } 2> /dev/null || po=-
  printf '%s\t%s\t%s\n' "${pb:--}" "${po:--}" "$ID" > peak
  # Keep the logs of failures only (one rm for all).
  if [ "${CLG_KEEP:-0}" != 1 ]; then
    case $base$ours in
      PASSPASS|SKIPPEDPASS) rm -rf base ours;;
      *) rm -f base/a.out base/*.o ours/a.out ours/*.o;;
    esac
  fi
  exit 0
}

# --compile-only: build the job's binaries where they are; each pipeline
# directory gets a status file (BUILT or FAIL:compile); compile logs are
# kept for failures only.
compile_job () {
  cd "$1" || exit 2
  . ./job.sh
  line=
  for w in base ours; do
    if [ -n "$UNSUPPORTED" ] || [ "$OURS_SKIP" = 1 ] ||
       { [ $w = base ] && [ "$BASE_SKIP" = 1 ]; }; then
      st=-
    elif compile_pipeline $w; then
      st=BUILT
      rm -f "$w/compile.log"
    else
      st=FAIL:compile
      rm -f "$w/a.out"
    fi
    [ -d $w ] && { echo "$st" > $w/status; rm -f "$w"/*.o; }
    line="$line$(printf '%-14s ' "$st")"
  done
  echo "$line$ID"
  exit 0
}

# --run-only: run the binaries of kit job $1 (a directory name relative
# to $CLG_KIT/jobs); results under $CLG_RESULTS/jobs/$1.
run_kit_job () {
  jd=$CLG_KIT/jobs/$1
  rd=$CLG_RESULTS/jobs/$1
  mkdir -p "$rd" && cd "$rd" || exit 2
  . "$jd/job.sh"
  # Past the --deadline, jobs are only recorded as not run.
  if [ -n "$CLG_DEADLINE" ] && [ "$(date +%s)" -ge "$CLG_DEADLINE" ]; then
    base=NOT-RUN ours=NOT-RUN BASE_XFAIL=0 OURS_XFAIL=0
    finish_job .
    exit 0
  fi
  kit_pipeline () {
    { read -r st < "$jd/$1/status"; } 2> /dev/null || st=FAIL:missing
    case $st in
      BUILT) exec_pipeline "$1" "$jd/$1/a.out" "$jd";;
      '') st=FAIL:missing;;
    esac
  }
  run_pipelines kit_pipeline
  finish_job .
  [ "$base$ours" = PASSPASS ] && rm -rf base ours
  exit 0
}

case ${1:-} in
  --job) run_job "$2";;
  --compile-job) compile_job "$2";;
  --run-kit-job) run_kit_job "$2";;
esac

# ------------------------------------------------------------ summary

# Report on the result lines in $1 (TSV: baseline, ours, test); write the
# DejaGnu summary to $2; $3 lists known limits; $4 is the number of
# instances planned, $5 the seconds taken, $6 1 to also list the tests
# that fail in both pipelines.  Exit status as the script's.
summarize () {
  awk -F '\t' -v total="$4" -v secs="$5" -v sum="$2" -v listboth="$6" '
  # TITLE, then the COUNT tests in ITEMS, one a line, or "(none)".
  function print_list(title, items, count,   i) {
    printf "%s\n", title
    for (i = 1; i <= count; i++) printf "  %s\n", items[i]
    if (count == 0) printf "  (none)\n"
  }
  FILENAME != ARGV[2] {
    if ($0 !~ /^#/ && NF >= 2) known[$1] = $2
    next
  }
  { n++ }
  $3 ~ /^libgomp\.oacc-/ && $2 != "UNSUPPORTED" && $2 != "HOST-ONLY" && $2 != "NOT-RUN" {
    accrun++
    if ($2 == "PASS") accpass++
    if ($2 ~ /^XFAIL/) accxfail++
    if ($2 == "XPASS") accxpass++
  }
  # Output that a test marks xfail in its configuration and that is there
  # (XPASS) is, as in DejaGnu, an unexpected success, unless the known
  # limits list it (the test expects a GPU'\''s failure that the emulated
  # device does not have): no expected pass either way.  It is then taken
  # as a pass for the comparison below, without being counted as one.
  # The baseline'\''s are GCC'\''s own matter.
  {
    bx = $1 == "XPASS"
    ox = $2 == "XPASS"
    if (bx) $1 = "PASS"
    if (ox) {
      if ($3 in known) kxpass[++nkxpass] = $3 ": " known[$3]
      else xpass[++nxpass] = $3
      $2 = "PASS"
    }
  }
  $1 == "UNSUPPORTED" { uns++; next }
  $1 == "HOST-ONLY" { hostonly++; next }
  $1 == "NOT-RUN" { notrun++; next }
  $1 == "DEVICE-ONLY" {
    dev++
    if ($2 != "PASS") devf[++ndf] = $3 " (" $2 ")"
    else if (!ox) devp++
    next
  }
  { run++ }
  $1 == "SKIPPED" { skipped++ }
  $1 == "PASS" && !bx { bp++ }
  $2 == "PASS" && !ox { op++ }
  $1 == "PASS" && $2 ~ /^XFAIL/ {
    # The test itself expects to fail in our configuration (an OpenACC
    # test'\''s dg-xfail for -DACC_MEM_SHARED=0, say): no regression.
    txf[++ntxf] = $3 " (" $2 ")"
    next
  }
  $1 == "PASS" && $2 != "PASS" {
    if ($3 in known) { xf[++nxf] = $3 " (" $2 "): " known[$3]; next }
    reg[++nr] = $3 " (" $2 ")"
  }
  $1 != "PASS" && $1 != "SKIPPED" && $2 == "PASS" { better[++nb] = $3 " (baseline " $1 ")" }
  $2 == "PASS" && !ox && ($3 in known) { xp[++nxp] = $3 }
  $1 != "PASS" && $2 != "PASS" { both[++nboth] = $3 " (baseline " $1 ", ours " $2 ")" }
  END {
    printf "\t\t=== check-libgomp Summary ===\n\n" > sum
    printf "# of expected passes\t\t%d\n", op + devp > sum
    printf "# of unexpected failures\t%d\n", nr + (total - n) > sum
    printf "# of unexpected successes\t%d\n", nxp + nxpass > sum
    printf "# of expected failures\t\t%d\n", nxf + ntxf > sum
    printf "# of untested testcases\t\t%d\n", nboth + uns + hostonly + ndf + notrun > sum
    close (sum)
    if (n != total) printf "check-libgomp: warning: %d of %d results missing\n", total - n, total
    print_list("\ncheck-libgomp: tests that pass in the baseline but not with ours:", reg, nr)
    print_list("check-libgomp: expected to fail in our configuration by the tests themselves (dg-xfail):", txf, ntxf)
    print_list("check-libgomp: known limits of the emulated device (check-libgomp.known):", xf, nxf)
    for (i = 1; i <= nxp; i++) printf "check-libgomp: %s passes now: take it off check-libgomp.known\n", xp[i]
    if (nkxpass) {
      printf "check-libgomp: known: output matched that the tests expect to miss on a GPU (XPASS), not counted as passed:\n"
      for (i = 1; i <= nkxpass; i++) printf "  %s\n", kxpass[i]
    }
    for (i = 1; i <= nxpass; i++) printf "check-libgomp: %s: output matched that the test expects to miss (XPASS): list it in check-libgomp.known with the reason if that is right\n", xpass[i]
    print_list("check-libgomp: tests that pass with ours but not in the baseline:", better, nb)
    if (listboth)
      print_list("check-libgomp: tests that fail in both:", both, nboth)
    print_list("check-libgomp: device-only tests (need a device with separate memory; ours only, not counted above) that fail with ours:", devf, ndf)
    printf "\ncheck-libgomp: device-only tests: %d run with ours, %d passed\n", dev, devp
    if (skipped) printf "check-libgomp: the baseline was run only where ours did not pass (--baseline failures): %d of the %d tests run with ours\n", run - skipped, run
    printf "check-libgomp: %d tests (%d %s, %d device-only, %d host-only, %d unsupported): baseline passed %d%s, ours passed %d, regressions %d, known limits %d (%d s)\n", n, run, skipped ? "compared" : "run on both", dev, hostonly, uns, bp, skipped ? sprintf (" of %d run", run - skipped) : "", op, nr, nxf, secs
    if (accrun) printf "check-libgomp: OpenACC: %d instances run with ours, %d passed (%.1f%%); %d more failed as the tests expect it (dg-xfail): %d as expected (%.1f%%)%s\n", accrun, accpass, 100 * accpass / accrun, accxfail, accpass + accxfail, 100 * (accpass + accxfail) / accrun, accxpass ? sprintf ("; %d more matched output the tests expect to miss (XPASS, not counted)", accxpass) : ""
    if (notrun) printf "check-libgomp: %d tests NOT RUN: the --deadline passed\n", notrun
    exit (nr > 0 || nxp > 0 || nxpass > 0 || n != total || notrun) ? 1 : 0
  }' "$3" "$1"
}

# ------------------------------------------------------------ driver

srcdir= objdir= topbuild= jobs=2 timeout=60 filter= keep=0 device=0
baseline=failures
models=openmp,openacc
compile_only= run_only= results= base_libdir= ours_libdir= emulate= known=
tclsh_prog=tclsh deadline=
tarball=
while [ $# -gt 0 ]; do
  case $1 in
    --srcdir) srcdir=$2; shift 2;;
    --objdir) objdir=$2; shift 2;;
    --topbuild) topbuild=$2; shift 2;;
    --jobs) jobs=$2; shift 2;;
    --timeout) timeout=$2; shift 2;;
    --tarball) tarball=$2; shift 2;;
    --filter) filter=$2; shift 2;;
    --models) models=$2; shift 2;;
    --keep) keep=1; shift;;
    --baseline) baseline=$2; shift 2;;
    --device) device=1; shift;;
    --compile-only) compile_only=$2; shift 2;;
    --run-only) run_only=$2; shift 2;;
    --results) results=$2; shift 2;;
    --base-libdir) base_libdir=$2; shift 2;;
    --ours-libdir) ours_libdir=$2; shift 2;;
    --emulate) emulate=$2; shift 2;;
    --known) known=$2; shift 2;;
    --tclsh) tclsh_prog=$2; shift 2;;
    --deadline) deadline=$2; shift 2;;
    *) echo "check-libgomp: unknown argument '$1'" >&2; exit 2;;
  esac
done

die () { echo "check-libgomp: error: $*" >&2; exit 2; }
case $baseline in
  all|failures) ;;
  *) die "--baseline takes all or failures, not '$baseline'";;
esac

[ -n "$srcdir" ] || srcdir=$(dirname "$0")
srcdir=$(cd "$srcdir" && pwd) || exit 2

# ------------------------------------------------------------ --run-only

if [ -n "$run_only" ]; then
  kit=$(cd "$run_only" 2>/dev/null && pwd) || die "no kit directory '$run_only'"
  [ -f "$kit/manifest" ] || die "$kit/manifest missing: make the kit with --compile-only"
  [ -n "$results" ] || results=$kit/results
  # Only a directory of earlier results (or none) is replaced.
  if [ -d "$results" ] && [ -n "$(ls -A "$results")" ] \
     && [ ! -d "$results/jobs" ]; then
    die "$results exists and holds no earlier results: not replacing it"
  fi
  rm -rf "$results" && mkdir -p "$results/jobs" \
    && results=$(cd "$results" && pwd) || die "cannot create $results"
  if [ -z "$known" ]; then
    if [ -n "$emulate" ]; then known=$srcdir/check-libgomp.known
    else known=$results/no-known-limits; : > "$known"; fi
  fi
  [ -f "$known" ] || die "no file '$known' (--known)"
  if [ -n "$(find "$kit/jobs" -name 'output-*.re' | head -n 1)" ]; then
    command -v "$tclsh_prog" > /dev/null \
      || die "'$tclsh_prog' not found: tclsh is needed to match dg-output (give --tclsh PROG)"
  fi
  for d in "$base_libdir" "$ours_libdir"; do
    [ -z "$d" ] || [ -d "$d" ] || die "no directory '$d'"
  done
  [ -z "$ours_libdir" ] || [ -f "$ours_libdir/libgomp-plugin-nvptx.so.1" ] \
    || die "no libgomp-plugin-nvptx.so.1 in '$ours_libdir'"
  CLG_KIT=$kit CLG_RESULTS=$results CLG_TIMEOUT=$timeout
  CLG_BASE_LD_PATH=$base_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  CLG_OURS_LD_PATH=$ours_libdir${base_libdir:+:$base_libdir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  CLG_OURS_EMULATE=$emulate CLG_TCL=$srcdir/check-libgomp.tcl
  CLG_TCLSH=$tclsh_prog CLG_DEADLINE=$deadline
  export CLG_KIT CLG_RESULTS CLG_TIMEOUT CLG_BASE_LD_PATH CLG_OURS_LD_PATH \
    CLG_OURS_EMULATE CLG_TCL CLG_TCLSH CLG_DEADLINE
  total=$(wc -l < "$kit/manifest")
  sed 's/^/check-libgomp: kit: /' "$kit/plan-info" 2>/dev/null
  echo "check-libgomp: running $total test instances of $kit, $jobs parallel jobs, ${timeout}s run timeout"
  echo "check-libgomp: baseline LD_LIBRARY_PATH=$CLG_BASE_LD_PATH"
  echo "check-libgomp: ours LD_LIBRARY_PATH=$CLG_OURS_LD_PATH${emulate:+ OFFLOADKIT_EMULATE=$emulate}"
  printf '%-14s %-14s %s\n' BASELINE OURS TEST
  start=$(date +%s)
  xargs -P "$jobs" -n 1 sh "$0" --run-kit-job < "$kit/manifest"
  end=$(date +%s)
  cat "$results"/jobs/*/result > "$results/results.tsv" 2>/dev/null
  summarize "$results/results.tsv" "$results/check-libgomp.sum" "$known" \
    "$total" $((end - start)) 1
  status=$?
  echo "check-libgomp: results in $results/results.tsv; logs of failures under $results/jobs"
  exit $status
fi

# ------------------------------------------------------------ plan, compile

[ -n "$objdir" ] || objdir=$(pwd)
[ -n "$topbuild" ] || topbuild=$(cd "$objdir/.." && pwd)
objdir=$(cd "$objdir" && pwd) || exit 2
topbuild=$(cd "$topbuild" && pwd) || exit 2

gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
[ -n "$gcc_major" ] || die "no gcc on PATH"
if [ -z "$tarball" ]; then
  tarball=$(ls /usr/src/gcc-"$gcc_major"/gcc-*.tar.* 2>/dev/null | head -n 1)
  [ -n "$tarball" ] || tarball=/usr/src/gcc-$gcc_major/gcc-$gcc_major.tar.xz
fi
if [ ! -f "$tarball" ]; then
  die "$tarball not found: install Debian's gcc-$gcc_major-source package (the tests are taken from it at test time), or give --tarball FILE"
fi
command -v tclsh > /dev/null || die "tclsh is needed (Debian package tcl)"
stage=$topbuild/stage/
[ -x "$stage/accel/nvptx-none/mkoffload" ] \
  || die "$stage/accel/nvptx-none/mkoffload missing: run 'make' (or 'make check-libgomp' from the top build directory) first"
plugindir=$topbuild/libgomp-plugin/.libs
[ -f "$plugindir/libgomp-plugin-nvptx.so.1" ] \
  || die "$plugindir/libgomp-plugin-nvptx.so.1 missing: run 'make' first"

# --compile-only works apart, so that it never disturbs a full run.
work=$objdir/tmp/check-libgomp${compile_only:+-compile}
rm -rf "$work" && mkdir -p "$work/src" "$work/jobs" "$work/tmpdir" \
  || die "cannot create $work"
# GCC's tools (collect2, GCC's gcn mkoffload) leave empty temporary files
# behind: the compiles and runs get a TMPDIR of their own, here.
TMPDIR=$work/tmpdir
export TMPDIR

echo "check-libgomp: extracting libgomp/testsuite from $tarball"
# Also GCC's include/gomp-constants.h, which some tests include (GCC's
# testsuite compiles them with -I of that directory), and the compiler
# tests of OpenACC that some run tests include by their relative path
# (../../../gcc/testsuite/c-c++-common/goacc/cache-1.c).
tar -xf "$tarball" -C "$work/src" --wildcards '*/libgomp/testsuite/*' \
  '*/include/gomp-constants.h' '*/gcc/testsuite/c-c++-common/goacc/*' \
  '*/gcc/testsuite/g++.dg/goacc/*' '*/gcc/testsuite/gfortran.dg/goacc/*' \
  || die "cannot extract libgomp/testsuite from $tarball"
root=$(find "$work/src" -maxdepth 3 -type d -path '*/libgomp/testsuite' | head -n 1)
[ -n "$root" ] || die "no libgomp/testsuite in $tarball"
CLG_INCLUDE=-I$(cd "$root/../../include" && pwd) \
  || die "no include/gomp-constants.h in $tarball"
export CLG_INCLUDE

cat <<'EOF'
check-libgomp: selection rule (OpenMP, --models openmp): a file of
  libgomp.c, libgomp.c++, libgomp.c-c++-common or libgomp.fortran (with
  subdirectories) is a test when it has a line starting '#pragma omp target',
  '#pragma omp declare target' (Fortran: '!$omp target', '!$omp declare
  target', case-insensitive), its dg-do is run (the default; dg-do
  compile/link files are left out), no file names it in
  dg-additional-sources and, for C/C++, it defines main.
  libgomp.c-c++-common tests run twice, as C and as C++.  Options: -O2 unless
  dg-options says otherwise, plus dg-additional-options and -I of GCC's
  include/ (for gomp-constants.h) (Fortran runs once,
  at -O2, not over GCC's torture list, linked with -foffload=-lgfortran as
  GCC's testsuite does).  Selectors are evaluated once for
  both pipelines as on the baseline machine: offload_target_nvptx true,
  offload_device* false.  Tests that are unsupported only for want of
  offload_device / offload_device_nonshared_as run with ours alone
  (DEVICE-ONLY, with those true) and are reported separately.
check-libgomp: OpenACC (--models openacc): every run test of
  libgomp.oacc-c, libgomp.oacc-c++, libgomp.oacc-c-c++-common (as C and
  as C++) and libgomp.oacc-fortran, at -O0 and at -O2, configured as GCC's
  OpenACC testsuite configures a device type: the baseline as its host
  configuration (-fopenacc -foffload=disable -DACC_DEVICE_TYPE_host=1
  -DACC_MEM_SHARED=1, ACC_DEVICE_TYPE=host), ours as an nvidia device
  with memory of its own (-fopenacc -foffload=nvptx-none
  -DACC_DEVICE_TYPE_nvidia=1 -DACC_MEM_SHARED=0, ACC_DEVICE_TYPE=nvidia,
  the emulated device), each with its own selectors
  (openacc_host_selected, openacc_nvidia_accel_selected, skip and xfail
  lists by options); tests of CUDA's libraries (openacc_cuda, _cublas,
  _cudart) are unsupported.
EOF

if [ $device = 1 ]; then
  echo "check-libgomp: --device: selectors as on a machine with an offload device"
  echo "  (offload_device and offload_device_nonshared_as true for both pipelines;"
  echo "  no device-only tests)."
  planmode=device
else
  planmode=
fi
if [ -n "$compile_only" ]; then
  mkdir -p "$compile_only" && kit=$(cd "$compile_only" && pwd) \
    || die "cannot create $compile_only"
  if [ -d "$kit/jobs" ] && [ ! -f "$kit/manifest" ]; then
    die "$kit/jobs exists but is no kit of this script: not replacing it"
  fi
  rm -rf "$kit/jobs" "$kit/results" "$kit/manifest" && mkdir -p "$kit/jobs" \
    || die "cannot create $kit/jobs"
  jobroot=$kit/jobs
else
  jobroot=$work/jobs
fi
case ,$models, in
  *,openmp,*|*,openacc,*) ;;
  *) die "--models takes openmp, openacc or both, comma-separated";;
esac
# The generation of the libgomp the programs run with (the plan's
# omp_usm): the newest symbol-version node of the libgomp.so gcc links,
# as the plugins read it (GOMP_6.0 came with GCC 15, GOMP_6.0.1 with 16).
libgomp_major () {
  lib=$(gcc -print-file-name=libgomp.so)
  nodes=$(tr '\000' '\n' < "$lib" 2>/dev/null | grep -x 'GOMP_[0-9.]*' | sort -u)
  for pair in 16:GOMP_6.0.1 15:GOMP_6.0 14:GOMP_5.1.2 13:GOMP_5.1.1; do
    if echo "$nodes" | grep -qx "${pair#*:}"; then
      echo "${pair%%:*}"
      return
    fi
  done
  echo 12
}
CLG_LIBGOMP_MAJOR=$(libgomp_major)
export CLG_LIBGOMP_MAJOR
tclsh "$srcdir/check-libgomp.tcl" plan "$root" "$jobroot" "$filter" \
  "${planmode:--}" "$models" > "$work/joblist" || die "planning failed"

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
# A link of ours builds cubins for three architectures: GCC's largest
# tests (for-3.c, for-5.c) take a minute or two of two CPUs with an empty
# cache, two at a time.
CLG_COMPILE_TIMEOUT=$((timeout * 5))
CLG_TCL=$srcdir/check-libgomp.tcl
CLG_KEEP=$keep
CLG_BASELINE=$baseline
# Name the plugin: the build's plugin directory has our gcn plugin too, and
# a plain count would give it an emulated device without these programs'
# images (libgomp counts the devices of every plugin it loads).
CLG_OURS_EMULATE=nvptx:1
CLG_TCLSH=tclsh
# Each link's peak memory: "peak-rss FILE" before the command.
CLG_PEAK_RSS=
[ -x "$topbuild/testsuite/tools/peak-rss" ] &&
  CLG_PEAK_RSS="$topbuild/testsuite/tools/peak-rss peak-rss"
# Ours is linked as users link: mkoffload's default, cubins from NVIDIA's
# ptxas and nvlink where they are installed (the emulated device checks
# them all when it loads the image), with their cache on, shared with
# make check's builds: $OFFLOADKIT_TEST_CACHE_DIR, else in the build tree,
# unless the caller names one (OFFLOADKIT_CACHE_DIR).
if [ -z "${OFFLOADKIT_CACHE_DIR+set}" ]; then
  OFFLOADKIT_CACHE_DIR=${OFFLOADKIT_TEST_CACHE_DIR:-$objdir/cubin-cache}
  export OFFLOADKIT_CACHE_DIR
fi
export CLG_NOPTXAS_PATH CLG_BASE_LD_PATH CLG_OURS_LD_PATH CLG_STAGE \
  CLG_TIMEOUT CLG_COMPILE_TIMEOUT CLG_TCL CLG_KEEP CLG_OURS_EMULATE \
  CLG_TCLSH CLG_PEAK_RSS CLG_BASELINE

total=$(wc -l < "$work/joblist")

if [ -n "$compile_only" ]; then
  echo "check-libgomp: compiling $total test instances into $kit, $jobs parallel jobs"
  printf '%-14s %-14s %s\n' BASELINE OURS TEST
  start=$(date +%s)
  xargs -P "$jobs" -n 1 sh "$0" --compile-job < "$work/joblist"
  end=$(date +%s)
  # The manifest names the job directories relative to KIT/jobs, so that
  # the kit can be moved.
  sed 's|.*/||' "$work/joblist" > "$kit/manifest"
  {
    echo "compiled $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n) in $((end - start)) s"
    echo "gcc $(gcc -dumpfullversion 2>/dev/null)"
    echo "plan: $([ $device = 1 ] && echo 'device (offload_device* true for both)' || echo 'host-fallback baseline, device-only tests for ours')${filter:+, filter $filter}"
    echo "OFFLOADKIT_NVPTX_SASS ${OFFLOADKIT_NVPTX_SASS-(unset: mkoffload default)}"
    echo "instances $total"
  } > "$kit/plan-info"
  built=$(cat "$kit"/jobs/*/*/status 2>/dev/null | grep -c '^BUILT$')
  cfail=$(cat "$kit"/jobs/*/*/status 2>/dev/null | grep -c '^FAIL:compile$')
  echo "check-libgomp: $total instances compiled into $kit: $built binaries, $cfail compile failures ($((end - start)) s)"
  rm -rf "$work/src"
  exit 0
fi

echo "check-libgomp: $total test instances, $jobs parallel jobs, ${timeout}s run timeout"
printf '%-14s %-14s %s\n' BASELINE OURS TEST
start=$(date +%s)
xargs -P "$jobs" -n 1 sh "$0" --job < "$work/joblist"
end=$(date +%s)

# ------------------------------------------------------------ summary

cat "$work"/jobs/*/result > "$work/results.tsv" 2>/dev/null
# The links' peak memory: the largest of each pipeline, and ours over
# 1 GiB.
cat "$work"/jobs/*/peak > "$work/peak-rss.tsv" 2>/dev/null
if [ -s "$work/peak-rss.tsv" ]; then
  awk -F '\t' '
    function show(kb) { return sprintf("%.0f MiB", kb / 1024) }
    $1 != "-" && $1 + 0 > bmax { bmax = $1 + 0; bid = $3 }
    $2 != "-" && $2 + 0 > omax { omax = $2 + 0; oid = $3 }
    $2 != "-" && $2 + 0 > 1048576 { over = over "\n  " show($2) "  " $3; n++ }
    END {
      printf "check-libgomp: peak memory of a link'"'"'s largest process: ours %s (%s), baseline %s (%s); ours over 1 GiB: %d%s\n",
        show(omax), oid, show(bmax), bid, n, over
    }' "$work/peak-rss.tsv"
fi
# Where the time went: each pipeline's compiles and runs added up, and the
# slowest test instances (CPU-bound work, two or more at a time).
cat "$work"/jobs/*/times > "$work/times.tsv" 2>/dev/null
if [ -s "$work/times.tsv" ]; then
  awk -F '\t' -v bytest="$work/times-by-test.tsv" '
    { c[$1] += $2; r[$1] += $3; n[$1]++; t[$4] += $2 + $3 }
    END {
      for (w in c)
        printf "check-libgomp: time of %s: %d compiles %.0f s, runs %.0f s\n",
          w == "base" ? "the baseline" : "ours", n[w], c[w] / 1000, r[w] / 1000
      for (id in t) printf "%d\t%s\n", t[id], id > bytest
    }' "$work/times.tsv"
  echo "check-libgomp: the slowest test instances (compiles and runs of both pipelines):"
  sort -rn "$work/times-by-test.tsv" | head -n 5 \
    | awk -F '\t' '{ printf "  %6.1f s  %s\n", $1 / 1000, $2 }'
fi
# Results also go to OBJDIR/check-libgomp.sum in DejaGnu's format, which
# CI adds up with the other .sum files.
# The known limits: those of every version, then those of this GCC's
# tests (check-libgomp-N.known), if it has any.
cat "$srcdir/check-libgomp.known" > "$work/known"
[ ! -f "$srcdir/check-libgomp-$gcc_major.known" ] \
  || cat "$srcdir/check-libgomp-$gcc_major.known" >> "$work/known"
summarize "$work/results.tsv" "$objdir/check-libgomp.sum" \
  "$work/known" "$total" $((end - start)) 0
status=$?
echo "check-libgomp: results in $work/results.tsv; logs of failures under $work/jobs"
rm -rf "$work/src"
exit $status
