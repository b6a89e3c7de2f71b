/*
 * timeline.c - the cycle journal's timeline: each finished step of every
 * round with its times, state and one line of what its result says (the
 * line the cycle also says on standard error when the step ends, so the
 * two never disagree). Reads the step rows it is given; decides and
 * stores nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cycle-private.h"
#include "jsonget.h"
#include "util.h"

/* " LABEL #1, #2" of numbers, nothing for none. */
static void
ints(struct buf *b, const char *label, const json_t *arr)
{
	const json_t *v;
	size_t i;

	json_array_foreach((json_t *)arr, i, v)
		buf_printf(b, "%s #%lld", i ? "," : label,
		    (long long)json_integer_value(v));
}

char *
cycle_step_what(const char *step, const json_t *res)
{
	const json_t *v;
	const char *key;
	struct buf b = BUF_INIT;
	size_t i;

	if (json_is_string(json_object_get(res, "why")))
		buf_puts(&b, jsonget_str(res, "why"));
	else if (strcmp(step, "checkout") == 0)
		buf_puts(&b, jsonget_str(res, "what"));
	else if (strcmp(step, "update") == 0) {
		json_array_foreach(json_object_get(res, "engines"), i, v)
			buf_printf(&b, "%s%s %s", i ? ", " : "",
			    jsonget_str(v, "engine"),
			    jsonget_str(v, "outcome"));
		json_array_foreach(json_object_get(res, "joined"), i, v)
			buf_printf(&b, "; %s joined for policy group '%s' (%s, "
			    "held by %s)", jsonget_str(v, "engine"),
			    jsonget_str(v, "group"), jsonget_str(v, "package"),
			    jsonget_str(v, "held_by"));
	} else if (strcmp(step, "campaign") == 0) {
		buf_printf(&b, "run %s, %lld sweeps:", jsonget_str(res, "run"),
		    (long long)jsonget_int(res, "sweeps"));
		json_object_foreach(json_object_get(res, "outcomes"), key, v)
			buf_printf(&b, " %lld %s", (long long)
			    json_integer_value(v), key);
	} else if (strcmp(step, "fidelity") == 0)
		buf_printf(&b, "run %s", jsonget_str(res, "run"));
	else if (strcmp(step, "gate") == 0) {
		buf_printf(&b, "%zu passed, %zu failed",
		    json_array_size(json_object_get(res, "passed")),
		    json_array_size(json_object_get(res, "failed")));
		json_array_foreach(json_object_get(res, "regressions"), i, v)
			buf_printf(&b, "%s%s", i ? ", " : "; regressions: ",
			    json_string_value(v));
	} else if (strcmp(step, "regressions") == 0) {
		buf_printf(&b, "%lld series compared with cycles",
		    (long long)jsonget_int(res, "compared"));
		json_array_foreach(json_object_get(json_object_get(res,
		    "baseline"), "cycles"), i, v)
			buf_printf(&b, "%s %s", i ? "," : "",
			    json_string_value(v));
		if (json_array_size(json_object_get(json_object_get(res,
		    "baseline"), "cycles")) == 0)
			buf_printf(&b, " none: %s", jsonget_str(json_object_get(
			    res, "baseline"), "why"));
		ints(&b, "; alerts opened", json_object_get(res, "opened"));
		ints(&b, "; seen again", json_object_get(res, "seen"));
		ints(&b, "; fixed", json_object_get(res, "fixed"));
	} else if (strcmp(step, "triage") == 0) {
		/* an engine that cannot be compared is broken all the same
		 * (as `warden triage` and the journal's Broke line count it) */
		size_t nb = json_array_size(json_object_get(res, "broken")) +
		    json_array_size(json_object_get(res, "cannot_compare"));

		if (json_is_true(json_object_get(res, "nothing_broke")))
			buf_puts(&b, "nothing broke");
		else
			buf_printf(&b, "%zu engine%s broken", nb, nb == 1 ?
			    "" : "s");
		json_array_foreach(json_object_get(res, "cannot_compare"), i, v)
			buf_printf(&b, "%s%s (%s)", i ? ", " :
			    "; cannot be compared: ", jsonget_str(v, "engine"),
			    jsonget_str(v, "why"));
		ints(&b, "; opened", json_object_get(res, "opened"));
		ints(&b, "; fixed", json_object_get(res, "fixed"));
		ints(&b, "; reopened", json_object_get(res, "reopened"));
		ints(&b, "; fixes queued as reviews", json_object_get(res,
		    "reviews"));
	} else if (strcmp(step, "agent") == 0) {
		json_array_foreach(json_object_get(res, "runs"), i, v)
			buf_printf(&b, "%s%s: run %lld %s", i ? "; " : "",
			    jsonget_str(v, "task"),
			    (long long)jsonget_int(v, "agent_run"),
			    jsonget_str(v, "state"));
		if (b.len == 0)
			buf_puts(&b, "nothing for the agent");
	} else if (strcmp(step, "publish") == 0)
		buf_printf(&b, "snapshot %s, tag %s",
		    jsonget_str(res, "snapshot"), jsonget_str(res, "tag"));
	else if (strcmp(step, "export") == 0)
		buf_printf(&b, "%lld entries", (long long)jsonget_int(res,
		    "entries"));
	else if (strcmp(step, "journal") == 0)
		buf_puts(&b, "the cycle journal recorded");
	return buf_detach(&b);
}

json_t *
cycle_timeline(const json_t *steps)
{
	json_t *t = json_array();
	const json_t *r;
	char *line;
	size_t i;

	json_array_foreach(steps, i, r) {
		if (strcmp(jsonget_str(r, "state"), "running") == 0)
			continue;
		line = cycle_step_what(jsonget_str(r, "step"),
		    json_object_get(r, "result"));
		json_array_append_new(t, json_pack("{s:s, s:s?, s:I, s:s, s:s, "
		    "s:s}", "started", jsonget_str(r, "started"), "finished",
		    json_string_value(json_object_get(r, "finished")), "round",
		    jsonget_int(r, "round"), "step", jsonget_str(r, "step"),
		    "state", jsonget_str(r, "state"), "what", line));
		free(line);
	}
	return t;
}
