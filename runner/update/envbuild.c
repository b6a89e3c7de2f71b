/*
 * envbuild.c - build one engine's environment and say what it holds:
 * update_env_build() of update.h. pip sources go through the pip shim
 * into env_dir/venv with every constraint written to a constraints file
 * (policy pins, the adapter's pins, the caller's pins over both, holds,
 * and releases younger than update.min_release_age_days); brew sources
 * through the brew shim; git sources in gitenv.c; `none` asks the
 * program for its version. The result is the environment's manifest.
 * An untrusted build (a triage scratch environment) runs every program
 * in the box of scratchbox.c. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manifest.h"
#include "update-private.h"
#include "util.h"
#include "version.h"

#define RELEASE_AGE_ROUNDS 5

void
update_build_result_free(struct update_build_result *res)
{
	json_decref(res->manifest);
	json_decref(res->held);
	free(res->log_tail);
	memset(res, 0, sizeof(*res));
}

/* The key of the engine's own package in its manifest. */
static char *
own_package(const struct adapter *a)
{
	if ((a->source.kind == SOURCE_PIP || a->source.kind == SOURCE_BREW) &&
	    a->source.package != NULL)
		return a->source.kind == SOURCE_PIP ?
		    manifest_package_name(a->source.package) :
		    xstrdup(a->source.package);
	return xstrdup(a->name);
}

/* "name==ver": the normalised name (caller frees) and where ver starts. */
static char *
spec_name(const char *spec, const char **ver)
{
	const char *eq = strstr(spec, "==");
	char *raw, *name;

	if (eq == NULL) {
		*ver = NULL;
		return manifest_package_name(spec);
	}
	raw = xstrndup(spec, (size_t)(eq - spec));
	name = manifest_package_name(raw);
	free(raw);
	*ver = eq + 2;
	return name;
}

/* Add or replace name's constraint in the object {name: "name==ver"}. */
static void
pin_set(json_t *pins, const char *spec)
{
	const char *ver;
	char *name = spec_name(spec, &ver);

	if (ver != NULL)
		json_object_set_new(pins, name, json_string(spec));
	free(name);
}

/* Every pin in force for this build: policy, adapter, caller, holds. */
static json_t *
pins_in_force(const struct update_ctx *ctx, const struct update_build *b,
    const char *own, json_t *held)
{
	const struct policy *p = ctx->policy;
	const struct adapter *a = b->adapter;
	json_t *pins = json_object();
	const char *cur;
	char *name;
	size_t i;

	for (i = 0; i < p->update.pins.n; i++)
		pin_set(pins, p->update.pins.v[i]);
	for (i = 0; i < a->source.pins.n; i++)
		pin_set(pins, a->source.pins.v[i]);
	for (i = 0; b->pins != NULL && i < b->pins->n; i++)
		pin_set(pins, b->pins->v[i]);
	for (i = 0; i < p->update.holds.n; i++) {
		const char *h = p->update.holds.v[i];

		name = strcmp(h, a->name) == 0 ? xstrdup(own) :
		    manifest_package_name(h);
		cur = manifest_package_version(b->current, name);
		if (cur != NULL && json_object_get(pins, name) == NULL) {
			json_object_set_new(pins, name, json_pack("s++", name,
			    "==", cur));
			json_object_set_new(held, name, json_pack("s++",
			    "held by policy at ", cur, ""));
		}
		free(name);
	}
	return pins;
}

static void
argv_push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/* The manifest shell every kind fills in. */
static json_t *
manifest_new(const struct update_build *b, const char *own)
{
	char now[40];

	utc_now_iso(now, sizeof(now));
	return json_pack("{s:i, s:s, s:s, s:s, s:n, s:{}, s:n, s:n, s:{}, s:{}, "
	    "s:[], s:s, s:s, s:s}", "schema", MANIFEST_SCHEMA,
	    "engine", b->adapter->name,
	    "kind", b->adapter->source.kind == SOURCE_GIT ? "git" :
	    b->adapter->source.kind == SOURCE_PIP ? "pip" :
	    b->adapter->source.kind == SOURCE_BREW ? "brew" : "none",
	    "engine_package", own, "engine_version", "packages",
	    "tool", "python", "toolchain", "models", "constraints",
	    "env_dir", b->env_dir, "warden_version", PACKAGE_VERSION,
	    "created", now);
}

