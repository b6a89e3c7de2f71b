/*
 * cmd-prcheck.c - `warden pr-check BASE HEAD`: the community-PR job. The
 * gate over merge-base(BASE, HEAD)..HEAD and every commit in it, with the
 * policy of BASE, plus lint of the changed adapters and profiles; output
 * for people, for machines, for GitHub (annotations and a step summary)
 * or as JUnit XML. Exit status as `patch check`.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>

#include "cmd.h"
#include "output.h"
#include "quote.h"
#include "review.h"
#include "review-smoke.h"
#include "schema.h"
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

/* A lint entry of review_prcheck as lint prints it:
 * "FILE:LINE:COL: 'FIELD' MESSAGE". */
static void
lint_line(struct buf *out, json_t *p)
{
	struct problem pr;

	pr.file = (char *)json_string_value(json_object_get(p, "file"));
	pr.line = (int)json_integer_value(json_object_get(p, "line"));
	pr.col = (int)json_integer_value(json_object_get(p, "column"));
	pr.field = (char *)json_string_value(json_object_get(p, "field"));
	pr.msg = (char *)json_string_value(json_object_get(p, "message"));
	pr.unusable = 0;
	problem_format(&pr, out);
}

/* The first changed line of path in the change, 1 if it has none. */
static size_t
first_line(const struct allowlist_report *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->nfiles; i++)
		if ((r->files[i].new_path != NULL &&
		    strcmp(r->files[i].new_path, path) == 0) ||
		    (r->files[i].new_path == NULL && r->files[i].old_path != NULL &&
		    strcmp(r->files[i].old_path, path) == 0))
			return r->files[i].first_line;
	return 1;
}

static void
print_text(const struct allowlist_report *r, json_t *lint)
{
	struct buf out = BUF_INIT, line = BUF_INIT;
	json_t *p;
	size_t i;

	review_format_violations(&out, r);
	json_array_foreach(lint, i, p) {
		buf_reset(&line);
		lint_line(&line, p);	/* names and values from the change */
		buf_puts(&out, "lint ");
		quote_term(&out, line.data, line.len, QUOTE_KEEP_BACKSLASH);
		buf_addch(&out, '\n');
	}
	fputs(buf_cstr(&out), stdout);
	buf_free(&line);
	buf_free(&out);
}

/* Markdown table cell text: one line, '|' escaped (quote_md). */
static void
md_cell(struct buf *out, const char *s)
{
	quote_md(out, s);
}

static void
github_summary(struct buf *md, const struct allowlist_report *r, json_t *lint,
    int failed)
{
	json_t *p;
	const char *field;
	size_t i;

	buf_printf(md, "## warden pr-check: %s\n\n", failed ? "failed" :
	    "passed");
	buf_printf(md, "%zu file%s changed, %zu gate violation%s, %zu lint "
	    "problem%s\n\n", r->nfiles, r->nfiles == 1 ? "" : "s", r->nv,
	    r->nv == 1 ? "" : "s", json_array_size(lint),
	    json_array_size(lint) == 1 ? "" : "s");
	if (r->nv > 0) {
		buf_puts(md, "| code | path | reason |\n|---|---|---|\n");
		for (i = 0; i < r->nv; i++) {
			buf_printf(md, "| `%s` | `", allowlist_code_name(r->v[i].code));
			md_cell(md, r->v[i].path);
			buf_puts(md, "` | ");
			md_cell(md, r->v[i].reason);
			buf_puts(md, " |\n");
		}
		buf_addch(md, '\n');
	}
	if (json_array_size(lint) > 0) {
		buf_puts(md, "| file | line:column | field | problem |\n"
		    "|---|---|---|---|\n");
		json_array_foreach(lint, i, p) {
			buf_puts(md, "| `");
			md_cell(md, json_string_value(json_object_get(p, "file")));
			buf_printf(md, "` | %lld:%lld | ",
			    json_integer_value(json_object_get(p, "line")),
			    json_integer_value(json_object_get(p, "column")));
			field = json_string_value(json_object_get(p, "field"));
			if (field != NULL) {
				buf_addch(md, '`');
				md_cell(md, field);
				buf_puts(md, "` ");
			}
			buf_puts(md, "| ");
			md_cell(md, json_string_value(json_object_get(p, "message")));
			buf_puts(md, " |\n");
		}
		buf_addch(md, '\n');
	}
	quote_md_doc(md);
}

