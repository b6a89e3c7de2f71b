/*
 * gate.c - the one decision function of the allowlist gate, and the index
 * of the trusted base tree it decides against.
 *
 * allowlist_decide() applies every rule to one change: path rules, the
 * allowlist, the real base entry of every path and of every prefix of
 * every path, modes, collisions under case and Unicode folding, binary
 * content, copies of data from outside the zone. It must never trust what
 * a patch says about the old side (modes, existence): only the base tree.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

#define MODE_TREE	0040000
#define MODE_FILE	0100644
#define MODE_EXEC	0100755
#define MODE_LINK	0120000
#define MODE_GITLINK	0160000

struct base_entry {
	char *path;
	char *key;		/* allowlist_fold(path), NULL if refused */
	uint32_t mode;
	git_oid id;
};

struct allowlist_base {
	struct base_entry *by_path;	/* sorted by path */
	struct base_entry **by_key;	/* sorted by key (refused keys last) */
	struct base_entry **by_id;	/* files only, by blob id then path */
	size_t n, cap, nid;
	/* Paths the change under decision adds, for collisions among them. */
	char **added_path, **added_key;
	size_t nadded, capadded;
};

struct walk_ctx {
	struct allowlist_base *b;
};

static int
walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
	struct allowlist_base *b = ((struct walk_ctx *)payload)->b;
	struct base_entry *be;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->by_path = xrealloc(b->by_path, b->cap * sizeof(*b->by_path));
	}
	be = &b->by_path[b->n++];
	be->path = xasprintf("%s%s", root, git_tree_entry_name(e));
	be->key = allowlist_fold(be->path);
	be->mode = git_tree_entry_filemode_raw(e);
	git_oid_cpy(&be->id, git_tree_entry_id(e));
	return 0;
}

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct base_entry *)a)->path,
	    ((const struct base_entry *)b)->path);
}

static int
cmp_key(const void *a, const void *b)
{
	const struct base_entry *x = *(struct base_entry *const *)a;
	const struct base_entry *y = *(struct base_entry *const *)b;

	if (x->key == NULL || y->key == NULL)
		return (x->key == NULL) - (y->key == NULL);
	return strcmp(x->key, y->key);
}

static int
cmp_id(const void *a, const void *b)
{
	const struct base_entry *x = *(struct base_entry *const *)a;
	const struct base_entry *y = *(struct base_entry *const *)b;
	int c = git_oid_cmp(&x->id, &y->id);

	return c != 0 ? c : strcmp(x->path, y->path);
}

struct werr *
allowlist_base_load(struct allowlist_base **out, git_repository *repo,
    const git_tree *tree)
{
	struct allowlist_base *b = xcalloc(1, sizeof(*b));
	struct walk_ctx ctx = { b };
	size_t i;

	(void)repo;
	*out = NULL;
	if (tree != NULL &&
	    git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &ctx) < 0) {
		allowlist_base_free(b);
		return werr_git("cannot read the base tree");
	}
	if (b->n > 0)
		qsort(b->by_path, b->n, sizeof(*b->by_path), cmp_path);
	b->by_key = xcalloc(b->n + 1, sizeof(*b->by_key));
	for (i = 0; i < b->n; i++)
		b->by_key[i] = &b->by_path[i];
	if (b->n > 0)
		qsort(b->by_key, b->n, sizeof(*b->by_key), cmp_key);
	b->by_id = xcalloc(b->n + 1, sizeof(*b->by_id));
	for (i = 0; i < b->n; i++)
		if (b->by_path[i].mode != MODE_TREE)
			b->by_id[b->nid++] = &b->by_path[i];
	if (b->nid > 0)
		qsort(b->by_id, b->nid, sizeof(*b->by_id), cmp_id);
	*out = b;
	return NULL;
}

void
allowlist_base_free(struct allowlist_base *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->by_path[i].path);
		free(b->by_path[i].key);
	}
	for (i = 0; i < b->nadded; i++) {
		free(b->added_path[i]);
		free(b->added_key[i]);
	}
	free(b->added_path);
	free(b->added_key);
	free(b->by_path);
	free(b->by_key);
	free(b->by_id);
	free(b);
}

void
allowlist_base_forget_added(struct allowlist_base *b)
{
	size_t i;

	for (i = 0; i < b->nadded; i++) {
		free(b->added_path[i]);
		free(b->added_key[i]);
	}
	b->nadded = 0;
}

static const struct base_entry *
base_find(const struct allowlist_base *b, const char *path)
{
	struct base_entry k;

	if (b->n == 0)
		return NULL;
	k.path = (char *)path;
	return bsearch(&k, b->by_path, b->n, sizeof(*b->by_path), cmp_path);
}

uint32_t
allowlist_base_mode(const struct allowlist_base *b, const char *path)
{
	const struct base_entry *e = base_find(b, path);

	return e ? e->mode : 0;
}