/* Copy what a shim said into the manifest. */
static void
manifest_from_shim(json_t *m, const json_t *shim, const char *own)
{
	json_t *pk = json_object(), *v;
	const char *key;
	char *name;

	int pip = strcmp(json_string_value(json_object_get(shim, "tool")), "pip") == 0;

	json_object_foreach((json_t *)json_object_get(shim, "packages"), key, v) {
		name = pip ? manifest_package_name(key) : xstrdup(key);
		json_object_set(pk, name, v);
		free(name);
	}
	json_object_set_new(m, "packages", pk);
	json_object_set_new(m, "tool", json_pack("{s:O, s:O}",
	    "name", json_object_get(shim, "tool"),
	    "version", json_object_get(shim, "tool_version")));
	json_object_set(m, "python", json_object_get(shim, "python"));
	v = json_object_get(pk, own);
	json_object_set(m, "engine_version", v != NULL ? v : json_null());
}

static struct werr *
write_constraints(const char *path, const json_t *pins, const json_t *excl)
{
	struct buf b = BUF_INIT;
	const char *key;
	struct werr *err;
	json_t *v, *x;
	size_t i;

	json_object_foreach((json_t *)pins, key, v)
		buf_printf(&b, "%s\n", json_string_value(v));
	json_object_foreach((json_t *)excl, key, v)
		json_array_foreach(v, i, x)
			buf_printf(&b, "%s!=%s\n", key, json_string_value(x));
	err = file_write_atomic(path, b.data ? b.data : "", b.len);
	buf_free(&b);
	return err;
}

/*
 * Releases chosen by a dry run that are younger than the policy allows:
 * add each such package's young releases to excl. Returns how many
 * packages got new exclusions.
 */
static size_t
exclude_young(json_t *excl, json_t *dates_cache, json_t *held,
    const struct update_ctx *ctx, const json_t *planned, const json_t *current)
{
	double min_s = ctx->policy->update.min_release_age_days * 86400.0;
	time_t now = time(NULL);
	const char *name, *ver, *v;
	json_t *dates, *when, *t, *list;
	struct werr *err;
	size_t added = 0;

	json_object_foreach((json_t *)json_object_get(planned, "packages"), name, t) {
		ver = json_string_value(t);
		v = manifest_package_version(current, name);
		if (v != NULL && strcmp(v, ver) == 0)
			continue;	/* not moving: no release to judge */
		if ((dates = json_object_get(dates_cache, name)) == NULL) {
			if ((err = update_index_releases(&dates, NULL, ctx->policy,
			    name)) != NULL) {
				json_object_set_new(held, name, json_pack("s++",
				    "release date unknown (", err->msg, ")"));
				werr_free(err);
				dates = json_object();
			}
			json_object_set_new(dates_cache, name, dates);
		}
		when = json_object_get(dates, ver);
		if (!json_is_integer(when) ||
		    difftime(now, (time_t)json_integer_value(when)) >= min_s)
			continue;
		list = json_array();
		json_object_foreach(dates, v, when)
			if (difftime(now, (time_t)json_integer_value(when)) < min_s)
				json_array_append_new(list, json_string(v));
		json_object_set_new(excl, name, list);
		json_object_set_new(held, name, json_pack("s+++", ver,
		    " is younger than ", "update.min_release_age_days", ""));
		added++;
	}
	return added;
}

/* Call the upgrade verb (dry or not) with the constraints in force. */
static struct werr *
pip_upgrade(json_t **out, const struct update_ctx *ctx,
    const struct update_build *b, const char *venv, const char *cfile,
    const char *spec, int dry)
{
	char **args = NULL;
	size_t n = 0;
	struct werr *err;

	argv_push(&args, &n, "--constraint");
	argv_push(&args, &n, cfile);
	if (dry)
		argv_push(&args, &n, "--dry-run");
	argv_push(&args, &n, b->adapter->source.package);
	if (spec != NULL)
		argv_push(&args, &n, spec);
	err = update_shim_call(out, ctx, SOURCE_PIP, "upgrade", venv, args,
	    b->log_path);
	update_argv_free(args);
	return err;
}

