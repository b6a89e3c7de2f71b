/*
 * patch.c - gate a patch text: parse it with libgit2, decide on every
 * parsed delta against the base tree, apply it in memory to the base
 * tree, diff the result against the base and decide again, and require
 * that what changed is exactly what the patch declared.
 *
 * It must never apply a patch to a working tree or an index file, never
 * let libgit2's delta callback veto anything (it cannot stop deletions),
 * and never write objects to the repository on a dry run: dry runs go
 * through a private repository handle whose writes land in a mempack.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "allowlist.h"
#include "buf.h"
#include "scan.h"
#include "util.h"

struct declared {
	char **changed, **deleted;
	size_t nchanged, ndeleted, capchanged, capdeleted;
	int unsafe_to_apply;
};

static void
declare(char ***v, size_t *n, size_t *cap, const char *path)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(char *));
	}
	(*v)[(*n)++] = xstrdup(path);
}

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
declared_has(char **v, size_t n, const char *path)
{
	return n > 0 && bsearch(&path, v, n, sizeof(char *), cmp_strp) != NULL;
}

/* Sort v and drop repeats (a format-patch series may touch a path twice). */
static void
sort_unique(char **v, size_t *n)
{
	size_t i, j;

	if (*n == 0)
		return;
	qsort(v, *n, sizeof(char *), cmp_strp);
	for (i = 1, j = 1; i < *n; i++) {
		if (strcmp(v[i], v[j - 1]) == 0)
			free(v[i]);
		else
			v[j++] = v[i];
	}
	*n = j;
}

static void
declared_free(struct declared *d)
{
	size_t i;

	for (i = 0; i < d->nchanged; i++)
		free(d->changed[i]);
	for (i = 0; i < d->ndeleted; i++)
		free(d->deleted[i]);
	free(d->changed);
	free(d->deleted);
}

/* A disk backend of the dry repository never has an object "fresh". */
static int
never_fresh(git_odb_backend *backend, const git_oid *id)
{
	(void)backend;
	(void)id;
	return GIT_ENOTFOUND;
}

/*
 * The dry repository's object store: the repository's objects (and its
 * alternates) added as alternates, which libgit2 never writes to, under a
 * mempack that takes every write. A write first asks every backend to
 * freshen the object (touch its file) and, when none has it, rescans the
 * pack folder and asks again: for a dry run neither is wanted (the disk
 * must not change, and what is written is new), so the disk backends
 * never freshen and never rescan. Packs are read as they were when the
 * store was opened.
 */
struct werr *
allowlist_dry_repo(git_repository **out, git_odb_backend **mempack,
    git_repository *repo)
{
	git_odb_backend *disk;
	git_odb *odb = NULL;
	char *objects;
	struct werr *err = NULL;
	size_t i, n;

	*out = NULL;
	objects = path_join(git_repository_commondir(repo), "objects");
	if (git_odb_new(&odb) < 0 || git_odb_add_disk_alternate(odb,
	    objects) < 0 || (n = git_odb_num_backends(odb)) == 0) {
		err = werr_git("cannot open '%s'", objects);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (git_odb_get_backend(&disk, odb, i) < 0) {
			err = werr_git("cannot open '%s'", objects);
			goto out;
		}
		disk->freshen = never_fresh;
		disk->refresh = NULL;
	}
	if (git_mempack_new(mempack) < 0 ||
	    git_odb_add_backend(odb, *mempack, 999) < 0) {
		err = werr_git("cannot set up an in-memory object store");
		goto out;
	}
	if (git_repository_wrap_odb(out, odb) < 0)
		err = werr_git("cannot open '%s'", objects);
out:
	git_odb_free(odb);
	free(objects);
	return err;
}

static void
record_file(struct allowlist_report *r, const struct allowlist_change *c,
    uint32_t old_mode, git_patch *patch)
{
	struct allowlist_file *f;

	if (r->nfiles == r->capfiles) {
		r->capfiles = r->capfiles ? r->capfiles * 2 : 16;
		r->files = xrealloc(r->files, r->capfiles * sizeof(*r->files));
	}
	f = &r->files[r->nfiles++];
	f->status = c->status;
	f->old_path = c->old_path ? xstrdup(c->old_path) : NULL;
	f->new_path = c->new_path ? xstrdup(c->new_path) : NULL;
	f->old_mode = old_mode;
	f->new_mode = c->new_mode;
	allowlist_file_stats(f, patch);
}

/* Decide on every parsed delta; fill the declared sets. */
static void
decide_parsed(struct allowlist_report *r, const struct allowlist_policy *p,
    struct allowlist_base *base, git_diff *diff, struct declared *d)
{
	size_t i, n = git_diff_num_deltas(diff);

