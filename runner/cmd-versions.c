/*
 * cmd-versions.c - `warden versions [ENGINE] [--cycle C] [--diff C1 C2]`:
 * the version manifests the update step recorded (each engine's current
 * one, or those of a cycle), and what moved between two cycles, engine
 * by engine, package by package.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "jsonget.h"
#include "manifest.h"
#include "output.h"
#include "quote.h"
#include "store-update.h"
#include "util.h"

static const char *
str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

/* The update's constraints on package key (a pin "key==1.0", a version
 * held back "key!=2.0"), as " (pinned: key==1.0)". */
static void
print_constraints(const json_t *constraints, const char *key)
{
	const json_t *c;
	const char *t;
	size_t i, n = strlen(key);
	int k = 0;

	json_array_foreach((json_t *)constraints, i, c) {
		t = json_string_value(c);
		if (t == NULL || strncmp(t, key, n) != 0 ||
		    strchr("=!<>~", t[n]) == NULL || t[n] == '\0')
			continue;
		printf("%s%s", k++ ? ", " : strncmp(t + n, "==", 2) == 0 ?
		    " (pinned: " : " (constraint: ", quote_str(t));
	}
	if (k > 0)
		printf(")");
}

static void
print_manifest(const char *engine, const json_t *m)
{
	const json_t *tool = json_object_get(m, "tool"), *v;
	const char *key;

	printf("%s: %s %s (manifest %lld, cycle %s", engine, str(m, "kind", "?"),
	    str(m, "engine_version", "(unknown)"),
	    (long long)json_integer_value(json_object_get(m, "id")),
	    str(m, "cycle", "?"));
	if (json_is_object(tool))
		printf(", %s %s", str(tool, "name", "?"), str(tool, "version", "?"));
	if (json_is_string(json_object_get(m, "python")))
		printf(", python %s", str(m, "python", "?"));
	printf(")\n");
	json_object_foreach(json_object_get(m, "packages"), key, v) {
		printf("  %s %s", key, quote_str(json_string_value(v)));
		print_constraints(json_object_get(m, "constraints"), key);
		printf("\n");
	}
	json_object_foreach(json_object_get(m, "toolchain"), key, v)
		printf("  toolchain %s: %s\n", key,
		    quote_str(json_string_value(v)));
	json_object_foreach(json_object_get(m, "models"), key, v)
		printf("  model %s: %s\n", key, str(v, "sha256", "(no digest)"));
}

static const char *
or_none(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "(none)";
}

/*
 * The manifests recorded between from and to (both manifests of one
 * engine), each with what moved from the one before: the path the net
 * change took, as the journals of the cycles between list it (a package
 * moved and moved back nets to nothing, and is still shown).
 */
static struct werr *
steps_between(json_t **out, struct store *store, const char *engine,
    const json_t *from, const json_t *to)
{
	const json_t *prev = from, *m;
	json_t *list = NULL;
	struct werr *err;
	size_t i;

	*out = json_array();
	if ((err = store_update_between(store, engine, jsonget_int(from, "id"),
	    jsonget_int(to, "id"), &list)) != NULL)
		return err;
	json_array_foreach(list, i, m) {
		json_array_append_new(*out, json_pack("{s:O, s:O, s:o}",
		    "cycle", json_object_get(m, "cycle"), "manifest",
		    json_object_get(m, "id"), "changes", manifest_diff(prev, m)));
		prev = m;
	}
	json_decref(list);
	return NULL;
}

/* {engines: [{engine, from, to, changes, steps}]} between two cycles. */
static struct werr *
diff_doc(json_t **out, struct store *store, const json_t *a, const json_t *b,
    const char *c1, const char *c2)
{
	json_t *rows = json_array(), *ma, *mb, *steps;
	struct werr *err;
	const char *key;
	json_t *v;

	*out = NULL;
	json_object_foreach((json_t *)a, key, v) {
		mb = json_object_get(b, key);
		steps = NULL;
		if (mb != NULL && (err = steps_between(&steps, store, key, v,
		    mb)) != NULL) {
			json_decref(rows);
			return err;
		}
		json_array_append_new(rows, json_pack("{s:s, s:O, s:o, s:o, "
		    "s:o}", "engine", key, "from", json_object_get(v, "id"),
		    "to", mb ? json_integer(json_integer_value(json_object_get(
		    mb, "id"))) : json_null(), "changes", mb ?
		    manifest_diff(v, mb) : json_null(), "steps", steps ? steps :
		    json_array()));
	}
	json_object_foreach((json_t *)b, key, v) {
		if ((ma = json_object_get(a, key)) != NULL)
			continue;
		json_array_append_new(rows, json_pack("{s:s, s:n, s:O, s:n, "
		    "s:[]}", "engine", key, "from", "to", json_object_get(v,
		    "id"), "changes", "steps"));
	}
	*out = json_pack("{s:s, s:s, s:o}", "from_cycle", c1, "to_cycle", c2,
	    "engines", rows);
	return NULL;
}

