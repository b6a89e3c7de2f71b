/*
 * gitfetch.c - fetching a git source into env_dir/git (a bare
 * repository), through libgit2 only: update_git_fetch() of
 * update-private.h. It brings the refs the adapter tracks (its tags
 * matching `ref`, or its branch `ref`, and a pinned tag), or every
 * branch and tag (what `warden stale` and a pin to a commit need): a
 * remote's refs/heads/X as refs/remotes/origin/X, its refs/tags/X as
 * they are, forced, and each such local ref the remote no longer has
 * removed (a pruned fetch, within those refs).
 *
 * A mirror on this machine (a path or a file:// url) is read directly:
 * the objects the repository lacks, and only those (a walk from the new
 * tips that stops at every commit the repository's refs hold), go into
 * one pack. libgit2's local transport would pack every ref of the mirror
 * (its refs/remotes/ too), and every annotated tag's whole tree, each time
 * anything is new. Other urls go through libgit2's fetch with the same
 * refs. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "update-private.h"
#include "util.h"
#include "version.h"

#define HEADS "refs/heads/"
#define TAGS "refs/tags/"
#define ORIGIN "refs/remotes/origin/"

struct wanted {
	char *src;		/* the remote's ref */
	char *dst;		/* ours */
	git_oid oid;		/* what it points at (an annotated tag's tag) */
};

struct want_list {
	struct wanted *v;
	size_t n;
};

struct scope {
	const struct adapter *a;
	const char *pin;	/* a pinned tag name, or NULL */
	enum update_git_refs which;
};

static void
want_list_free(struct want_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].src);
		free(l->v[i].dst);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Our name of the remote's ref src when the fetch brings it, else NULL.
 * Caller frees. */
static char *
dst_of(const struct scope *s, const char *src)
{
	int branch = s->a->source.track != NULL &&
	    strcmp(s->a->source.track, "branch") == 0;
	const char *name;

	if (str_startswith(src, HEADS)) {
		name = src + strlen(HEADS);
		if (s->which == UPDATE_GIT_ALL ||
		    (branch && strcmp(name, s->a->source.ref) == 0))
			return xasprintf("%s%s", ORIGIN, name);
		return NULL;
	}
	if (!str_startswith(src, TAGS) || str_endswith(src, "^{}"))
		return NULL;
	name = src + strlen(TAGS);
	if (s->which == UPDATE_GIT_ALL ||
	    (!branch && version_tag_matches(s->a->source.ref, name)) ||
	    (s->pin != NULL && strcmp(name, s->pin) == 0))
		return xstrdup(src);
	return NULL;
}

/* The remote's name of our ref dst, when it is one a fetch of this scope
 * brings (so its absence there prunes it), else NULL. Caller frees. */
static char *
src_of(const struct scope *s, const char *dst)
{
	char *src, *back;

	if (str_startswith(dst, ORIGIN))
		src = xasprintf("%s%s", HEADS, dst + strlen(ORIGIN));
	else if (str_startswith(dst, TAGS))
		src = xstrdup(dst);
	else
		return NULL;
	if ((back = dst_of(s, src)) == NULL) {
		free(src);
		return NULL;
	}
	free(back);
	return src;
}

static void
want_add(struct want_list *l, const struct scope *s, const char *src,
    const git_oid *oid)
{
	char *dst = dst_of(s, src);

	if (dst == NULL)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].src = xstrdup(src);
	l->v[l->n].dst = dst;
	git_oid_cpy(&l->v[l->n].oid, oid);
	l->n++;
}

/* The local repository a url names (a path, or file:// and a path), or
 * NULL: then libgit2's transports fetch it. Caller frees. */
static char *
local_path(const char *url)
{
	if (str_startswith(url, "file:///") && strchr(url, '%') == NULL)
		return xstrdup(url + strlen("file://"));
	if (url[0] == '/' && path_is_dir(url))
		return xstrdup(url);
	return NULL;
}

/* Our refs of the scope that the remote no longer has: removed. */
static struct werr *
prune(git_repository *repo, const struct scope *s, const struct want_list *l)
{
	git_strarray refs = { NULL, 0 };
	git_reference *ref;
	struct werr *err = NULL;
	size_t i, k;
	char *src;

	if (git_reference_list(&refs, repo) != 0)
		return werr_git("list references");
	for (i = 0; i < refs.count && err == NULL; i++) {
		if ((src = src_of(s, refs.strings[i])) == NULL)
			continue;
		for (k = 0; k < l->n && strcmp(l->v[k].src, src) != 0; k++)
			;
		if (k == l->n && git_reference_lookup(&ref, repo,
		    refs.strings[i]) == 0) {
			if (git_reference_delete(ref) != 0)
				err = werr_git("remove '%s'", refs.strings[i]);
			git_reference_free(ref);
		}
		free(src);
	}
	git_strarray_dispose(&refs);
	return err;
}

