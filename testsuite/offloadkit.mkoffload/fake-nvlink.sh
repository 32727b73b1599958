#!/bin/sh
# Stand-in for NVIDIA's nvlink in the mkoffload tests (aot.exp), copied
# next to fake-ptxas.sh as "nvlink".  For "-o FILE" it writes a small
# ELF64 executable with e_machine 190 (EM_CUDA) whose symbol table
# defines the functions its input objects define (fake-ptxas.sh's kernels;
# written by fake-elf.sh, copied next to it).  Like fake-ptxas.sh, it
# keeps a file tmpxft_PID_00000000 in $TMPDIR while it runs.  Controlled
# by:
#   FAKE_NVLINK_LOG    file that gets one line per run: the arguments (the
#                      temporary file exists by the time the line is there)
#   FAKE_NVLINK_FAIL   glob: a run with an argument matching it prints a
#                      message and exits with status 4
#   FAKE_NVLINK_SLEEP  seconds to wait before writing the output
#   FAKE_NVLINK_OUTPUT "empty", "truncated" (cut in half) or "nokernels"
#                      (an unrelated symbol only): exit with status 0 all
#                      the same

tmpxft=${TMPDIR:-/tmp}/tmpxft_$$_00000000
: > "$tmpxft" || exit 1

if [ -n "$FAKE_NVLINK_LOG" ]; then
    echo "nvlink $*" >> "$FAKE_NVLINK_LOG"
fi
out=
prev=
inputs=
for a in "$@"; do
    if [ -n "$FAKE_NVLINK_FAIL" ]; then
	case "$a" in
	$FAKE_NVLINK_FAIL)
	    rm -f "$tmpxft"
	    echo "nvlink error   : fake failure on '$a'" >&2
	    exit 4 ;;
	esac
    fi
    case "$prev:$a" in
    -o:*) out=$a ;;
    *:*.o) inputs="$inputs $a" ;;
    esac
    prev=$a
done
if [ -n "$FAKE_NVLINK_SLEEP" ]; then
    sleep "$FAKE_NVLINK_SLEEP"
fi
if [ -n "$out" ]; then
    . "${0%/*}/fake-elf.sh"
    # One nm for all: each run takes a tenth of a second.
    functions=$(nm -P --defined-only $inputs 2> /dev/null |
		    awk '$2 == "T" { print $1 }' | sort -u)
    fake_cuda_elf "$out" 2 "$functions" "$FAKE_NVLINK_OUTPUT" || exit 1
fi
rm -f "$tmpxft"
exit 0
