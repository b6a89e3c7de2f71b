/*
 * gitenv.c - git sources, through libgit2 only: fetch into the bare
 * repository env_dir/git the refs the adapter tracks (gitfetch.c), pick
 * the newest tag matching the adapter's
 * `ref` in version order (or the branch head), older than the policy's
 * minimum release age, and build it in the work tree not in use
 * (gitbuild.c: incremental, the build argvs in order without a shell);
 * only when every step succeeded env_dir/src points at it. A failed
 * build leaves the build in use as it was, and is not tried again until
 * another commit is the target or --retry-failed (triage's scratch
 * builds neither record nor consult that). The url fetched is
 * the policy's mirror of the adapter's (update.mirrors) when it names
 * one. Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "manifest.h"
#include "update-private.h"
#include "util.h"
#include "version.h"

struct target {
	git_oid oid;
	char *version;		/* the tag, or "BRANCH@commit12" */
	char *tag;		/* NULL: a branch or a commit */
	time_t time;		/* tag date, or commit time: its age */
	time_t commit_time;	/* the commit's own time */
	time_t tag_time;	/* an annotated tag's date, or -1 */
};

static void
target_free(struct target *t)
{
	free(t->version);
	free(t->tag);
	memset(t, 0, sizeof(*t));
}

char *
update_git_mirror(const struct policy *p, const char *url)
{
	size_t i, len, best_len = 0;
	const char *best = NULL, *key;

	for (i = 0; i < p->update.n_mirrors; i++) {
		key = p->update.mirrors[i].from;
		len = strlen(key);
		if (strcmp(key, url) == 0)
			return xstrdup(p->update.mirrors[i].to);
		if (len > best_len && key[len - 1] == '/' &&
		    strncmp(key, url, len) == 0) {
			best = p->update.mirrors[i].to;
			best_len = len;
		}
	}
	return best != NULL ? xasprintf("%s%s", best, url + best_len) : NULL;
}

/* Commit and date of a tag reference (tagger date when annotated). */
static int
tag_info(git_repository *repo, const char *refname, git_oid *commit,
    time_t *when, time_t *commit_time, time_t *tag_time)
{
	git_reference *ref = NULL;
	git_object *obj = NULL, *peeled = NULL;
	const git_signature *sig;
	int rc = -1;

	if (git_reference_lookup(&ref, repo, refname) != 0 ||
	    git_reference_peel(&peeled, ref, GIT_OBJECT_COMMIT) != 0)
		goto out;
	git_oid_cpy(commit, git_object_id(peeled));
	*when = *commit_time = (time_t)git_commit_time((git_commit *)peeled);
	*tag_time = -1;
	if (git_reference_target(ref) != NULL && git_object_lookup(&obj, repo,
	    git_reference_target(ref), GIT_OBJECT_ANY) == 0 &&
	    git_object_type(obj) == GIT_OBJECT_TAG &&
	    (sig = git_tag_tagger((git_tag *)obj)) != NULL)
		*when = *tag_time = (time_t)sig->when.time;
	rc = 0;
out:
	git_object_free(obj);
	git_object_free(peeled);
	git_reference_free(ref);
	return rc;
}

static int
too_young(const struct update_ctx *ctx, time_t when)
{
	double min_s = ctx->policy->update.min_release_age_days * 86400.0;

	return min_s > 0 && difftime(time(NULL), when) < min_s;
}

/* The newest tag matching the pattern, in version order. */
static struct werr *
pick_tag(struct target *t, const struct update_ctx *ctx, git_repository *repo,
    const struct adapter *a, json_t *held)
{
	git_strarray tags = { NULL, 0 };
	struct werr *err = NULL;
	const char *best = NULL;
	git_oid oid, best_oid;
	time_t when, best_when = 0, ct, tt, best_ct = 0, best_tt = -1;
	char refname[1024];
	size_t i;

	if (git_tag_list_match(&tags, a->source.ref, repo) != 0)
		return werr_git("list tags");
	for (i = 0; i < tags.count; i++) {
		if (!version_tag_matches(a->source.ref, tags.strings[i]))
			continue;
		snprintf(refname, sizeof(refname), "refs/tags/%s", tags.strings[i]);
		if (tag_info(repo, refname, &oid, &when, &ct, &tt) != 0)
			continue;
		if (too_young(ctx, when)) {
			json_object_set_new(held, tags.strings[i], json_string(
			    "tag is younger than update.min_release_age_days"));
			continue;
		}
		if (best == NULL || version_compare(tags.strings[i], best) > 0) {
			best = tags.strings[i];
			git_oid_cpy(&best_oid, &oid);
			best_when = when;
			best_ct = ct;
			best_tt = tt;
		}
	}
	if (best == NULL)
		err = werr_new(WEXIT_PROBLEM, "no tag of '%s' matches '%s'%s",
		    a->source.url, a->source.ref, json_object_size(held) ?
		    " and is old enough" : "");
	else {
		git_oid_cpy(&t->oid, &best_oid);
		t->tag = xstrdup(best);
		t->version = xstrdup(best);
		t->time = best_when;
		t->commit_time = best_ct;
		t->tag_time = best_tt;
	}
	git_strarray_dispose(&tags);
	return err;
}

