/*
 * models.c - model weights: for each model of the policy that the
 * engine serves, run the adapter's fetch_model argv so the weights are
 * present (not run when the profile's file or directory is already there
 * with the profile's digest), hash the profile's file or directory
 * (sha256, OpenSSL through sha256.c), and compare with the profile's
 * digest. A fetch_model may
 * print one JSON object on stdout: {"sha256": HEX}, a registry pull's
 * manifest digest, recorded and compared when the profile names no
 * weights; or {"dir": PATH}, the directory it made present (a Hugging
 * Face cache snapshot, whose commit no profile can name), hashed as a
 * profile's dir is. Never prints.
 *
 * The digest of a directory (update_dir_digest): every regular file
 * under it, at any depth, as the line "HEX  RELPATH\n" (HEX its sha256,
 * RELPATH its path below the directory, '/'-separated), the lines sorted
 * by RELPATH bytewise, and the sha256 of their concatenation: what
 *   (cd DIR && find -L . -name '.?*' -prune -o -type f -print |
 *    sed 's|^\./||' | LC_ALL=C sort |
 *    while read -r f; do sha256sum "$f"; done) | sha256sum
 * prints. Entries whose name starts with '.' are left out (download
 * metadata such as hf's .cache/, .gitattributes); a symbolic link is
 * followed to the file it names (a Hugging Face snapshot is links into
 * its blobs), and one to a directory, a dangling one, or anything but a
 * regular file or directory is an error naming it.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"
#include "update-private.h"
#include "util.h"

static void
list_push(struct strlist *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

/* Every regular file below root/rel (rel "" at the top) into files. */
static struct werr *
dir_walk(struct strlist *files, const char *root, const char *rel)
{
	char *dir = rel[0] ? path_join(root, rel) : xstrdup(root), *p, *r;
	struct werr *err = NULL;
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		err = werr_errno("opendir", dir);
		free(dir);
		return err;
	}
	while (err == NULL && (errno = 0, de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;	/* ".", "..", and hidden metadata */
		r = rel[0] ? path_join(rel, de->d_name) : xstrdup(de->d_name);
		p = path_join(root, r);
		if (lstat(p, &sb) == -1)
			err = werr_errno("lstat", p);
		else if (S_ISDIR(sb.st_mode))
			err = dir_walk(files, root, r);
		else if (S_ISLNK(sb.st_mode) && stat(p, &sb) == -1)
			err = werr_new(WEXIT_PROBLEM, "'%s' is a dangling "
			    "symbolic link", p);
		else if (S_ISDIR(sb.st_mode))	/* a link to a directory */
			err = werr_new(WEXIT_PROBLEM, "'%s' is a symbolic link "
			    "to a directory", p);
		else if (!S_ISREG(sb.st_mode))
			err = werr_new(WEXIT_PROBLEM, "'%s' is neither a regular "
			    "file nor a directory", p);
		else {
			list_push(files, r);
			r = NULL;
		}
		free(r);
		free(p);
	}
	if (err == NULL && errno != 0)
		err = werr_errno("readdir", dir);
	closedir(d);
	free(dir);
	return err;
}

struct werr *
update_dir_digest(char *hex_out, size_t *n_files, uint64_t *bytes,
    const char *dir)
{
	struct strlist files = { NULL, 0 };
	struct sha256_ctx *c = NULL;
	char hex[SHA256_HEX_LEN + 1], *p;
	struct werr *err;
	struct stat sb;
	size_t i;

	*n_files = 0;
	*bytes = 0;
	if (stat(dir, &sb) == -1)
		return werr_errno("stat", dir);
	if (!S_ISDIR(sb.st_mode))
		return werr_new(WEXIT_PROBLEM, "'%s' is not a directory", dir);
	if ((err = dir_walk(&files, dir, "")) != NULL)
		goto out;
	if (files.n > 0)
		qsort(files.v, files.n, sizeof(*files.v), strcmp_ptr);
	c = sha256_new();
	for (i = 0; i < files.n && err == NULL; i++) {
		p = path_join(dir, files.v[i]);
		if ((err = sha256_file_hex(p, hex)) == NULL && stat(p, &sb) == 0)
			*bytes += (uint64_t)sb.st_size;
		free(p);
		sha256_update(c, hex, SHA256_HEX_LEN);
		sha256_update(c, "  ", 2);
		sha256_update(c, files.v[i], strlen(files.v[i]));
		sha256_update(c, "\n", 1);
	}
	sha256_final_hex(c, hex);
	if (err == NULL) {
		memcpy(hex_out, hex, SHA256_HEX_LEN + 1);
		*n_files = files.n;
	}
out:
	strlist_free(&files);
	return err;
}

/* What fetch_model printed: {"sha256": HEX} and/or {"dir": PATH}. */
static void
printed(char **digest, char **dir, const char *out_path)
{
	struct buf b = BUF_INIT;
	json_error_t jerr;
	const char *s;
	json_t *doc;

	*digest = *dir = NULL;
	if (file_read(&b, out_path) == NULL) {
		doc = json_loads(buf_cstr(&b), 0, &jerr);
		s = json_string_value(json_object_get(doc, "sha256"));
		if (s != NULL && strlen(s) == SHA256_HEX_LEN)
			*digest = xstrdup(s);
		s = json_string_value(json_object_get(doc, "dir"));
		if (s != NULL && s[0] == '/')
			*dir = xstrdup(s);
		json_decref(doc);
	}
	buf_free(&b);
}

/*
 * Are the weights on disk already what the profile's sha256 names? Then
 * fetch_model need not run. The file's digest goes to hex (for the check
 * that follows); a directory's is computed again there.
 */
