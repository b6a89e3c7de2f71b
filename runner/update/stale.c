/*
 * stale.c - `warden stale`'s work: how long since each engine's upstream
 * last did anything, against the policy's retirement_days (SiliconBench
 * retired inferrs after 69 days without commits or releases). Reports
 * only: never changes an environment, a manifest or the store. Never
 * prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manifest.h"
#include "update-private.h"
#include "util.h"

static json_t *
stale_one(const struct update_ctx *ctx, const char *name)
{
	const struct policy *pol = ctx->policy;
	struct adapter *a = NULL;
	struct werr *err;
	json_t *row, *dates, *v;
	time_t when = -1;
	char *what = NULL, *env_dir, *log_path, *latest = NULL, stamp[40];
	const char *key, *kind = "none";
	double age;

	row = json_pack("{s:s}", "engine", name);
	env_dir = update_env_dir(ctx->repo_root, name);
	log_path = xasprintf("%s/.warden/logs/update/stale-%s.log",
	    ctx->repo_root, name);
	if ((err = adapter_load_named(&a, ctx->repo_root, name)) != NULL)
		goto done;
	switch (a->source.kind) {
	case SOURCE_GIT:
		kind = "git";
		if ((err = mkdir_p(env_dir)) == NULL)
			err = update_git_activity(&when, &what, ctx, a, env_dir,
			    log_path);
		break;
	case SOURCE_PIP:
		kind = "pip";
		if ((err = update_index_releases(&dates, &latest, pol,
		    a->source.package)) != NULL)
			break;
		json_object_foreach(dates, key, v)
			if ((time_t)json_integer_value(v) > when) {
				when = (time_t)json_integer_value(v);
				free(what);
				what = xasprintf("release %s", key);
			}
		json_decref(dates);
		break;
	case SOURCE_BREW:
		kind = "brew";
		err = werr_new(WEXIT_PROBLEM, "brew formulae carry no release "
		    "dates");
		break;
	case SOURCE_NONE:
		err = werr_new(WEXIT_PROBLEM, "a program on PATH has no "
		    "upstream to ask");
		break;
	}
done:
	json_object_set_new(row, "kind", json_string(kind));
	json_object_set_new(row, "retirement_days",
	    json_integer(pol->retirement_days));
	if (err != NULL || when == -1) {
		json_object_set_new(row, "last_activity", json_null());
		json_object_set_new(row, "what", json_null());
		json_object_set_new(row, "age_days", json_null());
		json_object_set_new(row, "status", json_string("unknown"));
		json_object_set_new(row, "detail", json_string(err != NULL ?
		    err->msg : "no activity found"));
	} else {
		utc_iso_from_time(stamp, sizeof(stamp), when);
		age = difftime(time(NULL), when) / 86400.0;
		json_object_set_new(row, "last_activity", json_string(stamp));
		json_object_set_new(row, "what", json_string(what));
		json_object_set_new(row, "age_days", json_real(age));
		json_object_set_new(row, "status", json_string(
		    age > pol->retirement_days ? "stale" : "active"));
		json_object_set_new(row, "detail", json_null());
	}
	werr_free(err);
	adapter_free(a);
	free(what);
	free(latest);
	free(env_dir);
	free(log_path);
	return row;
}

struct werr *
update_stale(json_t **out, const struct update_ctx *ctx,
    const char *const *engines)
{
	const struct roster *ro = policy_roster(ctx->policy,
	    ctx->policy->default_roster);
	size_t i, n = 0;
	char *dir;
	struct werr *err;

	*out = NULL;
	dir = xasprintf("%s/.warden/logs/update", ctx->repo_root);
	err = mkdir_p(dir);
	free(dir);
	if (err != NULL)
		return err;
	if (engines != NULL && engines[0] != NULL)
		while (engines[n] != NULL)
			n++;
	else if (ro != NULL)
		n = ro->engines.n;
	*out = json_array();
	for (i = 0; i < n; i++) {
		const char *name = engines != NULL && engines[0] != NULL ?
		    engines[i] : ro->engines.v[i];

		if (ctx->on_progress != NULL)
			ctx->on_progress(ctx->arg, i + 1, n, name, "stale");
		json_array_append_new(*out, stale_one(ctx, name));
	}
	return NULL;
}