/* The branch head, or its newest first-parent commit old enough. */
static struct werr *
pick_branch(struct target *t, const struct update_ctx *ctx,
    git_repository *repo, const struct adapter *a, json_t *held)
{
	git_commit *c = NULL, *parent;
	git_reference *ref = NULL;
	char refname[1024], hex[GIT_OID_HEXSZ + 1];
	struct werr *err = NULL;

	snprintf(refname, sizeof(refname), "refs/remotes/origin/%s", a->source.ref);
	if (git_reference_lookup(&ref, repo, refname) != 0 ||
	    git_commit_lookup(&c, repo, git_reference_target(ref)) != 0) {
		err = werr_new(WEXIT_PROBLEM, "no branch '%s' in '%s'",
		    a->source.ref, a->source.url);
		goto out;
	}
	while (too_young(ctx, (time_t)git_commit_time(c))) {
		if (json_object_get(held, a->source.ref) == NULL)
			json_object_set_new(held, a->source.ref, json_string(
			    "newest commits are younger than "
			    "update.min_release_age_days"));
		if (git_commit_parent(&parent, c, 0) != 0) {
			err = werr_new(WEXIT_PROBLEM, "no commit of branch '%s' "
			    "is old enough", a->source.ref);
			goto out;
		}
		git_commit_free(c);
		c = parent;
	}
	git_oid_cpy(&t->oid, git_commit_id(c));
	git_oid_tostr(hex, sizeof(hex), &t->oid);
	t->version = xasprintf("%s@%.12s", a->source.ref, hex);
	t->time = t->commit_time = (time_t)git_commit_time(c);
	t->tag_time = -1;
out:
	git_commit_free(c);
	git_reference_free(ref);
	return err;
}

/* A pinned tag or commit id. */
static struct werr *
pick_pinned(struct target *t, git_repository *repo, const char *pin)
{
	char refname[1024], hex[GIT_OID_HEXSZ + 1];
	git_object *obj = NULL, *peeled = NULL;

	snprintf(refname, sizeof(refname), "refs/tags/%s", pin);
	if (tag_info(repo, refname, &t->oid, &t->time, &t->commit_time,
	    &t->tag_time) == 0) {
		t->tag = xstrdup(pin);
		t->version = xstrdup(pin);
		return NULL;
	}
	if (git_revparse_single(&obj, repo, pin) != 0 ||
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0) {
		git_object_free(obj);
		return werr_new(WEXIT_PROBLEM, "pin '%s' is neither a tag nor "
		    "a commit of the repository", pin);
	}
	git_oid_cpy(&t->oid, git_object_id(peeled));
	t->time = t->commit_time = (time_t)git_commit_time((git_commit *)peeled);
	t->tag_time = -1;
	git_oid_tostr(hex, sizeof(hex), &t->oid);
	t->version = xasprintf("%.12s", hex);
	git_object_free(peeled);
	git_object_free(obj);
	return NULL;
}

/* What the pins and holds in force say about the engine itself. */
static const char *
engine_pin(const struct update_ctx *ctx, const struct update_build *b,
    json_t *held, char **buf)
{
	const struct strlist *lists[2] = { &ctx->policy->update.pins, b->pins };
	const char *cur;
	size_t i, k, n = strlen(b->adapter->name);

	*buf = NULL;
	for (k = 2; k-- > 0;)	/* the caller's pins win over policy's */
		for (i = 0; lists[k] != NULL && i < lists[k]->n; i++)
			if (strncmp(lists[k]->v[i], b->adapter->name, n) == 0 &&
			    strncmp(lists[k]->v[i] + n, "==", 2) == 0)
				return lists[k]->v[i] + n + 2;
	if (strlist_contains(&ctx->policy->update.holds, b->adapter->name) &&
	    (cur = json_string_value(json_object_get(json_object_get(b->current,
	    "source"), "commit"))) != NULL) {
		json_object_set_new(held, b->adapter->name,
		    json_string("held by policy"));
		return *buf = xstrdup(cur);
	}
	return b->adapter->source.pin;
}

