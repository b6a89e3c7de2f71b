/*
 * fidelity-task.c - load the fidelity task and build its prompts. See
 * fidelity-task.h. Never prints, never touches the store.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "schema.h"
#include "util.h"
#include "results/fidelity-task.h"

static const struct schema s_text = { .type = SCHEMA_STRING, .has_min = 1, .min = 1 };
static const struct schema s_texts = { .type = SCHEMA_ARRAY, .items = &s_text,
    .has_min = 1, .min = 2 };
static const struct schema s_bool = { .type = SCHEMA_BOOLEAN };
static const struct schema s_tokens = { .type = SCHEMA_INTEGER, .has_min = 1,
    .min = 1, .has_max = 1, .max = 4096 };
static const struct schema s_version = { .type = SCHEMA_INTEGER, .has_min = 1,
    .min = 1, .has_max = 1, .max = 1 };

static const struct schema_field f_task[] = {
	{ "schema", &s_version, 1 },
	{ "name", &s_text, 1 },
	{ "synthetic", &s_bool, 1 },
	{ "labels", &s_texts, 1 },
	{ "system", &s_text, 0 },
	{ "template", &s_text, 1 },
	{ "max_tokens", &s_tokens, 1 },
	{ "note", &s_text, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_task = { .type = SCHEMA_OBJECT, .fields = f_task };

static void
items_free(struct fidelity_item *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].text);
		free(v[i].label);
	}
	free(v);
}

void
fidelity_task_free(struct fidelity_task *t)
{
	size_t i;

	if (t == NULL)
		return;
	free(t->dir);
	free(t->name);
	for (i = 0; i < t->nlabels; i++)
		free(t->labels[i]);
	free(t->labels);
	free(t->system);
	free(t->template);
	items_free(t->items, t->nitems);
	items_free(t->exemplars, t->nexemplars);
	free(t);
}

int
fidelity_task_label_index(const struct fidelity_task *t, const char *label)
{
	size_t i;

	for (i = 0; i < t->nlabels; i++)
		if (strcmp(t->labels[i], label) == 0)
			return (int)i;
	return -1;
}

long
fidelity_task_item_index(const struct fidelity_task *t, const char *id)
{
	size_t i;

	for (i = 0; i < t->nitems; i++)
		if (strcmp(t->items[i].id, id) == 0)
			return (long)i;
	return -1;
}

/* The placeholders of the template must be {labels}, {text} or {id}. */
static struct werr *
template_check(const char *tmpl, const char *file)
{
	const char *p = tmpl, *end;

	while ((p = strchr(p, '{')) != NULL) {
		end = strchr(p, '}');
		if (end == NULL)
			return werr_at(file, 0, 0, "template",
			    "has an unterminated '{'");
		if (!((end - p == 7 && strncmp(p, "{labels", 7) == 0) ||
		    (end - p == 5 && strncmp(p, "{text", 5) == 0) ||
		    (end - p == 3 && strncmp(p, "{id", 3) == 0)))
			return werr_at(file, 0, 0, "template", "has unknown "
			    "placeholder '%.*s'; known: {labels} {text} {id}",
			    (int)(end - p + 1), p);
		p = end + 1;
	}
	return NULL;
}

