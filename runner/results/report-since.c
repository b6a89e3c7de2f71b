/*
 * report-since.c - what moved since the last snapshot: the results on
 * the official branch (its results/comparison.json and manifest.json)
 * against this snapshot's, cell by cell (engine x model x split x
 * concurrency, on one machine), each judged by the regressions rule
 * (regress_compare(): the policy's rank test and threshold, both ways) on
 * the two runs' per-request samples when both are in the store, else
 * their ratio only. See report.h.
 *
 * Reads the repository and the store; never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "jsonget.h"
#include "quote.h"
#include "regress/regress.h"
#include "repo.h"
#include "util.h"
#include "results/report.h"

json_t *
report_previous(const char *repo_root, const char *branch)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	char *ref = xasprintf("refs/heads/%s", branch);
	json_t *cmp = NULL, *man = NULL, *out = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid id;

	if (git_repository_open(&repo, repo_root) < 0 ||
	    git_reference_name_to_id(&id, repo, ref) < 0 ||
	    git_commit_lookup(&commit, repo, &id) < 0)
		goto out;
	cmp = repo_tree_json(repo, git_commit_tree_id(commit),
	    "results/comparison.json");
	man = repo_tree_json(repo, git_commit_tree_id(commit),
	    "results/manifest.json");
	if (json_is_object(cmp) && json_is_object(man))
		out = json_pack("{s:s, s:O, s:O, s:O}", "official",
		    git_oid_tostr(hex, sizeof(hex), &id), "snapshot_sha256",
		    json_object_get(man, "manifest_sha256"), "commit",
		    json_object_get(man, "commit"), "comparison", cmp);
out:
	json_decref(cmp);
	json_decref(man);
	git_commit_free(commit);
	git_repository_free(repo);
	free(ref);
	return out;
}

/* The row of prev's tables for row r of table t, or NULL. */
static const json_t *
prev_row(const json_t *prev, const json_t *t, const json_t *r)
{
	const json_t *pt, *pr;
	size_t i, j;

	json_array_foreach(json_object_get(prev, "tables"), i, pt) {
		if (!json_equal(json_object_get(pt, "model"),
		    json_object_get(t, "model")) ||
		    !json_equal(json_object_get(pt, "split"),
		    json_object_get(t, "split")))
			continue;
		json_array_foreach(json_object_get(pt, "rows"), j, pr)
			if (json_equal(json_object_get(pr, "engine"),
			    json_object_get(r, "engine")) &&
			    json_equal(json_object_get(pr, "machine"),
			    json_object_get(r, "machine")) &&
			    jsonget_int(pr, "concurrency") ==
			    jsonget_int(r, "concurrency"))
				return pr;
	}
	return NULL;
}

/* before -> after of a figure of two rows, with their ratio. */
static json_t *
figure(const json_t *pr, const json_t *r, const char *key)
{
	double b = json_number_value(json_object_get(pr, key));
	double a = json_number_value(json_object_get(r, key));

	return json_pack("{s:f, s:f, s:f}", "before", b, "after", a, "ratio",
	    b > 0 ? a / b : 0.0);
}

/* regress_compare() of two runs, once per pair (cache). */
static const json_t *
compared(json_t *cache, struct store *store, const struct policy *pol,
    const char *before, const char *after)
{
	char *key = xasprintf("%s\n%s", before, after);
	json_t *b, *a, *res = json_object_get(cache, key);
	struct werr *err;

	if (res == NULL) {
		b = json_pack("[s]", before);
		a = json_pack("[s]", after);
		if ((err = regress_compare(&res, store, pol, b, a)) != NULL) {
			werr_free(err);
			res = json_null();
		}
		json_object_set_new(cache, key, res);
		json_decref(b);
		json_decref(a);
	}
	free(key);
	return res;
}

/* The cell of regress_compare()'s result res for row r of table t. */
static const json_t *
cell_of(const json_t *res, const json_t *t, const json_t *r)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(res, "cells"), i, c)
		if (json_equal(json_object_get(c, "engine"),
		    json_object_get(r, "engine")) &&
		    json_equal(json_object_get(c, "model"),
		    json_object_get(t, "model")) &&
		    json_equal(json_object_get(c, "split"),
		    json_object_get(t, "split")) &&
		    jsonget_int(c, "concurrency") ==
		    jsonget_int(r, "concurrency"))
			return c;
	return NULL;
}

json_t *
report_since(const json_t *previous, const json_t *comparison,
    struct store *store, const struct policy *pol)
{
	const json_t *prev = json_object_get(previous, "comparison");
	const json_t *t, *r, *pr, *res, *c;
	json_t *cells, *fresh, *cache, *o;
	size_t i, j;

