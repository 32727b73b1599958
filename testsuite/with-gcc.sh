#!/bin/sh
# with-gcc.sh VERSION CMD...: run CMD (runtest) with GCC VERSION's drivers
# first on PATH under their plain names (gcc, g++, gfortran, cpp), so that
# every compile of the testsuite -- run tests, mkoffload's COLLECT_GCC,
# the pipelines of GCC's own mkoffload -- uses that GCC.  An empty VERSION
# runs CMD as it is (the gcc on PATH).  The links live in gcc-VERSION/ of
# the current directory.
set -eu
version=$1
shift
if [ -n "$version" ]; then
  case $version in
    *[!0-9]*) echo "with-gcc.sh: GCC_VERSION must be a major version such as 14, not '$version'" >&2
	      exit 2 ;;
  esac
  bin=$(pwd)/gcc-$version/bin
  mkdir -p "$bin"
  for tool in gcc g++ gfortran cpp; do
    path=$(command -v "$tool-$version" || true)
    if [ -z "$path" ]; then
      [ "$tool" = gcc ] && { echo "with-gcc.sh: gcc-$version is not installed" >&2; exit 2; }
      continue
    fi
    ln -sf "$path" "$bin/$tool"
  done
  PATH=$bin:$PATH
  export PATH
fi
exec "$@"