static struct werr *
make_venv(const struct update_ctx *ctx, const char *venv, const char *log)
{
	const struct strlist *py = &ctx->policy->update.python;
	char **argv = NULL;
	size_t n = 0, i;
	struct werr *err;

	for (i = 0; i < py->n; i++)
		argv_push(&argv, &n, py->v[i]);
	argv_push(&argv, &n, "-m");
	argv_push(&argv, &n, "venv");
	if (!ctx->policy->update.venv_pip)
		argv_push(&argv, &n, "--without-pip");
	argv_push(&argv, &n, venv);
	err = update_exec(ctx, "venv", argv, NULL, log, NULL,
	    ctx->policy->update.shim_timeout_s);
	update_argv_free(argv);
	return err;
}

static struct werr *
build_pip(struct update_build_result *res, const struct update_ctx *ctx,
    const struct update_build *b, const char *own)
{
	char *venv = path_join(b->env_dir, "venv");
	char *py = path_join(venv, "bin/python");
	char *cfile = xasprintf("%s.constraints", b->log_path);
	json_t *pins, *excl = json_object(), *cache = json_object();
	json_t *plan = NULL, *done = NULL, *spec_j;
	const char *spec = NULL;
	struct werr *err = NULL;
	int created = 0, settled = 0;
	size_t round;
	char *spec_own = NULL;

	pins = pins_in_force(ctx, b, own, res->held);
	/* The engine's own package: the caller's or policy's pin, else the
	 * adapter's pin, as a requirement of its own. */
	if ((spec_j = json_object_get(pins, own)) != NULL)
		spec = strstr(json_string_value(spec_j), "==");
	else if (b->adapter->source.pin != NULL)
		spec = spec_own = xasprintf("==%s", b->adapter->source.pin);
	if (!ctx->dry_run && !path_exists(py)) {
		if ((err = mkdir_p(b->env_dir)) != NULL ||
		    (err = make_venv(ctx, venv, b->log_path)) != NULL)
			goto out;
		created = 1;
	}
	if ((err = write_constraints(cfile, pins, excl)) != NULL)
		goto out;
	if (ctx->policy->update.min_release_age_days > 0) {
		for (round = 0; round < RELEASE_AGE_ROUNDS; round++) {
			json_decref(plan);
			plan = NULL;
			if ((err = pip_upgrade(&plan, ctx, b, venv, cfile, spec,
			    1)) != NULL)
				goto out;
			if (exclude_young(excl, cache, res->held, ctx, plan,
			    b->current) == 0) {
				settled = 1;
				break;
			}
			if ((err = write_constraints(cfile, pins, excl)) != NULL)
				goto out;
		}
	}
	/* The last dry run, under the constraints in force, would install
	 * nothing: the upgrade would leave the venv as that run found it. */
	if (!created && settled && plan != NULL &&
	    json_is_object(json_object_get(plan, "would_install")) &&
	    json_object_size(json_object_get(plan, "would_install")) == 0) {
		update_log_note(b->log_path, "the dry run would install nothing: "
		    "no upgrade run");
		done = plan;
		plan = NULL;
	} else if (ctx->dry_run && plan != NULL) {
		done = plan;
		plan = NULL;
	} else if ((err = pip_upgrade(&done, ctx, b, venv, cfile, spec,
	    ctx->dry_run)) != NULL)
		goto out;
	res->manifest = manifest_new(b, own);
	manifest_from_shim(res->manifest, done, own);
	{
		const char *key;
		json_t *v, *c = json_object_get(res->manifest, "constraints");
		size_t i;
		json_t *x;

		json_object_foreach(pins, key, v)
			json_array_append(c, v);
		json_object_foreach(excl, key, v)
			json_array_foreach(v, i, x)
				json_array_append_new(c, json_pack("s++", key,
				    "!=", json_string_value(x)));
	}
out:
	if (err != NULL && created) {
		struct werr *e2 = path_remove_tree(venv);

		werr_free(e2);
	}
	(void)unlink(cfile);
	json_decref(pins);
	json_decref(excl);
	json_decref(cache);
	json_decref(plan);
	json_decref(done);
	free(spec_own);
	free(cfile);
	free(py);
	free(venv);
	return err;
}