	for (i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(diff, i);
		struct allowlist_change c;
		git_patch *patch = NULL;

		memset(&c, 0, sizeof(c));
		c.status = allowlist_status_char(dl->status);
		if (c.status == '?') {
			allowlist_report_add(r, AL_MALFORMED,
			    dl->new_file.path ? dl->new_file.path : "",
			    "unexpected change status");
			continue;
		}
		if (c.status != 'A')
			c.old_path = dl->old_file.path;
		if (c.status != 'D') {
			c.new_path = dl->new_file.path;
			c.new_mode = dl->new_file.mode;
		}
		/* A pure rename or copy has no mode line: the mode is the
		 * base entry's, never a guess from the patch. */
		if ((c.status == 'R' || c.status == 'C') && c.new_mode == 0)
			c.new_mode = allowlist_base_mode(base, c.old_path);
		c.binary = (dl->flags & GIT_DIFF_FLAG_BINARY) != 0;
		if (git_patch_from_diff(&patch, diff, i) < 0)
			patch = NULL;
		record_file(r, &c, c.old_path ?
		    allowlist_base_mode(base, c.old_path) : 0, patch);
		git_patch_free(patch);
		allowlist_decide(r, p, base, &c);
		/* libgit2 1.5 leaks memory when a file is added over a
		 * directory; that patch is refused already (malformed). */
		if (c.new_path != NULL && c.status != 'M' &&
		    allowlist_base_mode(base, c.new_path) == 0040000)
			d->unsafe_to_apply = 1;
		if (c.status == 'D' || c.status == 'R')
			declare(&d->deleted, &d->ndeleted, &d->capdeleted,
			    c.old_path);
		if (c.status != 'D')
			declare(&d->changed, &d->nchanged, &d->capchanged,
			    c.new_path);
	}
	sort_unique(d->changed, &d->nchanged);
	sort_unique(d->deleted, &d->ndeleted);
}

/* Result diff against the base: same set as declared, and every rule. */
static struct werr *
decide_result(struct allowlist_report *r, const struct allowlist_policy *p,
    struct allowlist_base *base, git_repository *arepo, git_tree *btree,
    git_tree *rtree, const struct declared *d)
{
	git_diff_options opts;
	git_diff *rd = NULL;
	size_t i, n, seen_changed = 0, seen_deleted = 0;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if (git_diff_tree_to_tree(&rd, arepo, btree, rtree, &opts) < 0)
		return werr_git("cannot diff the result against the base");
	n = git_diff_num_deltas(rd);
	for (i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(rd, i);
		struct allowlist_change c;

		memset(&c, 0, sizeof(c));
		c.status = allowlist_status_char(dl->status);
		if (c.status != 'A')
			c.old_path = dl->old_file.path;
		if (c.status != 'D') {
			c.new_path = dl->new_file.path;
			c.new_mode = dl->new_file.mode;
		}
		allowlist_decide(r, p, base, &c);
		if (c.status == 'D') {
			if (declared_has(d->deleted, d->ndeleted, c.old_path))
				seen_deleted++;
			else
				allowlist_report_add(r, AL_RESULT_MISMATCH,
				    c.old_path, "removed by applying the "
				    "patch, which does not delete it");
			continue;
		}
		allowlist_decide_blob(r, p, base, c.new_path, &dl->new_file.id);
		if (declared_has(d->changed, d->nchanged, c.new_path))
			seen_changed++;
		else
			allowlist_report_add(r, AL_RESULT_MISMATCH, c.new_path,
			    "changed by applying the patch, which does not "
			    "declare it");
	}
	if (seen_changed != d->nchanged || seen_deleted != d->ndeleted)
		allowlist_report_add(r, AL_RESULT_MISMATCH, "",
		    "the applied result changes %zu of %zu declared paths "
		    "and removes %zu of %zu", seen_changed, d->nchanged,
		    seen_deleted, d->ndeleted);
	git_diff_free(rd);
	return NULL;
}

/* Apply diff to the base tree inside arepo; *applied = 0 if it does not. */
static struct werr *
apply_in_memory(struct allowlist_report *r, const struct allowlist_policy *p,
    struct allowlist_base *base, git_repository *arepo, git_diff *diff,
    const struct declared *d)
{
	git_tree *btree = NULL, *rtree = NULL;
	git_index *idx = NULL;
	const git_error *ge;
	struct werr *err = NULL;
	git_oid rid;

	if (git_tree_lookup(&btree, arepo, &r->base_tree) < 0) {
		err = werr_git("cannot read the base tree");
		goto out;
	}
	if (git_apply_to_tree(&idx, arepo, btree, diff, NULL) < 0) {
		/* A patch already refused may fail to apply because of what
		 * was refused (libgit2 rejects '.git' paths): not news. */
		if (r->nv > 0)
			goto out;
		ge = git_error_last();
		allowlist_report_add(r, AL_MALFORMED, "",
		    "patch does not apply to the base: %s",
		    ge && ge->message ? ge->message : "unknown error");
		goto out;
	}
	if (git_index_write_tree_to(&rid, idx, arepo) < 0 ||
	    git_tree_lookup(&rtree, arepo, &rid) < 0) {
		ge = git_error_last();
		allowlist_report_add(r, AL_MALFORMED, "",
		    "applied result is not a valid tree: %s",
		    ge && ge->message ? ge->message : "unknown error");
		goto out;
	}
	git_oid_cpy(&r->result_tree, &rid);
	r->applied = 1;
	err = decide_result(r, p, base, arepo, btree, rtree, d);
out:
	git_tree_free(rtree);
	git_tree_free(btree);
	git_index_free(idx);
	return err;
}

