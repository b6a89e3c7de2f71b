/*
 * test-allowlist-fixtures.c - the one driver of the patch corpus in
 * tests/fixtures/patches: builds the base tree of base.txt in a scratch
 * bare repository, gates every patch named in MANIFEST against it, and
 * requires exactly the violation codes the manifest lists. Each fixture
 * is one TAP test. Adding a case is adding a patch file and a line.
 *
 * It also checks that a dry run never writes to the repository.
 */
#include "config.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "allowlist.h"
#include "buf.h"
#include "util.h"

#define MAX_GLOBS 16

struct fixture {
	char *file;
	char *codes;		/* "ok" or "a,b,c" */
	char *opts;		/* "k=v k=v" or "" */
};

static char *fixdir;
static git_repository *repo;
static git_oid base_tree;
static char *allow[MAX_GLOBS], *exec_globs[MAX_GLOBS];
static size_t nallow, nexec;
static struct allowlist_policy base_policy;

/* "\n" and "\t" escapes of base.txt. */
static void
unescape(struct buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			buf_addch(out, '\n');
			s++;
		} else if (s[0] == '\\' && s[1] == 't') {
			buf_addch(out, '\t');
			s++;
		} else
			buf_addch(out, *s);
	}
}

static void
add_base_line(git_index *idx, char *line)
{
	char *mode = line, *path, *content;
	git_index_entry e;
	struct buf data = BUF_INIT;

	path = strchr(mode, ' ');
	assert_non_null(path);
	*path++ = '\0';
	content = strchr(path, ' ');
	assert_non_null(content);
	*content++ = '\0';
	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = (uint32_t)strtoul(mode, NULL, 8);
	if (e.mode == 0160000) {
		assert_int_equal(git_oid_fromstr(&e.id, content), 0);
		assert_int_equal(git_index_add(idx, &e), 0);
		return;
	}
	if (e.mode == 0120000)
		buf_puts(&data, content);
	else {
		unescape(&data, content);
		buf_addch(&data, '\n');
	}
	assert_int_equal(git_index_add_from_buffer(idx, &e, data.data,
	    data.len), 0);
	buf_free(&data);
}

