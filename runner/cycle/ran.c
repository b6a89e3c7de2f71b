/*
 * ran.c - what a cycle ran on and with, for its journal: the machine
 * (chip or CPU, cores, memory, OS, as every result's provenance says it)
 * and every engine of the roster with its current version manifest
 * (version, manifest sha256, Python, package count, commit), changed this
 * cycle or not. See cycle-private.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "campaign-input.h"
#include "cycle-private.h"
#include "jsonget.h"
#include "memsample.h"
#include "update/store-update.h"

static json_t *
engine_row(struct cyc *c, const char *engine)
{
	json_t *m = NULL, *row;
	struct werr *err;

	if ((err = store_update_current(c->store, engine, &m)) != NULL) {
		werr_free(err);	/* nothing readable: said as no manifest */
		m = NULL;
	}
	if (m == NULL)
		return json_pack("{s:s, s:n}", "engine", engine,
		    "manifest_sha256");
	row = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:I, s:O?, s:O?}",
	    "engine", engine, "manifest_sha256", json_object_get(m, "sha256"),
	    "kind", json_object_get(m, "kind"),
	    "engine_version", json_object_get(m, "engine_version"),
	    "python", json_object_get(m, "python"),
	    "packages", (json_int_t)json_object_size(json_object_get(m,
	    "packages")),
	    "commit", json_object_get(json_object_get(m, "source"), "commit"),
	    "recorded_in", json_object_get(m, "cycle"));
	json_decref(m);
	return row;
}

json_t *
cycle_what_ran(struct cyc *c)
{
	json_t *engines = json_array();
	size_t i;

	for (i = 0; i < c->roster->engines.n; i++)
		json_array_append_new(engines, engine_row(c,
		    c->roster->engines.v[i]));
	return json_pack("{s:s, s:o, s:o, s:o}", "machine", c->machine,
	    "hardware", provenance_hardware(memsample_gpu_hint()),
	    "os", provenance_os(),
	    "engines", engines);
}
