/*
 * simversion.h - the "broken versions" fault: which version of a named
 * dependency the engine runs against, read from a file or from a Python
 * package installed in the engine's environment, and whether it is in
 * the adapter's list of broken versions.
 *
 * Reads files only; never decides what a broken engine does.
 */
#ifndef SIM_SIMVERSION_H
#define SIM_SIMVERSION_H

#include "error.h"

/* The first line of path, trimmed (caller frees *out). */
struct werr *simversion_from_file(char **out, const char *path);
/*
 * spec is "ENVDIR:PACKAGE": the Version: header of the METADATA of
 * PACKAGE's *.dist-info under ENVDIR/lib*\/python*\/site-packages (names
 * compared as pip does: case and runs of "-_." do not matter).
 */
struct werr *simversion_from_pip(char **out, const char *spec);
/* Is version one of the comma-separated versions in list? */
int simversion_is_broken(const char *version, const char *list);

#endif
