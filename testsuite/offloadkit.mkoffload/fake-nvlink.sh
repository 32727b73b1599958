#!/bin/sh
# Stand-in for NVIDIA's nvlink in the mkoffload tests (aot.exp), copied
# next to fake-ptxas.sh as "nvlink".  For "-o FILE" it writes a small
# ELF64 executable with e_machine 190 (EM_CUDA), labelled for -arch's
# architecture, whose symbol table defines the functions and variables
# its input objects define (fake-ptxas.sh's kernels and variables;
# written by fake-elf.sh, copied next to it).  Its inputs are named
# *.cubin, as nvlink of CUDA 11 needs them named.  Like fake-ptxas.sh, it
# keeps a file tmpxft_PID_00000000 in $TMPDIR while it runs.  Controlled
# by:
#   FAKE_NVLINK_LOG    file that gets one line per run: the arguments (the
#                      temporary file exists by the time the line is there)
#   FAKE_NVLINK_FAIL   glob: a run with an argument matching it prints a
#                      message and exits with status 4
#   FAKE_NVLINK_SLEEP  seconds to wait before writing the output
#   FAKE_NVLINK_OUTPUT "empty", "truncated" (cut in half), "nokernels"
#                      (an unrelated symbol only) or "othersm" (labelled
#                      for another architecture): exit with status 0 all
#                      the same

tmpxft=${TMPDIR:-/tmp}/tmpxft_$$_00000000
: > "$tmpxft" || exit 1

if [ "$1" = --version ]; then
    rm -f "$tmpxft"
    echo "fake nvlink for offloadkit's tests, release 0.0"
    exit 0
fi
if [ -n "$FAKE_NVLINK_LOG" ]; then
    echo "nvlink $*" >> "$FAKE_NVLINK_LOG"
fi
. "${0%/*}/fake-elf.sh"
out=
prev=
inputs=
sm=0
for a in "$@"; do
    fake_fail_on "$FAKE_NVLINK_FAIL" 4 "nvlink error   :" "$a"
    case "$prev:$a" in
    -o:*) out=$a ;;
    *:-arch=sm_*) sm=${a#-arch=sm_} ;;
    *:*.cubin) inputs="$inputs $a" ;;
    *:*.o)
	# nvlink of CUDA 11 takes it for a host object and links nothing
	# of it; so does this one, loudly.
	echo "fake nvlink: '$a' is named like a host object" >&2
	rm -f "$tmpxft"
	exit 5 ;;
    esac
    prev=$a
done
if [ -n "$FAKE_NVLINK_SLEEP" ]; then
    sleep "$FAKE_NVLINK_SLEEP"
fi
if [ -n "$out" ]; then
    # One nm for all: each run takes a tenth of a second.
    symbols=$(nm -P --defined-only $inputs 2> /dev/null)
    functions=$(echo "$symbols" | awk '$2 == "T" { print $1 }' | sort -u)
    variables=$(echo "$symbols" | awk '$2 == "D" { print $1 }' | sort -u)
    fake_cuda_elf "$out" 2 "$sm" "$functions" "$variables" \
	"$FAKE_NVLINK_OUTPUT" || exit 1
fi
rm -f "$tmpxft"
exit 0
