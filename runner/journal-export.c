/*
 * journal-export.c - write the journal into the repository: a readable
 * journals/CYCLE.md per cycle (regenerated whole, so idempotent) and the
 * entries appended to journals/journal.jsonl (only those newer than the
 * file's last seq). The committed JSONL is an anchor outside the database:
 * journal_verify_export() checks the database still holds every exported
 * entry unchanged.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "store.h"
#include "util.h"

struct export_state {
	struct buf md;
	struct buf jsonl;
	const char *cycle;
	int64_t last_exported;
	int entries;
};

static struct werr *
collect_cycles(void *arg, const struct journal_entry *e)
{
	json_t *set = arg;

	json_object_set_new(set, e->cycle, json_true());
	return NULL;
}

static struct werr *
md_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;
	char *body = json_dumps(e->body, JSON_COMPACT | JSON_SORT_KEYS);
	const char *s;

	buf_printf(&x->md, "| %lld | %s | `%s` | %s | ", (long long)e->seq,
	    e->time, e->kind, e->subject[0] != '\0' ? e->subject : "-");
	for (s = body != NULL ? body : ""; *s != '\0'; s++) {
		if (*s == '|')
			buf_puts(&x->md, "\\|");
		else if (*s == '\n')
			buf_addch(&x->md, ' ');
		else
			buf_addch(&x->md, *s);
	}
	buf_printf(&x->md, " | `%.12s` |\n", e->hash);
	free(body);
	return NULL;
}

static struct werr *
jsonl_entry(void *arg, const struct journal_entry *e)
{
	struct export_state *x = arg;
	json_t *o = journal_entry_json(e);
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
	    JSON_REAL_PRECISION(17));

	buf_puts(&x->jsonl, s);
	buf_addch(&x->jsonl, '\n');
	free(s);
	json_decref(o);
	x->entries++;
	return NULL;
}

/* The highest seq in journals/journal.jsonl (0 when absent). */
static struct werr *
jsonl_last_seq(const char *path, int64_t *last)
{
	struct buf text = BUF_INIT;
	struct werr *err;
	char *line, *save = NULL;
	json_error_t jerr;
	int lineno = 0;

	*last = 0;
	if (!path_exists(path))
		return NULL;
	if ((err = file_read(&text, path)) != NULL)
		return err;
	for (line = strtok_r(text.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, &jerr);
		json_int_t seq;

		lineno++;
		if (o == NULL || json_unpack(o, "{s:I}", "seq", &seq) != 0) {
			json_decref(o);
			buf_free(&text);
			return werr_at(path, lineno, o == NULL ? jerr.column : 0,
			    "seq", "is not a journal entry line");
		}
		if (seq > *last)
			*last = seq;
		json_decref(o);
	}
	buf_free(&text);
	return NULL;
}

static struct werr *
export_cycle(struct store *store, const char *dir, const char *cycle)
{
	struct journal_filter f = { NULL, cycle, NULL, 0 };
	struct export_state x;
	struct werr *err;
	char *name, *path;

	memset(&x, 0, sizeof(x));
	buf_printf(&x.md, "# Maintenance journal: cycle %s\n\n"
	    "Exported by `warden journal export` from the hash-chained journal;\n"
	    "`warden journal verify` checks it. Do not edit.\n\n"
	    "| seq | time (UTC) | kind | subject | body | hash |\n"
	    "|---:|---|---|---|---|---|\n", cycle);
	err = journal_each(store, &f, md_entry, &x);
	if (err == NULL) {
		name = xasprintf("%s.md", cycle);
		path = path_join(dir, name);
		err = file_write_atomic(path, x.md.data, x.md.len);
		free(path);
		free(name);
	}
	buf_free(&x.md);
	return err;
}

static int
cycle_name_ok(const char *c)
{
	if (c[0] == '\0' || c[0] == '.')
		return 0;
	for (; *c != '\0'; c++)
		if (*c == '/' || *c == '\\')
			return 0;
	return 1;
}

struct werr *
journal_export(struct store *store, const char *repo_root, const char *cycle,
    int *entries_out)
{
	struct journal_filter f;
	struct export_state x;
	struct werr *err;
	char *dir, *jsonl;
	json_t *cycles = json_object();
	const char *key;
	json_t *v;

	*entries_out = 0;
	memset(&x, 0, sizeof(x));
	dir = path_join(repo_root, "journals");
	jsonl = path_join(dir, "journal.jsonl");
	if ((err = mkdir_p(dir)) != NULL)
		goto out;
	if (cycle != NULL)
		json_object_set_new(cycles, cycle, json_true());
	else if ((err = journal_each(store, NULL, collect_cycles, cycles)) != NULL)
		goto out;
	json_object_foreach(cycles, key, v) {
		if (!cycle_name_ok(key)) {
			err = werr_new(WEXIT_INPUT, "cycle id '%s' cannot name a file", key);
			goto out;
		}
		if ((err = export_cycle(store, dir, key)) != NULL)
			goto out;
	}
	if ((err = jsonl_last_seq(jsonl, &x.last_exported)) != NULL)
		goto out;
	memset(&f, 0, sizeof(f));
	f.after_seq = x.last_exported;
	if ((err = journal_each(store, &f, jsonl_entry, &x)) != NULL)
		goto out;
	if (x.jsonl.len > 0)
		err = file_append(jsonl, x.jsonl.data, x.jsonl.len);
	*entries_out = x.entries;
out:
	buf_free(&x.jsonl);
	json_decref(cycles);
	free(dir);
	free(jsonl);
	return err;
}

struct werr *
journal_verify_export(struct store *store, const char *repo_root,
    int64_t *broken_seq, char **why)
{
	struct buf text = BUF_INIT, mine = BUF_INIT;
	struct journal_filter f;
	struct export_state x;
	struct werr *err = NULL;
	char *path = path_join(repo_root, "journals/journal.jsonl");
	char *line, *save = NULL;

	*broken_seq = 0;
	*why = NULL;
	memset(&x, 0, sizeof(x));
	if (!path_exists(path))
		goto out;
	if ((err = file_read(&text, path)) != NULL)
		goto out;
	for (line = strtok_r(text.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, NULL);
		json_int_t seq = 0;

		if (o == NULL || json_unpack(o, "{s:I}", "seq", &seq) != 0) {
			json_decref(o);
			continue;	/* export reports malformed lines */
		}
		json_decref(o);
		memset(&f, 0, sizeof(f));
		f.after_seq = seq - 1;
		buf_reset(&x.jsonl);
		x.entries = 0;
		/* Render the database's entry seq the way export did. */
		if ((err = journal_each(store, &f, jsonl_entry, &x)) != NULL)
			goto out;
		buf_reset(&mine);
		if (x.jsonl.len > 0) {
			char *nl = strchr(x.jsonl.data, '\n');

			buf_add(&mine, x.jsonl.data, (size_t)(nl - x.jsonl.data));
		}
		if (strcmp(buf_cstr(&mine), line) != 0 ||
		    !str_startswith(buf_cstr(&mine), "{")) {
			*broken_seq = seq;
			*why = xasprintf("seq %lld in journals/journal.jsonl differs "
			    "from the database (edited or deleted there)", (long long)seq);
			goto out;
		}
	}
out:
	buf_free(&text);
	buf_free(&mine);
	buf_free(&x.jsonl);
	free(path);
	return err;
}