static const char *
mode_kind(uint32_t mode)
{
	switch (mode) {
	case MODE_TREE:
		return "a directory";
	case MODE_LINK:
		return "a symlink";
	case MODE_GITLINK:
		return "a submodule (gitlink)";
	case MODE_FILE:
	case MODE_EXEC:
		return "a file";
	default:
		return "an entry of unknown type";
	}
}

static void
report_collision(struct allowlist_report *r, const char *path,
    const char *mine, const char *other)
{
	if (allowlist_case_equal(mine, other))
		allowlist_report_add(r, AL_CASE_COLLISION, path,
		    "'%s' differs only in case from existing '%s'", mine,
		    other);
	else
		allowlist_report_add(r, AL_UNICODE_COLLISION, path,
		    "'%s' and existing '%s' are one name on macOS volumes",
		    mine, other);
}

/* Collisions of NAME (a path or one of its prefixes) with the base. */
static void
check_collision(struct allowlist_report *r, struct allowlist_base *b,
    const char *path, const char *name)
{
	struct base_entry k, *kp = &k, **hit;
	char *key = allowlist_fold(name);
	size_t i, lo;

	if (key == NULL)
		return;		/* refused code point: reported as bad-path */
	k.key = key;
	hit = b->n ? bsearch(&kp, b->by_key, b->n, sizeof(*b->by_key),
	    cmp_key) : NULL;
	if (hit != NULL) {
		lo = (size_t)(hit - b->by_key);
		while (lo > 0 && cmp_key(&b->by_key[lo - 1], &kp) == 0)
			lo--;
		for (i = lo; i < b->n && cmp_key(&b->by_key[i], &kp) == 0; i++)
			if (strcmp(b->by_key[i]->path, name) != 0)
				report_collision(r, path, name,
				    b->by_key[i]->path);
	}
	for (i = 0; i < b->nadded; i++)
		if (strcmp(b->added_key[i], key) == 0 &&
		    strcmp(b->added_path[i], name) != 0)
			report_collision(r, path, name, b->added_path[i]);
	free(key);
}

static void
remember_added(struct allowlist_base *b, const char *name)
{
	char *key = allowlist_fold(name);
	size_t i;

	if (key == NULL)
		return;
	for (i = 0; i < b->nadded; i++)
		if (strcmp(b->added_path[i], name) == 0) {
			free(key);
			return;
		}
	if (b->nadded == b->capadded) {
		b->capadded = b->capadded ? b->capadded * 2 : 16;
		b->added_path = xrealloc(b->added_path,
		    b->capadded * sizeof(char *));
		b->added_key = xrealloc(b->added_key,
		    b->capadded * sizeof(char *));
	}
	b->added_path[b->nadded] = xstrdup(name);
	b->added_key[b->nadded++] = key;
}