/* ::error annotations, each at the file and line it is about (for a gate
 * violation, the first line the change touched in that file), and the
 * step summary appended to $GITHUB_STEP_SUMMARY (printed when unset). */
static struct werr *
print_github(const struct allowlist_report *r, json_t *lint, int failed)
{
	struct buf out = BUF_INIT, md = BUF_INIT, msg = BUF_INIT;
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	struct werr *err = NULL;
	const char *field;
	json_t *p;
	size_t i;
	FILE *fp;

	for (i = 0; i < r->nv; i++) {
		const struct allowlist_violation *v = &r->v[i];

		buf_reset(&msg);
		buf_printf(&msg, "%s: %s", allowlist_code_name(v->code),
		    v->reason);
		if (v->commit != NULL)
			buf_printf(&msg, " (commit %.12s)", v->commit);
		buf_puts(&out, "::error ");
		if (v->path[0] != '\0') {
			buf_puts(&out, "file=");
			gh_escape(&out, v->path, 1);
			buf_printf(&out, ",line=%zu,", first_line(r, v->path));
		}
		buf_puts(&out, "title=warden gate::");
		gh_escape(&out, buf_cstr(&msg), 0);
		buf_addch(&out, '\n');
	}
	json_array_foreach(lint, i, p) {
		buf_reset(&msg);
		field = json_string_value(json_object_get(p, "field"));
		if (field != NULL)
			buf_printf(&msg, "'%s' ", field);
		buf_puts(&msg, json_string_value(json_object_get(p, "message")));
		buf_puts(&out, "::error file=");
		gh_escape(&out, json_string_value(json_object_get(p, "file")), 1);
		buf_printf(&out, ",line=%lld,col=%lld,title=warden lint::",
		    json_integer_value(json_object_get(p, "line")),
		    json_integer_value(json_object_get(p, "column")));
		gh_escape(&out, buf_cstr(&msg), 0);
		buf_addch(&out, '\n');
	}
	fputs(buf_cstr(&out), stdout);
	github_summary(&md, r, lint, failed);
	if (summary != NULL && *summary != '\0') {
		if ((fp = fopen(summary, "a")) == NULL ||
		    fputs(buf_cstr(&md), fp) == EOF || fclose(fp) != 0)
			err = werr_errno("write the step summary", summary);
	} else
		fputs(buf_cstr(&md), stdout);
	buf_free(&out);
	buf_free(&md);
	buf_free(&msg);
	return err;
}

static void
xml_attr(struct buf *x, const char *name, const char *value)
{
	buf_printf(x, " %s=\"", name);
	xml_escape(x, value);
	buf_addch(x, '"');
}

static void
junit_suite_open(struct buf *x, const char *name, size_t tests,
    size_t failures, double seconds, const char *stamp)
{
	buf_puts(x, "<testsuite");
	xml_attr(x, "name", name);
	buf_printf(x, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	    "skipped=\"0\" time=\"%.3f\" timestamp=\"%s\">\n", tests, failures,
	    seconds, stamp);
}

/* A path no violation names passes the gate. */
static int
file_clean(const struct allowlist_report *r, const struct allowlist_file *f)
{
	size_t i;

	for (i = 0; i < r->nv; i++)
		if ((f->new_path != NULL && strcmp(r->v[i].path, f->new_path) == 0) ||
		    (f->old_path != NULL && strcmp(r->v[i].path, f->old_path) == 0))
			return 0;
	return 1;
}

