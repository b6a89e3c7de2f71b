/*
 * fuzz-journal.c - libFuzzer harness for the reader of the committed
 * journal export (journals/journal.jsonl): every input is taken as that
 * file and verified against a journal of three entries in a scratch
 * store. The file is intact exactly when it is the export of the first
 * k entries (k = 0 to 3), line for line; anything else (an edited, torn,
 * reordered, extra or malformed line) is a break naming a seq and a
 * reason, never skipped, never a crash.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. It writes
 * only its scratch directory (fuzz-scratch-journal, in the current
 * directory, made again at each start).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "journal.h"
#include "store.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char scratch[] = "fuzz-scratch-journal";
static struct store *store;
static struct buf lines[4];	/* lines[k]: the export of k entries */

static struct werr *
add_line(void *arg, const struct journal_entry *e)
{
	size_t *k = arg;
	char *l = journal_entry_line(e);

	fuzz_assert(l != NULL, "an entry without a line");
	(*k)++;
	buf_add(&lines[*k], lines[*k - 1].data, lines[*k - 1].len);
	buf_puts(&lines[*k], l);
	buf_addch(&lines[*k], '\n');
	free(l);
	return NULL;
}

/*
 * The entries' times are now, so no seed file can hold their export:
 * write it (whole, and cut after two lines) into the corpus directory
 * libFuzzer was given, the scratch copy `make run-fuzz-journal` makes.
 */
static void
seed_corpus(int argc, char **argv)
{
	struct werr *err;
	char *path;
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-' || !path_is_dir(argv[i]))
			continue;
		path = path_join(argv[i], "seed-export-3");
		err = file_write_atomic(path, lines[3].data, lines[3].len);
		free(path);
		if (err == NULL) {
			path = path_join(argv[i], "seed-export-2");
			err = file_write_atomic(path, lines[2].data,
			    lines[2].len);
			free(path);
		}
		werr_free(err);
		return;
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const subjects[] = { "first", "zweite \xc3\xa9",
	    "third, with \"quotes\"\n" };
	struct werr *err;
	size_t i, k = 0;
	json_t *body;

	if (system("rm -rf fuzz-scratch-journal") != 0 ||
	    (err = store_open(&store, scratch, "fuzz", "fuzz-journal")) != NULL)
		fuzz_fail(__FILE__, __LINE__, "cannot make the scratch store");
	for (i = 0; i < 3; i++) {
		body = json_pack("{s:i, s:s}", "n", (int)i, "text", subjects[i]);
		if (store_begin(store) != NULL ||
		    journal_append(store, "note", subjects[i], body, NULL) != NULL ||
		    store_commit(store) != NULL)
			fuzz_fail(__FILE__, __LINE__, "cannot append");
		json_decref(body);
	}
	for (i = 0; i < 4; i++)
		buf_init(&lines[i]);
	buf_puts(&lines[0], "");
	if (journal_each(store, NULL, add_line, &k) != NULL || k != 3)
		fuzz_fail(__FILE__, __LINE__, "cannot read the entries back");
	seed_corpus(*argc, *argv);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct journal_evidence ev;
	struct journal_verdict v;
	struct werr *err;
	int prefix = -1;
	size_t k;

	for (k = 0; k < 4; k++)
		if (size == lines[k].len && memcmp(data, buf_cstr(&lines[k]),
		    size) == 0)
			prefix = (int)k;
	memset(&ev, 0, sizeof(ev));
	ev.have_branch = 1;
	/* A block of its own, so ASan sees any read past the end. */
	ev.export_text = xmalloc(size + 1);
	memcpy(ev.export_text, data, size);
	ev.export_len = size;
	err = journal_check(&v, store, &ev);
	fuzz_assert(err == NULL, "the store could not be read");
	/* Rows are read up to the first break. */
	fuzz_assert(v.entries >= 1 && v.entries <= 3, "rows not read");
	if (prefix >= 0) {
		fuzz_assert(v.entries == 3, "an intact export not read whole");
		fuzz_assert(v.broken_seq == 0, "an intact export reported broken");
		fuzz_assert(v.exported == prefix, "lines not all matched");
	} else {
		fuzz_assert(v.broken_seq >= 1 && v.broken_seq <= 4,
		    "a changed export passed, or a break at no seq");
		fuzz_assert(v.why != NULL && v.why[0] != '\0',
		    "a break without a reason");
	}
	journal_verdict_free(&v);
	free(ev.export_text);
	return 0;
}
