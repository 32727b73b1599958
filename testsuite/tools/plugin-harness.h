/* What plugin-harness.c shares with its other files.  */

#ifndef OFFLOADKIT_PLUGIN_HARNESS_H
#define OFFLOADKIT_PLUGIN_HARNESS_H

/* The plugin under test (argv[1]).  */
extern const char *plugin_path;

/* plugin-harness-abi.c: the answers per libgomp version, in children.  */
void abi_tests (void);

#endif
