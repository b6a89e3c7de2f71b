/*
 * gate.c - the audit gates over a result set, the comparison with the
 * last published snapshot, and the recorded gate run. See gate.h; what
 * it reports beside the verdicts is gate-report.c's.
 *
 * Only completion, fidelity and coverage decide; speed and memory are
 * reported and must never change a verdict. Never prints.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "buf.h"
#include "jsonget.h"
#include "store-campaign.h"
#include "util.h"
#include "results/fidelity-table.h"
#include "results/gate.h"
#include "results/gate-private.h"
#include "results/store-results.h"

static void
fail(json_t *check, const char *cell, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(json_t *check, const char *cell, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	json_object_set_new(check, "pass", json_false());
	json_array_append_new(json_object_get(check, "failures"), json_pack(
	    "{s:s, s:s}", "cell", cell, "why", buf_cstr(&b)));
	buf_free(&b);
}

static json_t *
check_new(void)
{
	return json_pack("{s:b, s:[]}", "pass", 1, "failures");
}

/* The first line of s, at most 120 bytes, for a reason. */
static char *
first_line(const char *s)
{
	size_t n = strcspn(s, "\n;");

	return xstrndup(s, n > 120 ? 120 : n);
}

/* The engines of the set: campaign and measured fidelity documents. */
static json_t *
engines_of(const json_t *camp, const json_t *fid)
{
	json_t *names = json_object(), *list = json_array();
	const json_t *doc;
	const char **v, *k;
	json_t *x;
	size_t i, n = 0;

	json_array_foreach(camp, i, doc)
		json_object_set_new(names, jsonget_str(doc, "engine"),
		    json_true());
	json_array_foreach(fid, i, doc)
		json_object_set_new(names, jsonget_str(doc, "engine"),
		    json_true());
	v = xcalloc(json_object_size(names) + 1, sizeof(*v));
	json_object_foreach(names, k, x)
		v[n++] = k;
	qsort(v, n, sizeof(*v), strcmp_ptr);
	for (i = 0; i < n; i++)
		json_array_append_new(list, json_string(v[i]));
	free(v);
	json_decref(names);
	return list;
}

/* Did engine complete any request of model? */
static int
serves(const json_t *camp, const char *engine, const char *model)
{
	const json_t *doc, *c;
	size_t i, j;

	json_array_foreach(camp, i, doc) {
		if (strcmp(jsonget_str(doc, "engine"), engine) != 0 ||
		    strcmp(jsonget_str(doc, "model"), model) != 0)
			continue;
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c)
			if (jsonget_int(c, "completed") > 0)
				return 1;
	}
	return 0;
}

static json_t *
gate_coverage(const struct policy *pol, const json_t *camp, const char *engine)
{
	json_t *check = check_new();
	const json_t *doc, *c, *seen;
	const char *model;
	char *why;
	size_t m, i, j;

	for (m = 0; m < pol->gates.required_models.n; m++) {
		model = pol->gates.required_models.v[m];
		if (serves(camp, engine, model))
			continue;
		seen = NULL;
		json_array_foreach(camp, i, doc)
			if (strcmp(jsonget_str(doc, "engine"), engine) == 0 &&
			    strcmp(jsonget_str(doc, "model"), model) == 0)
				json_array_foreach(json_object_get(doc,
				    "concurrency_results"), j, c)
					if (seen == NULL)
						seen = c;
		if (seen == NULL) {
			fail(check, model, "%s: not measured", model);
			continue;
		}
		why = first_line(json_is_string(json_object_get(seen,
		    "detail")) ? jsonget_str(seen, "detail") : "");
		fail(check, model, "%s: no request completed (%s%s%s)", model,
		    jsonget_str(seen, "outcome"), why[0] ? ": " : "", why);
		free(why);
	}
	return check;
}

