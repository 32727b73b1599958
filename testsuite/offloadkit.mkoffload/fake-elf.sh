# Sourced by fake-ptxas.sh and fake-nvlink.sh, from the directory the
# tests copy all three to.  The files are labelled as CUDA 13's ptxas and
# nvlink label theirs (common/elf-reader.h): OSABI 0x41, ABI version 8,
# the SM in bits 8-15 of e_flags.

# fake_fail_on GLOB STATUS WHAT ARG: when GLOB is set and ARG matches it,
# the run fails as the tool would: $tmpxft removed, "WHAT fake failure on
# 'ARG'" on stderr, exit status STATUS.
fake_fail_on () {
    [ -n "$1" ] || return 0
    case "$4" in
    $1)
	rm -f "$tmpxft"
	echo "$3 fake failure on '$4'" >&2
	exit "$2" ;;
    esac
}

# The eight bytes of a 64-bit little-endian zero, for printf.
fake_z8='\000\000\000\000\000\000\000\000'

# The four bytes of CUDA 13's e_flags for sm_$1, for printf.
fake_flags () {
    printf '\\004\\%03o\\000\\006' "$1"
}

# fake_bare_elf FILE TYPE SM: an ELF64 file with e_type TYPE (1
# relocatable, 2 executable), e_machine 190 (EM_CUDA), for sm_SM, and no
# section but its section name table, written by printf alone: most
# modules of a link define no kernel, and the tests run ptxas thousands of
# times.
fake_bare_elf () {
    {
	# e_ident, e_type, e_machine, e_version, e_entry, e_phoff.
	printf "\\177ELF\\002\\001\\001\\101\\010\\000\\000\\000\\000\\000\\000\\000"
	printf "\\00$2\\000\\276\\000"
	printf "\\001\\000\\000\\000$fake_z8$fake_z8"
	# e_shoff 80, e_flags, e_ehsize 64, no program headers, e_shentsize
	# 64, e_shnum 2, e_shstrndx 1.
	printf "\\120\\000\\000\\000\\000\\000\\000\\000"
	printf "$(fake_flags "$3")"
	printf "\\100\\000\\000\\000\\000\\000\\100\\000\\002\\000\\001\\000"
	# At 64: the section names, padded to 16 bytes.
	printf "\\000.shstrtab\\000\\000\\000\\000\\000\\000"
	# At 80: section 0 (null), section 1 (.shstrtab: name 1, type 3,
	# offset 64, size 11, alignment 1).
	printf "$fake_z8$fake_z8$fake_z8$fake_z8$fake_z8$fake_z8$fake_z8$fake_z8"
	printf "\\001\\000\\000\\000\\003\\000\\000\\000$fake_z8$fake_z8"
	printf "\\100\\000\\000\\000\\000\\000\\000\\000"
	printf "\\013\\000\\000\\000\\000\\000\\000\\000$fake_z8"
	printf "\\001\\000\\000\\000\\000\\000\\000\\000$fake_z8"
    } > "$1"
}

# fake_symbols_elf FILE TYPE SM NAMES VARIABLES: the same with a symbol
# table that defines a function for each line of NAMES and a variable of
# 8 bytes for each line of VARIABLES (assembled by the host's "as", then
# relabelled).
fake_symbols_elf () {
    {
	printf '%s\n' "$4" | while read -r name; do
	    [ -n "$name" ] || continue
	    printf '\t.text\n\t.globl "%s"\n\t.type "%s", @function\n"%s":\n\tret\n' \
		"$name" "$name" "$name"
	done
	printf '%s\n' "$5" | while read -r name; do
	    [ -n "$name" ] || continue
	    printf '\t.data\n\t.globl "%s"\n\t.type "%s", @object\n\t.size "%s", 8\n"%s":\n\t.zero 8\n' \
		"$name" "$name" "$name" "$name"
	done
    } | as -o "$1" || return 1
    printf "\\101\\010" | dd of="$1" bs=1 seek=7 conv=notrunc 2> /dev/null
    printf "\\00$2\\000\\276\\000" |
	dd of="$1" bs=1 seek=16 conv=notrunc 2> /dev/null
    printf "$(fake_flags "$3")" |
	dd of="$1" bs=1 seek=48 conv=notrunc 2> /dev/null
}

# fake_cuda_elf FILE TYPE SM NAMES VARIABLES MODE: write FILE, an ELF64
# file for EM_CUDA of e_type TYPE for sm_SM defining a function for each
# line of NAMES and a variable for each line of VARIABLES, then spoil it
# as a test asks with MODE: "none" (removed), "empty", "truncated" (cut in
# half; it still starts like an ELF file), "nokernels" (one unrelated
# function instead of those named), "othersm" (labelled for sm_(SM+1)),
# or "" (kept whole).
fake_cuda_elf () {
    sm=$3
    [ "$6" = othersm ] && sm=$(($3 + 1))
    case "$6:$4$5" in
    nokernels:*)
	fake_symbols_elf "$1" "$2" "$sm" unrelated "" ;;
    *:)
	fake_bare_elf "$1" "$2" "$sm" ;;
    *)
	fake_symbols_elf "$1" "$2" "$sm" "$4" "$5" ;;
    esac || return 1
    case "$6" in
    none)
	rm -f "$1" ;;
    empty)
	: > "$1" ;;
    truncated)
	size=$(wc -c < "$1")
	head -c $((size / 2)) "$1" > "$1.cut" && mv "$1.cut" "$1" ;;
    esac
}