static struct werr *
build_brew(struct update_build_result *res, const struct update_ctx *ctx,
    const struct update_build *b, const char *own)
{
	json_t *pins = pins_in_force(ctx, b, own, res->held), *done = NULL, *v;
	char **args = NULL;
	const char *verb = "upgrade";
	struct werr *err;
	size_t n = 0;
	char *spec = NULL;

	if ((v = json_object_get(pins, own)) != NULL) {
		verb = "pin";
		argv_push(&args, &n, json_string_value(v));
	} else if (b->adapter->source.pin != NULL) {
		verb = "pin";
		spec = xasprintf("%s==%s", b->adapter->source.package,
		    b->adapter->source.pin);
		argv_push(&args, &n, spec);
	} else {
		if (ctx->dry_run)
			argv_push(&args, &n, "--dry-run");
		argv_push(&args, &n, b->adapter->source.package);
	}
	if (ctx->dry_run && strcmp(verb, "pin") == 0) {
		/* a pin changes nothing but the hold: show what is there */
		update_argv_free(args);
		args = NULL;
		n = 0;
		verb = "versions";
		argv_push(&args, &n, b->adapter->source.package);
	}
	err = update_shim_call(&done, ctx, SOURCE_BREW, verb, b->env_dir, args,
	    b->log_path);
	if (err == NULL) {
		res->manifest = manifest_new(b, own);
		manifest_from_shim(res->manifest, done, own);
		json_object_set_new(res->manifest, "python", json_null());
	}
	json_decref(done);
	json_decref(pins);
	update_argv_free(args);
	free(spec);
	return err;
}

static struct werr *
build_none(struct update_build_result *res, const struct update_ctx *ctx,
    const struct update_build *b, const char *own)
{
	char **argv = NULL, *out_path, *nl;
	struct buf text = BUF_INIT;
	struct werr *err = NULL;
	const char *ver = NULL;

	res->manifest = manifest_new(b, own);
	if (b->adapter->source.version_argv.n == 0)
		return NULL;
	out_path = xasprintf("%s.version", b->log_path);
	if ((err = update_expand_argv(&argv, &b->adapter->source.version_argv,
	    b->adapter, ctx->repo_root, b->env_dir, NULL, NULL)) == NULL &&
	    (err = update_exec(ctx, "version_argv", argv, NULL, b->log_path,
	    out_path, ctx->policy->update.shim_timeout_s)) == NULL &&
	    (err = file_read_max(&text, out_path, FILE_MAX_CONFIG)) == NULL) {
		nl = strchr(buf_cstr(&text), '\n');
		if (nl != NULL)
			*nl = '\0';
		ver = buf_cstr(&text);
		if (ver[0] == '\0')
			err = werr_new(WEXIT_PROBLEM, "'source.version_argv' "
			    "of '%s' printed nothing", b->adapter->name);
	}
	if (err == NULL) {
		json_object_set_new(json_object_get(res->manifest, "packages"),
		    own, json_string(ver));
		json_object_set_new(res->manifest, "engine_version",
		    json_string(ver));
	}
	(void)unlink(out_path);
	free(out_path);
	update_argv_free(argv);
	buf_free(&text);
	return err;
}

struct werr *
update_env_build(struct update_build_result *res, const struct update_ctx *ctx,
    const struct update_build *b)
{
	struct update_ctx boxed;
	struct update_box *box = NULL;
	struct werr *err = NULL;
	char *own = own_package(b->adapter);

	memset(res, 0, sizeof(*res));
	res->held = json_object();
	res->outcome = "failed";
	if (ctx->untrusted) {
		if ((err = update_box_open(&box, ctx, b)) != NULL)
			goto out;
		boxed = *ctx;
		boxed.box = box;
		ctx = &boxed;
	}
	switch (b->adapter->source.kind) {
	case SOURCE_PIP:
		err = build_pip(res, ctx, b, own);
		break;
	case SOURCE_BREW:
		err = build_brew(res, ctx, b, own);
		break;
	case SOURCE_GIT:
		err = update_git_build(res, ctx, b);
		break;
	case SOURCE_NONE:
		err = build_none(res, ctx, b, own);
		break;
	}
	if (err == NULL && box != NULL)
		json_object_set_new(res->manifest, "sandbox",
		    json_string(box->kind != NULL ? box->kind : "none"));
out:
	if (err != NULL) {
		json_decref(res->manifest);
		res->manifest = NULL;
	}
	update_box_close(box);
	free(own);
	return err;
}
