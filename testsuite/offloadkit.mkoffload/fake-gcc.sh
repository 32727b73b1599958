#!/bin/sh
# Stand-in host driver for mkoffload.exp: says it is GCC
# $FAKE_GCC_DUMPVERSION when asked, else is the real gcc (which compiles
# the wrapper).
if [ "$1" = -dumpversion ]; then
  echo "$FAKE_GCC_DUMPVERSION"
  exit 0
fi
exec gcc "$@"