	if (!json_is_object(prev))
		return json_pack("{s:s}", "why", "the official branch has "
		    "no results yet");
	cells = json_array();
	fresh = json_array();
	cache = json_object();
	json_array_foreach(json_object_get(comparison, "tables"), i, t)
		json_array_foreach(json_object_get(t, "rows"), j, r) {
			o = json_pack("{s:O, s:O, s:O, s:O}", "engine",
			    json_object_get(r, "engine"), "model",
			    json_object_get(t, "model"), "split",
			    json_object_get(t, "split"), "concurrency",
			    json_object_get(r, "concurrency"));
			if ((pr = prev_row(prev, t, r)) == NULL) {
				json_array_append_new(fresh, o);
				continue;
			}
			json_object_set(o, "before_run", json_object_get(pr,
			    "run_id"));
			json_object_set(o, "after_run", json_object_get(r,
			    "run_id"));
			json_object_set_new(o, "output_throughput", figure(pr,
			    r, "output_throughput"));
			json_object_set_new(o, "median_tpot_ms", figure(pr, r,
			    "median_tpot_ms"));
			res = store == NULL || !json_is_string(json_object_get(
			    pr, "run_id")) ? NULL : compared(cache, store, pol,
			    jsonget_str(pr, "run_id"), jsonget_str(r, "run_id"));
			if ((c = cell_of(res, t, r)) != NULL) {
				json_object_set(o, "verdict",
				    json_object_get(c, "verdict"));
				json_object_set(o, "text",
				    json_object_get(c, "text"));
				json_object_set(o, "metrics",
				    json_object_get(c, "metrics"));
			} else {
				json_object_set_new(o, "verdict",
				    json_string("untested"));
				json_object_set_new(o, "text", json_string(
				    "not tested: the runs' requests are not "
				    "both in this store"));
			}
			json_array_append_new(cells, o);
		}
	json_decref(cache);
	return json_pack("{s:O, s:O, s:O, s:{s:f, s:f, s:i}, s:o, s:o}",
	    "official", json_object_get(previous, "official"), "commit",
	    json_object_get(previous, "commit"), "measured",
	    json_object_get(prev, "measured") ? json_object_get(prev,
	    "measured") : json_null(), "policy", "threshold_pct",
	    pol->regressions.threshold_pct, "alpha", pol->regressions.alpha,
	    "min_samples", pol->regressions.min_samples, "cells", cells,
	    "new", fresh);
}

/* "1.2 → 3.4 (2.83×)" of a figure, or "-". */
static void
fig_cell(struct buf *b, const json_t *f, int decimals)
{
	double bf = json_number_value(json_object_get(f, "before"));
	double af = json_number_value(json_object_get(f, "after"));

	if (!(bf > 0) || !(af > 0)) {
		buf_puts(b, " | -");
		return;
	}
	buf_printf(b, " | %.*f \u2192 %.*f (%.2f\u00d7)", decimals, bf,
	    decimals, af, af / bf);
}

/* "TITLE: ENGINE MODEL/SPLIT c=N, ..." of the cells of list (only the
 * unchanged ones when unchanged), in one line. */
static void
md_list(struct buf *b, const json_t *list, int unchanged, const char *title)
{
	const json_t *c;
	size_t i, n = 0;

	json_array_foreach((json_t *)list, i, c) {
		if (unchanged && strcmp(jsonget_str(c, "verdict"),
		    "unchanged") != 0)
			continue;
		buf_printf(b, n++ == 0 ? "%s: " : ", ", title);
		quote_md(b, jsonget_str(c, "engine"));
		buf_addch(b, ' ');
		quote_md(b, jsonget_str(c, "model"));
		buf_addch(b, '/');
		quote_md(b, jsonget_str(c, "split"));
		buf_printf(b, " c=%lld", (long long)jsonget_int(c,
		    "concurrency"));
	}
	if (n > 0)
		buf_puts(b, ".\n\n");
}

void
report_md_since(struct buf *b, const json_t *since)
{
	const json_t *c, *m = json_object_get(since, "measured");
	size_t i, n = 0;

	buf_puts(b, "## Since the last snapshot\n\n");
	if (json_is_string(json_object_get(since, "why"))) {
		buf_printf(b, "Nothing to compare with: %s.\n\n",
		    jsonget_str(since, "why"));
		return;
	}
	buf_printf(b, "Against the results on the official branch at "
	    "`%.12s` (measured at commit `%.12s`", jsonget_str(since,
	    "official"), jsonget_str(since, "commit"));
	if (json_is_string(json_object_get(m, "from")))
		buf_printf(b, ", from %s to %s", jsonget_str(m, "from"),
		    jsonget_str(m, "to"));
	buf_printf(b, "). Each cell's two runs are judged by the regressions "
	    "rule: Mann-Whitney U on the per-request samples at p < %g and "
	    "at least %g %% worse, or better.\n\n", json_number_value(
	    json_object_get(json_object_get(since, "policy"), "alpha")),
	    json_number_value(json_object_get(json_object_get(since,
	    "policy"), "threshold_pct")));
	json_array_foreach(json_object_get(since, "cells"), i, c) {
		if (strcmp(jsonget_str(c, "verdict"), "unchanged") == 0)
			continue;
		if (n++ == 0)
			buf_puts(b, "| engine | model / split | c | output tok/s "
			    "| TPOT p50 (ms) | verdict |\n"
			    "|---|---|--:|--:|--:|---|\n");
		buf_puts(b, "| ");
		quote_md(b, jsonget_str(c, "engine"));
		buf_puts(b, " | ");
		quote_md(b, jsonget_str(c, "model"));
		buf_puts(b, " / ");
		quote_md(b, jsonget_str(c, "split"));
		buf_printf(b, " | %lld", (long long)jsonget_int(c,
		    "concurrency"));
		fig_cell(b, json_object_get(c, "output_throughput"), 1);
		fig_cell(b, json_object_get(c, "median_tpot_ms"), 2);
		buf_puts(b, " | ");
		quote_md(b, jsonget_str(c, "text"));
		buf_puts(b, " |\n");
	}
	if (n > 0)
		buf_puts(b, "\n");
	md_list(b, json_object_get(since, "cells"), 1, "No measurable change");
	md_list(b, json_object_get(since, "new"), 0, "New since");
}
