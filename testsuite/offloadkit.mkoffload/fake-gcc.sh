#!/bin/sh
# Stand-in host driver for mkoffload.exp: says it is GCC
# $FAKE_GCC_DUMPVERSION when asked, else is the real gcc (which compiles
# the wrapper): the first gcc on PATH that is not this script, which a
# test's PATH may name first.
if [ "$1" = -dumpversion ]; then
  echo "$FAKE_GCC_DUMPVERSION"
  exit 0
fi
self=$(cd "$(dirname "$0")" && pwd)
IFS=:
for d in $PATH; do
  if [ -n "$d" ] && [ "$(cd "$d" 2>/dev/null && pwd)" != "$self" ] && [ -x "$d/gcc" ]; then
    unset IFS
    exec "$d/gcc" "$@"
  fi
done
echo "fake-gcc: no gcc on PATH but this one" >&2
exit 127
