#!/bin/sh
# gcc-accel-dir.sh DRIVER...: print, one a line, the directory ACCEL in
# which each GCC DRIVER's lto-wrapper looks for ACCEL/TARGET/mkoffload,
# for installing offloadkit's mkoffload there.  DRIVER may be "all" (every
# gcc-12 ... gcc-16 in PATH) or a bare version such as 14 (gcc-14).
#
# lto-wrapper searches COMPILER_PATH, the driver's program directories:
# Debian's GCC 12 finds mkoffload in /usr/lib/gcc/TRIPLET/12/accel (what
# gcc -print-file-name=accel says), its 13 and newer in
# /usr/libexec/gcc/TRIPLET/N/accel.  So we ask the driver where its own
# mkoffload is (-print-prog-name, which searches the same list), and
# without one take the first of its program directories.
set -u

one () {
  drv=$1
  command -v "$drv" >/dev/null 2>&1 || { echo "gcc-accel-dir: no '$drv' in PATH" >&2; return 1; }
  for t in nvptx-none amdgcn-amdhsa; do
    p=$("$drv" -print-prog-name=accel/$t/mkoffload 2>/dev/null) || p=
    case $p in
      /*/accel/$t/mkoffload) echo "${p%/$t/mkoffload}"; return 0 ;;
    esac
  done
  dir=$("$drv" -print-search-dirs 2>/dev/null \
        | sed -n 's/^programs: =//p' | cut -d: -f1)
  case $dir in
    /*) echo "${dir%/}/accel"; return 0 ;;
  esac
  echo "gcc-accel-dir: cannot tell where '$drv' looks for mkoffload" >&2
  return 1
}

rc=0
for arg in "$@"; do
  case $arg in
    all)
      found=0
      for v in 12 13 14 15 16; do
        if command -v gcc-$v >/dev/null 2>&1; then
          one gcc-$v || rc=1
          found=1
        fi
      done
      [ $found = 1 ] || { echo "gcc-accel-dir: no gcc-12 ... gcc-16 in PATH" >&2; rc=1; } ;;
    [0-9]|[0-9][0-9]) one gcc-$arg || rc=1 ;;
    *) one "$arg" || rc=1 ;;
  esac
done
exit $rc