/* Every proper prefix of path must be absent or a directory in the base. */
static void
check_prefixes(struct allowlist_report *r, const struct allowlist_base *b,
    const char *path)
{
	char *copy = xstrdup(path), *slash;
	uint32_t mode;

	for (slash = strchr(copy, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mode = allowlist_base_mode(b, copy);
		if (mode != 0 && mode != MODE_TREE)
			allowlist_report_add(r, AL_PREFIX_NOT_DIR, path,
			    "'%s' is %s in the base", copy, mode_kind(mode));
		*slash = '/';
	}
	free(copy);
}

static void
check_new_prefix_collisions(struct allowlist_report *r,
    struct allowlist_base *b, const char *path)
{
	char *copy = xstrdup(path), *slash;

	for (slash = strchr(copy, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		check_collision(r, b, path, copy);
		remember_added(b, copy);
		*slash = '/';
	}
	check_collision(r, b, path, path);
	remember_added(b, path);
	free(copy);
}

/* The old side must be a regular file of the base. */
static void
check_old_side(struct allowlist_report *r, const struct allowlist_base *b,
    const char *path)
{
	uint32_t mode = allowlist_base_mode(b, path);

	if (mode == MODE_FILE || mode == MODE_EXEC)
		return;
	if (mode == MODE_LINK)
		allowlist_report_add(r, AL_SYMLINK, path,
		    "changes a symlink of the base");
	else if (mode == MODE_GITLINK)
		allowlist_report_add(r, AL_GITLINK, path,
		    "changes a submodule of the base");
	else if (mode == 0)
		allowlist_report_add(r, AL_MALFORMED, path,
		    "does not exist in the base");
	else
		allowlist_report_add(r, AL_PREFIX_NOT_DIR, path,
		    "is %s in the base", mode_kind(mode));
}

static void
check_new_mode(struct allowlist_report *r, const struct allowlist_policy *p,
    const char *path, uint32_t mode)
{
	if (mode == MODE_FILE)
		return;
	if (mode == MODE_LINK)
		allowlist_report_add(r, AL_SYMLINK, path, "creates a symlink");
	else if (mode == MODE_GITLINK)
		allowlist_report_add(r, AL_GITLINK, path,
		    "creates a submodule (gitlink)");
	else if (mode == MODE_EXEC) {
		if (!allowlist_match_any(p->exec, p->nexec, path))
			allowlist_report_add(r, AL_MODE, path,
			    "executable bit outside the executable globs");
	} else
		allowlist_report_add(r, AL_MODE, path, "mode %06o",
		    (unsigned)mode);
}

static void
check_zone(struct allowlist_report *r, const struct allowlist_policy *p,
    const char *path, int copy_source)
{
	if (allowlist_match_any(p->allow, p->nallow, path))
		return;
	if (copy_source)
		allowlist_report_add(r, AL_COPY_FROM_OUTSIDE, path,
		    "copies a file from outside the allowlist");
	else
		allowlist_report_add(r, AL_OUTSIDE_ALLOWLIST, path,
		    "not matched by any allowlist glob");
}

static int
cmp_id_key(const void *key, const void *elem)
{
	return git_oid_cmp(key, &(*(struct base_entry *const *)elem)->id);
}

/* Is blob id the content of some base file outside the zone? The first
 * such file in path order. */
static const char *
outside_copy_of(const struct allowlist_base *b,
    const struct allowlist_policy *p, const git_oid *id)
{
	struct base_entry **hit;
	git_oid empty;
	size_t i;

	git_oid_fromstr(&empty, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	if (git_oid_is_zero(id) || git_oid_equal(id, &empty) || b->nid == 0)
		return NULL;
	hit = bsearch(id, b->by_id, b->nid, sizeof(*b->by_id), cmp_id_key);
	if (hit == NULL)
		return NULL;
	for (i = (size_t)(hit - b->by_id); i > 0 &&
	    git_oid_equal(&b->by_id[i - 1]->id, id); i--)
		;
	for (; i < b->nid && git_oid_equal(&b->by_id[i]->id, id); i++)
		if (!allowlist_match_any(p->allow, p->nallow,
		    b->by_id[i]->path))
			return b->by_id[i]->path;
	return NULL;
}

void
allowlist_decide_blob(struct allowlist_report *r,
    const struct allowlist_policy *p, const struct allowlist_base *b,
    const char *path, const git_oid *id)
{
	const char *src = outside_copy_of(b, p, id);

	if (src != NULL)
		allowlist_report_add(r, AL_COPY_FROM_OUTSIDE, path,
		    "same content as '%s', outside the allowlist", src);
}

/* A path the change creates (added, renamed or copied to). */
static void
check_new_path(struct allowlist_report *r, struct allowlist_base *b,
    const struct allowlist_change *c, const char *path)
{
	uint32_t m;

	check_prefixes(r, b, path);
	check_new_prefix_collisions(r, b, path);
	if (c->status != 'A' && c->status != 'R' && c->status != 'C') {
		allowlist_report_add(r, AL_MALFORMED, path,
		    "changes '%s' into another path without a rename",
		    c->old_path);
		return;
	}
	if ((m = allowlist_base_mode(b, path)) != 0)
		allowlist_report_add(r, AL_MALFORMED, path,
		    "creates a path that is %s in the base", mode_kind(m));
}

void
allowlist_decide(struct allowlist_report *r, const struct allowlist_policy *p,
    struct allowlist_base *b, const struct allowlist_change *c)
{
	const char *oldp = c->old_path, *newp = c->new_path;
	int has_old = c->status != 'A', has_new = c->status != 'D';

	if (has_old && oldp == NULL)
		oldp = newp;
	if (has_new && newp == NULL)
		newp = oldp;
	if ((has_old && oldp == NULL) || (has_new && newp == NULL)) {
		allowlist_report_add(r, AL_MALFORMED, "", "change without path");
		return;
	}
	/* Base lookups only for paths that passed the path rules. */
	if (has_old) {
		check_zone(r, p, oldp, c->status == 'C');
		if (allowlist_check_path(r, oldp) == 0) {
			check_prefixes(r, b, oldp);
			check_old_side(r, b, oldp);
		}
	}
	if (has_new && !(has_old && strcmp(oldp, newp) == 0 &&
	    c->status != 'C')) {
		check_zone(r, p, newp, 0);
		if (allowlist_check_path(r, newp) == 0)
			check_new_path(r, b, c, newp);
	}
	if (has_new)
		check_new_mode(r, p, newp, c->new_mode);
	if (c->binary && !p->allow_binary)
		allowlist_report_add(r, AL_BINARY, has_new ? newp : oldp,
		    "binary change and policy does not allow binary patches");
}