/* Set each wanted ref of ours to what the remote's points at. */
static struct werr *
set_refs(git_repository *repo, const struct want_list *l)
{
	git_reference *ref;
	git_oid had;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (git_reference_name_to_id(&had, repo, l->v[i].dst) == 0 &&
		    git_oid_equal(&had, &l->v[i].oid))
			continue;
		if (git_reference_create(&ref, repo, l->v[i].dst, &l->v[i].oid,
		    1, "warden update") != 0)
			return werr_git("update '%s'", l->v[i].dst);
		git_reference_free(ref);
	}
	return NULL;
}

/* Hide from the walk (in the mirror) the commit each of our refs holds. */
static struct werr *
hide_ours(git_revwalk *walk, git_repository *mirror, git_repository *repo)
{
	git_strarray refs = { NULL, 0 };
	git_object *obj, *peeled;
	git_oid oid;
	size_t i;

	if (git_reference_list(&refs, repo) != 0)
		return werr_git("list references");
	for (i = 0; i < refs.count; i++) {
		if (git_reference_name_to_id(&oid, repo, refs.strings[i]) != 0 ||
		    git_object_lookup(&obj, mirror, &oid, GIT_OBJECT_ANY) != 0)
			continue;	/* a ref of ours the mirror lacks */
		if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
			if (git_revwalk_hide(walk, git_object_id(peeled)) != 0)
				git_error_clear();
			git_object_free(peeled);
		}
		git_object_free(obj);
	}
	git_error_clear();
	git_strarray_dispose(&refs);
	return NULL;
}

/* Add to the pack the object id (a tag's chain, then its target: a commit
 * through the walk, anything else with all it holds). */
static int
pack_want(git_packbuilder *pb, git_revwalk *walk, git_repository *mirror,
    const git_oid *id)
{
	git_object *obj = NULL;
	git_oid at;
	int rc;

	git_oid_cpy(&at, id);
	while ((rc = git_object_lookup(&obj, mirror, &at, GIT_OBJECT_ANY)) == 0 &&
	    git_object_type(obj) == GIT_OBJECT_TAG) {
		if ((rc = git_packbuilder_insert(pb, &at, NULL)) != 0)
			break;
		git_oid_cpy(&at, git_tag_target_id((git_tag *)obj));
		git_object_free(obj);
		obj = NULL;
	}
	if (rc == 0)
		rc = git_object_type(obj) == GIT_OBJECT_COMMIT ?
		    git_revwalk_push(walk, &at) :
		    git_packbuilder_insert_recur(pb, &at, NULL);
	git_object_free(obj);
	return rc;
}

/* The pack being written, and the indexer's progress it keeps. */
struct pack_out {
	git_odb_writepack *wp;
	git_indexer_progress stats;
};

static int
pack_append(void *data, size_t len, void *payload)
{
	struct pack_out *po = payload;

	return po->wp->append(po->wp, data, len, &po->stats);
}

/* Copy into repo's object database the objects of the wanted refs that
 * it lacks, as one pack; log how many. */
static struct werr *
copy_objects(git_repository *repo, git_repository *mirror,
    const struct want_list *l, const char *log_path)
{
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	git_odb *ours = NULL;
	struct pack_out po;
	struct werr *err = NULL;
	size_t i, n = 0;

	memset(&po, 0, sizeof(po));
	if (git_repository_odb(&ours, repo) != 0)
		return werr_git("open the object database");
	for (i = 0; i < l->n; i++)
		if (!git_odb_exists(ours, &l->v[i].oid))
			n++;
	if (n == 0)
		goto out;
	if (git_packbuilder_new(&pb, mirror) != 0 ||
	    git_revwalk_new(&walk, mirror) != 0) {
		err = werr_git("pack from the mirror");
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TIME);
	for (i = 0; i < l->n && err == NULL; i++)
		if (!git_odb_exists(ours, &l->v[i].oid) &&
		    pack_want(pb, walk, mirror, &l->v[i].oid) != 0)
			err = werr_git("read '%s' in the mirror", l->v[i].src);
	if (err == NULL)
		err = hide_ours(walk, mirror, repo);
	if (err != NULL)
		goto out;
	if (git_packbuilder_insert_walk(pb, walk) != 0) {
		err = werr_git("walk the mirror's history");
		goto out;
	}
	git_packbuilder_set_threads(pb, 0);
	if (git_odb_write_pack(&po.wp, ours, NULL, NULL) != 0 ||
	    git_packbuilder_foreach(pb, pack_append, &po) != 0 ||
	    po.wp->commit(po.wp, &po.stats) != 0)
		err = werr_git("write the fetched objects");
	else
		update_log_note(log_path, "%zu new object(s) copied from the "
		    "mirror", git_packbuilder_object_count(pb));
out:
	if (po.wp != NULL)
		po.wp->free(po.wp);
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	git_odb_free(ours);
	return err;
}

