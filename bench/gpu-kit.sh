#! /bin/sh
# bench/gpu-kit.sh: the kit for a GPU machine that has the NVIDIA driver
# but no GCC, no Debian offload packages and perhaps no network
# (doc/gpu-runs.md).  Everything is compiled here; there only sh,
# coreutils, awk, xargs, tar, xz or python3, and the kit's own files are
# used, from a copy of the repository's working tree with the kit in it.
#
#   bench/gpu-kit.sh build KIT [--topbuild BUILD] [--jobs N] [--sass LIST]
#                    [--filter RE] [--no-libgomp] [--compile-timeout S]
#                    [--max-size MIB]
#       Compiles into KIT (best a directory inside the repository that git
#       ignores, such as gpu-kit, so that one copy of the working tree
#       takes it along) one compressed payload, KIT/payload.tar.xz, holding
#         lib/ours      our libgomp-plugin-nvptx.so.1
#         lib/gcc       Debian's libgomp.so.1 and libgomp-plugin-nvptx.so.1
#                       (GCC 12's plugin ABI), libgfortran.so.5,
#                       libquadmath.so.0
#         lib/fallback  libstdc++.so.6, libgcc_s.so.1 (used only where the
#                       machine has none)
#         tools         tclsh (dg-output matching), with its library
#         bench         bench/run.sh's binaries, both pipelines
#         tests         offloadkit's own run tests (testsuite/offloadkit.c,
#                       .c++, .fortran), through our pipeline
#         libgomp       GCC 12's libgomp offloading tests, both pipelines
#                       (check-libgomp.sh --compile-only --device)
#       and KIT/kit-info (commit, gcc, cubins, glibc needed, sizes).
#       Our binaries get cubins for --sass LIST (OFFLOADKIT_NVPTX_SASS;
#       default sm_90, i.e. H100/H200-class GPUs; "default" keeps
#       mkoffload's own default, "none" PTX only).  BUILD (default
#       REPO/build) is an offloadkit build tree where `make` and `make
#       stage/accel/nvptx-none/mkoffload` have run; --jobs N (default 2)
#       compiles GCC's tests N at a time; --filter RE keeps only the GCC
#       tests whose names match; --no-libgomp leaves them out;
#       --compile-timeout S (default 600, rounded up to a multiple of 3)
#       limits each of their compiles: cubins at ptxas -O3 take minutes for
#       the largest tests on a loaded machine, and a compile that hits the
#       limit counts as a failure of that pipeline.  Prints the
#       kit's size; with --max-size MIB (default: no limit) the build fails
#       when the kit is larger, for a way of copying that has a size limit.
#
#   bench/gpu-kit.sh run KIT [--out DIR] [--only PARTS] [--jobs N]
#                    [--timeout S] [--budget S] [--quick] [--emulate]
#       On the GPU machine, from the copy of the working tree: unpacks the
#       payload (under $TMPDIR, removed at the end) and runs PARTS
#       (comma-separated, default tests,libgomp,bench).  The results go to
#       DIR (default KIT/results; it must not hold an earlier run's results)
#       as a handful of files, none in subdirectories, so that they are
#       easy to copy back:
#         summary.md       device, nvidia-smi -L, pass counts per suite and
#                          pipeline, failures, the benchmark table
#         bench.md         the benchmark table (for bench/results/)
#         tests.tsv        offloadkit tests: status, test, devices, env
#         libgomp.tsv      GCC's tests: baseline, ours, test
#         libgomp.txt      check-libgomp.sh's report
#         logs.tar.gz      logs of every failure and of the benchmarks
#       With no GPU (or --emulate) our binaries run on the emulated device
#       and GCC's on host fallback: a dry run of the plumbing.
#       --jobs N (default 8): GCC's tests run N at a time.
#       --timeout S (default 120): limit of each test run, in seconds.
#       --budget S (default: none): for a GPU machine that is available for
#       a limited time.  GCC's tests that would start more than S seconds
#       after the run began, less 150 s kept for the benchmarks when they
#       follow, are reported NOT-RUN, so that the whole run takes about S
#       seconds (plus at most one --timeout).  Without it every test runs.
#       --quick: fewer benchmark runs and a smaller transfer (plumbing).
#
# How the offloadkit tests meet the machine's G GPUs: a test that asks for
# N devices (dg-set-target-env-var OFFLOADKIT_EMULATE N; else 1) runs on
# the first N GPUs (CUDA_VISIBLE_DEVICES) when G >= N, else on all G GPUs
# plus N-G emulated devices; always with OMP_TARGET_OFFLOAD=mandatory and
# OFFLOADKIT_TEST_DEVICES=N (the device count the tests' checks expect).
#
# Exit status: 0 when everything built (build) or ran with no failure
# (run), 1 when tests failed or a benchmark broke, 2 on setup errors.

