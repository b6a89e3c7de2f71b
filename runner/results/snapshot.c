/*
 * snapshot.c - build a results snapshot: the results tree of a result
 * set, its inputs, its sealed manifest, its signature (through sign.c).
 * Writing and reading archives is snapshot-io.c. See snapshot.h.
 * Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <cairo.h>
#include <git2.h>

#include "adapter.h"
#include "jsonget.h"
#include "sha256.h"
#include "util.h"
#include "results/fidelity-table.h"
#include "results/gate.h"
#include "results/plot.h"
#include "results/report.h"
#include "results/sign.h"
#include "results/snapshot.h"

const char *
snapshot_configured_key(const char *repo_root)
{
	static char *key;	/* the last answer, until the next call */
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	git_buf v = { NULL, 0, 0 };

	free(key);
	key = NULL;
	if (repo_root != NULL && git_repository_open(&repo, repo_root) == 0 &&
	    git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_string_buf(&v, cfg, "warden.signingKey") == 0 &&
	    v.ptr != NULL && v.ptr[0] != '\0')
		key = v.ptr[0] == '/' ? xstrdup(v.ptr) :
		    path_join(repo_root, v.ptr);
	git_error_clear();
	git_buf_dispose(&v);
	git_config_free(cfg);
	git_repository_free(repo);
	return key;
}

struct werr *
snapshot_sign_key(const char **key, const struct policy *pol, const char *arg,
    const char *repo_root)
{
	const char *env = getenv("WARDEN_SIGNING_KEY");

	*key = arg != NULL ? arg : env != NULL && env[0] != '\0' ? env :
	    snapshot_configured_key(repo_root);
	if (*key == NULL && pol->publish.require_signature)
		return werr_new(WEXIT_INPUT, "policy requires signed snapshots "
		    "(publish.require_signature); give --sign-key FILE, "
		    "WARDEN_SIGNING_KEY or git config warden.signingKey");
	return NULL;
}

struct werr *
snapshot_source_date(int64_t *out, char commit_out[41], const char *repo_root,
    const char *commit)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_commit *c = NULL;
	struct werr *err = NULL;
	const char *env = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long v;

	if (git_repository_open(&repo, repo_root) < 0)
		return werr_git("cannot open repository '%s'", repo_root);
	if (git_revparse_single(&obj, repo, commit ? commit : "HEAD") < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		err = werr_git("cannot find commit '%s'", commit ? commit : "HEAD");
		goto out;
	}
	git_oid_tostr(commit_out, 41, git_commit_id(c));
	*out = (int64_t)git_commit_time(c);
	if (env != NULL && env[0] != '\0') {
		errno = 0;
		v = strtoll(env, &end, 10);
		if (*end != '\0' || errno != 0 || v < 0)
			err = werr_new(WEXIT_INPUT, "SOURCE_DATE_EPOCH '%s' is "
			    "not a number of seconds", env);
		else
			*out = (int64_t)v;
	}
out:
	git_commit_free(c);
	git_object_free(obj);
	git_repository_free(repo);
	return err;
}

/* ---- members ---- */

void
snapshot_add(struct snapshot *s, const char *path, const char *data,
    size_t len)
{
	s->m = xrealloc(s->m, (s->n + 1) * sizeof(*s->m));
	s->m[s->n].path = xstrdup(path);
	buf_init(&s->m[s->n].data);
	buf_add(&s->m[s->n].data, data, len);
	buf_puts(&s->m[s->n].data, "");
	s->n++;
}

static void
add_json(struct snapshot *s, const char *path, const json_t *doc)
{
	char *text = resultset_doc_text(doc);

	snapshot_add(s, path, text, strlen(text));
	free(text);
}

static int
member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snapshot_member *)a)->path,
	    ((const struct snapshot_member *)b)->path);
}

void
snapshot_sort(struct snapshot *s)
{
	qsort(s->m, s->n, sizeof(*s->m), member_cmp);
}

const struct snapshot_member *
snapshot_member(const struct snapshot *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->m[i].path, path) == 0)
			return &s->m[i];
	return NULL;
}

void
snapshot_free(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->m[i].path);
		buf_free(&s->m[i].data);
	}
	free(s->m);
	json_decref(s->manifest);
	buf_free(&s->archive);
	free(s->disorder);
	memset(s, 0, sizeof(*s));
}

/* ---- inputs ---- */

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sha256 of every regular file under root/rel (dot files skipped), into
 * files by repository-relative path. */
