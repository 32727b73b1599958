/* The map from host to device addresses of `declare target indirect'
   functions (device code of GCC 14+, libgomp 14+), built on the host by
   the backends that give device code one (CUDA, HSA).

   A pointer to such a function, taken on the host, reaches device code
   as the host's address; the device code translates it
   (GOMP_target_map_indirect_ptr, GCC's libgomp/config/accel/
   target-indirect.c) through a map that the loader writes to device
   memory and points a device variable at.  It has one of two forms,
   chosen by the variable the image's device code has for it:

   - OK_IND_HASH, for __gomp_indirect_addr_hmap (GCC 16's device code):
     the hash table GCC 16's plugins build on the host with libgomp's
     hashtab.h (plugin/build-target-indirect-htab.h): a 32-byte header
     {size, n_elements, n_deleted as 64-bit words, size_prime_index as a
     32-bit one}, then SIZE 16-byte entries {host address, device
     address} (GCC's unsigned __int128 host | device << 64 on these
     little-endian machines), all-zero when empty.  SIZE is a prime of
     hashtab.h's table, and an address is found by double hashing of
     (uint32_t) (host ^ host >> 32).  The entries follow the header at
     offset 32 for both device kinds: struct htab's three size_t and
     unsigned int take 28 bytes, and the entries' alignment rounds that
     up to 32 whether it is 16 (nvptx, whose BIGGEST_ALIGNMENT is 128
     bits; the x86_64 host) or 8 (amdgcn, BIGGEST_ALIGNMENT 64 bits in
     GCC 16's gcc/config/gcn/gcn.h);
   - OK_IND_FLAT, for __gomp_indirect_addr_map (GCC 14 and 15, and GCC
     16's fallback): {host, device} pairs, then one 0 word, as GCC 14's
     plugins write it; the device code builds its own hash table from it
     at its first launch.

   GCC 16's device code has both variables and uses the hash table when
   its pointer is set, so a backend writes that form when the hash
   table's variable is there.  */

#ifndef OFFLOADKIT_INDIRECT_MAP_H
#define OFFLOADKIT_INDIRECT_MAP_H

#include <stddef.h>
#include <stdint.h>

/* The device variables that point at each form.  */
#define OK_IND_MAP_VAR "__gomp_indirect_addr_map"
#define OK_IND_HMAP_VAR "__gomp_indirect_addr_hmap"

/* More indirect functions than any program has: a larger count comes
   from a corrupt table.  */
#define OK_IND_MAX ((size_t) 1 << 24)

enum ok_ind_form { OK_IND_FLAT, OK_IND_HASH };

/* One function: its host and device addresses.  */
struct ok_ind_pair
{
  uint64_t host, dev;
};

/* The bytes of the map of the N (at most OK_IND_MAX) functions PAIRS in
   FORM: malloc'd, *BYTES long; NULL when out of host memory (not
   reported: the caller says for what).  */
void *ok_ind_map_build (enum ok_ind_form form,
			const struct ok_ind_pair *pairs, size_t n,
			size_t *bytes);

/* "hash table" or "flat", for debug output.  */
const char *ok_ind_form_name (enum ok_ind_form form);

#endif /* OFFLOADKIT_INDIRECT_MAP_H */
