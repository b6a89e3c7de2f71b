/*
 * seatbelt.h - the Seatbelt profile of a sandbox spec: the SBPL text
 * that sandbox-exec(1) runs on macOS, and the parameters it reads. Pure
 * text (paths are resolved only through the function it is given), so it
 * is built and unit-tested on every system; sandbox-darwin.c writes the
 * text to a file and passes each parameter with -D.
 */
#ifndef WARDEN_SEATBELT_H
#define WARDEN_SEATBELT_H

#include <stddef.h>

#include "buf.h"
#include "sandbox.h"

struct seatbelt {
	struct buf text;	/* the profile, for sandbox-exec -f */
	char **params;		/* "NAME=VALUE", each for one -D */
	size_t nparams;
};

/* The real path of path (caller frees), or NULL when it is missing:
 * Seatbelt matches the real paths a program opens (/tmp is
 * /private/tmp), and a missing path is left out of the profile. */
typedef char *(*seatbelt_resolve_fn)(const char *path);

/*
 * The profile of spec, over the places every sandbox hides (hidden,
 * NULL-terminated: sandbox_hidden_places()) and warden's own folder
 * (self_dir, shown read-only; NULL for none). No path is ever pasted into
 * the text: each is a parameter, read by (param "NAME"). Free with
 * seatbelt_free.
 */
void seatbelt_profile(struct seatbelt *out, const struct sandbox_spec *spec,
    char *const *hidden, const char *self_dir, seatbelt_resolve_fn resolve);
void seatbelt_free(struct seatbelt *sb);

#endif