static struct werr *
hash_dir(json_t *files, const char *root, const char *rel)
{
	char *dir = path_join(root, rel), **names = NULL, *sub, *full;
	char hex[SHA256_HEX_LEN + 1];
	struct werr *err = NULL;
	struct dirent *de;
	struct stat st;
	size_t n = 0, i;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		err = errno == ENOENT ? NULL : werr_errno("open directory", dir);
		free(dir);
		return err;
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(de->d_name);
		}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		sub = xasprintf("%s/%s", rel, names[i]);
		full = path_join(root, sub);
		if (err == NULL && lstat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				err = hash_dir(files, root, sub);
			else if (S_ISREG(st.st_mode) &&
			    (err = sha256_file_hex(full, hex)) == NULL)
				json_object_set_new(files, sub, json_string(hex));
		}
		free(sub);
		free(full);
		free(names[i]);
	}
	free(names);
	free(dir);
	return err;
}

/* {model: {engine: sha256 or null}} from the profiles. */
static json_t *
model_digests(const char *root, const json_t *files)
{
	json_t *out = json_object(), *engines;
	struct profile *p;
	const char *path;
	json_t *v;
	char *full;
	size_t i;

	json_object_foreach((json_t *)files, path, v) {
		if (!str_startswith(path, "adapters/profiles/") ||
		    !str_endswith(path, ".json") ||
		    strchr(path + 18, '/') != NULL)
			continue;
		full = path_join(root, path);
		p = NULL;
		werr_free(profile_load_file(&p, full, path, NULL));
		free(full);
		if (p == NULL)
			continue;
		engines = json_object();
		for (i = 0; i < p->n_engines; i++)
			json_object_set_new(engines, p->engines[i].engine,
			    p->engines[i].sha256 ? json_string(p->engines[i].sha256)
			    : json_null());
		json_object_set_new(out, p->name, engines);
		profile_free(p);
	}
	return out;
}

/* {engine: [distinct version manifests]} from the campaign results. */
static json_t *
engine_manifests(const struct resultset *rs)
{
	json_t *docs = resultset_docs(rs, "campaign"), *out = json_object();
	const json_t *doc, *c, *m, *x;
	json_t *list;
	size_t i, j, k;

	json_array_foreach(docs, i, doc) {
		if ((list = json_object_get(out, jsonget_str(doc,
		    "engine"))) == NULL) {
			list = json_array();
			json_object_set_new(out, jsonget_str(doc, "engine"),
			    list);
		}
		json_array_foreach(json_object_get(doc, "concurrency_results"),
		    j, c) {
			m = json_object_get(json_object_get(c, "provenance"),
			    "engine_manifest");
			if (m == NULL || json_is_null(m))
				continue;
			json_array_foreach(list, k, x)
				if (json_equal(x, m))
					break;
			if (k == json_array_size(list))
				json_array_append(list, (json_t *)m);
		}
	}
	json_decref(docs);
	return out;
}

static json_t *
inputs(const struct resultset *rs, const char *root, struct werr **err)
{
	static const char *const dirs[] = { "policy", "adapters", "workloads",
	    NULL };
	json_t *files = json_object(), *o;
	size_t i;

	*err = NULL;
	for (i = 0; dirs[i] != NULL && *err == NULL; i++)
		*err = hash_dir(files, root, dirs[i]);
	o = json_pack("{s:o, s:s, s:o, s:o, s:{s:s, s:s, s:s}}",
	    "files", files, "warden_version", PACKAGE_VERSION,
	    "engine_manifests", engine_manifests(rs),
	    "model_digests", model_digests(root, files),
	    "libraries", "cairo", cairo_version_string(),
	    "libarchive", archive_version_string(),
	    "jansson", JANSSON_VERSION);
	return o;
}

/* ---- the manifest ---- */

char *
snapshot_manifest_text(const json_t *manifest)
{
	return resultset_doc_text(manifest);
}

void
snapshot_manifest_seal(json_t *manifest)
{
	char hex[SHA256_HEX_LEN + 1], *text;

	json_object_del(manifest, "manifest_sha256");
	text = snapshot_manifest_text(manifest);
	sha256_hex(text, strlen(text), hex);
	free(text);
	json_object_set_new(manifest, "manifest_sha256", json_string(hex));
}

static json_t *
outputs(const struct snapshot *s)
{
	json_t *o = json_object();
	char hex[SHA256_HEX_LEN + 1];
	size_t i;

	for (i = 0; i < s->n; i++) {
		sha256_hex(s->m[i].data.data, s->m[i].data.len, hex);
		json_object_set_new(o, s->m[i].path, json_string(hex));
	}
	return o;
}

