/*
 * initrepo-fidelity.c - the small fidelity task `warden init` writes, so
 * that the new repository's engine is scored and its gate can pass:
 * workloads/fidelity/ in the format of workloads/README.md (task.json,
 * items.jsonl, exemplars.jsonl), four labels of made-up issue reports,
 * eight items a label and five exemplars, from fixed word lists, so the
 * same warden always writes the same bytes.
 *
 * Never prints; writes nothing itself (initrepo.c writes the text).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "initrepo.h"
#include "util.h"

#define PER_LABEL 8
#define EXEMPLARS 5

static const char *const labels[] = {
	"bug report", "feature request", "question", "praise",
};
#define NLABELS (sizeof(labels) / sizeof(labels[0]))

static const char *const things[] = {
	"the export button", "the search page", "the login form",
	"the settings menu", "the dark theme", "the sync job",
	"the command line tool", "the API client", "the upload dialog",
	"the weekly report", "the mobile app", "the plugin loader",
	"the billing page",
};
#define NTHINGS (sizeof(things) / sizeof(things[0]))

/* One sentence per label around the thing it is about. */
static const char *const shapes[][2] = {
	{ "Since the last release ", " crashes whenever I open it twice." },
	{ "It would help if ", " could also work offline." },
	{ "How do I change the language of ", "?" },
	{ "Thank you for ", ", it saved our team hours this week." },
};

static json_t *
item(const char *id, size_t label, size_t thing)
{
	char *text = xasprintf("%s%s%s", shapes[label][0],
	    things[thing % NTHINGS], shapes[label][1]);
	json_t *o = json_pack("{s:s, s:s, s:s}", "id", id, "label",
	    labels[label], "text", text);

	free(text);
	return o;
}

static void
append_line(struct buf *b, json_t *o)
{
	char *line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENSURE_ASCII);

	if (line == NULL)
		fatal("out of memory");
	buf_printf(b, "%s\n", line);
	free(line);
	json_decref(o);
}

char *
initrepo_fidelity_text(const char *file)
{
	struct buf b = BUF_INIT;
	json_t *o, *ls;
	char id[32], *text;
	size_t i, k;

	if (strcmp(file, "task.json") == 0) {
		ls = json_array();
		for (i = 0; i < NLABELS; i++)
			json_array_append_new(ls, json_string(labels[i]));
		o = json_pack("{s:i, s:s, s:b, s:o, s:s, s:s, s:i, s:s}",
		    "schema", 1, "name", "example-issues", "synthetic", 1,
		    "labels", ls, "system", "You sort the reports users send "
		    "to a software project.", "template", "Classify this "
		    "report into exactly one of these categories: {labels}.\n"
		    "Reply with the category name only.\n\nReport: {text}\n\n"
		    "CLASSIFY id={id}", "max_tokens", 8, "note", "a small "
		    "synthetic example task written by warden init; replace "
		    "it with the benchmark's own");
		if ((text = json_dumps(o, JSON_INDENT(2) |
		    JSON_SORT_KEYS)) == NULL)
			fatal("out of memory");
		buf_printf(&b, "%s\n", text);
		free(text);
		json_decref(o);
	} else if (strcmp(file, "items.jsonl") == 0) {
		for (k = 0; k < PER_LABEL; k++)
			for (i = 0; i < NLABELS; i++) {
				snprintf(id, sizeof(id), "issue-%04zu",
				    k * NLABELS + i + 1);
				append_line(&b, item(id, i, k * 3 + i));
			}
	} else {
		for (k = 0; k < EXEMPLARS; k++) {
			snprintf(id, sizeof(id), "issue-ex-%zu", k + 1);
			append_line(&b, item(id, k % NLABELS, NTHINGS - 1 - k));
		}
	}
	return buf_detach(&b);
}
