#!/bin/sh
# Stand-in for NVIDIA's ptxas in the mkoffload tests (aot.exp), which copy
# it to a directory of their own as "ptxas".  It accepts the command lines
# mkoffload gives ptxas and writes, for "-o FILE", a small relocatable
# ELF64 object with e_machine 190 (EM_CUDA), labelled for --gpu-name's
# architecture, whose symbol table defines a function for each ".entry"
# of the PTX file it is given and a variable for each of its "//:VAR_MAP"
# lines (fake-elf.sh, copied next to it); it checks nothing.  Like the real ptxas,
# it keeps a file of its own, tmpxft_PID_00000000, in $TMPDIR while it
# runs, and removes it when it ends normally (not when it is killed).
# Controlled by:
#   FAKE_PTXAS_LOG    file that gets one line per run: the arguments (the
#                     temporary file exists by the time the line is there)
#   FAKE_PTXAS_ARCHS  sm numbers listed by --help (default: 75 80 90 100)
#   FAKE_PTXAS_FAIL   glob: a run with an argument matching it prints a
#                     message and exits with status 3
#   FAKE_PTXAS_SLEEP  seconds to wait before writing the output
#   FAKE_PTXAS_OUTPUT "none", "empty", "truncated" or "othersm": exit
#                     with status 0 all the same, the output removed,
#                     empty, cut in half (it still starts like an ELF
#                     file) or labelled for another architecture
#   FAKE_PTXAS_FUNCS  set: define a function for each ".visible .func"
#                     definition as well, as the real one does (not by
#                     default: the library modules have many, and an
#                     object with functions takes an "as" run to write)

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

. "${0%/*}/fake-elf.sh"
out=
prev=
sm=0
for a in "$@"; do
    fake_fail_on "$FAKE_PTXAS_FAIL" 3 "ptxas fatal   :" "$a"
    [ "$prev" = "-o" ] && out=$a
    [ "$prev" = "--gpu-name" ] && sm=${a#sm_}
    prev=$a
done
ptx=$a
if [ -n "$FAKE_PTXAS_SLEEP" ]; then
    sleep "$FAKE_PTXAS_SLEEP"
fi
if [ -n "$out" ]; then
    # One function per kernel: ".visible .entry NAME (...".
    kernels=$(sed -n 's/^.*\.entry[ 	]\{1,\}\([^ 	(]\{1,\}\).*$/\1/p' "$ptx")
    # ".visible .func [(RETURN)] NAME (...", not a declaration (';').
    if [ -n "$FAKE_PTXAS_FUNCS" ]; then
	kernels=$( { echo "$kernels"; sed -n -e '/;[ 	]*$/d' \
	    -e 's/^\.visible[ 	]\{1,\}\.func[ 	]\{1,\}\(([^)]*)[ 	]*\)\{0,1\}\([^ 	(]\{1,\}\).*$/\2/p' \
	    "$ptx"; } | sed '/^$/d')
    fi
    variables=$(sed -n 's/^\/\/:VAR_MAP "\([^"]*\)".*$/\1/p' "$ptx")
    fake_cuda_elf "$out" 1 "$sm" "$kernels" "$variables" \
	"$FAKE_PTXAS_OUTPUT" || exit 1
fi
rm -f "$tmpxft"
exit 0