/* Run documents, tables, report and figures of rs. */
static struct werr *
build_outputs(struct snapshot *s, const struct resultset *rs,
    const struct snapshot_params *p, json_t **gate_out)
{
	json_t *comparison, *gate, *fid, *refs, *rows, *info, *doc, *previous;
	struct plot_file *plots = NULL;
	struct werr *err;
	const char *path;
	size_t nplots = 0, i;
	char *md, *name;

	json_object_foreach(rs->docs, path, doc)
		add_json(s, path, doc);
	if ((err = plot_results(&plots, &nplots, rs)) != NULL)
		return err;
	comparison = report_comparison(rs, p->policy);
	if (p->cycle != NULL)
		json_object_set_new(comparison, "cycle", json_string(p->cycle));
	previous = p->repo_root != NULL ? report_previous(p->repo_root,
	    p->policy->official_branch) : NULL;
	json_object_set_new(comparison, "since", report_since(previous,
	    comparison, p->store, p->policy));
	json_decref(previous);
	gate = gate_evaluate(p->policy, rs);
	fid = resultset_docs(rs, "fidelity");
	refs = resultset_docs(rs, "reference");
	rows = fidelity_table(fid, refs);
	info = json_pack("{s:s, s:s, s:o}", "commit", p->commit,
	    "warden_version", PACKAGE_VERSION, "ran", report_what_ran(rs));
	md = report_markdown(info, comparison, gate, rows, plots, nplots);
	snapshot_add(s, "results/REPORT.md", md, strlen(md));
	add_json(s, "results/comparison.json", comparison);
	add_json(s, "results/gate.json", gate);
	add_json(s, "results/fidelity.json", rows);
	for (i = 0; i < nplots; i++) {
		name = xasprintf("results/%s", plots[i].name);
		snapshot_add(s, name, plots[i].svg.data, plots[i].svg.len);
		free(name);
	}
	*gate_out = gate;
	free(md);
	json_decref(info);
	json_decref(rows);
	json_decref(fid);
	json_decref(refs);
	json_decref(comparison);
	plot_files_free(plots, nplots);
	return NULL;
}

struct werr *
snapshot_build(struct snapshot *s, const struct resultset *rs,
    const struct snapshot_params *p)
{
	json_t *in, *gate = NULL;
	char hex[SHA256_HEX_LEN + 1], digest[SHA256_HEX_LEN + 1], *text;
	struct buf sig = BUF_INIT;
	struct werr *err;

	memset(s, 0, sizeof(*s));
	if ((err = build_outputs(s, rs, p, &gate)) != NULL)
		goto fail;
	if (p->inputs != NULL) {
		in = json_deep_copy(p->inputs);
		json_object_set_new(in, "engine_manifests", engine_manifests(rs));
	} else
		in = inputs(rs, p->repo_root, &err);
	if (err != NULL) {
		json_decref(in);
		goto fail;
	}
	snapshot_sort(s);
	resultset_digest(rs, digest);
	s->manifest = json_pack("{s:i, s:s, s:s, s:I, s:s, s:O, s:O, s:o, "
	    "s:o}", "schema", 1, "warden_version", PACKAGE_VERSION,
	    "commit", p->commit, "source_date_epoch", (json_int_t)p->source_date,
	    "results_sha256", digest, "runs", json_object_get(gate, "runs"),
	    "passed", json_object_get(gate, "passed"),
	    "inputs", in, "outputs", outputs(s));
	if (p->merged_from != NULL)
		json_object_set(s->manifest, "merged_from", p->merged_from);
	snapshot_manifest_seal(s->manifest);
	text = snapshot_manifest_text(s->manifest);
	snapshot_add(s, SNAPSHOT_MANIFEST, text, strlen(text));
	sha256_hex(text, strlen(text), hex);
	memcpy(s->id, hex, 16);
	s->id[16] = '\0';
	if (p->sign_key != NULL &&
	    (err = sign_manifest(&sig, p->sign_key, text, strlen(text))) == NULL)
		snapshot_add(s, SNAPSHOT_SIGNATURE, sig.data, sig.len);
	free(text);
	buf_free(&sig);
	json_decref(gate);
	if (err != NULL)
		goto fail;
	snapshot_sort(s);
	return NULL;
fail:
	json_decref(gate);
	snapshot_free(s);
	return err;
}

