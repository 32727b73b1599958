#! /bin/sh
# bench/gcn-link.sh: time the amdgcn-amdhsa offload link through GCC's own
# mkoffload and through offloadkit's, on the same objects (doc/gcn.md).
#
#   bench/gcn-link.sh [--topbuild BUILD] [--runs N] [--cflags FLAGS]
#                     [--kernels K] [SOURCE...]
#
# --kernels K adds a generated program with K target regions (a bigger
# device image).  Each SOURCE (default, when neither is given:
# examples/hello-offload.c) is compiled once with
#   gcc -fopenmp -foffload=amdgcn-amdhsa FLAGS -c
# and the objects are then linked N times (default 5) each way, in turns:
#   gcc -fopenmp -foffload=amdgcn-amdhsa OBJS              (GCC's mkoffload)
#   gcc -fopenmp -foffload=amdgcn-amdhsa -B BUILD/stage/ OBJS    (ours)
# BUILD (default: the current directory) is a build tree where
# `make check` (or `make stage/accel/amdgcn-amdhsa/mkoffload`) has run.
# Prints the minimum and median wall time of each, the ratio of the minima
# (ours / GCC's; the goal is at most 0.3) and the size of the code object.
# Needs gcc-12-offload-amdgcn; GNU date (for nanoseconds) and awk.
#
# Exit status: 0 when every link succeeded, 2 on setup errors.

set -u

die () { echo "gcn-link: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find the script's directory"
top=$(dirname "$here")
build=$(pwd)
runs=5
cflags="-O2"
sources=""
kernels=0
while [ $# -gt 0 ]; do
  case $1 in
    --topbuild) [ $# -ge 2 ] || die "--topbuild needs a value"; build=$2; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --cflags) [ $# -ge 2 ] || die "--cflags needs a value"; cflags=$2; shift 2 ;;
    --kernels) [ $# -ge 2 ] || die "--kernels needs a value"; kernels=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1'" ;;
    *) sources="$sources $1"; shift ;;
  esac
done
case $runs in ''|*[!0-9]*|0) die "--runs wants a positive number" ;; esac
case $kernels in ''|*[!0-9]*) die "--kernels wants a number" ;; esac
[ -n "$sources" ] || [ "$kernels" -gt 0 ] \
  || sources="$top/examples/hello-offload.c"
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
stage="$build/stage/"
[ -x "${stage}accel/amdgcn-amdhsa/mkoffload" ] \
  || die "${stage}accel/amdgcn-amdhsa/mkoffload is missing: run 'make check' (or 'make stage/accel/amdgcn-amdhsa/mkoffload') in $build"

work=$(mktemp -d "${TMPDIR:-/tmp}/gcn-link.XXXXXX") || die "cannot create a work directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 2' INT TERM HUP

if [ "$kernels" -gt 0 ]; then
  # K functions, each with its own target region over two declare-target
  # arrays, and a main that calls them all.
  awk -v k="$kernels" 'BEGIN {
    print "#include <stdio.h>\ndouble a[1024], b[1024];"
    print "#pragma omp declare target(a, b)"
    for (i = 0; i < k; i++) {
      printf "double f%d (double s)\n{\n", i
      print "#pragma omp target teams distribute parallel for reduction(+:s) map(tofrom: s)"
      printf "  for (int j = 0; j < 1024; j++)\n"
      printf "    s += a[j] * %d + b[(j * %d) %% 1024] / (j + %d);\n", i + 1, i + 3, i + 1
      print "  return s;\n}"
    }
    print "int\nmain (void)\n{\n  double s = 0;"
    for (i = 0; i < k; i++)
      printf "  s += f%d (s);\n", i
    print "  printf (\"%g\\n\", s);\n  return 0;\n}"
  }' > "$work/kernels.c" || die "cannot generate the program"
  sources="$sources $work/kernels.c"
fi

objs=""
n=0
for s in $sources; do
  n=$((n + 1))
  # shellcheck disable=SC2086 # FLAGS is split on purpose.
  gcc -fopenmp -foffload=amdgcn-amdhsa $cflags -c "$s" -o "$work/in$n.o" \
    || die "cannot compile '$s'"
  objs="$objs $work/in$n.o"
done

now () { date +%s.%N; }

# link WHO: one link, its wall time in seconds on stdout.
link () {
  if [ "$1" = ours ]; then set -- -B "$stage"; else set --; fi
  t0=$(now)
  # shellcheck disable=SC2086
  gcc -fopenmp -foffload=amdgcn-amdhsa "$@" $objs -o "$work/a.out" \
    > "$work/log" 2>&1 || { cat "$work/log" >&2; die "a link failed"; }
  t1=$(now)
  echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
}

: > "$work/gcc.t"
: > "$work/ours.t"
i=0
while [ "$i" -lt "$runs" ]; do
  link gcc >> "$work/gcc.t"
  link ours >> "$work/ours.t"
  i=$((i + 1))
done

# The size of the code object our mkoffload builds (fiji).
mkdir "$work/keep" || die "cannot create $work/keep"
# shellcheck disable=SC2086
(cd "$work/keep" && gcc -fopenmp -foffload=amdgcn-amdhsa -B "$stage" \
   -save-temps $objs -o b.out > /dev/null 2>&1)
img=$(ls "$work"/keep/*.mkoffload.fiji.hsaco 2>/dev/null | head -n 1)
size=$( [ -n "$img" ] && wc -c < "$img" || echo "?")

stats () { sort -n "$1" | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; printf "%s %s\n", v[1], m }'; }
set -- $(stats "$work/gcc.t"); gmin=$1; gmed=$2
set -- $(stats "$work/ours.t"); omin=$1; omed=$2
echo "sources:     $sources" | sed "s|$work/kernels.c|(generated: $kernels target regions)|"
echo "cflags:      $cflags"
echo "runs:        $runs each"
echo "code object: $size bytes"
echo "GCC's mkoffload: min $gmin s, median $gmed s"
echo "ours:            min $omin s, median $omed s"
echo "$omin $gmin" | awk '{ printf "ratio (min ours / min GCC'"'"'s): %.2f\n", $1 / $2 }'
