/*
 * group.c - policy groups in the update step: the version each group
 * package moves to in every engine (update_group_pins), and the commit
 * point of a run's group moves (update_groups_finish): every waiting
 * attempt recorded in one transaction, as it is or group_rolled_back,
 * then each kept venv dropped or put back (stash.c). update.c says why
 * groups are all-or-none. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "manifest.h"
#include "store-update.h"
#include "update-private.h"
#include "util.h"
#include "version.h"

static void
push(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
	l->v[l->n] = NULL;
}

/*
 * Groups: each group package moves to the oldest version any engine's
 * plan wants (the newest all can take), or, when an engine that holds it
 * could not plan, stays where it is in every engine.
 */
void
update_group_pins(const struct update_ctx *ctx, struct engine_job *jobs, size_t n)
{
	const struct policy *p = ctx->policy;
	const char *target, *v;
	size_t g, k, i;
	int any_failed;
	char *pkg, *spec;

	for (g = 0; g < p->update.n_groups; g++) {
		for (k = 0; k < p->update.groups[g].packages.n; k++) {
			pkg = manifest_package_name(p->update.groups[g].packages.v[k]);
			target = NULL;
			any_failed = 0;
			for (i = 0; i < n; i++) {
				if (manifest_package_version(jobs[i].current, pkg) == NULL &&
				    manifest_package_version(jobs[i].plan, pkg) == NULL)
					continue;
				if (jobs[i].plan_failed) {
					any_failed = 1;
					continue;
				}
				v = manifest_package_version(jobs[i].plan, pkg);
				if (v != NULL && (target == NULL ||
				    version_compare(v, target) < 0))
					target = v;
			}
			for (i = 0; i < n; i++) {
				const char *cur = manifest_package_version(
				    jobs[i].current, pkg);

				if (cur != NULL || manifest_package_version(
				    jobs[i].plan, pkg) != NULL)
					jobs[i].holds[g] = 1;
				v = any_failed ? cur : target;
				if (v == NULL || !jobs[i].holds[g])
					continue;
				/* only a venv can be kept aside and put back */
				if (cur != NULL && strcmp(cur, v) != 0 &&
				    jobs[i].adapter != NULL &&
				    jobs[i].adapter->source.kind == SOURCE_PIP)
					jobs[i].moves[g] = 1;
				spec = xasprintf("%s==%s", pkg, v);
				push(&jobs[i].pins, spec);
				free(spec);
			}
			free(pkg);
		}
	}
}

/*
 * Why engine j, which moved a package of group g, is put back: the
 * engine of the group that failed and the package that stays.
 */
static char *
rollback_reason(const struct update_report *rep, const struct update_ctx *ctx,
    const struct engine_job *jobs, size_t n, const struct engine_job *j,
    size_t g)
{
	const struct policy_group *grp = &ctx->policy->update.groups[g];
	const struct engine_job *culprit = NULL;
	const char *cur, *now, *pkg_name = NULL, *pkg_ver = NULL;
	struct buf b = BUF_INIT;
	size_t i, k;
	char *pkg;

	for (i = 0; i < n && culprit == NULL; i++)
		if (jobs[i].failed && jobs[i].holds[g])
			culprit = &jobs[i];
	for (k = 0; k < grp->packages.n && pkg_name == NULL; k++) {
		pkg = manifest_package_name(grp->packages.v[k]);
		cur = manifest_package_version(j->current, pkg);
		now = manifest_package_version(j->waiting, pkg);
		if (cur != NULL && (now == NULL || strcmp(cur, now) != 0)) {
			pkg_name = grp->packages.v[k];
			pkg_ver = cur;
		}
		free(pkg);
	}
	buf_printf(&b, "policy group '%s' rolled back: '%s' failed (%s), so "
	    "'%s' stays at %s here, with the environment and manifest of "
	    "before", grp->name, culprit->name, rep->v[culprit->report_i].outcome,
	    pkg_name != NULL ? pkg_name : grp->packages.v[0],
	    pkg_ver != NULL ? pkg_ver : "its version");
	return buf_detach(&b);
}

/* The group of j that must be put back, or -1. */
static long
failed_group(const struct update_ctx *ctx, const struct engine_job *jobs,
    size_t n, const struct engine_job *j)
{
	size_t g, i;

	for (g = 0; g < ctx->policy->update.n_groups; g++) {
		if (!j->moves[g])
			continue;
		for (i = 0; i < n; i++)
			if (jobs[i].failed && jobs[i].holds[g])
				return (long)g;
	}
	return -1;
}

/*
 * Record every waiting attempt in one transaction (each as it is, or
 * group_rolled_back), then drop or put back each kept venv.
 */
struct werr *
update_groups_finish(struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, struct engine_job *jobs, size_t n)
{
	struct store_update_attempt *at;
	struct update_engine_result *e;
	struct werr *err = NULL;
	size_t i, m = 0, *which;
	int64_t *ids, prev;
	char **why;
	long g;

	at = xcalloc(n + 1, sizeof(*at));
	ids = xcalloc(n + 1, sizeof(*ids));
	which = xcalloc(n + 1, sizeof(*which));
	why = xcalloc(n + 1, sizeof(*why));
	for (i = 0; i < n; i++) {
		if (jobs[i].waiting == NULL)
			continue;
		e = &rep->v[jobs[i].report_i];
		at[m].engine = jobs[i].name;
		at[m].log_path = jobs[i].log_path;
		at[m].env_dir = jobs[i].env_dir;
		at[m].previous_id = json_integer_value(json_object_get(
		    jobs[i].current, "id"));
		if ((g = failed_group(ctx, jobs, n, &jobs[i])) >= 0) {
			why[m] = rollback_reason(rep, ctx, jobs, n, &jobs[i],
			    (size_t)g);
			at[m].outcome = "group_rolled_back";
			at[m].detail = why[m];
		} else {
			at[m].outcome = e->outcome;
			at[m].manifest = jobs[i].waiting;
			at[m].changes = e->changes;
		}
		which[m++] = i;
	}
	if (m == 0)
		goto out;
	if ((err = store_update_record_all(store, at, m, ids)) != NULL)
		goto out;
	/* the group's records are in; the kept venvs are not yet settled */
	fault_point("update.group_recorded");
	for (i = 0; i < m; i++) {
		e = &rep->v[jobs[which[i]].report_i];
		prev = at[i].previous_id;
		if (why[i] != NULL) {
			free(e->outcome);
			e->outcome = xstrdup("group_rolled_back");
			e->detail = xstrdup(why[i]);
			json_decref(e->changes);
			e->changes = json_object();
			rep->failed++;
		} else
			e->manifest_id = ids[i];
		if (err == NULL)
			err = update_stash_settle(NULL, jobs[which[i]].env_dir,
			    why[i] != NULL ? prev : ids[i]);
	}
out:
	for (i = 0; i < m; i++)
		free(why[i]);
	free(why);
	free(which);
	free(ids);
	free(at);
	return err;
}
