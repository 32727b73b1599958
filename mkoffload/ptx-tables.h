/* The PTX module of function tables that the nvptx device code of GCC
   13 and newer expects next to its own: $offload_func_table, the device
   addresses of the functions that reverse-offload regions run (for a
   program that requires reverse_offload), and from GCC 14
   $offload_ind_func_table, those of the `declare target indirect'
   functions.  GCC's own nvptx mkoffload appends them to the image it
   embeds; the plugin reads them when it loads the image.  */

#ifndef OFFLOADKIT_PTX_TABLES_H
#define OFFLOADKIT_PTX_TABLES_H

#include <stddef.h>

#include "mkoffload.h"

/* What the tables are made of: the NMODULES PTX modules of one link
   (NUL-terminated texts, in the order the image file holds them, for
   messages), of which the last one with "//:" map lines gives the
   module's .version and .target; CTX's function names (the FUNC_MAP
   lines, in host-table order) and IND_NAMES, the IND_FUNC_MAP lines.  */
struct mko_ptx_tables_in
{
  char *const *modules;
  size_t nmodules;
  const struct mko_argv *ind_names;
  const char *ptx;		/* The image file (messages).  */
};

/* Whether the PTX text MODULE has "//:" map lines, as the module of the
   program the accel compiler compiled has and the library modules
   linked with it have not.  */
int mko_ptx_has_maps (const char *module);

/* The module of tables IN needs under CTX's GCC version and OpenMP
   requires mask, as a malloc'd NUL-terminated PTX text in *MODULE, or
   NULL when none is needed.  Return 0, or -1 after reporting one error
   (a function of a table without a declaration to copy, a module with
   map lines without .version or .target).  */
int mko_ptx_tables (const struct mko_ctx *ctx,
		    const struct mko_ptx_tables_in *in, char **module);

#endif /* OFFLOADKIT_PTX_TABLES_H */
