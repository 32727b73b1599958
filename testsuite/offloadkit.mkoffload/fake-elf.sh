# Sourced by fake-ptxas.sh and fake-nvlink.sh, from the directory the
# tests copy all three to.

# The eight bytes of a 64-bit little-endian zero, for printf.
fake_z8='\000\000\000\000\000\000\000\000'

# fake_bare_elf FILE TYPE: an ELF64 file with e_type TYPE (1 relocatable,
# 2 executable), e_machine 190 (EM_CUDA) and no section but its section
# name table, written by printf alone: most modules of a link define no
# kernel, and the tests run ptxas thousands of times.
fake_bare_elf () {
    {
	# e_ident, e_type, e_machine, e_version, e_entry, e_phoff.
	printf "\\177ELF\\002\\001\\001\\000$fake_z8\\00$2\\000\\276\\000"
	printf "\\001\\000\\000\\000$fake_z8$fake_z8"
	# e_shoff 80, e_flags, e_ehsize 64, no program headers, e_shentsize
	# 64, e_shnum 2, e_shstrndx 1.
	printf "\\120\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000"
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

# fake_functions_elf FILE TYPE NAMES: the same with a symbol table that
# defines a function for each line of NAMES (assembled by the host's
# "as", then relabelled).
fake_functions_elf () {
    printf '%s\n' "$3" | while read -r name; do
	printf '\t.globl "%s"\n\t.type "%s", @function\n"%s":\n\tret\n' \
	    "$name" "$name" "$name"
    done | as -o "$1" || return 1
    printf "\\00$2\\000\\276\\000" |
	dd of="$1" bs=1 seek=16 conv=notrunc 2> /dev/null
}

# fake_cuda_elf FILE TYPE NAMES MODE: write FILE, an ELF64 file for
# EM_CUDA of e_type TYPE defining a function for each line of NAMES, then
# spoil it as a test asks with MODE: "none" (removed), "empty",
# "truncated" (cut in half; it still starts like an ELF file),
# "nokernels" (one unrelated function instead of those named), or ""
# (kept whole).
fake_cuda_elf () {
    case "$4:$3" in
    nokernels:*)
	fake_functions_elf "$1" "$2" unrelated ;;
    *:)
	fake_bare_elf "$1" "$2" ;;
    *)
	fake_functions_elf "$1" "$2" "$3" ;;
    esac || return 1
    case "$4" in
    none)
	rm -f "$1" ;;
    empty)
	: > "$1" ;;
    truncated)
	size=$(wc -c < "$1")
	head -c $((size / 2)) "$1" > "$1.cut" && mv "$1.cut" "$1" ;;
    esac
}