static int
already_present(char *hex, const struct profile_engine *pe, const char *path,
    const char *dir)
{
	uint64_t bytes;
	size_t n_files;
	struct werr *err;

	hex[0] = '\0';
	if (pe->sha256 == NULL)
		return 0;
	if (path != NULL) {
		if (!path_exists(path) || path_is_dir(path))
			return 0;
		if ((err = sha256_file_hex(path, hex)) != NULL) {
			werr_free(err);
			hex[0] = '\0';
			return 0;
		}
		return strcmp(hex, pe->sha256) == 0;
	}
	if (dir == NULL || !path_is_dir(dir))
		return 0;
	if ((err = update_dir_digest(hex, &n_files, &bytes, dir)) != NULL) {
		werr_free(err);
		hex[0] = '\0';
		return 0;
	}
	n_files = strcmp(hex, pe->sha256) == 0;
	hex[0] = '\0';
	return (int)n_files;
}

/* Make the parent directory of path (the weights' place) exist. */
static struct werr *
parent_make(const char *path)
{
	char *slash = strrchr(path, '/');
	struct werr *err;

	if (slash == NULL || slash == path)
		return NULL;
	*slash = '\0';
	err = mkdir_p(path);
	*slash = '/';
	return err;
}

static struct werr *
one_model(json_t *out, int *mismatch, const struct update_ctx *ctx,
    const struct adapter *a, const char *env_dir, const char *log_path,
    const char *model, const struct profile *prof,
    const struct profile_engine *pe)
{
	char *path = update_weights_path(ctx->repo_root, pe->file), *digest = NULL;
	char *dir = update_weights_path(ctx->repo_root, pe->dir);
	char *out_path = xasprintf("%s.fetch-out", log_path), **argv = NULL;
	char hex[SHA256_HEX_LEN + 1], *printed_dir = NULL, *file_digest = NULL;
	char pre[SHA256_HEX_LEN + 1] = "";
	const char *checked = NULL, *what = "";
	struct werr *err = NULL;
	struct stat sb;
	json_t *entry;
	uint64_t bytes;
	size_t n_files;

	if (a->fetch_model.n > 0 && already_present(pre, pe, path, dir))
		update_log_note(log_path, "fetch_model not run for model '%s': "
		    "'%s' already has the profile's sha256", model,
		    path != NULL ? path : dir);
	else if (a->fetch_model.n > 0) {
		pre[0] = '\0';
		if ((path != NULL && (err = parent_make(path)) != NULL) ||
		    (dir != NULL && (err = parent_make(dir)) != NULL))
			goto out;
		if ((err = update_expand_argv(&argv, &a->fetch_model, a,
		    ctx->repo_root, env_dir, prof, pe)) != NULL ||
		    (err = update_exec(ctx, "fetch_model", argv, NULL, log_path,
		    out_path, ctx->policy->update.fetch_model_timeout_s)) != NULL)
			goto out;
		printed(&digest, &printed_dir, out_path);
		if (dir == NULL && printed_dir != NULL) {
			dir = printed_dir;
			printed_dir = NULL;
		}
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
		if (pre[0] != '\0')
			memcpy(hex, pre, sizeof(hex));	/* hashed just now */
		else if ((err = sha256_file_hex(path, hex)) != NULL) {
			err->exit = WEXIT_PROBLEM;
			goto out;
		}
		file_digest = xstrdup(hex);
		json_object_set_new(entry, "file", json_string(path));
		json_object_set_new(entry, "bytes", json_integer((json_int_t)sb.st_size));
		json_object_set_new(entry, "sha256", json_string(hex));
		checked = path;
		what = "";
	}
	if (dir != NULL) {
		if (!path_is_dir(dir)) {
			err = werr_new(WEXIT_PROBLEM, "model '%s': weight "
			    "directory '%s' is missing%s", model, dir,
			    a->fetch_model.n ? " after fetch_model" : " and the "
			    "adapter has no fetch_model");
			goto out;
		}
		if ((err = update_dir_digest(hex, &n_files, &bytes, dir)) != NULL) {
			err = werr_wrap(err, "model '%s': weight directory '%s'",
			    model, dir);
			err->exit = WEXIT_PROBLEM;
			goto out;
		}
		json_object_set_new(entry, "dir", json_string(dir));
		json_object_set_new(entry, "dir_files", json_integer((json_int_t)n_files));
		json_object_set_new(entry, "dir_bytes", json_integer((json_int_t)bytes));
		json_object_set_new(entry, "dir_sha256", json_string(hex));
		if (checked == NULL) {
			/* no file: the directory is what the profile's sha256 names */
			file_digest = xstrdup(hex);
			json_object_set_new(entry, "sha256", json_string(hex));
			checked = dir;
			what = "directory ";
		}
	}
	if (checked == NULL && digest != NULL) {
		file_digest = xstrdup(digest);
		json_object_set_new(entry, "sha256", json_string(digest));
		checked = pe->model;
	}
	if (checked == NULL)
		goto out;
	if (pe->sha256 != NULL && strcmp(pe->sha256, file_digest) != 0) {
		*mismatch = 1;
		err = werr_new(WEXIT_PROBLEM, "model '%s': %s'%s' has sha256 %s "
		    "but its profile says %s", model, what, checked, file_digest,
		    pe->sha256);
	}
out:
	(void)unlink(out_path);
	update_argv_free(argv);
	free(out_path);
	free(digest);
	free(file_digest);
	free(printed_dir);
	free(dir);
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
			    pol->models.v[i], p, pe);
		profile_free(p);
		p = NULL;
	}
	if (err != NULL) {
		json_decref(*out);
		*out = NULL;
	}
	return err;
}
