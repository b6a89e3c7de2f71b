/*
 * verify.c - check a snapshot against its manifest and signature. See
 * verify.h. Never prints.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "sha256.h"
#include "util.h"
#include "results/sign.h"
#include "results/verify.h"

static void
problem(struct verify_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
problem(struct verify_report *r, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	r->problems = xrealloc(r->problems, (r->nproblems + 1) *
	    sizeof(*r->problems));
	r->problems[r->nproblems++] = buf_detach(&b);
}

void
verify_report_free(struct verify_report *r)
{
	size_t i;

	for (i = 0; i < r->nproblems; i++)
		free(r->problems[i]);
	free(r->problems);
	free(r->signer);
	memset(r, 0, sizeof(*r));
}

/* The manifest parses, is in warden's canonical form and matches its
 * seal. Returns the parsed manifest, or NULL with a problem. */
static json_t *
check_manifest(struct verify_report *r, const struct snapshot_member *m)
{
	json_t *doc, *copy;
	json_error_t jerr;
	char *text;
	const char *seal;
	int same;

	doc = json_loadb(m->data.data, m->data.len, 0, &jerr);
	if (!json_is_object(doc)) {
		problem(r, "changed member %s: not a JSON object (%s)",
		    SNAPSHOT_MANIFEST, doc ? "wrong type" : jerr.text);
		json_decref(doc);
		return NULL;
	}
	text = snapshot_manifest_text(doc);
	same = strlen(text) == m->data.len &&
	    memcmp(text, m->data.data, m->data.len) == 0;
	free(text);
	seal = json_string_value(json_object_get(doc, "manifest_sha256"));
	copy = json_deep_copy(doc);
	snapshot_manifest_seal(copy);
	if (!same)
		problem(r, "changed member %s: its bytes are not as warden "
		    "writes them", SNAPSHOT_MANIFEST);
	else if (seal == NULL || strcmp(seal, json_string_value(
	    json_object_get(copy, "manifest_sha256"))) != 0)
		problem(r, "changed member %s: its content does not match its "
		    "manifest_sha256", SNAPSHOT_MANIFEST);
	json_decref(copy);
	if (!json_is_object(json_object_get(doc, "outputs"))) {
		problem(r, "changed member %s: it lists no outputs",
		    SNAPSHOT_MANIFEST);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static void
check_members(struct verify_report *r, const struct snapshot *s,
    const json_t *outputs)
{
	char hex[SHA256_HEX_LEN + 1];
	const struct snapshot_member *m;
	const char *path, *want;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)outputs, path, v) {
		want = json_string_value(v);
		if ((m = snapshot_member(s, path)) == NULL) {
			problem(r, "removed member %s: the manifest lists it, "
			    "the archive lacks it", path);
			continue;
		}
		r->members++;
		sha256_hex(m->data.data, m->data.len, hex);
		if (want == NULL || strcmp(hex, want) != 0)
			problem(r, "changed member %s: sha256 %.16s, the "
			    "manifest says %.16s", path, hex,
			    want ? want : "nothing");
	}
	for (i = 0; i < s->n; i++) {
		path = s->m[i].path;
		if (strcmp(path, SNAPSHOT_MANIFEST) == 0 ||
		    strcmp(path, SNAPSHOT_SIGNATURE) == 0)
			continue;
		if (json_object_get(outputs, path) == NULL)
			problem(r, "added member %s: not in the manifest", path);
	}
}

/*
 * The archive is byte for byte what snapshot_archive() makes of its
 * members: re-created with the same writer and compared. One rule holds
 * every property at once (path order, warden's headers and padding, one
 * gzip member, nothing after it) and any other a tar or gzip reader might
 * act on that a list of checks would miss (a second gzip member, which
 * GNU tar extracts; a pax header; data after the end). Asked only when
 * the members match the manifest, so a content change is named first.
 */
static void
check_canonical(struct verify_report *r, const struct snapshot *s,
    const json_t *manifest)
{
	struct buf want = BUF_INIT;
	struct werr *err;
	size_t i, n;

	if (s->archive.data == NULL)
		return;		/* built, not read */
	if (s->disorder != NULL) {
		problem(r, "reordered members: %s; warden writes members in "
		    "path order", s->disorder);
		return;
	}
	if ((err = snapshot_archive(&want, s, json_integer_value(
	    json_object_get(manifest, "source_date_epoch")))) != NULL) {
		problem(r, "the archive cannot be re-created to compare: %s",
		    err->msg);
		werr_free(err);
		return;
	}
	n = want.len < s->archive.len ? want.len : s->archive.len;
	for (i = 0; i < n && want.data[i] == s->archive.data[i]; i++)
		;
	if (i == want.len && i < s->archive.len)
		problem(r, "%zu bytes after the end of the archive (from byte "
		    "%zu): warden writes one gzip member and nothing after it",
		    s->archive.len - i, i);
	else if (i < n || want.len != s->archive.len)
		problem(r, "the archive is not the one warden writes of these "
		    "members: it differs from byte %zu (headers, padding, "
		    "member times or compression)", i);
	buf_free(&want);
}

