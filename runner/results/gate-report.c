/*
 * gate-report.c - what the gate reports and never decides on: each
 * engine's speed and memory (gate-private.h). Never prints.
 */
#include "config.h"

#include <string.h>

#include <jansson.h>

#include "campaign-report.h"
#include "jsonget.h"
#include "results/gate-private.h"

/* Speed per (model, split, machine): output tok/s at each level; *best
 * the highest of them. */
json_t *
gate_report_speed(const json_t *camp, const char *engine, double *best)
{
	json_t *out = json_array(), *levels;
	const json_t *doc, *c, *v;
	size_t i, j;

	*best = 0;
	json_array_foreach(camp, i, doc) {
		if (strcmp(jsonget_str(doc, "engine"), engine) != 0)
			continue;
		levels = json_array();
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c) {
			v = json_object_get(json_object_get(c, "summary"),
			    "output_throughput");
			if (json_is_number(v) && json_number_value(v) > *best)
				*best = json_number_value(v);
			json_array_append_new(levels, json_pack("{s:I, s:O?}",
			    "concurrency", jsonget_int(c, "concurrency"),
			    "output_throughput", json_is_number(v) ? v : NULL));
		}
		json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:o}",
		    "model", jsonget_str(doc, "model"), "split",
		    jsonget_str(doc, "split"), "machine",
		    jsonget_str(doc, "machine"), "levels", levels));
	}
	return out;
}

static double
ratio(json_int_t a, json_int_t b)
{
	return b > 0 ? (double)a / (double)b : 0.0;
}

/* Memory: the highest peak, against RAM and the Metal hint, and the
 * largest growth of the engine's footprint from the lowest level to the
 * highest of one (model, split, machine). */
json_t *
gate_report_memory(const json_t *camp, const char *engine)
{
	const json_t *doc, *c, *lo, *hi, *top = NULL, *topdoc = NULL;
	json_t *out, *growth = json_null();
	json_int_t peak, ram, hint;
	double g, best = 0;
	size_t i, j;

	json_array_foreach(camp, i, doc) {
		if (strcmp(jsonget_str(doc, "engine"), engine) != 0)
			continue;
		lo = hi = NULL;
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c) {
			if (!json_is_integer(json_object_get(c,
			    "peak_system_memory_bytes")))
				continue;
			if (top == NULL || jsonget_int(c,
			    "peak_system_memory_bytes") > jsonget_int(top,
			    "peak_system_memory_bytes")) {
				top = c;
				topdoc = doc;
			}
			campaign_level_span(c, &lo, &hi);
		}
		if (lo == NULL || lo == hi || jsonget_int(lo,
		    "peak_engine_memory_bytes") <= 0)
			continue;
		g = ratio(jsonget_int(hi, "peak_engine_memory_bytes"),
		    jsonget_int(lo, "peak_engine_memory_bytes"));
		if (json_is_null(growth) || g > best) {
			best = g;
			json_decref(growth);
			growth = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f}",
			    "model", jsonget_str(doc, "model"), "split",
			    jsonget_str(doc, "split"), "from",
			    jsonget_int(lo, "concurrency"), "to",
			    jsonget_int(hi, "concurrency"), "engine_bytes_from",
			    jsonget_int(lo, "peak_engine_memory_bytes"),
			    "engine_bytes_to", jsonget_int(hi,
			    "peak_engine_memory_bytes"), "ratio", g);
		}
	}
	if (top == NULL) {
		json_decref(growth);
		return json_null();
	}
	peak = jsonget_int(top, "peak_system_memory_bytes");
	ram = jsonget_int(top, "system_memory_bytes");
	hint = jsonget_int(top, "gpu_working_set_hint_bytes");
	out = json_pack("{s:s, s:s, s:I, s:I, s:O?, s:O?, s:O?, s:o}", "model",
	    jsonget_str(topdoc, "model"), "split", jsonget_str(topdoc, "split"),
	    "concurrency", jsonget_int(top, "concurrency"),
	    "peak_system_memory_bytes", peak, "peak_engine_memory_bytes",
	    json_object_get(top, "peak_engine_memory_bytes"),
	    "system_memory_bytes", json_object_get(top, "system_memory_bytes"),
	    "gpu_working_set_hint_bytes", json_object_get(top,
	    "gpu_working_set_hint_bytes"), "growth", growth);
	json_object_set_new(out, "peak_vs_ram", ram > 0 ?
	    json_real(ratio(peak, ram)) : json_null());
	json_object_set_new(out, "peak_vs_hint", hint > 0 ?
	    json_real(ratio(peak, hint)) : json_null());
	return out;
}
