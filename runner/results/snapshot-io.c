/*
 * snapshot-io.c - snapshots on disk: the reproducible archive written and
 * read with libarchive, the results tree written out, and a snapshot's
 * run documents read back as a result set. See snapshot.h. Never prints.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "sha256.h"
#include "util.h"
#include "results/sign.h"
#include "results/snapshot.h"
#include "results/verify.h"

static la_ssize_t
archive_to_buf(struct archive *a, void *arg, const void *data, size_t len)
{
	(void)a;
	buf_add(arg, data, len);
	return (la_ssize_t)len;
}

static struct werr *
archive_err(struct archive *a, const char *what, const char *path)
{
	return werr_new(WEXIT_ENV, "%s '%s': %s", what, path,
	    archive_error_string(a) ? archive_error_string(a) : "libarchive error");
}

struct werr *
snapshot_archive(struct buf *out, const struct snapshot *s, int64_t mtime)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = NULL;
	struct werr *err = NULL;
	size_t i;

	if (archive_write_set_format_ustar(a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_options(a, "gzip:!timestamp") != ARCHIVE_OK ||
	    archive_write_open(a, out, NULL, archive_to_buf, NULL) !=
	    ARCHIVE_OK) {
		err = archive_err(a, "cannot write snapshot", s->id);
		goto out;
	}
	for (i = 0; i < s->n && err == NULL; i++) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, s->m[i].path);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
		archive_entry_set_mtime(e, (time_t)mtime, 0);
		archive_entry_set_size(e, (la_int64_t)s->m[i].data.len);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    (s->m[i].data.len > 0 && archive_write_data(a,
		    s->m[i].data.data, s->m[i].data.len) !=
		    (la_ssize_t)s->m[i].data.len))
			err = archive_err(a, "cannot write", s->m[i].path);
		archive_entry_free(e);
	}
	if (err == NULL && archive_write_close(a) != ARCHIVE_OK)
		err = archive_err(a, "cannot write snapshot", s->id);
out:
	archive_write_free(a);
	return err;
}

struct werr *
snapshot_write(const struct snapshot *s, const char *path, char *sha256_out)
{
	int64_t mtime = json_integer_value(json_object_get(s->manifest,
	    "source_date_epoch"));
	struct buf out = BUF_INIT;
	struct werr *err;

	err = snapshot_archive(&out, s, mtime);
	if (err == NULL)
		err = file_write_atomic(path, out.data, out.len);
	if (err == NULL && sha256_out != NULL)
		sha256_hex(out.data, out.len, sha256_out);
	buf_free(&out);
	return err;
}

struct werr *
snapshot_write_tree(const struct snapshot *s, const char *dir)
{
	char *results = path_join(dir, "results"), *full, *slash;
	struct werr *err = NULL;
	size_t i;

	/* results/ is warden's output: replaced whole, never merged */
	if (path_exists(results))
		err = path_remove_tree(results);
	for (i = 0; i < s->n && err == NULL; i++) {
		full = path_join(dir, s->m[i].path);
		slash = strrchr(full, '/');
		*slash = '\0';
		err = mkdir_p(full);
		*slash = '/';
		if (err == NULL)
			err = file_write_atomic(full, s->m[i].data.data,
			    s->m[i].data.len);
		free(full);
	}
	free(results);
	return err;
}

struct werr *
snapshot_save(json_t **summary, const struct snapshot *s,
    const char *repo_root, const char *output)
{
	char hex[SHA256_HEX_LEN + 1], *dir = NULL, *path;
	struct werr *err;

	*summary = NULL;
	if (output != NULL)
		path = xstrdup(output);
	else {
		dir = path_join(repo_root, "snapshots");
		if ((err = mkdir_p(dir)) != NULL) {
			free(dir);
			return err;
		}
		path = xasprintf("%s/%s.tar.gz", dir, s->id);
	}
	if ((err = snapshot_write(s, path, hex)) == NULL)
		*summary = json_pack("{s:s, s:s, s:s, s:I, s:b, s:O?, s:O?}",
		    "id", s->id, "path", path, "sha256", hex,
		    "members", (json_int_t)s->n, "signed",
		    snapshot_member(s, SNAPSHOT_SIGNATURE) != NULL,
		    "results_sha256", json_object_get(s->manifest,
		    "results_sha256"), "passed", json_object_get(s->manifest,
		    "passed"));
	free(path);
	free(dir);
	return err;
}

/* A member name warden itself could have written. */
static int
member_name_ok(const char *p)
{
	const char *seg;
	size_t n;

	if (!str_startswith(p, "results/") || strstr(p, "//") != NULL)
		return 0;
	for (seg = p; *seg != '\0'; seg += n + (seg[n] == '/')) {
		n = strcspn(seg, "/");
		if (n == 0 || (seg[0] == '.' && (n == 1 || (n == 2 &&
		    seg[1] == '.'))) || memchr(seg, '\\', n) != NULL)
			return 0;
	}
	return 1;
}

/* The most warden reads of one archive: SNAPSHOT_TOTAL_MAX, or less
 * when $WARDEN_SNAPSHOT_MAX_MIB asks for less. */
static size_t
total_max(void)
{
	const char *env = getenv("WARDEN_SNAPSHOT_MAX_MIB");
	unsigned long long mib;
	char *end;

	if (env == NULL || env[0] < '0' || env[0] > '9')
		return SNAPSHOT_TOTAL_MAX;
	errno = 0;
	mib = strtoull(env, &end, 10);
	if (*end != '\0' || errno != 0 || mib == 0 ||
	    mib >= (SNAPSHOT_TOTAL_MAX >> 20))
		return SNAPSHOT_TOTAL_MAX;
	return (size_t)mib << 20;
}

