/*
 * models.c - model weights: for each model of the policy that the
 * engine serves, run the adapter's fetch_model argv so the weights are
 * present, hash the profile's file (sha256, OpenSSL through sha256.c),
 * and compare with the profile's digest. A registry pull that names no
 * file may print {"sha256": HEX} (its manifest digest) on stdout; that
 * digest is recorded and compared instead. Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"
#include "update-private.h"
#include "util.h"

/* {"sha256": HEX} printed by fetch_model, or NULL. */
static char *
printed_digest(const char *out_path)
{
	struct buf b = BUF_INIT;
	json_error_t jerr;
	const char *s;
	char *digest = NULL;
	json_t *doc;

	if (file_read(&b, out_path) == NULL) {
		doc = json_loads(buf_cstr(&b), 0, &jerr);
		s = json_string_value(json_object_get(doc, "sha256"));
		if (s != NULL && strlen(s) == SHA256_HEX_LEN)
			digest = xstrdup(s);
		json_decref(doc);
	}
	buf_free(&b);
	return digest;
}

static struct werr *
one_model(json_t *out, int *mismatch, const struct update_ctx *ctx,
    const struct adapter *a, const char *env_dir, const char *log_path,
    const char *model, const struct profile_engine *pe)
{
	char *path = update_weights_path(ctx->repo_root, pe->file), *digest = NULL;
	char *out_path = xasprintf("%s.fetch-out", log_path), **argv = NULL;
	char hex[SHA256_HEX_LEN + 1];
	struct werr *err = NULL;
	struct stat sb;
	json_t *entry;

	if (a->fetch_model.n > 0) {
		if (path != NULL) {
			char *slash = strrchr(path, '/');

			*slash = '\0';
			err = mkdir_p(path);
			*slash = '/';
			if (err != NULL)
				goto out;
		}
		if ((err = update_expand_argv(&argv, &a->fetch_model, a,
		    ctx->repo_root, env_dir, pe)) != NULL ||
		    (err = update_exec("fetch_model", argv, NULL, log_path,
		    out_path, ctx->policy->update.fetch_model_timeout_s)) != NULL)
			goto out;
		digest = printed_digest(out_path);
	}
	entry = json_pack("{s:s}", "served", pe->model);
	json_object_set_new(out, model, entry);
	if (path != NULL) {
		if (stat(path, &sb) == -1) {
			err = werr_new(WEXIT_PROBLEM, "model '%s': weight file "
			    "'%s' is missing%s", model, path, a->fetch_model.n ?
			    " after fetch_model" : " and the adapter has no "
			    "fetch_model");
			goto out;
		}
		if ((err = sha256_file_hex(path, hex)) != NULL) {
			err->exit = WEXIT_PROBLEM;
			goto out;
		}
		free(digest);
		digest = xstrdup(hex);
		json_object_set_new(entry, "file", json_string(path));
		json_object_set_new(entry, "bytes", json_integer((json_int_t)sb.st_size));
	}
	if (digest == NULL)
		goto out;
	json_object_set_new(entry, "sha256", json_string(digest));
	if (pe->sha256 != NULL && strcmp(pe->sha256, digest) != 0) {
		*mismatch = 1;
		err = werr_new(WEXIT_PROBLEM, "model '%s': '%s' has sha256 %s "
		    "but its profile says %s", model, path != NULL ? path :
		    pe->model, digest, pe->sha256);
	}
out:
	(void)unlink(out_path);
	update_argv_free(argv);
	free(out_path);
	free(digest);
	free(path);
	return err;
}

struct werr *
update_models(json_t **out, int *mismatch, const struct update_ctx *ctx,
    const struct adapter *a, const char *env_dir, const char *log_path)
{
	const struct policy *pol = ctx->policy;
	const struct profile_engine *pe;
	struct profile *p = NULL;
	struct werr *err = NULL;
	size_t i;

	*out = json_object();
	*mismatch = 0;
	for (i = 0; i < pol->models.n && err == NULL; i++) {
		if ((err = profile_load_named(&p, ctx->repo_root,
		    pol->models.v[i])) != NULL)
			break;
		pe = profile_engine(p, a->name);
		if (pe != NULL && pe->model != NULL)
			err = one_model(*out, mismatch, ctx, a, env_dir, log_path,
			    pol->models.v[i], pe);
		profile_free(p);
		p = NULL;
	}
	if (err != NULL) {
		json_decref(*out);
		*out = NULL;
	}
	return err;
}
