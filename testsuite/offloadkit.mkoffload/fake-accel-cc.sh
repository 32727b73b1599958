#!/bin/sh
# Stand-in accel compiler for mkoffload.exp: logs its arguments and
# GCC_OFFLOAD_OMP_REQUIRES_FILE to $FAKE_ACCEL_LOG, writes the requires
# mask $FAKE_REQUIRES_BYTES (printf format) into that file when it is set,
# and as -o a copy of the file $FAKE_ACCEL_PTX when that is set (PTX
# modules, each ending with a NUL), else a small PTX module with one
# function and one variable.  With $FAKE_ACCEL_WAIT_LOG and
# $FAKE_ACCEL_WAIT_COUNT set, a compile first waits (20 s at most) until
# that file has that many lines, and logs "waited: N lines", the lines it
# found; then, with $FAKE_ACCEL_TOUCH set, touches that file.
log=${FAKE_ACCEL_LOG:?}
echo "argv: $*" >> "$log"
echo "requires_file: ${GCC_OFFLOAD_OMP_REQUIRES_FILE-unset}" >> "$log"
wait_lines () {
  n=0
  for i in $(seq 200); do
    n=$(cat "$FAKE_ACCEL_WAIT_LOG" 2>/dev/null | wc -l)
    [ "$n" -ge "$FAKE_ACCEL_WAIT_COUNT" ] && break
    sleep 0.1
  done
  echo "waited: $n lines" >> "$log"
}
case $1 in
  -dumpversion) echo "${FAKE_ACCEL_VERSION:-0}"; exit 0 ;;
  # A library it has: those named in $FAKE_ACCEL_LIBS.
  -print-file-name=*)
    f=${1#-print-file-name=}
    case " $FAKE_ACCEL_LIBS " in
      *" $f "*) echo "/fake-accel/$f" ;;
      *) echo "$f" ;;
    esac
    exit 0 ;;
esac
out=
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then out=$2; shift; fi
  shift
done
[ -n "$out" ] || { echo "fake-accel-cc: no -o" >&2; exit 1; }
if [ -n "${FAKE_ACCEL_WAIT_LOG-}" ] && [ -n "${FAKE_ACCEL_WAIT_COUNT-}" ]; then
  wait_lines
  if [ -n "${FAKE_ACCEL_TOUCH-}" ]; then
    touch "$FAKE_ACCEL_TOUCH"
  fi
fi
if [ -n "${GCC_OFFLOAD_OMP_REQUIRES_FILE-}" ]; then
  printf "${FAKE_REQUIRES_BYTES:-\\000\\000\\000\\000}" \
    > "$GCC_OFFLOAD_OMP_REQUIRES_FILE"
fi
if [ -n "${FAKE_ACCEL_PTX-}" ]; then
  exec cp "$FAKE_ACCEL_PTX" "$out"
fi
printf '.version 7.0\n.target sm_70\n.address_size 64\n//:FUNC_MAP "main$_omp_fn$0"\n//:VAR_MAP "counter"\n\000' > "$out"
