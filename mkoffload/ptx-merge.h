/* Merging the library modules of a link into few modules before ptxas.

   The accel toolchain's linker takes each library member as a module of
   its own: a program with one target region has some twenty (libgomp's,
   newlib's, libgcc's), most of them a few functions, after pruning
   (ptx-prune.h) often one.  ptxas costs some tens of milliseconds a run
   whatever it compiles (a 40 MB static program), and ran once per module
   and architecture: for hello-offload.c 57 runs, 6.6 s of CPU for what
   one run per architecture compiles in 1.2 s.  So the library modules are
   merged into few modules ("groups"), each compiled once per
   architecture like any other.

   A group is one module holding its members' entities, as the separate
   modules would have defined them:
   - one preamble (the members' .version, .target and .address_size must
     be the same);
   - each declaration that a member's head holds (".extern ...;", which
     GCC's inline assembler puts there: libgomp's team.c of GCC 15 and
     newer declares __nvptx_lowlat_pool so), once, where no other member
     has an entity of that name or declares it otherwise;
   - every member's .file lines, each member's file numbers (and those of
     its .loc lines) moved past those of the members before it;
   - one prototype for each function: the definition's own header where
     the group defines it, else the first declaration;
   - one declaration for each variable the group does not define;
   - the variables' definitions, then the functions', in member order;
   - each member's static names that begin with '$' (GCC's constants,
     $LC0...; no PTX keyword begins with it) renamed NAME$okN, N the
     member's number in the link.
   A module is left out (compiled on its own, as before) when it cannot
   be parsed (ptx-parse.h), has a kernel, or would change the meaning of
   the group: a preamble of its own, a global name the group already
   defines, a static name (not beginning with '$') that the group names,
   a name the group defines as a static one, a function declared with
   another prototype than the group's, or a variable that an initialiser
   before it in the group names.  Merging is only ever a saving.  */

#ifndef OFFLOADKIT_PTX_MERGE_H
#define OFFLOADKIT_PTX_MERGE_H

#include <stddef.h>

/* One merged module: its text and the modules it holds.  */
struct mko_ptx_group
{
  char *text;			/* malloc'd, NUL-terminated.  */
  size_t *members;		/* Indices into the caller's modules.  */
  size_t nmembers;
};

/* Merge MODULES (N NUL-terminated PTX texts; NUMBERS[I] is module I's
   number in the link, for the renamed statics) into groups of at most
   MAX_DEFS function definitions (a module with more stays alone), and
   into at least MIN_GROUPS groups when there are as many modules, their
   definitions shared out evenly (so that a machine with many CPUs still
   compiles several at a time).  Store the groups of two modules or more
   in *GROUPS (malloc'd) and return their number; the modules in no group
   are compiled as they are.  */
size_t mko_ptx_merge (char *const *modules, const size_t *numbers,
		      size_t n, size_t max_defs, size_t min_groups,
		      struct mko_ptx_group **groups);

void mko_ptx_free_groups (struct mko_ptx_group *groups, size_t n);

#endif /* OFFLOADKIT_PTX_MERGE_H */