static json_t *
gate_completion(const struct policy *pol, const json_t *camp,
    const char *engine)
{
	json_t *check = check_new();
	const json_t *doc, *c;
	char *cell;
	size_t m, s, l, i, j, found, served = 0;
	json_int_t done, total;

	for (m = 0; m < pol->models.n; m++) {
		if (!serves(camp, engine, pol->models.v[m]))
			continue;
		served++;
		for (s = 0; s < pol->campaign.splits.n; s++) {
			for (l = 0; l < pol->campaign.n_concurrency; l++) {
				cell = xasprintf("%s/%s c=%d", pol->models.v[m],
				    pol->campaign.splits.v[s],
				    pol->campaign.concurrency[l]);
				found = 0;
				json_array_foreach(camp, i, doc) {
					if (strcmp(jsonget_str(doc, "engine"),
					    engine) ||
					    strcmp(jsonget_str(doc, "model"),
					    pol->models.v[m]) ||
					    strcmp(jsonget_str(doc, "split"),
					    pol->campaign.splits.v[s]))
						continue;
					json_array_foreach(json_object_get(doc,
					    "concurrency_results"), j, c) {
						if (jsonget_int(c,
						    "concurrency") !=
						    pol->campaign.concurrency[l])
							continue;
						found++;
						done = jsonget_int(c,
						    "completed");
						total = jsonget_int(c, "total");
						if (total > 0 && done *
						    pol->gates.completion_of >=
						    (json_int_t)pol->gates.completion_min
						    * total)
							continue;
						fail(check, cell,
						    "%s: %lld/%lld "
						    "completed (%s)", cell,
						    (long long)done,
						    (long long)total,
						    jsonget_str(c, "outcome"));
					}
				}
				if (found == 0)
					fail(check, cell, "%s: not measured", cell);
				free(cell);
			}
		}
	}
	if (served == 0)
		fail(check, "-", "no model served a request");
	return check;
}

static json_t *
gate_fidelity(const struct policy *pol, const json_t *rows,
    const char *engine)
{
	json_t *check = check_new(), *cells = json_array();
	const json_t *row, *ref;
	char *cell;
	double d, band = pol->gates.fidelity_band_pp;
	size_t i, n = 0;

	/* A bench whose cycle measures no fidelity does not gate it. */
	if (!pol->cycle.fidelity) {
		json_object_set_new(check, "not_gated", json_string("policy "
		    "'cycle.fidelity' is false"));
		json_object_set_new(check, "cells", cells);
		return check;
	}
	json_array_foreach(rows, i, row) {
		if (strcmp(jsonget_str(row, "engine"), engine) != 0)
			continue;
		n++;
		ref = json_object_get(row, "reference");
		cell = xasprintf("%s %lld-shot", jsonget_str(row, "model"),
		    (long long)jsonget_int(row, "shots"));
		json_array_append_new(cells, json_pack("{s:s, s:O?, s:O?, "
		    "s:O?, s:O?}", "cell", cell, "weighted_f1",
		    json_object_get(row, "weighted_f1"), "reference_f1",
		    json_object_get(ref, "weighted_f1"), "delta_pp",
		    json_object_get(ref, "delta_pp"), "agreement",
		    json_object_get(ref, "agreement")));
		if (!json_is_object(ref))
			fail(check, cell, "%s: no reference to compare with",
			    cell);
		else if (json_is_string(json_object_get(ref, "error")))
			fail(check, cell, "%s: %s", cell,
			    jsonget_str(ref, "error"));
		else if (json_is_string(json_object_get(ref, "not_measured")))
			fail(check, cell, "%s: not measured: the run ended %s, "
			    "with %lld of %lld items failed", cell,
			    jsonget_str(ref, "not_measured"), (long long)
			    jsonget_int(row, "request_failures"), (long long)
			    jsonget_int(row, "items"));
		else if ((d = json_number_value(json_object_get(ref,
		    "delta_pp"))) > band || d < -band)
			fail(check, cell, "%s: weighted F1 %.1f %%, %+.2f pp from "
			    "the reference's %.1f %% (band %.2f pp)", cell,
			    json_number_value(json_object_get(ref, "this_f1")) *
			    100, d, json_number_value(json_object_get(ref,
			    "weighted_f1")) * 100, band);
		free(cell);
	}
	if (n == 0)
		fail(check, "-", "no fidelity measured");
	json_object_set_new(check, "cells", cells);
	return check;
}