/* Fetch from a repository on this machine: read it directly. */
static struct werr *
fetch_local(git_repository *repo, const struct scope *s, const char *path,
    const char *log_path)
{
	git_repository *mirror = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref, *resolved;
	struct want_list l = { NULL, 0 };
	struct werr *err = NULL;

	if (git_repository_open_ext(&mirror, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0)
		return werr_git("open '%s'", path);
	if (git_reference_iterator_new(&it, mirror) != 0) {
		err = werr_git("list references of '%s'", path);
		goto out;
	}
	while (git_reference_next(&ref, it) == 0) {
		if (git_reference_resolve(&resolved, ref) == 0) {
			want_add(&l, s, git_reference_name(ref),
			    git_reference_target(resolved));
			git_reference_free(resolved);
		}
		git_reference_free(ref);
	}
	git_error_clear();
	if ((err = copy_objects(repo, mirror, &l, log_path)) == NULL &&
	    (err = set_refs(repo, &l)) == NULL)
		err = prune(repo, s, &l);
out:
	want_list_free(&l);
	git_reference_iterator_free(it);
	git_repository_free(mirror);
	return err;
}

/* Fetch through libgit2's transports: list the remote's refs, then fetch
 * exactly the wanted ones. */
static struct werr *
fetch_remote(git_repository *repo, const struct scope *s, const char *url)
{
	git_remote_create_options ro;
	git_fetch_options fo;
	const git_remote_head **heads;
	git_remote *remote = NULL;
	struct want_list l = { NULL, 0 };
	struct werr *err = NULL;
	git_strarray specs = { NULL, 0 };
	size_t i, n;

	/* An anonymous remote: the url is the adapter's (or the policy's
	 * mirror of it) every time, with no url.*.insteadOf rewriting (a
	 * site's git config must not redirect an engine; and libgit2 1.5
	 * leaks pcre2 match data scanning it). */
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF |
	    GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.prune = GIT_FETCH_NO_PRUNE;
	if (git_remote_create_with_opts(&remote, url, &ro) != 0)
		return werr_git("remote '%s'", url);
	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, &fo.callbacks,
	    &fo.proxy_opts, NULL) != 0 || git_remote_ls(&heads, &n, remote) != 0) {
		err = werr_git("fetch '%s'", url);
		goto out;
	}
	for (i = 0; i < n; i++)
		want_add(&l, s, heads[i]->name, &heads[i]->oid);
	if (l.n > 0) {
		specs.strings = xcalloc(l.n, sizeof(char *));
		for (i = 0; i < l.n; i++)
			specs.strings[specs.count++] = xasprintf("+%s:%s",
			    l.v[i].src, l.v[i].dst);
		if (git_remote_fetch(remote, &specs, &fo, "warden update") != 0) {
			err = werr_git("fetch '%s'", url);
			goto out;
		}
	}
	err = prune(repo, s, &l);
out:
	for (i = 0; i < specs.count; i++)
		free(specs.strings[i]);
	free(specs.strings);
	want_list_free(&l);
	git_remote_free(remote);
	return err;
}

struct werr *
update_git_fetch(struct git_repository **out, const struct update_ctx *ctx,
    const struct adapter *a, const char *pin, const char *env_dir,
    const char *log_path, enum update_git_refs which)
{
	char *mirror = update_git_mirror(ctx->policy, a->source.url);
	const char *url = mirror != NULL ? mirror : a->source.url;
	struct scope s = { a, pin, which };
	git_repository *repo = NULL;
	struct werr *err = NULL;
	char *path = path_join(env_dir, "git"), *local = local_path(url);

	*out = NULL;
	if (mirror != NULL)
		update_log_note(log_path, "git fetch %s (policy's mirror of %s) "
		    "into %s", url, a->source.url, path);
	else
		update_log_note(log_path, "git fetch %s into %s", url, path);
	if (git_repository_open_bare(&repo, path) != 0) {
		if ((err = mkdir_p(env_dir)) != NULL)
			goto out;
		if (git_repository_init(&repo, path, 1) != 0) {
			err = werr_git("init '%s'", path);
			goto out;
		}
	}
	err = local != NULL ? fetch_local(repo, &s, local, log_path) :
	    fetch_remote(repo, &s, url);
out:
	if (err != NULL)
		err->exit = WEXIT_PROBLEM;
	if (err == NULL)
		*out = repo;
	else
		git_repository_free(repo);
	free(local);
	free(path);
	free(mirror);
	return err;
}