/* Replace env_dir/src by a link to builds/NAME, atomically. */
static struct werr *
swap_src(const char *env_dir, const char *name)
{
	char *link = path_join(env_dir, "src"), *tmp = path_join(env_dir, "src.new");
	char *target = xasprintf("builds/%s", name);
	struct werr *err = NULL;
	struct stat sb;

	if (lstat(link, &sb) == 0 && !S_ISLNK(sb.st_mode))
		err = werr_new(WEXIT_PROBLEM, "'%s' is not a link warden made; "
		    "move it away", link);
	else {
		(void)unlink(tmp);
		if (symlink(target, tmp) == -1)
			err = werr_errno("symlink", tmp);
		else if (rename(tmp, link) == -1)
			err = werr_errno("rename", tmp);
	}
	free(link);
	free(tmp);
	free(target);
	return err;
}

static json_t *
git_manifest(const struct update_ctx *ctx, const struct update_build *b,
    const struct target *t, const char *build_dir, json_t *toolchain)
{
	char hex[GIT_OID_HEXSZ + 1], when[40], tag_when[40], now[40];
	char *mirror = update_git_mirror(ctx->policy, b->adapter->source.url);
	json_t *m;

	git_oid_tostr(hex, sizeof(hex), &t->oid);
	utc_iso_from_time(when, sizeof(when), t->commit_time);
	if (t->tag_time != -1)
		utc_iso_from_time(tag_when, sizeof(tag_when), t->tag_time);
	utc_now_iso(now, sizeof(now));
	m = json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:s}, s:n, s:n, "
	    "s:{s:s, s:s, s:s, s:s?, s:s, s:s, s:s?, s:s?, s:s?}, s:O, s:{}, "
	    "s:[], s:s, s:s, s:s}", "schema", MANIFEST_SCHEMA, "engine", b->adapter->name,
	    "kind", "git", "engine_package", b->adapter->name,
	    "engine_version", t->version, "packages", b->adapter->name, t->version,
	    "tool", "python", "source", "url", b->adapter->source.url,
	    "ref", b->adapter->source.ref, "track", b->adapter->source.track ?
	    b->adapter->source.track : "tag", "tag", t->tag, "commit", hex,
	    "commit_time", when, "tag_time", t->tag_time != -1 ? tag_when : NULL,
	    "fetched_from", mirror, "build", build_dir, "toolchain", toolchain,
	    "models", "constraints", "env_dir", b->env_dir,
	    "warden_version", PACKAGE_VERSION, "created", now);
	free(mirror);
	return m;
}

/* The build in use stays: its manifest again, made now. */
static json_t *
current_again(const struct update_build *b)
{
	json_t *m = json_deep_copy(b->current);
	char now[40];

	utc_now_iso(now, sizeof(now));
	json_object_del(m, "id");
	json_object_del(m, "models");
	json_object_set_new(m, "created", json_string(now));
	return m;
}

/* Is b's environment the engine's live one (not a triage scratch)? */
static int
live_env(const struct update_ctx *ctx, const struct update_build *b)
{
	char *live = update_env_dir(ctx->repo_root, b->adapter->name);
	int same = strcmp(live, b->env_dir) == 0;

	free(live);
	return same;
}