static json_t *
thresholds(const struct policy *pol)
{
	json_t *o, *models = json_array(), *splits = json_array();
	json_t *levels = json_array();
	size_t i;

	for (i = 0; i < pol->gates.required_models.n; i++)
		json_array_append_new(models,
		    json_string(pol->gates.required_models.v[i]));
	for (i = 0; i < pol->campaign.splits.n; i++)
		json_array_append_new(splits,
		    json_string(pol->campaign.splits.v[i]));
	for (i = 0; i < pol->campaign.n_concurrency; i++)
		json_array_append_new(levels,
		    json_integer(pol->campaign.concurrency[i]));
	o = json_pack("{s:i, s:i, s:f, s:o, s:o, s:o}",
	    "completion_min", pol->gates.completion_min,
	    "completion_of", pol->gates.completion_of,
	    "fidelity_band_pp", pol->gates.fidelity_band_pp,
	    "required_models", models, "splits", splits,
	    "concurrency", levels);
	if (!pol->cycle.fidelity)
		json_object_set_new(o, "fidelity_not_gated", json_string(
		    "policy 'cycle.fidelity' is false"));
	return o;
}

json_t *
gate_evaluate(const struct policy *pol, const struct resultset *rs)
{
	json_t *camp = resultset_docs(rs, "campaign");
	json_t *fid = resultset_docs(rs, "fidelity");
	json_t *refs = resultset_docs(rs, "reference");
	json_t *rows = fidelity_table(fid, refs);
	json_t *engines = engines_of(camp, fid), *out, *list = json_array();
	json_t *passed = json_array(), *failed = json_array(), *e, *name;
	json_t *comp, *fidel, *cov;
	char digest[SHA256_HEX_LEN + 1];
	double best;
	size_t i;
	int pass;

	json_array_foreach(engines, i, name) {
		const char *engine = json_string_value(name);

		comp = gate_completion(pol, camp, engine);
		fidel = gate_fidelity(pol, rows, engine);
		cov = gate_coverage(pol, camp, engine);
		pass = json_is_true(json_object_get(comp, "pass")) &&
		    json_is_true(json_object_get(fidel, "pass")) &&
		    json_is_true(json_object_get(cov, "pass"));
		e = json_pack("{s:s, s:b, s:o, s:o, s:o}", "engine", engine,
		    "pass", pass, "completion", comp, "fidelity", fidel,
		    "coverage", cov);
		json_object_set_new(e, "speed", gate_report_speed(camp, engine,
		    &best));
		json_object_set_new(e, "best_output_throughput", best > 0 ?
		    json_real(best) : json_null());
		json_object_set_new(e, "memory", gate_report_memory(camp, engine));
		json_array_append_new(list, e);
		json_array_append_new(pass ? passed : failed,
		    json_string(engine));
	}
	resultset_digest(rs, digest);
	out = json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "schema", 1,
	    "results_sha256", digest, "runs", resultset_runs(rs),
	    "thresholds", thresholds(pol), "engines", list,
	    "passed", passed, "failed", failed);
	json_decref(camp);
	json_decref(fid);
	json_decref(refs);
	json_decref(rows);
	json_decref(engines);
	return out;
}

size_t
gate_compare(json_t *gate, const json_t *previous)
{
	json_t *reg = json_array(), *v, *w;
	const json_t *was = json_object_get(previous, "passed");
	size_t i, j, n = 0;

	json_object_set_new(gate, "previous", previous != NULL ? json_pack(
	    "{s:O?, s:O?, s:O?}", "commit", json_object_get(previous,
	    "commit"), "results_sha256", json_object_get(previous,
	    "results_sha256"), "passed", json_object_get(previous, "passed")) :
	    json_null());
	json_array_foreach(was, i, v)
		json_array_foreach(json_object_get(gate, "failed"), j, w)
			if (json_equal(v, w)) {
				json_array_append(reg, v);
				n++;
			}
	json_object_set_new(gate, "regressions", reg);
	return n;
}