set -u

die () { echo "gpu-kit: error: $*" >&2; exit 2; }
note () { echo "gpu-kit: $*"; }

here=$(cd "$(dirname "$0")" && pwd) || exit 2
repo=$(cd "$here/.." && pwd)

case ${1:-} in
  -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0;;
esac
[ $# -ge 2 ] || die "usage: gpu-kit.sh build|run KIT [options] (gpu-kit.sh --help)"
action=$1 kit=$2
shift 2

# ================================================================== build

# Plan and compile offloadkit's own run tests into $1 (a directory):
# one job directory per test with a.out, env (NAME=VALUE lines), name,
# shouldfail, exitstatus (dg-exit-status; empty: none), output.re
# (dg-output), and a manifest.
build_tests () {
  dest=$1
  mkdir -p "$dest/jobs"
  : > "$dest/manifest"
  n=0 fails=0
  for f in "$repo"/testsuite/offloadkit.c/*.c \
           "$repo"/testsuite/offloadkit.c++/*.C \
           "$repo"/testsuite/offloadkit.fortran/*.f90; do
    [ -f "$f" ] || continue
    case $f in *-aux.*) continue;; esac
    rel=${f#"$repo"/testsuite/}
    # dg-do: run unless it says otherwise.
    do_=$(sed -n 's/.*{ *dg-do  *\([a-z]*\).*/\1/p' "$f" | head -n 1)
    [ -z "$do_" ] || [ "$do_" = run ] || continue
    case $f in
      *.c) drv=gcc;; *.C) drv=g++;; *) drv=gfortran;;
    esac
    opts=$(sed -n 's/.*{ *dg-options  *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
    srcs=$f
    for s in $(sed -n 's/.*{ *dg-additional-sources  *"\([^"]*\)".*/\1/p' "$f"); do
      srcs="$srcs $(dirname "$f")/$s"
    done
    n=$((n + 1))
    jd=$dest/jobs/$(printf '%03d' $n)-$(echo "$rel" | tr -c 'A-Za-z0-9_.+\n-' _)
    mkdir -p "$jd"
    echo "$rel" > "$jd/name"
    sed -n 's/.*{ *dg-set-target-env-var  *\([A-Za-z_][A-Za-z0-9_]*\)  *\([^ }]*\) *}.*/\1=\2/p' \
      "$f" > "$jd/env"
    # The kit builds for nvptx-none: directives whose target selector is
    # offload_amdgcn are not its.
    # dg-device-exit N, as lib/offloadkit.exp reads it for nvptx-none:
    # the exit traps, the plugin says so, and the program fails.
    dirs=$(grep '{ *dg-' "$f" | grep -v 'offload_amdgcn')
    if echo "$dirs" | grep -q '{ *dg-\(shouldfail\|device-exit\)'; then
      echo 1; else echo 0; fi > "$jd/shouldfail"
    echo "$dirs" | sed -n 's/.*{ *dg-exit-status  *\([0-9]*\).*/\1/p' \
      | tail -n 1 > "$jd/exitstatus"
    # DejaGnu joins the patterns as they are, in the file's order.
    re=$(echo "$dirs" | sed -n -e 's/.*{ *dg-output  *"\([^"]*\)".*/\1/p' \
      -e 's/.*{ *dg-device-exit .*/libgomp: cuStreamSynchronize error: unspecified launch failure .perhaps abort was called./p' \
      | tr -d '\n')
    [ -z "$re" ] || printf '%s' "$re" > "$jd/output.re"
    # Directives this planner does not understand make the test fail
    # visibly rather than run differently from make check.
    other=$(grep -o '{ *dg-[a-z-]*' "$f" | sed 's/{ *//' | sort -u \
      | grep -v -x -e dg-do -e dg-options -e dg-additional-sources \
          -e dg-set-target-env-var -e dg-shouldfail -e dg-output \
          -e dg-exit-status -e dg-device-exit)
    fflags=
    [ $drv = gfortran ] && fflags="-J$jd"
    # shellcheck disable=SC2086 # word lists
    if [ -n "$other" ]; then
      echo "unsupported directive(s): $other" > "$jd/compile.log"
      echo FAIL:plan > "$jd/status"
    elif $drv -fopenmp -foffload=nvptx-none -B"$topbuild/stage/" -O2 \
         -I"$repo/testsuite/lib" $fflags $opts $srcs -o "$jd/a.out" \
         > "$jd/compile.log" 2>&1 < /dev/null; then
      echo BUILT > "$jd/status"
      rm -f "$jd/compile.log" "$jd"/*.mod
    else
      echo FAIL:compile > "$jd/status"
      fails=$((fails + 1))
    fi
    printf '%-14s %s\n' "$(cat "$jd/status")" "$rel"
    basename "$jd" >> "$dest/manifest"
  done
  note "offloadkit tests: $n planned, $fails compile failures"
}

# Copy library $1 (a SONAME, found the way gcc links it) into $2.
copy_lib () {
  lp=$(gcc -print-file-name="$1")
  [ -f "$lp" ] || lp=/usr/lib/x86_64-linux-gnu/$1
  [ -f "$lp" ] || die "$1 not found (is Debian's libgomp1/libgfortran5 installed?)"
  cp -L "$lp" "$2/$1" || die "cannot copy $lp"
}

do_build () {
  topbuild= jobs=2 sass=sm_90 filter= libgomp=1 maxsize= ctimeout=600
  while [ $# -gt 0 ]; do
    case $1 in
      --topbuild) topbuild=$2; shift 2;;
      --jobs) jobs=$2; shift 2;;
      --sass) sass=$2; shift 2;;
      --filter) filter=$2; shift 2;;
      --no-libgomp) libgomp=0; shift;;
      --max-size) maxsize=$2; shift 2;;
      --compile-timeout) ctimeout=$2; shift 2;;
      *) die "unknown build option '$1'";;
    esac
  done
  case $maxsize in
    ''|*[!0-9]*) [ -z "$maxsize" ] || die "--max-size takes a whole number of MiB";;
  esac
  case $ctimeout in
    ''|*[!0-9]*|0) die "--compile-timeout takes a positive number of seconds";;
  esac
  [ -n "$topbuild" ] || topbuild=$repo/build
  topbuild=$(cd "$topbuild" 2>/dev/null && pwd) || die "no build directory '$topbuild' (--topbuild)"
  [ -x "$topbuild/stage/accel/nvptx-none/mkoffload" ] \
    || die "$topbuild/stage/accel/nvptx-none/mkoffload missing: run 'make stage/accel/nvptx-none/mkoffload' (or make check) in $topbuild"
  plugin=$topbuild/libgomp-plugin/.libs/libgomp-plugin-nvptx.so.1
  [ -f "$plugin" ] || die "$plugin missing: run make in $topbuild"
  debplugin=/usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1
  [ -f "$debplugin" ] || die "$debplugin missing: install Debian's libgomp-plugin-nvptx1"
  command -v xz > /dev/null || die "xz is needed (Debian package xz-utils)"
  case $sass in
    default) unset OFFLOADKIT_NVPTX_SASS;;
    *) OFFLOADKIT_NVPTX_SASS=$sass; export OFFLOADKIT_NVPTX_SASS;;
  esac

  mkdir -p "$kit" && kit=$(cd "$kit" && pwd) || die "cannot create $kit"
  case $kit/ in
    "$repo"/*) (cd "$repo" && git check-ignore -q "$kit/payload.tar.xz") \
        || note "warning: $kit is not ignored by git (gpu-kit is): git status will list it";;
  esac
  start=$(date +%s)
  p=$kit/payload
  rm -rf "$p" "$kit/payload.tar.xz" "$kit/kit-info"
  mkdir -p "$p/lib/ours" "$p/lib/gcc" "$p/lib/fallback" "$p/tools/lib" \
    "$p/tools/tcl8.6" || die "cannot create $p"

  note "libraries"
  cp -L "$plugin" "$p/lib/ours/" || die "cannot copy $plugin"
  cp -L "$debplugin" "$p/lib/gcc/" || die "cannot copy $debplugin"
  for l in libgomp.so.1 libgfortran.so.5 libquadmath.so.0; do
    copy_lib $l "$p/lib/gcc"
  done
  for l in libstdc++.so.6 libgcc_s.so.1; do copy_lib $l "$p/lib/fallback"; done

  note "tclsh"
  tclsh=$(command -v tclsh8.6 || command -v tclsh) || die "tclsh not found (Debian package tcl8.6)"
  tclsh=$(readlink -f "$tclsh")
  cp "$tclsh" "$p/tools/tclsh.bin"
  libtcl=$(ldd "$tclsh" | sed -n 's/.*libtcl[^ ]* => \([^ ]*\).*/\1/p')
  [ -f "$libtcl" ] && cp -L "$libtcl" "$p/tools/lib/" || die "libtcl not found"
  tcllib=$(echo 'puts [info library]' | "$tclsh")
  for t in init.tcl auto.tcl package.tcl tclIndex tm.tcl word.tcl history.tcl; do
    [ -f "$tcllib/$t" ] && cp "$tcllib/$t" "$p/tools/tcl8.6/"
  done
  cat > "$p/tools/tclsh" <<'EOF'
#! /bin/sh
# The kit's tclsh: its own library and init scripts.
d=$(cd "$(dirname "$0")" && pwd)
TCL_LIBRARY=$d/tcl8.6 LD_LIBRARY_PATH=$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  exec "$d/tclsh.bin" "$@"
EOF
  chmod +x "$p/tools/tclsh"
  echo 'exit [expr {[regexp {a.c} abc] ? 0 : 1}]' > "$p/tools/selftest.tcl"
  "$p/tools/tclsh" "$p/tools/selftest.tcl" || die "the kit's tclsh does not run here"

  note "benchmarks"
  sh "$here/run.sh" --build-only --topbuild "$topbuild" --work "$p/bench" \
    || die "building the benchmarks failed"

  note "offloadkit's run tests (OFFLOADKIT_NVPTX_SASS=${OFFLOADKIT_NVPTX_SASS-default})"
  build_tests "$p/tests"

  if [ $libgomp = 1 ]; then
    note "GCC 12's libgomp tests, both pipelines"
    mkdir -p "$topbuild/testsuite"
    # check-libgomp.sh's compile limit is three times its --timeout.
    sh "$repo/testsuite/check-libgomp.sh" --compile-only "$p/libgomp" \
      --device --srcdir "$repo/testsuite" --objdir "$topbuild/testsuite" \
      --topbuild "$topbuild" --jobs "$jobs" ${filter:+--filter "$filter"} \
      --timeout $(( (ctimeout + 2) / 3 )) \
      > "$kit/libgomp-compile.log" 2>&1 \
      || { tail -n 20 "$kit/libgomp-compile.log"; die "check-libgomp.sh --compile-only failed"; }
    tail -n 1 "$kit/libgomp-compile.log"
  fi

  # What the run needs of the C library: the newest GLIBC_ version any
  # carried file asks for.
  # (lib/fallback is used only where the machine has no libstdc++ or
  # libgcc_s, hence a C library at least as old as ours: not counted.)
  glibc=$(find "$p" -path "$p/lib/fallback" -prune -o -type f \
      \( -perm -u+x -o -name '*.so*' \) -print | while read -r f; do
      objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*'
    done | sort -u -t. -k1,1 -k2,2n -k3,3n | tail -n 1)
  raw=$(du -sk "$p" | cut -f1)
  {
    echo "built $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n) from $repo"
    echo "commit $(cd "$repo" && git describe --always --dirty 2>/dev/null || echo unknown)"
    echo "gcc $(gcc -dumpfullversion)"
    echo "OFFLOADKIT_NVPTX_SASS ${OFFLOADKIT_NVPTX_SASS-(mkoffload default)}"
    echo "needs ${glibc:-GLIBC_?} or newer"
    echo "payload $raw KiB before compression"
    [ $libgomp = 1 ] && echo "libgomp compile limit $(( (ctimeout + 2) / 3 * 3 )) s"
    [ -f "$p/libgomp/plan-info" ] && sed 's/^/libgomp: /' "$p/libgomp/plan-info"
  } > "$p/kit-info"
  note "compressing $raw KiB"
  (cd "$p" && tar -cf - .) | xz -T2 -6 > "$kit/payload.tar.xz" \
    || die "compressing the payload failed"
  cp "$p/kit-info" "$kit/kit-info"
  rm -rf "$p"
  size=$(du -sk "$kit" | cut -f1)
  echo "kit $size KiB in all" >> "$kit/kit-info"
  cat "$kit/kit-info"
  note "built $kit in $(( $(date +%s) - start )) s: $size KiB"
  if [ -n "$maxsize" ] && [ "$size" -gt $((maxsize * 1024)) ]; then
    note "error: the kit is larger than --max-size $maxsize MiB"; exit 1
  fi
}