static void
print_diff(const json_t *doc)
{
	const char *c1 = str(doc, "from_cycle", "?"), *c2 = str(doc, "to_cycle", "?");
	const json_t *row, *ch, *steps, *st;
	const char *key;
	json_t *c;
	size_t i, k, moves;

	json_array_foreach(json_object_get(doc, "engines"), i, row) {
		ch = json_object_get(row, "changes");
		printf("%s: ", str(row, "engine", "?"));
		if (!json_is_object(ch)) {
			printf("no manifest in cycle %s\n",
			    json_is_null(json_object_get(row, "from")) ? c1 : c2);
			continue;
		}
		steps = json_object_get(row, "steps");
		printf("%zu package%s moved from %s to %s", json_object_size(ch),
		    json_object_size(ch) == 1 ? "" : "s", quote_str(c1),
		    quote_str(c2));
		moves = 0;
		json_array_foreach(steps, k, st)
			moves += json_object_size(json_object_get(st,
			    "changes")) > 0;
		if (moves > 1)
			printf(", in %zu updates", moves);
		printf("\n");
		json_object_foreach((json_t *)ch, key, c)
			printf("  %s %s \u2192 %s\n", quote_str(key),
			    quote_str(or_none(json_object_get(c, "old"))),
			    quote_str(or_none(json_object_get(c, "new"))));
		if (moves < 2)
			continue;	/* one move is the net change itself */
		json_array_foreach(steps, k, st)
			json_object_foreach(json_object_get(st, "changes"), key,
			    c)
				printf("    %s (manifest %lld): %s %s \u2192 %s\n",
				    quote_str(str(st, "cycle", "?")),
				    (long long)jsonget_int(st, "manifest"),
				    quote_str(key), quote_str(or_none(
				    json_object_get(c, "old"))),
				    quote_str(or_none(json_object_get(c,
				    "new"))));
	}
}

static struct werr *
versions_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cycle", required_argument, NULL, 'c' },
		{ "diff", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cycle = NULL, *d1 = NULL, *d2 = NULL, *engine = NULL;
	json_t *a = NULL, *b = NULL, *doc = NULL, *v;
	struct store *store;
	struct werr *err = NULL;
	const char *key;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_versions_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 'c')
			cycle = optarg;
		else if (ch == 'd') {
			/* --diff C1 C2: the second cycle is the next word */
			if (optind >= argc || argv[optind][0] == '-')
				return cmd_usage_error(&cmd_versions_entry,
				    "'--diff' takes two cycles");
			d1 = optarg;
			d2 = argv[optind++];
		}
	}
	if (err != NULL)
		return err;
	if (argc - optind > 1)
		return cmd_usage_error(&cmd_versions_entry,
		    "'versions' takes at most one engine");
	if (cycle != NULL && d1 != NULL)
		return cmd_usage_error(&cmd_versions_entry,
		    "'--cycle' and '--diff' exclude each other");
	engine = optind < argc ? argv[optind] : NULL;
	if ((err = cmd_ctx_store(ctx, &store)) != NULL)
		return err;
	if (d1 != NULL) {
		if ((err = store_update_cycle(store, d1, engine, &a)) != NULL ||
		    (err = store_update_cycle(store, d2, engine, &b)) != NULL)
			goto out;
		if (json_object_size(a) == 0 && json_object_size(b) == 0) {
			err = werr_new(WEXIT_PROBLEM, "no manifest recorded in "
			    "cycle '%s' or '%s'%s%s", d1, d2, engine ? " for " :
			    "", engine ? engine : "");
			goto out;
		}
		if ((err = diff_doc(&doc, store, a, b, d1, d2)) != NULL)
			goto out;
		if (ctx->json)
			output_json(doc);
		else
			print_diff(doc);
		goto out;
	}
	if (cycle != NULL)
		err = store_update_cycle(store, cycle, engine, &a);
	else if ((err = store_update_current_all(store, &a)) == NULL &&
	    engine != NULL) {
		b = json_object();
		if ((v = json_object_get(a, engine)) != NULL)
			json_object_set(b, engine, v);
		json_decref(a);
		a = b;
		b = NULL;
	}
	if (err != NULL)
		goto out;
	if (json_object_size(a) == 0 && cycle != NULL) {
		err = werr_new(WEXIT_PROBLEM, "no manifest recorded in cycle "
		    "%s%s%s", cycle, engine ? " for " : "", engine ? engine : "");
		goto out;
	}
	if (json_object_size(a) == 0 && !ctx->json) {
		/* nothing updated yet: an empty answer, not a failure */
		printf("no manifest recorded yet%s%s ('warden update' records "
		    "one)\n", engine ? " for " : "", engine ? quote_str(engine) :
		    "");
		goto out;
	}
	if (ctx->json)
		output_json(a);
	else
		json_object_foreach(a, key, v)
			print_manifest(key, v);
out:
	json_decref(a);
	json_decref(b);
	json_decref(doc);
	return err;
}

const struct cmd_entry cmd_versions_entry = {
	"versions",
	"[ENGINE] [--cycle C] [--diff C1 C2] [--json]",
	"show version manifests, or what moved between two cycles",
	"Prints each engine's current version manifest (or ENGINE's): its\n"
	"version or commit, every package of its closure, tool, python and\n"
	"toolchain versions, model digests.\n"
	"  --cycle C      the manifests recorded in cycle C (the newest per engine)\n"
	"  --diff C1 C2   per engine, every package whose version differs between\n"
	"                 the manifests of cycles C1 and C2 (old -> new), and\n"
	"                 when more than one manifest came between them, what\n"
	"                 each moved (a package moved and moved back shows)\n"
	"  --json         print JSON\n"
	"Exit 1 when cycle C (or C1 and C2) recorded no manifest; with none\n"
	"recorded yet, plain 'versions' says so and exits 0 ({} with --json).\n"
	"Examples:\n"
	"  warden versions sim-mlx-lm\n"
	"  warden versions --diff demo-1 demo-2\n",
	versions_exec,
};
