#!/bin/sh
# Stand-in for NVIDIA's ptxas in the mkoffload tests (aot.exp), which copy
# it to a directory of their own as "ptxas".  It accepts the command lines
# mkoffload gives ptxas and writes, for "-o FILE", a minimal ELF64 file
# with e_machine 190 (EM_CUDA); it checks nothing.  Like the real ptxas,
# it keeps a file of its own, tmpxft_PID_00000000, in $TMPDIR while it
# runs, and removes it when it ends normally (not when it is killed).
# Controlled by:
#   FAKE_PTXAS_LOG    file that gets one line per run: the arguments (the
#                     temporary file exists by the time the line is there)
#   FAKE_PTXAS_ARCHS  sm numbers listed by --help (default: 75 80 90 100)
#   FAKE_PTXAS_FAIL   glob: a run with an argument matching it prints a
#                     message and exits with status 3
#   FAKE_PTXAS_SLEEP  seconds to wait before writing the output

tmpxft=${TMPDIR:-/tmp}/tmpxft_$$_00000000
: > "$tmpxft" || exit 1

if [ -n "$FAKE_PTXAS_LOG" ]; then
    echo "ptxas $*" >> "$FAKE_PTXAS_LOG"
fi

case "$1" in
--version)
    rm -f "$tmpxft"
    echo "fake ptxas for offloadkit's tests, release 0.0"
    exit 0 ;;
--help)
    rm -f "$tmpxft"
    printf '%s\n' "Usage: ptxas [options] <ptx file>" "" \
	"--gpu-name <gpu name>      (-arch)" \
	"        Specify name of NVIDIA GPU to generate code for."
    list="'compute_75'"
    for a in ${FAKE_PTXAS_ARCHS:-75 80 90 100}; do
	list="$list,'sm_$a','sm_${a}a'"
    done
    printf '%s\n' "        Allowed values for this option:  $list." \
	"        Default value:  'sm_75'."
    exit 0 ;;
esac

out=
prev=
for a in "$@"; do
    if [ -n "$FAKE_PTXAS_FAIL" ]; then
	case "$a" in
	$FAKE_PTXAS_FAIL)
	    rm -f "$tmpxft"
	    echo "ptxas fatal   : fake failure on '$a'" >&2
	    exit 3 ;;
	esac
    fi
    [ "$prev" = "-o" ] && out=$a
    prev=$a
done
if [ -n "$FAKE_PTXAS_SLEEP" ]; then
    sleep "$FAKE_PTXAS_SLEEP"
fi
if [ -n "$out" ]; then
    # e_ident (class 64, little-endian, version 1), e_type 1 (relocatable),
    # e_machine 190, e_version 1, the rest of the 64-byte header zero.
    { printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000'
      printf '\001\000\276\000\001\000\000\000'
      head -c 40 /dev/zero; } > "$out" || exit 1
fi
rm -f "$tmpxft"
exit 0