# ================================================================== run

# Unpack KIT's payload into a fresh directory; sets $p.
unpack () {
  [ -f "$kit/payload.tar.xz" ] || die "$kit/payload.tar.xz missing: run 'gpu-kit.sh build' first"
  p=${TMPDIR:-/tmp}/offloadkit-kit.$$
  rm -rf "$p" && mkdir -p "$p" || die "cannot create $p"
  if command -v xz > /dev/null; then
    xz -dc "$kit/payload.tar.xz" | tar -xf - -C "$p"
  elif command -v python3 > /dev/null; then
    # No xz on the machine: Python's lzma and tarfile do the same.
    python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[1], "r:xz")
kw = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
t.extractall(sys.argv[2], **kw)' \
      "$kit/payload.tar.xz" "$p"
  else
    die "neither xz nor python3 here to unpack the kit"
  fi || die "unpacking the kit failed"
}

# Library path for GCC's binaries (Debian's libgomp and plugin), plus the
# fallback libraries the machine lacks; sets $gccld and $oursld.  The
# machine's own LD_LIBRARY_PATH ($userld; it may be how libcuda.so.1 is
# found) comes after them everywhere.
library_paths () {
  userld=${LD_LIBRARY_PATH:-}
  ldc=$(command -v ldconfig || echo /sbin/ldconfig)
  cache=$("$ldc" -p 2>/dev/null)
  fb=
  for l in "$p"/lib/fallback/*; do
    n=$(basename "$l")
    if ! printf '%s\n' "$cache" | grep -q "^[[:space:]]*$n "; then
      mkdir -p "$p/lib/missing" && cp "$l" "$p/lib/missing/"
      fb="$fb $n"
    fi
  done
  [ -z "$fb" ] || note "the machine lacks$fb: using the kit's"
  gccld=$p/lib/gcc
  [ -d "$p/lib/missing" ] && gccld=$gccld:$p/lib/missing
  oursld=$p/lib/ours:$gccld
}

# Run offloadkit's tests; results in $res/tests.tsv.
run_tests () {
  t=$p/tests
  rdir=$res/work/tests
  mkdir -p "$rdir"
  : > "$rdir/tests.tsv"
  while read -r j; do
    jd=$t/jobs/$j
    name=$(cat "$jd/name")
    st=$(cat "$jd/status")
    need=$(sed -n 's/^OFFLOADKIT_EMULATE=//p' "$jd/env" | tail -n 1)
    need=${need:-1}
    # Devices: the first NEED GPUs, or all GPUs and emulated ones.
    # libgfortran writes each line at once, as make check's runs have it.
    set -- OMP_TARGET_OFFLOAD=mandatory OFFLOADKIT_TEST_DEVICES="$need" \
      GFORTRAN_UNBUFFERED_PRECONNECTED=y \
      LD_LIBRARY_PATH="$oursld${userld:+:$userld}"
    if [ "$gpus" -ge "$need" ]; then
      vis=$(awk -v n="$need" 'BEGIN { for (i = 0; i < n; i++) printf "%s%d", i ? "," : "", i }')
      set -- "$@" CUDA_VISIBLE_DEVICES="$vis"
      how="gpu:$need"
      emu=
    else
      emu=$((need - gpus))
      how="gpu:$gpus+emulated:$emu"
    fi
    while IFS= read -r e; do
      case $e in OFFLOADKIT_EMULATE=*|'') ;; *) set -- "$@" "$e";; esac
    done < "$jd/env"
    [ -n "$emu" ] && set -- "$@" OFFLOADKIT_EMULATE="$emu"
    if [ "$st" = BUILT ]; then
      mkdir -p "$rdir/$j" && cd "$rdir/$j" || exit 2
      env -u OFFLOADKIT_EMULATE -u CUDA_VISIBLE_DEVICES "$@" \
        timeout -k 5 "$timeout" "$jd/a.out" > run.log 2>&1 < /dev/null
      rc=$?
      echo "exit status $rc" >> run.log
      cd "$res" || exit 2
      sf=$(cat "$jd/shouldfail")
      xs=$(cat "$jd/exitstatus" 2>/dev/null)
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then st=FAIL:timeout
      elif [ -n "$xs" ] && [ $rc -ne "$xs" ]; then st=FAIL:run
      elif [ -z "$xs" ] && [ "$sf" = 1 ] && [ $rc -eq 0 ]; then st=FAIL:run
      elif [ -z "$xs" ] && [ "$sf" = 0 ] && [ $rc -ne 0 ]; then st=FAIL:run
      elif [ -f "$jd/output.re" ] && ! "$p/tools/tclsh" \
          "$repo/testsuite/check-libgomp.tcl" match "$jd/output.re" \
          "$rdir/$j/run.log"; then st=FAIL:output
      else st=PASS; rm -rf "${rdir:?}/$j"
      fi
    else
      mkdir -p "$rdir/$j" && cp "$jd/compile.log" "$rdir/$j/" 2>/dev/null
    fi
    printf '%s\t%s\t%s\t%s\n' "$st" "$name" "$how" "$(tr '\n' ' ' < "$jd/env")" \
      >> "$rdir/tests.tsv"
    printf '%-14s %-22s %s\n' "$st" "$how" "$name"
  done < "$t/manifest"
  cp "$rdir/tests.tsv" "$res/tests.tsv"
}

do_run () {
  out= only=tests,libgomp,bench jobs=8 timeout=120 quick= emulate=0 budget=
  while [ $# -gt 0 ]; do
    case $1 in
      --out) out=$2; shift 2;;
      --only) only=$2; shift 2;;
      --jobs) jobs=$2; shift 2;;
      --timeout) timeout=$2; shift 2;;
      --quick) quick=--quick; shift;;
      --emulate) emulate=1; shift;;
      --budget) budget=$2; shift 2;;
      *) die "unknown run option '$1'";;
    esac
  done
  case $budget in
    ''|*[!0-9]*) [ -z "$budget" ] || die "--budget takes a whole number of seconds";;
  esac
  [ -f "$kit/payload.tar.xz" ] || die "$kit/payload.tar.xz missing: run 'gpu-kit.sh build' first"
  kit=$(cd "$kit" && pwd) || exit 2
  # The run uses the repository's scripts beside the kit.
  for f in "$here/run.sh" "$repo/testsuite/check-libgomp.sh" \
           "$repo/testsuite/check-libgomp.tcl"; do
    [ -f "$f" ] || die "$f missing: run the kit from a copy of the repository's working tree (doc/gpu-runs.md)"
  done
  [ -n "$out" ] || out=$kit/results
  mkdir -p "$out" && res=$(cd "$out" && pwd) || die "cannot create $out"
  for f in summary.md bench.md tests.tsv libgomp.tsv libgomp.txt logs.tar.gz; do
    [ ! -e "$res/$f" ] || die "$res holds an earlier run's results ($f): copy them away and remove them, or give another --out"
  done
  for t in timeout awk xargs sed tar; do
    command -v $t > /dev/null || die "$t is needed on this machine"
  done
  start=$(date +%s)
  unpack
  library_paths
  cat "$p/kit-info"
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/glibc /GLIBC_/')
  note "this machine: ${have:-glibc ?}, $(uname -r)"
  need=$(sed -n 's/^needs \(GLIBC_[0-9.]*\).*/\1/p' "$p/kit-info")
  if [ -n "$have" ] && [ -n "$need" ] && ! awk -v h="${have#GLIBC_}" \
       -v n="${need#GLIBC_}" 'BEGIN { split (h, a, "."); split (n, b, ".")
         exit !(a[1] > b[1] || (a[1] == b[1] && a[2] + 0 >= b[2] + 0)) }'; then
    note "warning: the kit needs $need, this machine has $have: binaries may not start"
  fi

  # The GPUs, as the plugins will see them.
  env LD_LIBRARY_PATH="$gccld${userld:+:$userld}" "$p/bench/tools/cuda-info" \
    > "$res/cuda-info.txt" 2>&1
  gpus=$(sed -n 's/^okb-cuda-devices //p' "$res/cuda-info.txt")
  gpus=${gpus:-0}
  [ $emulate = 1 ] && gpus=0
  smi=$(nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)")
  if [ "$gpus" -gt 0 ]; then
    mode="GPU run: $gpus CUDA device(s)"
  else
    mode="no GPU (dry run: ours on emulated devices, GCC's on host fallback; numbers meaningless)"
  fi
  note "$mode"

  failed=0
  mkdir -p "$res/work"
  summary=$res/summary.md
  {
    echo "# offloadkit GPU kit run, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- Mode: $mode"
    echo "- nvidia-smi -L: $smi"
    sed 's/^/- CUDA: /' "$res/cuda-info.txt"
    echo "- Machine: $(uname -n), $(uname -r), ${have:-glibc ?}, $(getconf _NPROCESSORS_ONLN) CPUs"
    sed 's/^/- Kit: /' "$p/kit-info"
    echo "- Parts run: $only"
    echo "- Run options: --jobs $jobs, --timeout $timeout, --budget ${budget:-none}${quick:+, --quick}"
  } > "$summary"

  case ,$only, in *,tests,*)
    note "offloadkit's run tests"
    run_tests
    {
      echo
      echo "## offloadkit's run tests (our pipeline, OMP_TARGET_OFFLOAD=mandatory)"
      echo
      awk -F '\t' '{ n++; c[$1]++ } $1 != "PASS" { f[++nf] = $1 " " $2 " [" $3 "]" }
        END { printf "%d tests: %d passed, %d failed\n", n, c["PASS"], n - c["PASS"]
              for (i = 1; i <= nf; i++) printf "\n- FAILED: %s", f[i]; print "" }' \
        "$res/tests.tsv"
    } >> "$summary"
    grep -qv '^PASS' "$res/tests.tsv" && failed=1;;
  esac

  case ,$only, in *,libgomp,*)
    if [ -f "$p/libgomp/manifest" ]; then
      note "GCC 12's libgomp tests, both pipelines"
      emu=
      [ "$gpus" -gt 0 ] || emu="--emulate 1"
      # With --budget, GCC's tests stop starting after the budget, less
      # what the benchmarks need (about two minutes), so that the run
      # ends in about the time given.
      deadline=
      if [ -n "$budget" ]; then
        reserve=0
        case ,$only, in *,bench,*) reserve=150;; esac
        deadline=$((start + budget - reserve))
      fi
      # shellcheck disable=SC2086 # emu is a word list
      sh "$repo/testsuite/check-libgomp.sh" --run-only "$p/libgomp" \
        --results "$res/work/libgomp" --jobs "$jobs" --timeout "$timeout" \
        --base-libdir "$gccld" --ours-libdir "$p/lib/ours" \
        --tclsh "$p/tools/tclsh" ${deadline:+--deadline "$deadline"} $emu \
        > "$res/libgomp.txt" 2>&1
      st=$?
      [ $st = 0 ] || failed=1
      cp "$res/work/libgomp/results.tsv" "$res/libgomp.tsv" 2>/dev/null
      tail -n 1 "$res/libgomp.txt"
      {
        echo
        echo "## GCC 12's libgomp tests (baseline: GCC's mkoffload + Debian's plugin; ours: our mkoffload + plugin)"
        echo
        awk -F '\t' '{ n++ } $1 == "PASS" { b++ } $2 == "PASS" { o++ }
          $1 == "UNSUPPORTED" { u++ } $1 == "NOT-RUN" { nr++ }
          END { printf "%d instances (%d unsupported, %d not run for time): baseline passed %d, ours passed %d\n", n, u, nr, b, o }' \
          "$res/libgomp.tsv" 2>/dev/null
        echo
        echo '```'
        sed -n '/^check-libgomp: tests that pass in the baseline/,$p' "$res/libgomp.txt"
        echo '```'
      } >> "$summary"
    else
      note "no libgomp tests in this kit"
    fi;;
  esac

  case ,$only, in *,bench,*)
    note "benchmarks"
    em=
    [ "$gpus" -gt 0 ] || em=--emulate
    # shellcheck disable=SC2086 # word lists
    sh "$here/run.sh" --run-only --work "$p/bench" --gcc-libdir "$gccld" \
      --ours-libdir "$p/lib/ours" --no-save --out "$res/bench.md" $quick $em \
      > "$res/work/bench.log" 2>&1 || failed=1
    cp -r "$p/bench/logs" "$res/work/bench-logs" 2>/dev/null
    { echo; echo "## Benchmarks"; echo; sed '1,2d' "$res/bench.md" 2>/dev/null \
        || echo "(no table: see logs.tar.gz, work/bench.log)"; } >> "$summary"
    cat "$res/bench.md" 2>/dev/null || tail -n 20 "$res/work/bench.log";;
  esac

  echo >> "$summary"
  echo "Run took $(( $(date +%s) - start )) s; exit status $failed." >> "$summary"
  (cd "$res/work" && tar -czf "$res/logs.tar.gz" .)
  rm -rf "$res/work" "$res/cuda-info.txt" "$p"
  note "results in $res: $(cd "$res" && ls | tr '\n' ' ')"
  sed -n '/^## /,$p' "$summary" | grep -v '^$' | head -n 60
  exit $failed
}

case $action in
  build) do_build "$@";;
  run) do_run "$@";;
  *) die "unknown action '$action': build or run";;
esac
