/*
 * merge.c - combine verified snapshots whose inputs agree into one
 * result set. See merge.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "sha256.h"
#include "util.h"
#include "results/merge.h"
#include "results/sign.h"
#include "results/snapshot.h"
#include "results/verify.h"

void
merge_result_free(struct merge_result *m)
{
	resultset_free(&m->rs);
	json_decref(m->inputs);
	json_decref(m->parts);
	memset(m, 0, sizeof(*m));
}

/* Every input file of b must be in a with the same digest, and back. */
static struct werr *
same_inputs(const json_t *a, const json_t *b, const char *pa, const char *pb)
{
	const json_t *fa = json_object_get(a, "files");
	const json_t *fb = json_object_get(b, "files");
	const char *path;
	json_t *v, *w;

	json_object_foreach((json_t *)fa, path, v) {
		w = json_object_get(fb, path);
		if (w == NULL)
			return werr_new(WEXIT_PROBLEM, "mismatched inputs: '%s' "
			    "is in %s, not in %s", path, pa, pb);
		if (!json_equal(v, w))
			return werr_new(WEXIT_PROBLEM, "mismatched inputs: '%s' "
			    "has sha256 %.12s in %s and %.12s in %s", path,
			    json_string_value(v), pa, json_string_value(w), pb);
	}
	json_object_foreach((json_t *)fb, path, v)
		if (json_object_get(fa, path) == NULL)
			return werr_new(WEXIT_PROBLEM, "mismatched inputs: '%s' "
			    "is in %s, not in %s", path, pb, pa);
	if (!json_equal(json_object_get(a, "warden_version"),
	    json_object_get(b, "warden_version")))
		return werr_new(WEXIT_PROBLEM, "mismatched inputs: warden %s "
		    "made %s, warden %s made %s",
		    jsonget_str(a, "warden_version"), pa,
		    jsonget_str(b, "warden_version"), pb);
	return NULL;
}

/*
 * Is doc the fidelity reference, already in the union? A shared input
 * every shard of a fleet carries (snapshot packs it with --no-fidelity
 * too): its copies are one document, not an overlap. An imported
 * reference is the same when it came from the same file (its sha256) for
 * the same task, whatever machine imported it when; a measured one only
 * when it is the same document.
 */
static int
same_reference(const struct merge_result *m, const char *p, const json_t *doc)
{
	const json_t *had = json_object_get(m->rs.docs, p);
	const json_t *ph, *pd;
	const char *sha;

	if (had == NULL || strcmp(jsonget_str(doc, "kind"), "fidelity") != 0 ||
	    !json_is_true(json_object_get(doc, "reference")) ||
	    !json_is_true(json_object_get(had, "reference")))
		return 0;
	if (json_equal((json_t *)had, (json_t *)doc))
		return 1;
	ph = json_object_get(had, "provenance");
	pd = json_object_get(doc, "provenance");
	sha = jsonget_str(pd, "imported_sha256");
	return strcmp(jsonget_str(had, "run_kind"), "imported") == 0 &&
	    strcmp(jsonget_str(doc, "run_kind"), "imported") == 0 &&
	    sha[0] != '\0' && strcmp(sha, jsonget_str(ph, "imported_sha256")) == 0 &&
	    strcmp(jsonget_str(pd, "task_sha256"), jsonget_str(ph,
	    "task_sha256")) == 0;
}

/* Add part's documents to the union; an overlap names both parts. */
static struct werr *
add_part(struct merge_result *m, struct resultset *part, const char *path)
{
	const char *p;
	json_t *doc;
	struct werr *err;

	json_object_foreach(part->docs, p, doc)
		if (!same_reference(m, p, doc) &&
		    (err = resultset_add_doc(&m->rs, p, doc, path)) != NULL) {
			err->exit = WEXIT_PROBLEM;
			return werr_wrap(err, "overlapping runs");
		}
	if ((err = resultset_check(&m->rs)) != NULL) {
		err->exit = WEXIT_PROBLEM;
		return werr_wrap(err, "merging %s", path);
	}
	return NULL;
}

static struct werr *
merge_one(struct merge_result *m, const char *path, const char *first,
    const struct signers *signers, int require_signature)
{
	char hex[SHA256_HEX_LEN + 1];
	struct verify_report vr;
	struct resultset part;
	struct snapshot s;
	const json_t *man;
	struct werr *err = NULL;

	memset(&vr, 0, sizeof(vr));
	if ((err = snapshot_read(&s, path)) != NULL)
		return err;
	if ((err = verify_snapshot(&vr, &s, signers != NULL &&
	    signers->name != NULL ? signers : NULL,
	    require_signature)) == NULL &&
	    vr.nproblems > 0)
		err = werr_new(WEXIT_PROBLEM, "%s does not verify: %s", path,
		    vr.problems[0]);
	if (err != NULL)
		goto out;
	sha256_hex(s.archive.data, s.archive.len, hex);
	man = json_loadb(snapshot_member(&s, SNAPSHOT_MANIFEST)->data.data,
	    snapshot_member(&s, SNAPSHOT_MANIFEST)->data.len, 0, NULL);
	if (m->inputs == NULL) {
		m->inputs = json_incref(json_object_get(man, "inputs"));
		snprintf(m->commit, sizeof(m->commit), "%s",
		    jsonget_str(man, "commit"));
	} else if ((err = same_inputs(m->inputs, json_object_get(man,
	    "inputs"), first, path)) == NULL &&
	    strcmp(m->commit, jsonget_str(man, "commit")) != 0)
		err = werr_new(WEXIT_PROBLEM, "mismatched inputs: %s measured "
		    "commit %.12s, %s commit %.12s", first, m->commit, path,
		    jsonget_str(man, "commit"));
	if (json_integer_value(json_object_get(man, "source_date_epoch")) >
	    m->source_date)
		m->source_date = json_integer_value(json_object_get(man,
		    "source_date_epoch"));
	json_decref((json_t *)man);
	if (err != NULL)
		goto out;
	json_array_append_new(m->parts, json_pack("{s:s, s:s, s:s}", "path",
	    path, "id", vr.id, "sha256", hex));
	if ((err = snapshot_resultset(&part, &s, path)) != NULL)
		goto out;
	err = add_part(m, &part, path);
	resultset_free(&part);
out:
	verify_report_free(&vr);
	snapshot_free(&s);
	return err;
}

struct werr *
merge_snapshots(struct merge_result *m, const char *const *paths, size_t n,
    const struct signers *signers, int require_signature)
{
	struct werr *err = NULL;
	size_t i;

	memset(m, 0, sizeof(*m));
	resultset_init(&m->rs);
	m->parts = json_array();
	if (n < 2) {
		merge_result_free(m);
		return werr_usage("merge needs two snapshots or more");
	}
	for (i = 0; i < n && err == NULL; i++)
		err = merge_one(m, paths[i], paths[0], signers,
		    require_signature);
	if (err != NULL)
		merge_result_free(m);
	return err;
}
