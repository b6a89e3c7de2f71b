/*
 * campaign-shard.c - `warden campaign --shard K/N`: the part of a grid that
 * machine K of N runs, so that N machines cover the grid once.
 *
 * The unit of a shard is the engine: every cell of one engine (all its
 * models, splits and levels) runs on one machine. An engine's levels are
 * compared with each other (the scaling from c=1 to c=16), its wall cap
 * and its skip-the-rest-after-a-crash rule are per engine and run, and a
 * machine needs the environments of its own engines only. Engines go to
 * shards in grid order, round robin: the engine at position i (from 0) is
 * shard i mod N + 1. Every engine has the same number of cells, so shards
 * differ by at most one engine. Never prints; pure data.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "sha256.h"
#include "util.h"

/* The position of engine among the distinct engines of points. */
static size_t
engine_position(json_t *engines, const char *engine)
{
	json_t *e;
	size_t i;

	json_array_foreach(engines, i, e)
		if (strcmp(json_string_value(e), engine) == 0)
			return i;
	json_array_append_new(engines, json_string(engine));
	return json_array_size(engines) - 1;
}

struct werr *
campaign_shard_points(json_t **info_out, json_t *points, unsigned index,
    unsigned count)
{
	json_t *all = json_array(), *mine = json_array(), *p;
	json_t *shard_engines = json_array();
	char hex[SHA256_HEX_LEN + 1];
	const char *engine;
	char *text;
	size_t i, pos, total = json_array_size(points);

	*info_out = NULL;
	if (count == 0 || index == 0 || index > count) {
		json_decref(all);
		json_decref(mine);
		json_decref(shard_engines);
		return werr_usage("a shard is K/N with 1 <= K <= N, not %u/%u",
		    index, count);
	}
	/* The digest names the whole grid, so shards of one grid can be
	 * told from shards of another when they are merged. */
	text = json_dumps(points, JSON_COMPACT | JSON_SORT_KEYS);
	sha256_hex(text, strlen(text), hex);
	free(text);
	json_array_foreach(points, i, p) {
		engine = json_string_value(json_object_get(p, "engine"));
		pos = engine_position(all, engine);
		if (pos % count != index - 1)
			continue;
		json_array_append(mine, p);
		if (json_array_size(shard_engines) == 0 || strcmp(engine,
		    json_string_value(json_array_get(shard_engines,
		    json_array_size(shard_engines) - 1))) != 0)
			json_array_append_new(shard_engines, json_string(engine));
	}
	if (json_array_size(mine) == 0) {
		struct werr *err = werr_usage("shard %u/%u holds no grid "
		    "point: a shard is whole engines, and the grid has %zu",
		    index, count, json_array_size(all));

		json_decref(all);
		json_decref(mine);
		json_decref(shard_engines);
		return err;
	}
	json_array_clear(points);
	json_array_extend(points, mine);
	json_decref(mine);
	*info_out = json_pack("{s:I, s:I, s:s, s:o, s:o, s:I, s:s}",
	    "index", (json_int_t)index, "count", (json_int_t)count,
	    "unit", "engine", "engines", shard_engines, "grid_engines", all,
	    "grid_points", (json_int_t)total, "grid_sha256", hex);
	return NULL;
}
