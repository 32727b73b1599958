#!/bin/sh
# Stand-in for NVIDIA's nvlink in the mkoffload tests (aot.exp), copied
# next to fake-ptxas.sh as "nvlink".  For "-o FILE" it writes a minimal
# ELF64 executable with e_machine 190 (EM_CUDA), followed by the line
# "fake cubin ARGS" for the tests to read.  Controlled by:
#   FAKE_NVLINK_LOG   file that gets one line per run: the arguments
#   FAKE_NVLINK_FAIL  glob: a run with an argument matching it prints a
#                     message and exits with status 4

if [ -n "$FAKE_NVLINK_LOG" ]; then
    echo "nvlink $*" >> "$FAKE_NVLINK_LOG"
fi
out=
prev=
for a in "$@"; do
    if [ -n "$FAKE_NVLINK_FAIL" ]; then
	case "$a" in
	$FAKE_NVLINK_FAIL)
	    echo "nvlink error   : fake failure on '$a'" >&2
	    exit 4 ;;
	esac
    fi
    [ "$prev" = "-o" ] && out=$a
    prev=$a
done
if [ -n "$out" ]; then
    { printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000'
      printf '\002\000\276\000\001\000\000\000'
      head -c 40 /dev/zero
      echo "fake cubin $*"; } > "$out" || exit 1
fi
exit 0
