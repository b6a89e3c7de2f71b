/*
 * export-sb.c - a result set in SiliconBench's own shape, so its
 * collector (scripts/collect_results.py) and report generator
 * (scripts/generate_report.py) read it unchanged. See export-sb.h for the
 * layout and the mapping of each field. Deterministic; never prints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isotime.h"
#include "jsonget.h"
#include "util.h"
#include "results/export-sb.h"

static json_t *
number_or_null(const json_t *v, double scale)
{
	return json_is_number(v) ? json_real(json_number_value(v) * scale) :
	    json_null();
}

/* 1000 / ms: a rate per second from a time per token, null without one. */
static json_t *
rate_of(const json_t *ms)
{
	return json_is_number(ms) && json_number_value(ms) > 0 ?
	    json_real(1000.0 / json_number_value(ms)) : json_null();
}

/* SiliconBench's "error" of a level with no success: its report shows
 * "CRASHED" unless the text says "skipped" or "not run". */
static const char *
error_of(const char *outcome)
{
	if (strcmp(outcome, "skipped") == 0)
		return "skipped";
	if (strcmp(outcome, "not_ready") == 0 ||
	    strcmp(outcome, "server_crash") == 0 ||
	    strcmp(outcome, "crashed") == 0)
		return "server crashed";
	return "no successful requests";
}

/* benchmark.py's name of each figure, from warden's (export-sb.h):
 * scaled, or as a rate (1000 / ms). SiliconBench's per-request
 * "inter-token latency" is (last - first content) / (tokens - 1): TPOT. */
static const struct {
	const char *name, *from;
	double scale;
	int rate;
} figures[] = {
	{ "ttft_avg_ms", "mean_ttft_ms", 1, 0 },
	{ "ttft_p50_ms", "median_ttft_ms", 1, 0 },
	{ "ttft_p99_ms", "p99_ttft_ms", 1, 0 },
	{ "itl_avg_ms", "mean_tpot_ms", 1, 0 },
	{ "itl_p50_ms", "median_tpot_ms", 1, 0 },
	{ "throughput_avg_tps", "mean_tpot_ms", 0, 1 },
	{ "throughput_p50_tps", "median_tpot_ms", 0, 1 },
	{ "latency_avg_s", "mean_e2el_ms", 0.001, 0 },
	{ "latency_p50_s", "median_e2el_ms", 0.001, 0 },
	{ "latency_p99_s", "p99_e2el_ms", 0.001, 0 },
};

/* One concurrency level as benchmark.py's summarize() names it. */
static json_t *
level(const json_t *c)
{
	const json_t *s = json_object_get(c, "summary");
	const json_t *out = json_object_get(s, "output_throughput");
	const json_t *tot = json_object_get(s, "total_token_throughput");
	json_int_t total = jsonget_int(c, "total");
	json_int_t ok = jsonget_int(c, "completed");
	json_t *l, *samples = json_array();
	const char *detail = jsonget_str(c, "detail");
	size_t i;

	if (detail[0] != '\0')
		json_array_append_new(samples, json_text(detail));
	l = json_pack("{s:I, s:I, s:I, s:I, s:o, s:O?, s:O?, s:b, s:o}",
	    "concurrency", jsonget_int(c, "concurrency"),
	    "num_requests", total, "successful", ok,
	    "failed", total - ok,
	    "wall_time_s", number_or_null(json_object_get(s, "duration"), 1),
	    "total_output_tokens", json_object_get(s, "total_output_tokens"),
	    "total_input_tokens", json_object_get(s, "total_input_tokens"),
	    "server_usage_available", ok > 0 &&
	    jsonget_int(s, "usage_server") == ok,
	    "error_samples", samples);
	if (ok == 0) {
		json_object_set_new(l, "error", json_string(error_of(
		    jsonget_str(c, "outcome"))));
		return l;
	}
	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
		json_object_set_new(l, figures[i].name, figures[i].rate ?
		    rate_of(json_object_get(s, figures[i].from)) :
		    number_or_null(json_object_get(s, figures[i].from),
		    figures[i].scale));
	json_object_set_new(l, "output_throughput_tps", number_or_null(out, 1));
	json_object_set_new(l, "input_throughput_tps", json_is_number(out) &&
	    json_is_number(tot) ? json_real(json_number_value(tot) -
	    json_number_value(out)) : json_null());
	json_object_set_new(l, "total_token_throughput_tps",
	    number_or_null(tot, 1));
	return l;
}

/* {"version", "manifest_sha256"} of the first level's engine manifest,
 * or null (benchmark.py's framework_version when it knows none). */
static json_t *
version_of(const json_t *levels)
{
	const json_t *m = json_object_get(json_object_get(json_array_get(
	    levels, 0), "provenance"), "engine_manifest");

	if (!json_is_object(m))
		return json_null();
	return json_pack("{s:O?, s:O?, s:O?}", "version",
	    json_object_get(m, "engine_version"), "manifest_sha256",
	    json_object_get(m, "sha256"), "commit", json_object_get(
	    json_object_get(m, "source"), "commit"));
}