struct werr *
verify_snapshot(struct verify_report *r, const struct snapshot *s,
    const struct signers *signers, int require_signature)
{
	const struct snapshot_member *man, *sig;
	char hex[SHA256_HEX_LEN + 1], *detail = NULL;
	struct werr *err = NULL;
	json_t *doc;
	int ok = 0;

	memset(r, 0, sizeof(*r));
	man = snapshot_member(s, SNAPSHOT_MANIFEST);
	sig = snapshot_member(s, SNAPSHOT_SIGNATURE);
	if (man == NULL) {
		problem(r, "removed member %s: the snapshot has no manifest",
		    SNAPSHOT_MANIFEST);
		return NULL;
	}
	sha256_hex(man->data.data, man->data.len, hex);
	memcpy(r->id, hex, 16);
	r->id[16] = '\0';
	if ((doc = check_manifest(r, man)) != NULL)
		check_members(r, s, json_object_get(doc, "outputs"));
	if (doc != NULL && r->nproblems == 0)
		check_canonical(r, s, doc);
	json_decref(doc);
	if (sig == NULL) {
		if (require_signature)
			problem(r, "removed member %s: policy requires a signed "
			    "manifest", SNAPSHOT_SIGNATURE);
		return NULL;
	}
	if (signers == NULL) {
		problem(r, "member %s cannot be checked: no allowed_signers "
		    "file (--allowed-signers, or policy publish.allowed_signers)",
		    SNAPSHOT_SIGNATURE);
		return NULL;
	}
	if ((err = sign_verify(&ok, &detail, signers, man->data.data,
	    man->data.len, sig->data.data, sig->data.len)) != NULL)
		return err;
	if (ok) {
		r->signed_ok = 1;
		r->signer = detail;
	} else {
		problem(r, "bad signature %s: %s", SNAPSHOT_SIGNATURE, detail);
		free(detail);
	}
	return NULL;
}

/* The signers file at path in the tree of commit. */
static struct werr *
tree_file(struct buf *out, git_repository *repo, const git_oid *commit,
    const char *path, const char *rev)
{
	git_commit *c = NULL;
	struct werr *err;
	int missing;

	if (git_commit_lookup(&c, repo, commit) < 0)
		return werr_git("cannot read the tree of '%s'", rev);
	err = policy_commit_file(out, &missing, repo, c, path, rev);
	if (err == NULL && missing != 0)
		err = werr_new(WEXIT_INPUT, "policy publish.allowed_signers "
		    "names '%s', which is not a file on '%s'", path, rev);
	git_commit_free(c);
	return err;
}

struct werr *
verify_trusted_signers(struct signers *out, int *required,
    const char *repo_root)
{
	git_repository *repo = NULL;
	struct policy *pol = NULL;
	struct werr *err;
	const char *file;
	char *branch = NULL;
	git_oid tip;

	memset(out, 0, sizeof(*out));
	*required = 0;
	if (git_repository_open(&repo, repo_root) < 0)
		return werr_git("cannot open '%s'", repo_root);
	if ((err = policy_load_trusted(&pol, &tip, repo)) != NULL)
		goto out;
	*required = pol->publish.require_signature;
	if ((file = pol->publish.allowed_signers) == NULL)
		goto out;
	if (file[0] == '/') {
		err = signers_read_file(out, file);
		goto out;
	}
	branch = policy_official_branch(repo);
	out->name = xasprintf("%s:%s", branch, file);
	if ((err = tree_file(&out->text, repo, &tip, file, branch)) != NULL)
		signers_free(out);
out:
	free(branch);
	policy_free(pol);
	git_repository_free(repo);
	return err;
}

struct werr *
verify_signers_for(struct signers *out, int *required, const char *repo_root,
    const struct policy *worktree, const char *arg)
{
	const char *file;
	struct werr *err;
	char *path;

	memset(out, 0, sizeof(*out));
	*required = 0;
	if (repo_root != NULL && policy_official_exists(repo_root)) {
		if ((err = verify_trusted_signers(out, required,
		    repo_root)) != NULL || arg == NULL)
			return err;
		signers_free(out);
		return signers_read_file(out, arg);
	}
	if (worktree != NULL)
		*required = worktree->publish.require_signature;
	if (arg != NULL)
		return signers_read_file(out, arg);
	if (worktree == NULL || (file = worktree->publish.allowed_signers) ==
	    NULL || repo_root == NULL)
		return NULL;
	path = file[0] == '/' ? xstrdup(file) : path_join(repo_root, file);
	err = signers_read_file(out, path);
	free(path);
	return err;
}
