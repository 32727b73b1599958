#!/bin/sh
# Stand-in for NVIDIA's nvlink in the mkoffload tests (aot.exp), copied
# next to fake-ptxas.sh as "nvlink".  For "-o FILE" it writes a minimal
# ELF64 executable with e_machine 190 (EM_CUDA), followed by the line
# "fake cubin ARGS" for the tests to read.  Like fake-ptxas.sh, it keeps a
# file tmpxft_PID_00000000 in $TMPDIR while it runs.  Controlled by:
#   FAKE_NVLINK_LOG   file that gets one line per run: the arguments (the
#                     temporary file exists by the time the line is there)
#   FAKE_NVLINK_FAIL  glob: a run with an argument matching it prints a
#                     message and exits with status 4
#   FAKE_NVLINK_SLEEP seconds to wait before writing the output

tmpxft=${TMPDIR:-/tmp}/tmpxft_$$_00000000
: > "$tmpxft" || exit 1

if [ -n "$FAKE_NVLINK_LOG" ]; then
    echo "nvlink $*" >> "$FAKE_NVLINK_LOG"
fi
out=
prev=
for a in "$@"; do
    if [ -n "$FAKE_NVLINK_FAIL" ]; then
	case "$a" in
	$FAKE_NVLINK_FAIL)
	    rm -f "$tmpxft"
	    echo "nvlink error   : fake failure on '$a'" >&2
	    exit 4 ;;
	esac
    fi
    [ "$prev" = "-o" ] && out=$a
    prev=$a
done
if [ -n "$FAKE_NVLINK_SLEEP" ]; then
    sleep "$FAKE_NVLINK_SLEEP"
fi
if [ -n "$out" ]; then
    { printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000'
      printf '\002\000\276\000\001\000\000\000'
      head -c 40 /dev/zero
      echo "fake cubin $*"; } > "$out" || exit 1
fi
rm -f "$tmpxft"
exit 0
