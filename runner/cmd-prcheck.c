/*
 * cmd-prcheck.c - `warden pr-check BASE HEAD`: the community-PR job. The
 * gate over merge-base(BASE, HEAD)..HEAD and every commit in it, with the
 * policy of BASE, plus lint of the changed adapters and profiles; output
 * for people, for machines, for GitHub (annotations and a step summary)
 * or as JUnit XML. Exit status as `patch check`.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cmd.h"
#include "output.h"
#include "review.h"
#include "util.h"

extern const struct cmd_entry cmd_prcheck_entry;

enum format { FMT_TEXT, FMT_JSON, FMT_GITHUB, FMT_JUNIT };

/* GitHub workflow command escaping; props also escape ':' and ','. */
static void
gh_escape(struct buf *out, const char *s, int prop)
{
	for (; *s != '\0'; s++) {
		if (*s == '%')
			buf_puts(out, "%25");
		else if (*s == '\r')
			buf_puts(out, "%0D");
		else if (*s == '\n')
			buf_puts(out, "%0A");
		else if (prop && *s == ':')
			buf_puts(out, "%3A");
		else if (prop && *s == ',')
			buf_puts(out, "%2C");
		else
			buf_addch(out, *s);
	}
}

/* XML text: markup escaped; control characters and invalid UTF-8, which
 * XML cannot carry, become U+FFFD. */