/* The next member's header: a regular file with a name warden writes,
 * not seen before, whose declared size keeps within the bounds. */
static struct werr *
check_header(struct snapshot *s, struct archive_entry *e, const char *path,
    size_t *total, size_t max)
{
	const char *name = archive_entry_pathname(e);
	la_int64_t size = archive_entry_size(e);
	size_t member_max = max < SNAPSHOT_MEMBER_MAX ? max :
	    SNAPSHOT_MEMBER_MAX;

	if (name == NULL || archive_entry_filetype(e) != AE_IFREG ||
	    !member_name_ok(name))
		return werr_new(WEXIT_PROBLEM, "%s: member '%s' is not a file "
		    "warden writes", path, name ? name : "?");
	if (snapshot_member(s, name) != NULL)
		return werr_new(WEXIT_PROBLEM, "%s: member '%s' appears twice",
		    path, name);
	if (s->n >= SNAPSHOT_MEMBERS_MAX)
		return werr_new(WEXIT_PROBLEM, "%s: member '%s' is one more "
		    "than the %d members warden reads of a snapshot", path,
		    name, SNAPSHOT_MEMBERS_MAX);
	if (size < 0 || (uint64_t)size > member_max)
		return werr_new(WEXIT_PROBLEM, "%s: member '%s' is %lld bytes, "
		    "more than the %zu MiB warden reads of one member", path,
		    name, (long long)size, member_max >> 20);
	if (*total + 512 + (size_t)size > max)
		return werr_new(WEXIT_PROBLEM, "%s: member '%s' (%lld bytes) "
		    "brings the snapshot past the %zu MiB warden reads of one "
		    "snapshot", path, name, (long long)size, max >> 20);
	*total += 512 + (size_t)size;
	if (s->n > 0 && s->disorder == NULL &&
	    strcmp(s->m[s->n - 1].path, name) > 0)
		s->disorder = xasprintf("%s before %s", s->m[s->n - 1].path,
		    name);
	return NULL;
}

struct werr *
snapshot_read(struct snapshot *s, const char *path)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct werr *err = NULL;
	char chunk[65536];
	la_ssize_t got;
	size_t total = 0, max = total_max(), len;
	int rc;

	memset(s, 0, sizeof(*s));
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if ((err = file_read_max(&s->archive, path, max)) != NULL) {
		err = werr_wrap(err, "snapshot");
		if (err->exit == WEXIT_ENV)
			err->exit = WEXIT_INPUT;
		goto out;
	}
	if (archive_read_open_memory(a, s->archive.data, s->archive.len) !=
	    ARCHIVE_OK) {
		err = werr_new(WEXIT_INPUT, "'%s' is not a snapshot archive: %s",
		    path, archive_error_string(a));
		goto out;
	}
	while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		if ((err = check_header(s, e, path, &total, max)) != NULL)
			goto out;
		snapshot_add(s, archive_entry_pathname(e), "", 0);
		buf_reset(&s->m[s->n - 1].data);
		len = 0;
		while ((got = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
			len += (size_t)got;
			if (len > (size_t)archive_entry_size(e)) {
				got = -1;	/* more than its header says */
				break;
			}
			buf_add(&s->m[s->n - 1].data, chunk, (size_t)got);
		}
		buf_puts(&s->m[s->n - 1].data, "");
		if (got < 0) {
			err = archive_err(a, "cannot read", path);
			err->exit = WEXIT_PROBLEM;
			goto out;
		}
	}
	if (rc != ARCHIVE_EOF) {
		err = archive_err(a, "cannot read", path);
		err->exit = WEXIT_PROBLEM;
	}
out:
	archive_read_free(a);
	if (err != NULL)
		snapshot_free(s);
	else
		snapshot_sort(s);
	return err;
}

static int
is_run_doc(const char *path)
{
	const char *p = path + 8;	/* after "results/" */

	return str_endswith(path, ".json") && strchr(p, '/') != NULL &&
	    strchr(strchr(p, '/') + 1, '/') != NULL;
}

struct werr *
snapshot_resultset(struct resultset *rs, const struct snapshot *s,
    const char *src)
{
	struct werr *err = NULL;
	json_error_t jerr;
	json_t *doc;
	size_t i;

	resultset_init(rs);
	for (i = 0; i < s->n && err == NULL; i++) {
		if (!is_run_doc(s->m[i].path))
			continue;
		doc = json_loadb(s->m[i].data.data, s->m[i].data.len, 0, &jerr);
		if (doc == NULL)
			err = werr_new(WEXIT_INPUT, "%s: '%s' is not JSON: %s",
			    src, s->m[i].path, jerr.text);
		else
			err = resultset_add_doc(rs, s->m[i].path, doc, src);
		json_decref(doc);
	}
	if (err == NULL)
		err = resultset_check(rs);
	if (err != NULL)
		resultset_free(rs);
	return err;
}

struct werr *
snapshot_read_resultset(struct resultset *rs, const char *path,
    const char *repo_root)
{
	struct verify_report vr;
	struct signers signers;
	struct snapshot s;
	struct werr *err;
	int required = 0;

	memset(&vr, 0, sizeof(vr));
	memset(&signers, 0, sizeof(signers));
	if ((err = snapshot_read(&s, path)) != NULL)
		return err;
	if ((err = verify_trusted_signers(&signers, &required,
	    repo_root)) == NULL &&
	    (err = verify_snapshot(&vr, &s, signers.name != NULL ? &signers :
	    NULL, required)) == NULL && vr.nproblems > 0)
		err = werr_new(WEXIT_PROBLEM, "%s does not verify: %s", path,
		    vr.problems[0]);
	verify_report_free(&vr);
	signers_free(&signers);
	if (err == NULL)
		err = snapshot_resultset(rs, &s, path);
	snapshot_free(&s);
	return err;
}
