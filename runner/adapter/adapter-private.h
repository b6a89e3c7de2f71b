/*
 * adapter-private.h - what adapter.c and profile.c share: the name rule,
 * the file-name check and the lookup of a named file. Internal: nothing
 * outside runner/adapter/adapter.c and runner/adapter/profile.c includes
 * it.
 */
#ifndef WARDEN_ADAPTER_PRIVATE_H
#define WARDEN_ADAPTER_PRIVATE_H

#include <jansson.h>

#include "buf.h"
#include "error.h"
#include "schema.h"

/* Letters, digits, '.', '_' and '-' only (a schema check). */
int adapter_check_name(const json_t *v, struct buf *why);
/* A copy of the string member key of obj, or NULL. */
char *adapter_opt_strdup(const json_t *obj, const char *key);
/* The name inside the file must be the file's own name. */
void adapter_check_file_name(const char *display, const json_t *doc,
    const char *text, size_t len, struct problems *probs);
/* DIR/NAME.json of repo_root: *path_out absolute, *display_out relative
 * (caller frees both); an error when the name is bad or the file absent. */
struct werr *adapter_find_named(const char *repo_root, const char *dir,
    const char *name, char **path_out, char **display_out);

#endif