/*
 * JUnit XML: a "gate" suite with a passing testcase per clean file and a
 * failing one per violation ("gate CODE PATH"), a "lint" suite with a
 * failing testcase per lint problem ("lint FILE:LINE:COL 'FIELD'"). Each
 * suite has the wall time of its part and the UTC start time; the gate
 * judges the change as a whole, so a testcase's own time is 0.
 */
static void
print_junit(const struct allowlist_report *r, json_t *lint,
    const struct review_prcheck_times *t, const char *stamp,
    const char *base, const char *head)
{
	struct buf x = BUF_INIT, name = BUF_INIT;
	size_t i, nclean = 0, nlint = json_array_size(lint);
	const char *field;
	json_t *p;

	for (i = 0; i < r->nfiles; i++)
		nclean += file_clean(r, &r->files[i]);
	buf_puts(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	buf_printf(&x, "<testsuites name=\"warden pr-check\" tests=\"%zu\" "
	    "failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
	    nclean + r->nv + nlint, r->nv + nlint, t->gate_s + t->lint_s);
	junit_suite_open(&x, "warden pr-check gate", nclean + r->nv, r->nv,
	    t->gate_s, stamp);
	buf_puts(&x, "<properties>\n<property name=\"base\"");
	xml_attr(&x, "value", base);
	buf_puts(&x, "/>\n<property name=\"head\"");
	xml_attr(&x, "value", head);
	buf_puts(&x, "/>\n</properties>\n");
	for (i = 0; i < r->nfiles; i++) {
		const struct allowlist_file *f = &r->files[i];

		if (!file_clean(r, f))
			continue;
		buf_reset(&name);
		buf_printf(&name, "gate %s", f->new_path ? f->new_path :
		    f->old_path);
		buf_puts(&x, "<testcase classname=\"warden.gate\"");
		xml_attr(&x, "name", buf_cstr(&name));
		buf_puts(&x, " time=\"0.000\"/>\n");
	}
	for (i = 0; i < r->nv; i++) {
		const struct allowlist_violation *v = &r->v[i];

		buf_reset(&name);
		buf_printf(&name, "gate %s %s", allowlist_code_name(v->code),
		    v->path[0] != '\0' ? v->path : "(the change)");
		buf_puts(&x, "<testcase classname=\"warden.gate\"");
		xml_attr(&x, "name", buf_cstr(&name));
		buf_puts(&x, " time=\"0.000\">\n<failure");
		xml_attr(&x, "type", allowlist_code_name(v->code));
		xml_attr(&x, "message", v->reason);
		buf_puts(&x, ">");
		buf_reset(&name);
		review_format_violations(&name, &(struct allowlist_report){
		    .v = (struct allowlist_violation *)v, .nv = 1 });
		xml_escape(&x, buf_cstr(&name));
		buf_puts(&x, "</failure>\n</testcase>\n");
	}
	buf_puts(&x, "</testsuite>\n");
	junit_suite_open(&x, "warden pr-check lint", nlint, nlint, t->lint_s,
	    stamp);
	json_array_foreach(lint, i, p) {
		buf_reset(&name);
		buf_printf(&name, "lint %s:%lld:%lld",
		    json_string_value(json_object_get(p, "file")),
		    json_integer_value(json_object_get(p, "line")),
		    json_integer_value(json_object_get(p, "column")));
		if ((field = json_string_value(json_object_get(p, "field"))) != NULL)
			buf_printf(&name, " '%s'", field);
		buf_puts(&x, "<testcase classname=\"warden.lint\"");
		xml_attr(&x, "name", buf_cstr(&name));
		buf_puts(&x, " time=\"0.000\">\n<failure type=\"lint\"");
		xml_attr(&x, "message", json_string_value(json_object_get(p,
		    "message")));
		buf_puts(&x, ">");
		buf_reset(&name);
		lint_line(&name, p);
		xml_escape(&x, buf_cstr(&name));
		buf_puts(&x, "</failure>\n</testcase>\n");
	}
	buf_puts(&x, "</testsuite>\n</testsuites>\n");
	fputs(buf_cstr(&x), stdout);
	buf_free(&x);
	buf_free(&name);
}

static struct werr *
parse_format(const char *s, enum format *fmt)
{
	if (strcmp(s, "text") == 0)
		*fmt = FMT_TEXT;
	else if (strcmp(s, "json") == 0)
		*fmt = FMT_JSON;
	else if (strcmp(s, "github") == 0)
		*fmt = FMT_GITHUB;
	else if (strcmp(s, "junit") == 0)
		*fmt = FMT_JUNIT;
	else
		return cmd_usage_error(&cmd_prcheck_entry, "'--format' takes "
		    "text, json, github or junit, not '%s'", s);
	return NULL;
}

/* --smoke: the engines the range changes, before (BASE's tree and
 * policy) and after (HEAD's tree), in the sandbox, under the guard. */
static struct werr *
prcheck_smoke(struct cmd_ctx *ctx, json_t **smoke, git_repository *repo,
    const char *root, const char *base, const struct allowlist_report *r)
{
	struct review_base b;
	struct store *store;
	struct werr *err;

	if ((err = cmd_ctx_store(ctx, &store)) != NULL ||
	    (err = review_base_open(&b, repo, base)) != NULL)
		return err;
	err = review_smoke_guarded(smoke, store, repo, root, &b, r, "pr",
	    cmd_smoke_progress, ctx);
	review_base_free(&b);
	return err;
}

static struct werr *
prcheck_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "smoke", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	enum format fmt = FMT_TEXT;
	json_t *smoke = NULL;
	int want_smoke = 0, ch;
	const char *format = NULL;
	struct review_prcheck_times times = { 0, 0 };
	struct allowlist_report r;
	git_repository *repo = NULL;
	const char *root;
	json_t *lint = NULL;
	struct werr *err = NULL;
	char stamp[32];
	struct tm tm;
	time_t now;
	int code, failed;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_prcheck_entry, argc, argv, opts,
	    &err)) != -1) {
		if (ch == 's')
			want_smoke = 1;
		else
			format = optarg;
	}
	if (err != NULL)
		return err;
	if (format != NULL && (err = parse_format(format, &fmt)) != NULL)
		return err;
	if (ctx->json && format != NULL && fmt != FMT_JSON)
		return cmd_usage_error(&cmd_prcheck_entry, "'--json' is "
		    "'--format json'; it cannot go with '--format %s'", format);
	if (ctx->json)
		fmt = FMT_JSON;
	if (optind != argc - 2)
		return cmd_usage_error(&cmd_prcheck_entry,
		    "pr-check needs BASE and HEAD");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL)
		return err;
	if (git_repository_open(&repo, root) < 0)
		return werr_git("cannot open '%s'", root);
	allowlist_report_init(&r);
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	if ((err = review_prcheck(&r, &lint, repo, argv[optind],
	    argv[optind + 1], &times)) != NULL)
		goto out;
	code = allowlist_report_exit(&r);
	if (code == 0 && json_array_size(lint) > 0)
		code = WEXIT_PROBLEM;
	if (code == 0 && want_smoke &&
	    (err = prcheck_smoke(ctx, &smoke, repo, root, argv[optind],
	    &r)) != NULL)
		goto out;
	if (code == 0 && smoke != NULL && !json_is_true(json_object_get(smoke,
	    "passed")) && !json_is_string(json_object_get(smoke, "skipped")))
		code = WEXIT_PROBLEM;
	failed = code != 0;
	switch (fmt) {
	case FMT_JSON: {
		json_t *o = review_report_json(&r);

		json_object_set_new(o, "ok", json_boolean(!failed));
		json_object_set_new(o, "base", json_string(argv[optind]));
		json_object_set_new(o, "head", json_string(argv[optind + 1]));
		json_object_set(o, "lint", lint);
		if (smoke != NULL)
			json_object_set(o, "smoke", smoke);
		output_json(o);
		json_decref(o);
		break;
	}
	case FMT_GITHUB:
		err = print_github(&r, lint, failed);
		break;
	case FMT_JUNIT:
		print_junit(&r, lint, &times, stamp, argv[optind],
		    argv[optind + 1]);
		break;
	default:
		print_text(&r, lint);
		break;
	}
	if (err != NULL)
		goto out;
	if (fmt == FMT_TEXT && ctx->verbosity > 0) {
		struct buf files = BUF_INIT;

		review_format_files(&files, &r);
		fputs(buf_cstr(&files), stderr);
		buf_free(&files);
	}
	if ((fmt == FMT_TEXT || fmt == FMT_GITHUB) && smoke != NULL) {
		printf("smoke: %s\n", cmd_smoke_verdict(smoke));
		if (!json_is_string(json_object_get(smoke, "skipped")))
			cmd_print_smoke_table(smoke, "  ");
	}
	if ((fmt == FMT_TEXT || fmt == FMT_GITHUB) && ctx->verbosity >= 0)
		printf("pr-check: %s (%zu file%s, %zu violation%s, %zu lint "
		    "problem%s)\n", failed ? "FAIL" : "ok", r.nfiles,
		    r.nfiles == 1 ? "" : "s", r.nv, r.nv == 1 ? "" : "s",
		    json_array_size(lint), json_array_size(lint) == 1 ? "" : "s");
	if (failed)
		err = werr_new(code, "pr-check failed");