static void
xml_escape(struct buf *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n, i;

	while (*s != '\0') {
		if (*s == '&')
			buf_puts(out, "&amp;");
		else if (*s == '<')
			buf_puts(out, "&lt;");
		else if (*s == '>')
			buf_puts(out, "&gt;");
		else if (*s == '"')
			buf_puts(out, "&quot;");
		else if (*s < 0x20 && *s != '\n' && *s != '\t')
			buf_puts(out, "\xef\xbf\xbd");
		else if (*s < 0x80)
			buf_addch(out, (char)*s);
		else {
			n = (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 :
			    (*s & 0xf8) == 0xf0 ? 4 : 0;
			for (i = 1; i < n && (s[i] & 0xc0) == 0x80; i++)
				;
			if (n == 0 || i < n) {
				buf_puts(out, "\xef\xbf\xbd");
				s++;
				continue;
			}
			buf_add(out, s, n);
			s += n;
			continue;
		}
		s++;
	}
}

static void
print_text(const struct allowlist_report *r, json_t *lint)
{
	struct buf out = BUF_INIT;
	json_t *p;
	size_t i;

	review_format_violations(&out, r);
	json_array_foreach(lint, i, p)
		buf_printf(&out, "lint %s\n",
		    json_string_value(json_object_get(p, "message")));
	fputs(buf_cstr(&out), stdout);
	buf_free(&out);
}

static void
print_github(const struct allowlist_report *r, json_t *lint, int failed)
{
	struct buf out = BUF_INIT, md = BUF_INIT;
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	json_t *p;
	size_t i;
	FILE *fp;

	for (i = 0; i < r->nv; i++) {
		const struct allowlist_violation *v = &r->v[i];
		struct buf msg = BUF_INIT;

		buf_printf(&msg, "%s: %s", allowlist_code_name(v->code),
		    v->reason);
		if (v->commit != NULL)
			buf_printf(&msg, " (commit %.12s)", v->commit);
		buf_puts(&out, "::error ");
		if (v->path[0] != '\0') {
			buf_puts(&out, "file=");
			gh_escape(&out, v->path, 1);
			buf_puts(&out, ",line=1,");
		}
		buf_puts(&out, "title=warden gate::");
		gh_escape(&out, buf_cstr(&msg), 0);
		buf_addch(&out, '\n');
		buf_free(&msg);
	}
	json_array_foreach(lint, i, p) {
		buf_puts(&out, "::error file=");
		gh_escape(&out, json_string_value(json_object_get(p, "file")), 1);
		buf_printf(&out, ",line=%lld,col=%lld,title=warden lint::",
		    json_integer_value(json_object_get(p, "line")),
		    json_integer_value(json_object_get(p, "column")));
		gh_escape(&out, json_string_value(json_object_get(p, "message")),
		    0);
		buf_addch(&out, '\n');
	}
	fputs(buf_cstr(&out), stdout);
	buf_printf(&md, "## warden pr-check: %s\n\n", failed ? "failed" :
	    "passed");
	buf_printf(&md, "%zu file%s changed, %zu gate violation%s, %zu lint "
	    "problem%s\n\n", r->nfiles, r->nfiles == 1 ? "" : "s", r->nv,
	    r->nv == 1 ? "" : "s", json_array_size(lint),
	    json_array_size(lint) == 1 ? "" : "s");
	if (r->nv > 0) {
		buf_puts(&md, "| code | path | reason |\n|---|---|---|\n");
		for (i = 0; i < r->nv; i++)
			buf_printf(&md, "| `%s` | `%s` | %s |\n",
			    allowlist_code_name(r->v[i].code), r->v[i].path,
			    r->v[i].reason);
	}
	if (summary != NULL && *summary != '\0' &&
	    (fp = fopen(summary, "a")) != NULL) {
		fputs(buf_cstr(&md), fp);
		fclose(fp);
	} else
		fputs(buf_cstr(&md), stdout);
	buf_free(&out);
	buf_free(&md);
}

/* One testcase per changed path (violations as failures), one for the
 * change as a whole, one per linted file with problems. */
static void
print_junit(const struct allowlist_report *r, json_t *lint)
{
	struct buf x = BUF_INIT;
	size_t i, j, failures = 0, tests = r->nfiles + 1;
	json_t *p;

	for (i = 0; i < r->nv; i++)
		failures++;
	failures += json_array_size(lint);
	tests += json_array_size(lint);
	buf_puts(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	buf_printf(&x, "<testsuites name=\"warden pr-check\" tests=\"%zu\" "
	    "failures=\"%zu\">\n<testsuite name=\"gate\" tests=\"%zu\" "
	    "failures=\"%zu\">\n", tests, failures, tests, failures);
	buf_puts(&x, "<testcase classname=\"gate\" name=\"change\">\n");
	for (i = 0; i < r->nv; i++) {
		const struct allowlist_violation *v = &r->v[i];

		buf_puts(&x, "<failure type=\"");
		xml_escape(&x, allowlist_code_name(v->code));
		buf_puts(&x, "\" message=\"");
		xml_escape(&x, v->path);
		buf_puts(&x, ": ");
		xml_escape(&x, v->reason);
		buf_puts(&x, "\"/>\n");
	}
	buf_puts(&x, "</testcase>\n");
	for (j = 0; j < r->nfiles; j++) {
		const char *path = r->files[j].new_path ? r->files[j].new_path :
		    r->files[j].old_path;

		buf_puts(&x, "<testcase classname=\"gate.file\" name=\"");
		xml_escape(&x, path);
		buf_puts(&x, "\"/>\n");
	}
	json_array_foreach(lint, i, p) {
		buf_puts(&x, "<testcase classname=\"lint\" name=\"");
		xml_escape(&x, json_string_value(json_object_get(p, "file")));
		buf_puts(&x, "\">\n<failure type=\"lint\" message=\"");
		xml_escape(&x, json_string_value(json_object_get(p, "message")));
		buf_puts(&x, "\"/>\n</testcase>\n");
	}
	buf_puts(&x, "</testsuite>\n</testsuites>\n");
	fputs(buf_cstr(&x), stdout);
	buf_free(&x);
}

static struct werr *
prcheck_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	enum format fmt = ctx->json ? FMT_JSON : FMT_TEXT;
	struct allowlist_report r;
	git_repository *repo = NULL;
	const char *root;
	json_t *lint = NULL;
	struct werr *err;
	int ch, code, failed;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'f')
			return cmd_usage_error(&cmd_prcheck_entry,
			    "unknown option");
		if (strcmp(optarg, "text") == 0)
			fmt = FMT_TEXT;
		else if (strcmp(optarg, "json") == 0)
			fmt = FMT_JSON;
		else if (strcmp(optarg, "github") == 0)
			fmt = FMT_GITHUB;
		else if (strcmp(optarg, "junit") == 0)
			fmt = FMT_JUNIT;
		else
			return cmd_usage_error(&cmd_prcheck_entry,
			    "--format must be text, json, github or junit");
	}
	if (optind != argc - 2)
		return cmd_usage_error(&cmd_prcheck_entry,
		    "pr-check needs BASE and HEAD");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if (git_repository_open(&repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	allowlist_report_init(&r);
	if ((err = review_prcheck(&r, &lint, repo, argv[optind],
	    argv[optind + 1])) != NULL)
		goto out;
	code = allowlist_report_exit(&r);
	if (code == 0 && json_array_size(lint) > 0)
		code = WEXIT_PROBLEM;
	failed = code != 0;
	switch (fmt) {
	case FMT_JSON: {
		json_t *o = review_report_json(&r);

		json_object_set_new(o, "ok", json_boolean(!failed));
		json_object_set_new(o, "base", json_string(argv[optind]));
		json_object_set_new(o, "head", json_string(argv[optind + 1]));
		json_object_set(o, "lint", lint);
		output_json(o);
		json_decref(o);
		break;
	}
	case FMT_GITHUB:
		print_github(&r, lint, failed);
		break;
	case FMT_JUNIT:
		print_junit(&r, lint);
		break;
	default:
		print_text(&r, lint);
		break;
	}
	if (fmt != FMT_JSON && fmt != FMT_JUNIT)
		printf("pr-check: %s (%zu file%s, %zu violation%s, %zu lint "
		    "problem%s)\n", failed ? "FAIL" : "ok", r.nfiles,
		    r.nfiles == 1 ? "" : "s", r.nv, r.nv == 1 ? "" : "s",
		    json_array_size(lint), json_array_size(lint) == 1 ? "" : "s");
	if (failed)
		err = werr_new(code, "pr-check failed");
out:
	json_decref(lint);
	allowlist_report_free(&r);
	git_repository_free(repo);
	return err;
}

const struct cmd_entry cmd_prcheck_entry = {
	"pr-check",
	"BASE HEAD [--format text|json|github|junit]",
	"gate and lint a pull request's commits against BASE's policy",
	"the write-allowlist gate over merge-base(BASE, HEAD)..HEAD and over\n"
	"every commit in it, with the policy of BASE (never HEAD's), and lint\n"
	"of the changed adapters and profiles; exit 0 clean, 1 problems,\n"
	"2 malformed\n"
	"--format github  ::error annotations, and a Markdown summary appended\n"
	"                 to $GITHUB_STEP_SUMMARY (or printed when unset)\n"
	"--format junit   JUnit XML on stdout",
	prcheck_exec,
};
