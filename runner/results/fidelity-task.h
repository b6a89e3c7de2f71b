/*
 * fidelity-task.h - the fidelity task: a classification task in the shape
 * of SiliconBench's GMRID (incident texts, one gold label each out of a
 * fixed label set, fixed few-shot exemplars, a prompt template), read
 * from a directory (workloads/fidelity/ by default, or the real task from
 * any path), and the chat messages it asks each item with.
 *
 * The directory holds task.json (name, labels, system prompt, template,
 * max_tokens), items.jsonl and exemplars.jsonl (one {"id", "text",
 * "label"} per line). Loading checks everything a score depends on (ids
 * unique, labels in the set, exemplars apart from items, placeholders
 * known) and names the file, line and field of any problem. Never prints,
 * never touches the store.
 */
#ifndef WARDEN_FIDELITY_TASK_H
#define WARDEN_FIDELITY_TASK_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "sha256.h"

struct fidelity_item {
	char *id;
	char *text;
	char *label;
};

struct fidelity_task {
	char *dir;			/* as given */
	char *name;
	int synthetic;
	char **labels;			/* the label set, in task.json order */
	size_t nlabels;
	char *system;			/* may be NULL */
	char *template;			/* {labels}, {text}, {id} */
	int max_tokens;
	struct fidelity_item *items, *exemplars;
	size_t nitems, nexemplars;
	/* sha256 of each file, and of the three together (the task digest
	 * results carry): sha256 of "task.json HEX\nitems.jsonl HEX\n
	 * exemplars.jsonl HEX\n". */
	char task_sha256[SHA256_HEX_LEN + 1];
	char items_sha256[SHA256_HEX_LEN + 1];
	char exemplars_sha256[SHA256_HEX_LEN + 1];
	char digest[SHA256_HEX_LEN + 1];
};

/* Load the task in dir; display names it in messages (e.g.
 * "workloads/fidelity"). Input errors are WEXIT_INPUT at FILE:LINE. */
struct werr *fidelity_task_load(struct fidelity_task **out, const char *dir,
    const char *display);
void fidelity_task_free(struct fidelity_task *t);

/* Index of label in the set, or -1. Exact comparison. */
int fidelity_task_label_index(const struct fidelity_task *t, const char *label);
/* Index of the item with id, or -1. */
long fidelity_task_item_index(const struct fidelity_task *t, const char *id);

/*
 * The messages asking item i with the first shots exemplars: the system
 * prompt (when set), then per exemplar the user turn (the template over
 * the exemplar) and the assistant turn (its label), then the user turn of
 * the item. New reference.
 */
json_t *fidelity_task_messages(const struct fidelity_task *t, size_t item,
    size_t shots);

/* {"name", "sha256", "synthetic", "labels", "items", "exemplars",
 * "files": {"task.json": HEX, ...}} for provenance. */
json_t *fidelity_task_json(const struct fidelity_task *t);

#endif