out:
	json_decref(lint);
	json_decref(smoke);
	allowlist_report_free(&r);
	git_repository_free(repo);
	return err;
}

const struct cmd_entry cmd_prcheck_entry = {
	"pr-check",
	"BASE HEAD [--format text|json|github|junit] [--smoke]",
	"gate and lint a pull request's commits against BASE's policy",
	"the write-allowlist gate over merge-base(BASE, HEAD)..HEAD and over\n"
	"every commit in it, with the policy of BASE (never HEAD's), and lint\n"
	"of the changed adapters and profiles; exit 0 clean, 1 problems,\n"
	"2 malformed input or a BASE or HEAD that does not resolve\n"
	"--smoke          when the gate and lint pass, run each engine the\n"
	"                 range changes for a few prompts from BASE's tree and\n"
	"                 from HEAD's (policy agent.smoke), in the sandbox, and\n"
	"                 print the before/after table (text, github) or\n"
	"                 \"smoke\" (json); exit 1 when it does not pass after\n"
	"--format text    violations, then lint problems as lint prints them,\n"
	"                 then a closing line (dropped by -q; -v lists files)\n"
	"--format json    {ok, base, head, violations, files [{..., added,\n"
	"                 deleted}], lint [{file, line, column, field, message,\n"
	"                 class}]}; --json is the same\n"
	"--format github  ::error annotations at each file's first changed line,\n"
	"                 and a Markdown summary of violations and lint problems\n"
	"                 appended to $GITHUB_STEP_SUMMARY (printed when unset)\n"
	"--format junit   JUnit XML: suites 'warden pr-check gate' (a testcase\n"
	"                 per clean file, a failing 'gate CODE PATH' per\n"
	"                 violation) and 'warden pr-check lint' (a failing\n"
	"                 'lint FILE:LINE:COL 'FIELD'' per problem), each with\n"
	"                 its time and UTC timestamp\n"
	"Examples:\n"
	"  warden pr-check official HEAD\n"
	"  warden pr-check official HEAD --format junit >pr-check.xml\n"
	"  warden pr-check official HEAD --smoke\n",
	prcheck_exec,
};