static struct werr *
load_task_json(struct fidelity_task *t, const char *path, const char *file)
{
	struct problems probs = { NULL, 0, 0 };
	struct buf text = BUF_INIT;
	struct werr *err;
	json_t *doc = NULL, *v;
	size_t i, j;

	if ((err = schema_read_input(&text, path, FILE_MAX_CONFIG)) != NULL)
		goto out;
	sha256_hex(text.data, text.len, t->task_sha256);
	if (schema_load(&doc, &s_task, buf_cstr(&text), text.len, file,
	    &probs) != 0) {
		err = problems_to_werr(&probs);
		goto out;
	}
	t->name = xstrdup(json_string_value(json_object_get(doc, "name")));
	t->synthetic = json_is_true(json_object_get(doc, "synthetic"));
	v = json_object_get(doc, "labels");
	t->nlabels = json_array_size(v);
	t->labels = xcalloc(t->nlabels + 1, sizeof(*t->labels));
	for (i = 0; i < t->nlabels; i++) {
		t->labels[i] = xstrdup(json_string_value(json_array_get(v, i)));
		for (j = 0; j < i; j++)
			if (strcmp(t->labels[i], t->labels[j]) == 0) {
				err = werr_at(file, 0, 0, "labels",
				    "lists '%s' twice", t->labels[i]);
				goto out;
			}
		if (strcmp(t->labels[i], "none") == 0) {
			err = werr_at(file, 0, 0, "labels", "'none' is the "
			    "class of unanswered items and cannot be a label");
			goto out;
		}
	}
	if ((v = json_object_get(doc, "system")) != NULL)
		t->system = xstrdup(json_string_value(v));
	t->template = xstrdup(json_string_value(json_object_get(doc,
	    "template")));
	t->max_tokens = (int)json_integer_value(json_object_get(doc,
	    "max_tokens"));
	err = template_check(t->template, file);
out:
	problems_free(&probs);
	json_decref(doc);
	buf_free(&text);
	return err;
}

static const char *
line_string(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) && json_string_length(v) > 0 ?
	    json_string_value(v) : NULL;
}

/* items.jsonl or exemplars.jsonl: {"id", "text", "label"} per line. */
static struct werr *
load_items(struct fidelity_task *t, const char *path, const char *file,
    struct fidelity_item **out, size_t *nout, char *digest)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	json_error_t jerr;
	char *line, *next;
	const char *id, *text, *label;
	json_t *o = NULL;
	size_t n = 0, j;
	int lineno = 0;

	*out = NULL;
	*nout = 0;
	if ((err = schema_read_input(&b, path, FILE_MAX_DATA)) != NULL)
		return err;
	sha256_hex(b.data, b.len, digest);
	for (line = b.len ? b.data : NULL; line != NULL && *line != '\0';
	    line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*line == '\0')
			continue;
		if ((o = json_loads(line, 0, &jerr)) == NULL) {
			err = werr_at(file, lineno, jerr.column, NULL,
			    "not JSON: %s", jerr.text);
			goto out;
		}
		id = line_string(o, "id");
		text = line_string(o, "text");
		label = line_string(o, "label");
		if (id == NULL || text == NULL || label == NULL) {
			err = werr_at(file, lineno, 0, id == NULL ? "id" :
			    text == NULL ? "text" : "label",
			    "must be a non-empty string");
			goto out;
		}
		if (fidelity_task_label_index(t, label) < 0) {
			err = werr_at(file, lineno, 0, "label", "'%s' is not in "
			    "the label set of task.json", label);
			goto out;
		}
		for (j = 0; j < n; j++)
			if (strcmp((*out)[j].id, id) == 0) {
				err = werr_at(file, lineno, 0, "id", "'%s' "
				    "appears twice", id);
				goto out;
			}
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n].id = xstrdup(id);
		(*out)[n].text = xstrdup(text);
		(*out)[n].label = xstrdup(label);
		n++;
		json_decref(o);
		o = NULL;
	}
	if (n == 0)
		err = werr_at(file, 0, 0, NULL, "holds no items");
out:
	json_decref(o);
	*nout = n;
	buf_free(&b);
	return err;
}

static struct werr *
load_part(struct fidelity_task *t, const char *dir, const char *display,
    const char *name, int which)
{
	char *path = path_join(dir, name);
	char *file = xasprintf("%s/%s", display, name);
	struct werr *err;

	if (which == 0)
		err = load_task_json(t, path, file);
	else if (which == 1)
		err = load_items(t, path, file, &t->items, &t->nitems,
		    t->items_sha256);
	else
		err = load_items(t, path, file, &t->exemplars, &t->nexemplars,
		    t->exemplars_sha256);
	free(path);
	free(file);
	return err;
}