struct werr *
gate_published(json_t **out, const char *repo_root, const char *official)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	struct werr *err = NULL;
	char *refname = xasprintf("refs/heads/%s", official);
	char hex[GIT_OID_HEXSZ + 1];
	json_error_t jerr;

	*out = NULL;
	if (git_repository_open(&repo, repo_root) < 0) {
		err = werr_git("cannot open repository '%s'", repo_root);
		goto out;
	}
	if (git_reference_lookup(&ref, repo, refname) < 0)
		goto out;	/* no official branch: nothing published */
	if (git_commit_lookup(&commit, repo, git_reference_target(ref)) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		err = werr_git("cannot read '%s'", official);
		goto out;
	}
	if (git_tree_entry_bypath(&te, tree, "results/gate.json") < 0)
		goto out;	/* nothing published yet */
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
		err = werr_git("cannot read results/gate.json of '%s'", official);
		goto out;
	}
	*out = json_loadb(git_blob_rawcontent(blob),
	    (size_t)git_blob_rawsize(blob), 0, &jerr);
	if (*out == NULL) {
		err = werr_at("results/gate.json", jerr.line, jerr.column, NULL,
		    "in '%s': %s", official, jerr.text);
		goto out;
	}
	git_oid_tostr(hex, sizeof(hex), git_commit_id(commit));
	json_object_set_new(*out, "commit", json_string(hex));
out:
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(commit);
	git_reference_free(ref);
	git_repository_free(repo);
	free(refname);
	return err;
}

struct werr *
gate_resultset(struct resultset *rs, const struct gate_input *in)
{
	char *latest = NULL, *ref = NULL, *ref_engine = NULL;
	struct werr *err = NULL;
	size_t i;

	resultset_init(rs);
	if (in->ncampaigns == 0) {
		if ((err = store_campaign_run_latest(in->store, &latest)) != NULL)
			goto out;
		if (latest == NULL) {
			err = werr_new(WEXIT_INPUT, "no finished campaign run to "
			    "gate; run 'warden campaign' first");
			goto out;
		}
		err = resultset_add_campaign(rs, in->store, in->policy,
		    in->repo_root, latest);
		free(latest);
		latest = NULL;
	}
	for (i = 0; err == NULL && i < in->ncampaigns; i++)
		err = resultset_add_campaign(rs, in->store, in->policy,
		    in->repo_root, in->campaigns[i]);
	if (err == NULL && in->nfidelity == 0 && !in->no_fidelity &&
	    (err = store_fidelity_run_latest(in->store, &latest)) == NULL &&
	    latest != NULL)
		err = resultset_add_fidelity(rs, in->store, latest, NULL);
	for (i = 0; err == NULL && i < in->nfidelity; i++)
		err = resultset_add_fidelity(rs, in->store, in->fidelity[i],
		    NULL);
	if (err == NULL && (err = store_fidelity_reference(in->store, &ref,
	    &ref_engine)) == NULL && ref != NULL)
		err = resultset_add_fidelity(rs, in->store, ref, ref_engine);
	if (err == NULL)
		err = resultset_check(rs);
out:
	free(latest);
	free(ref);
	free(ref_engine);
	if (err != NULL)
		resultset_free(rs);
	return err;
}

struct werr *
gate_judge(json_t **out, const struct gate_input *in,
    const struct resultset *rs)
{
	json_t *gate, *prev = NULL;
	struct werr *err;
	int64_t id;

	*out = NULL;
	if ((err = gate_published(&prev, in->repo_root,
	    in->policy->official_branch)) != NULL)
		return err;
	gate = gate_evaluate(in->policy, rs);
	gate_compare(gate, prev);
	json_decref(prev);
	if ((err = store_gate_record(in->store, json_string_value(
	    json_object_get(gate, "results_sha256")), json_object_get(gate,
	    "runs"), gate, &id)) != NULL) {
		json_decref(gate);
		return err;
	}
	json_object_set_new(gate, "record", json_integer(id));
	*out = gate;
	return NULL;
}

struct werr *
gate_run(json_t **out, const struct gate_input *in)
{
	struct resultset rs;
	struct werr *err;

	*out = NULL;
	if ((err = gate_resultset(&rs, in)) != NULL)
		return err;
	err = gate_judge(out, in, &rs);
	resultset_free(&rs);
	return err;
}