/* One run document as benchmark.py writes a result; *name its file name
 * (ENGINE_YYYYmmdd_HHMMSS.json). */
static json_t *
result_of(const json_t *doc, char **name)
{
	const json_t *levels = json_object_get(doc, "concurrency_results");
	const json_t *p = json_object_get(doc, "provenance"), *c;
	const char *created = jsonget_str(doc, "created");
	json_t *out = json_array(), *r;
	double first = -1, last = -1, t;
	char stamp[20] = "", file[16] = "";
	size_t i;

	json_array_foreach(levels, i, c) {
		json_array_append_new(out, level(c));
		if ((t = isotime_seconds(jsonget_str(c, "started"))) >= 0 &&
		    (first < 0 || t < first))
			first = t;
		if ((t = isotime_seconds(jsonget_str(c,
		    "finished"))) > last)
			last = t;
	}
	if (strlen(created) >= 19) {
		snprintf(stamp, sizeof(stamp), "%.19s", created);
		snprintf(file, sizeof(file), "%.4s%.2s%.2s_%.2s%.2s%.2s",
		    created, created + 5, created + 8, created + 11,
		    created + 14, created + 17);
	}
	*name = xasprintf("%s_%s.json", jsonget_str(doc, "engine"), file);
	r = json_pack("{s:s, s:o, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:o, "
	    "s:f}", "framework", jsonget_str(doc, "engine"),
	    "framework_version", version_of(levels),
	    "model", jsonget_str(json_array_get(levels, 0), "served_model"),
	    "endpoint", "http://127.0.0.1:{port}", "timestamp", stamp,
	    "machine", "host", jsonget_str(doc, "machine"),
	    "chip", jsonget_str(json_object_get(p, "hardware"), "cpu"),
	    "os", "", "concurrency_results", out,
	    "total_duration_s", first >= 0 && last >= first ? last - first :
	    0.0);
	{
		const json_t *os = json_object_get(p, "os");
		char *s = xasprintf("%s %s", jsonget_str(os, "name"),
		    jsonget_str(os, "release"));

		json_object_set_new(json_object_get(r, "machine"), "os",
		    json_text(s));
		free(s);
	}
	return r;
}

static struct werr *
write_json(const char *path, const json_t *v, json_t *written)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS |
	    JSON_REAL_PRECISION(10));
	struct werr *err;

	if (text == NULL)
		return werr_new(WEXIT_PROBLEM, "cannot write '%s'", path);
	err = file_write_atomic(path, text, strlen(text));
	free(text);
	if (err == NULL)
		json_array_append_new(written, json_text(path));
	return err;
}

struct werr *
export_siliconbench(json_t **out, const struct resultset *rs,
    const char *dir, const char *chip)
{
	json_t *docs = resultset_docs(rs, "campaign"), *splits = json_object();
	json_t *written = json_array(), *r, *cmp;
	const json_t *doc;
	const char *key;
	struct werr *err = NULL;
	char *name = NULL, *sub = NULL, *path = NULL;
	size_t i;

	*out = NULL;
	json_array_foreach(docs, i, doc) {
		sub = chip != NULL ? xasprintf("%s/results/%s/%s/%s", dir,
		    jsonget_str(doc, "model"), chip, jsonget_str(doc, "split")) :
		    xasprintf("%s/results/%s/%s", dir, jsonget_str(doc,
		    "model"), jsonget_str(doc, "split"));
		r = result_of(doc, &name);
		path = path_join(sub, name);
		if ((err = mkdir_p(sub)) == NULL)
			err = write_json(path, r, written);
		/* comparison.json as collect_results.py would make it */
		if ((cmp = json_object_get(splits, sub)) == NULL) {
			cmp = json_pack("{s:s, s:s, s:[], s:{}}", "model_name",
			    jsonget_str(doc, "model"), "split", jsonget_str(doc, "split"), "frameworks",
			    "results");
			json_object_set_new(splits, sub, cmp);
		}
		if (json_object_get(json_object_get(cmp, "results"),
		    jsonget_str(doc, "engine")) == NULL)
			json_array_append_new(json_object_get(cmp,
			    "frameworks"), json_string(jsonget_str(doc,
			    "engine")));
		json_object_set(json_object_get(cmp, "results"),
		    jsonget_str(doc, "engine"), r);
		json_decref(r);
		free(name);
		free(path);
		free(sub);
		if (err != NULL)
			goto done;
	}
	json_object_foreach(splits, key, cmp) {
		path = path_join(key, "comparison.json");
		err = write_json(path, cmp, written);
		free(path);
		if (err != NULL)
			goto done;
	}
	*out = json_pack("{s:s, s:O}", "format", "siliconbench", "files",
	    written);
done:
	json_decref(docs);
	json_decref(splits);
	json_decref(written);
	return err;
}