struct werr *
fidelity_task_load(struct fidelity_task **out, const char *dir,
    const char *display)
{
	struct fidelity_task *t = xcalloc(1, sizeof(*t));
	struct buf all = BUF_INIT;
	struct werr *err;
	size_t i;

	*out = NULL;
	t->dir = xstrdup(dir);
	if (!path_is_dir(dir)) {
		err = werr_new(WEXIT_INPUT, "fidelity task '%s' is not a "
		    "directory (it holds task.json, items.jsonl and "
		    "exemplars.jsonl; see workloads/README.md)", display);
		goto out;
	}
	if ((err = load_part(t, dir, display, "task.json", 0)) != NULL ||
	    (err = load_part(t, dir, display, "items.jsonl", 1)) != NULL ||
	    (err = load_part(t, dir, display, "exemplars.jsonl", 2)) != NULL)
		goto out;
	for (i = 0; i < t->nexemplars; i++)
		if (fidelity_task_item_index(t, t->exemplars[i].id) >= 0) {
			char *file = xasprintf("%s/exemplars.jsonl", display);

			err = werr_at(file, 0, 0, NULL, "exemplar '%s' is also "
			    "an item; exemplars must stay out of the scored "
			    "set", t->exemplars[i].id);
			free(file);
			goto out;
		}
	buf_printf(&all, "task.json %s\nitems.jsonl %s\nexemplars.jsonl %s\n",
	    t->task_sha256, t->items_sha256, t->exemplars_sha256);
	sha256_hex(all.data, all.len, t->digest);
out:
	buf_free(&all);
	if (err != NULL) {
		fidelity_task_free(t);
		return err;
	}
	*out = t;
	return NULL;
}

/* The template over one item. */
static char *
render(const struct fidelity_task *t, const struct fidelity_item *it)
{
	struct buf b = BUF_INIT;
	const char *p = t->template, *q;
	size_t i;

	while ((q = strchr(p, '{')) != NULL) {
		buf_add(&b, p, (size_t)(q - p));
		if (strncmp(q, "{labels}", 8) == 0) {
			for (i = 0; i < t->nlabels; i++)
				buf_printf(&b, "%s%s", i ? ", " : "",
				    t->labels[i]);
			p = q + 8;
		} else if (strncmp(q, "{text}", 6) == 0) {
			buf_puts(&b, it->text);
			p = q + 6;
		} else {	/* {id}: checked at load */
			buf_puts(&b, it->id);
			p = q + 4;
		}
	}
	buf_puts(&b, p);
	return buf_detach(&b);
}

static void
add_message(json_t *msgs, const char *role, char *content)
{
	json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", role,
	    "content", content));
	free(content);
}

json_t *
fidelity_task_messages(const struct fidelity_task *t, size_t item,
    size_t shots)
{
	json_t *msgs = json_array();
	size_t i;

	if (t->system != NULL)
		add_message(msgs, "system", xstrdup(t->system));
	for (i = 0; i < shots && i < t->nexemplars; i++) {
		add_message(msgs, "user", render(t, &t->exemplars[i]));
		add_message(msgs, "assistant", xstrdup(t->exemplars[i].label));
	}
	add_message(msgs, "user", render(t, &t->items[item]));
	return msgs;
}

json_t *
fidelity_task_json(const struct fidelity_task *t)
{
	json_t *labels = json_array();
	size_t i;

	for (i = 0; i < t->nlabels; i++)
		json_array_append_new(labels, json_string(t->labels[i]));
	return json_pack("{s:s, s:s, s:b, s:o, s:I, s:I, s:{s:s, s:s, s:s}}",
	    "name", t->name, "sha256", t->digest, "synthetic", t->synthetic,
	    "labels", labels, "items", (json_int_t)t->nitems,
	    "exemplars", (json_int_t)t->nexemplars, "files",
	    "task.json", t->task_sha256, "items.jsonl", t->items_sha256,
	    "exemplars.jsonl", t->exemplars_sha256);
}