struct werr *
update_git_build(struct update_build_result *res, const struct update_ctx *ctx,
    const struct update_build *b)
{
	const struct adapter *a = b->adapter;
	git_repository *repo = NULL;
	struct target t;
	struct werr *err;
	const char *pin, *cur_commit, *cur_build;
	char hex[GIT_OID_HEXSZ + 1], *pin_buf = NULL, *slot = NULL, *dir = NULL;
	char *link = NULL, *failed_at = NULL;
	json_t *toolchain = json_object(), *pin_held = json_object();

	memset(&t, 0, sizeof(t));
	if (ctx->on_progress != NULL)
		ctx->on_progress(ctx->arg, b->k, b->n, a->name, "fetch");
	pin = engine_pin(ctx, b, pin_held, &pin_buf);
	if ((err = update_git_fetch(&repo, ctx, a, pin, b->env_dir, b->log_path,
	    UPDATE_GIT_TRACKED)) != NULL)
		goto out;
	json_object_update(res->held, pin_held);
	if (pin != NULL) {
		if ((err = pick_pinned(&t, repo, pin)) != NULL) {
			/* not a tag the mirror has: a commit, of a branch
			 * perhaps; fetch every branch and tag */
			werr_free(err);
			git_repository_free(repo);
			repo = NULL;
			if ((err = update_git_fetch(&repo, ctx, a, pin,
			    b->env_dir, b->log_path, UPDATE_GIT_ALL)) == NULL)
				err = pick_pinned(&t, repo, pin);
		}
	} else if (a->source.track != NULL && strcmp(a->source.track, "branch") == 0)
		err = pick_branch(&t, ctx, repo, a, res->held);
	else
		err = pick_tag(&t, ctx, repo, a, res->held);
	if (err != NULL)
		goto out;
	git_oid_tostr(hex, sizeof(hex), &t.oid);
	cur_commit = json_string_value(json_object_get(json_object_get(b->current,
	    "source"), "commit"));
	cur_build = json_string_value(json_object_get(json_object_get(b->current,
	    "source"), "build"));
	link = path_join(b->env_dir, "src");
	if (cur_commit != NULL && strcmp(cur_commit, hex) == 0 &&
	    cur_build != NULL && path_is_dir(link)) {
		/* Nothing moved: the build in use is this commit's. */
		res->manifest = git_manifest(ctx, b, &t, cur_build,
		    json_object_get(b->current, "toolchain") ?
		    json_object_get(b->current, "toolchain") : toolchain);
		goto out;
	}
	if (!ctx->retry_failed && !ctx->untrusted &&
	    (failed_at = update_git_failed_before(b->env_dir, hex, t.version)) != NULL) {
		json_object_set_new(res->held, t.version, json_sprintf("failed to "
		    "build at %s; built again only for a newer %s or with "
		    "--retry-failed", failed_at, t.tag != NULL ? "tag" : "commit"));
		if (cur_build != NULL && path_is_dir(link))
			res->manifest = current_again(b);
		else {
			res->outcome = "build_failed";
			err = werr_new(WEXIT_PROBLEM, "'%s' failed to build at %s "
			    "and is not built again until a newer %s or "
			    "`warden update --retry-failed`", t.version, failed_at,
			    t.tag != NULL ? "tag" : "commit");
		}
		goto out;
	}
	if (ctx->dry_run) {
		res->manifest = git_manifest(ctx, b, &t, "", toolchain);
		goto out;
	}
	if ((err = update_git_slot_build(&slot, ctx, b, repo, &t.oid,
	    toolchain)) != NULL) {
		res->outcome = "build_failed";
		if (live_env(ctx, b))	/* triage's scratch builds forget */
			update_git_failed_record(b->env_dir, hex, t.version);
		goto out;
	}
	update_git_failed_clear(b->env_dir);
	if ((err = swap_src(b->env_dir, slot)) != NULL)
		goto out;
	update_git_prune(b->env_dir);
	dir = xasprintf("%s/builds/%s", b->env_dir, slot);
	res->manifest = git_manifest(ctx, b, &t, dir, toolchain);
out:
	target_free(&t);
	json_decref(toolchain);
	json_decref(pin_held);
	git_repository_free(repo);
	free(pin_buf);
	free(slot);
	free(dir);
	free(link);
	free(failed_at);
	return err;
}

struct werr *
update_git_activity(time_t *when, char **what, const struct update_ctx *ctx,
    const struct adapter *a, const char *env_dir, const char *log_path)
{
	git_strarray refs = { NULL, 0 };
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	git_commit *c = NULL;
	struct werr *err;
	git_oid oid;
	time_t t, ct, tt;
	size_t i;

	*when = -1;
	*what = NULL;
	if ((err = update_git_fetch(&repo, ctx, a, NULL, env_dir, log_path,
	    UPDATE_GIT_ALL)) != NULL)
		return err;
	if (git_reference_list(&refs, repo) != 0) {
		err = werr_git("list references of '%s'", a->source.url);
		goto out;
	}
	for (i = 0; i < refs.count; i++) {
		const char *r = refs.strings[i];

		if (str_startswith(r, "refs/tags/")) {
			if (tag_info(repo, r, &oid, &t, &ct, &tt) != 0)
				continue;
		} else if (str_startswith(r, "refs/remotes/origin/")) {
			if (git_reference_lookup(&ref, repo, r) != 0 ||
			    git_reference_target(ref) == NULL ||
			    git_commit_lookup(&c, repo, git_reference_target(ref)) != 0) {
				git_reference_free(ref);
				ref = NULL;
				continue;
			}
			t = (time_t)git_commit_time(c);
			git_commit_free(c);
			git_reference_free(ref);
			c = NULL;
			ref = NULL;
		} else
			continue;
		if (t > *when) {
			*when = t;
			free(*what);
			*what = xstrdup(r);
		}
	}
out:
	git_strarray_dispose(&refs);
	git_repository_free(repo);
	return err;
}