/* Apply for real into repo after a clean dry run; same tree or error. */
static struct werr *
apply_for_real(git_repository *repo, git_diff *diff,
    const struct allowlist_report *r)
{
	git_tree *btree = NULL;
	git_index *idx = NULL;
	struct werr *err = NULL;
	git_oid rid;

	if (git_tree_lookup(&btree, repo, &r->base_tree) < 0 ||
	    git_apply_to_tree(&idx, repo, btree, diff, NULL) < 0 ||
	    git_index_write_tree_to(&rid, idx, repo) < 0)
		err = werr_git("cannot write the applied tree");
	else if (!git_oid_equal(&rid, &r->result_tree))
		err = werr_new(WEXIT_ENV, "applying the patch twice gave two "
		    "different trees");
	git_tree_free(btree);
	git_index_free(idx);
	return err;
}

struct werr *
allowlist_gate_patch(struct allowlist_report *r, git_repository *repo,
    const git_oid *base_tree, const char *text, size_t len,
    const struct allowlist_policy *p, unsigned flags)
{
	struct allowlist_base *base = NULL;
	struct declared d;
	git_repository *arepo = NULL;
	git_odb_backend *mempack = NULL;
	git_tree *btree = NULL;
	git_diff *diff = NULL;
	const git_error *ge;
	struct werr *err = NULL;
	struct scan sc;
	size_t headers, ndeltas, i;

	memset(&d, 0, sizeof(d));
	memset(&sc, 0, sizeof(sc));
	if (text == NULL)
		text = "";
	git_oid_cpy(&r->base_tree, base_tree);
	if (p->max_bytes > 0 && len > p->max_bytes)
		allowlist_report_add(r, AL_TOO_LARGE, "",
		    "patch is %zu bytes, policy allows %zu", len, p->max_bytes);
	/* No patch holds a NUL byte (binary patches are base85), and
	 * libgit2 1.5 reads out of bounds applying one: never pass it on. */
	if (memchr(text, '\0', len) != NULL) {
		allowlist_report_add(r, AL_MALFORMED, "",
		    "patch text holds a NUL byte at offset %zu",
		    (size_t)((const char *)memchr(text, '\0', len) - text));
		return NULL;
	}
	scan_patch_text(r, &sc, text, len);
	if (sc.refused)
		goto out;
	if (git_diff_from_buffer(&diff, text, len) < 0) {
		ge = git_error_last();
		for (i = 0; i < sc.nempty; i++)
			allowlist_report_add(r, AL_EMPTY_FILE_UNSUPPORTED,
			    sc.empty[i], "adding or deleting an empty file is "
			    "not supported by this libgit2; give it content");
		if (sc.nempty == 0)
			allowlist_report_add(r, AL_MALFORMED, "",
			    "cannot parse the patch: %s",
			    ge && ge->message ? ge->message : "unknown error");
		goto out;
	}
	headers = sc.headers;
	ndeltas = git_diff_num_deltas(diff);
	if (ndeltas == 0)
		allowlist_report_add(r, AL_MALFORMED, "",
		    "the patch changes no file");
	else if (headers != ndeltas)
		allowlist_report_add(r, AL_MALFORMED, "", "the patch has %zu "
		    "file headers but %zu changes parse", headers, ndeltas);
	if (p->max_files > 0 && ndeltas > p->max_files)
		allowlist_report_add(r, AL_TOO_MANY_FILES, "",
		    "patch changes %zu files, policy allows %zu", ndeltas,
		    p->max_files);
	if ((err = allowlist_dry_repo(&arepo, &mempack, repo)) != NULL)
		goto out;
	if (git_tree_lookup(&btree, arepo, base_tree) < 0) {
		err = werr_git("cannot read the base tree");
		goto out;
	}
	if ((err = allowlist_base_load(&base, arepo, btree)) != NULL)
		goto out;
	decide_parsed(r, p, base, diff, &d);
	/* libgit2 1.5 can loop forever inflating a crafted binary hunk:
	 * a binary patch the policy refuses is never applied. */
	if (allowlist_report_has(r, AL_BINARY))
		d.unsafe_to_apply = 1;
	if (ndeltas > 0 && !d.unsafe_to_apply &&
	    (err = apply_in_memory(r, p, base, arepo, diff, &d)) != NULL)
		goto out;
	if ((flags & ALLOWLIST_WRITE) && r->applied && r->nv == 0)
		err = apply_for_real(repo, diff, r);
out:
	scan_free(&sc);
	declared_free(&d);
	allowlist_base_free(base);
	git_tree_free(btree);
	git_diff_free(diff);
	git_repository_free(arepo);
	return err;
}