static void
build_base(const char *dir)
{
	struct buf text = BUF_INIT;
	git_index *idx;
	char *path, *line, *save = NULL;
	struct werr *err;

	assert_int_equal(git_repository_init(&repo, dir, 1), 0);
	assert_int_equal(git_repository_index(&idx, repo), 0);
	path = path_join(fixdir, "base.txt");
	err = file_read(&text, path);
	assert_null(err);
	for (line = strtok_r(text.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (line[0] != '#')
			add_base_line(idx, line);
	assert_int_equal(git_index_write_tree_to(&base_tree, idx, repo), 0);
	git_index_free(idx);
	buf_free(&text);
	free(path);
}

static void
apply_opts(struct allowlist_policy *p, const char *opts)
{
	char *copy = xstrdup(opts), *tok, *save = NULL, *eq;

	for (tok = strtok_r(copy, " \t", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t", &save)) {
		eq = strchr(tok, '=');
		assert_non_null(eq);
		*eq++ = '\0';
		if (strcmp(tok, "max_bytes") == 0)
			p->max_bytes = strtoul(eq, NULL, 10);
		else if (strcmp(tok, "max_files") == 0)
			p->max_files = strtoul(eq, NULL, 10);
		else if (strcmp(tok, "allow_binary") == 0)
			p->allow_binary = atoi(eq);
		else
			fail_msg("unknown option '%s'", tok);
	}
	free(copy);
}

static int
codes_equal(const struct allowlist_report *r, const char *want, struct buf *got)
{
	int seen[AL_CODE_COUNT] = { 0 }, wanted[AL_CODE_COUNT] = { 0 };
	char *copy = xstrdup(want), *tok, *save = NULL;
	size_t i;
	int c, ok = 1;

	for (i = 0; i < r->nv; i++) {
		seen[r->v[i].code] = 1;
		buf_printf(got, "  %s %s: %s\n",
		    allowlist_code_name(r->v[i].code), r->v[i].path,
		    r->v[i].reason);
	}
	if (strcmp(want, "ok") != 0)
		for (tok = strtok_r(copy, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			for (c = 0; c < AL_CODE_COUNT; c++)
				if (strcmp(allowlist_code_name(c), tok) == 0)
					break;
			if (c == AL_CODE_COUNT)
				fail_msg("unknown code '%s' in MANIFEST", tok);
			wanted[c] = 1;
		}
	for (c = 0; c < AL_CODE_COUNT; c++)
		if (seen[c] != wanted[c])
			ok = 0;
	free(copy);
	return ok;
}

static void
test_fixture(void **state)
{
	const struct fixture *f = *state;
	struct allowlist_policy p = base_policy;
	struct allowlist_report r;
	struct buf text = BUF_INIT, got = BUF_INIT;
	git_odb *odb;
	char *path;
	struct werr *err;

	apply_opts(&p, f->opts);
	path = path_join(fixdir, f->file);
	err = file_read(&text, path);
	if (err != NULL)
		fail_msg("%s", err->msg);
	allowlist_report_init(&r);
	err = allowlist_gate_patch(&r, repo, &base_tree, text.data, text.len,
	    &p, 0);
	if (err != NULL)
		fail_msg("%s", err->msg);
	if (!codes_equal(&r, f->codes, &got))
		fail_msg("%s: want %s, got:\n%s", f->file, f->codes,
		    got.len ? got.data : "  (nothing)\n");
	if (strcmp(f->codes, "ok") == 0) {
		assert_true(r.applied);
		assert_true(r.nfiles > 0);
		/* The dry run left no object behind. */
		assert_int_equal(git_repository_odb(&odb, repo), 0);
		assert_false(git_odb_exists(odb, &r.result_tree));
		git_odb_free(odb);
	}
	allowlist_report_free(&r);
	buf_free(&text);
	buf_free(&got);
	free(path);
}

static void
parse_policy_line(char *line)
{
	char *key = line + strlen("policy "), *val = strchr(key, ' ');

	assert_non_null(val);
	*val++ = '\0';
	if (strcmp(key, "allow") == 0 && nallow < MAX_GLOBS)
		allow[nallow++] = xstrdup(val);
	else if (strcmp(key, "exec") == 0 && nexec < MAX_GLOBS)
		exec_globs[nexec++] = xstrdup(val);
	else if (strcmp(key, "max_bytes") == 0)
		base_policy.max_bytes = strtoul(val, NULL, 10);
	else if (strcmp(key, "max_files") == 0)
		base_policy.max_files = strtoul(val, NULL, 10);
	else if (strcmp(key, "allow_binary") == 0)
		base_policy.allow_binary = atoi(val);
}

/* Read MANIFEST into fixtures; returns their count. */
static size_t
load_manifest(struct fixture **out)
{
	struct buf text = BUF_INIT;
	struct fixture *fx = NULL;
	char *path, *line, *save = NULL, *p;
	size_t n = 0, cap = 0;
	struct werr *err;

	path = path_join(fixdir, "MANIFEST");
	if ((err = file_read(&text, path)) != NULL) {
		fprintf(stderr, "%s\n", err->msg);
		exit(1);
	}
	for (line = strtok_r(text.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (strncmp(line, "policy ", 7) == 0) {
			parse_policy_line(line);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			fx = xrealloc(fx, cap * sizeof(*fx));
		}
		p = line + strcspn(line, " \t");
		fx[n].file = xstrndup(line, (size_t)(p - line));
		p += strspn(p, " \t");
		fx[n].codes = xstrndup(p, strcspn(p, " \t"));
		p += strcspn(p, " \t");
		p += strspn(p, " \t");
		fx[n].opts = xstrdup(p);
		n++;
	}
	buf_free(&text);
	free(path);
	*out = fx;
	return n;
}

int
main(void)
{
	const char *top = getenv("TOP_SRCDIR");
	struct CMUnitTest *tests;
	struct fixture *fx;
	char tmpl[] = "/tmp/warden-allowlist-fixtures.XXXXXX";
	char *name;
	size_t i, n;
	int rc;

	git_libgit2_init();
	fixdir = path_join(top ? top : ".", "tests/fixtures/patches");
	n = load_manifest(&fx);
	base_policy.allow = (const char *const *)allow;
	base_policy.nallow = nallow;
	base_policy.exec = (const char *const *)exec_globs;
	base_policy.nexec = nexec;
	if (mkdtemp(tmpl) == NULL)
		fatal("mkdtemp: cannot create a scratch directory");
	build_base(tmpl);
	tests = xcalloc(n, sizeof(*tests));
	for (i = 0; i < n; i++) {
		name = xasprintf("%s %s", fx[i].file, fx[i].codes);
		tests[i].name = name;
		tests[i].test_func = test_fixture;
		tests[i].initial_state = &fx[i];
	}
	rc = _cmocka_run_group_tests("allowlist-fixtures", tests, n, NULL,
	    NULL);
	git_repository_free(repo);
	name = xasprintf("rm -rf '%s'", tmpl);
	if (system(name) != 0)
		rc = 1;
	free(name);
	for (i = 0; i < n; i++) {
		free((char *)tests[i].name);
		free(fx[i].file);
		free(fx[i].codes);
		free(fx[i].opts);
	}
	for (i = 0; i < nallow; i++)
		free(allow[i]);
	for (i = 0; i < nexec; i++)
		free(exec_globs[i]);
	free(tests);
	free(fx);
	free(fixdir);
	git_libgit2_shutdown();
	return rc;
}
