/*
 * cmd-text.c - what the command table says to a person: the usage lines,
 * `warden help` (the commands by task, each command's help with the exit
 * codes it can return) in text and JSON, and the nearest command's name
 * for a mistyped one. Prints only to the stream it is given.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "cmd.h"
#include "output.h"
#include "quote.h"
#include "util.h"

/*
 * The commands by task, as `warden help` lists them: every command of the
 * table in exactly one group (tests/t0015-docs.sh checks it, and README's
 * command table and warden(1) list them the same way).
 */
struct cmd_group {
	const char *id;			/* "group" in `warden help --json` */
	const char *title;		/* the heading `warden help` prints */
	const char *const *names;	/* NULL-terminated */
};

static const char *const group_cycle[] = { "cycle", "status", "update",
    "campaign", "fidelity", NULL };
static const char *const group_review[] = { "review", "patch", "pr-check",
    "agent", NULL };
static const char *const group_triage[] = { "triage", "incident",
    "regressions", "versions", "stale", NULL };
static const char *const group_results[] = { "gate", "snapshot", "verify",
    "merge", "export", "publish", NULL };
static const char *const group_repository[] = { "init", "lint", "journal",
    "help", "version", NULL };

static const struct cmd_group cmd_groups[] = {
	{ "cycle", "The daily cycle", group_cycle },
	{ "review", "Review", group_review },
	{ "triage", "Triage", group_triage },
	{ "results", "Results", group_results },
	{ "repository", "Repository and set-up", group_repository },
	{ NULL, NULL, NULL },
};

/* The group command name is in, or NULL. */
static const struct cmd_group *
group_of(const char *name)
{
	size_t g, i;

	for (g = 0; cmd_groups[g].id != NULL; g++)
		for (i = 0; cmd_groups[g].names[i] != NULL; i++)
			if (strcmp(cmd_groups[g].names[i], name) == 0)
				return &cmd_groups[g];
	return NULL;
}

const struct cmd_exit_code cmd_exit_codes[] = {
	{ WEXIT_OK, "ok" },
	{ WEXIT_PROBLEM, "a problem found" },
	{ WEXIT_INPUT, "usage or input error" },
	{ WEXIT_ENV, "environment error" },
	{ WEXIT_WAITING, "waiting for review" },
	{ 0, NULL },
};

/*
 * Print prefix and the words of text (len bytes) after it, a blank
 * between, as a list (output_list: within OUTPUT_WIDTH columns, each
 * further line indented one column past prefix, which tests/lib.sh's
 * unwrap joins again) whose items are the words, but that a blank inside
 * brackets does not end one (so "[--json [--per-request]]" stays whole)
 * nor, when brk is not 0, a blank after anything but brk (a list
 * "a b, c d").
 */
static void
print_wrapped(FILE *fp, const char *prefix, const char *text, size_t len,
    char brk)
{
	struct output_list l;
	char *label = xasprintf("%s ", prefix);
	size_t i = 0, start;
	int depth;

	output_list_init(&l, label, " ", 0);
	l.fp = fp;
	for (;;) {
		while (i < len && text[i] == ' ')
			i++;
		if (i == len)
			break;
		for (start = i, depth = 0; i < len && (text[i] != ' ' ||
		    depth > 0 || (brk != 0 && text[i - 1] != brk)); i++)
			depth += text[i] == '[' ? 1 : text[i] == ']' ? -1 : 0;
		output_list_add(&l, "%.*s", (int)(i - start), text + start);
	}
	output_list_print(&l, NULL, NULL);
	free(label);
}

void
cmd_print_usage(FILE *fp, const struct cmd_entry *entry)
{
	const char *u = entry->usage;
	const char *nl;
	char *prefix;
	int first = 1;

	/* usage may hold several synopsis lines separated by '\n'. */
	do {
		nl = strchr(u, '\n');
		prefix = xasprintf("%s warden %s", first ? "usage:" : "      ",
		    entry->name);
		print_wrapped(fp, prefix, u, nl != NULL ? (size_t)(nl - u) :
		    strlen(u), 0);
		free(prefix);
		first = 0;
		u = nl != NULL ? nl + 1 : NULL;
	} while (u != NULL);
}

#define EXIT(code) (1u << (code))
#define EXITS_USUAL (EXIT(WEXIT_OK) | EXIT(WEXIT_PROBLEM) | \
    EXIT(WEXIT_INPUT) | EXIT(WEXIT_ENV))
#define EXITS_NO_PROBLEM (EXIT(WEXIT_OK) | EXIT(WEXIT_INPUT) | EXIT(WEXIT_ENV))

/* The exit codes a command can return, where they are not the usual
 * four (its page's EXIT STATUS says the same, t0015): only the cycle
 * waits for review; some find no problem to report (a campaign's or
 * fidelity run's failing engines are results). */
static const struct {
	const char *name;
	unsigned exits;
} cmd_exits[] = {
	{ "campaign", EXITS_NO_PROBLEM },
	{ "cycle", EXITS_USUAL | EXIT(WEXIT_WAITING) },
	{ "fidelity", EXITS_NO_PROBLEM },
	{ "help", EXITS_NO_PROBLEM },
	{ "incident", EXITS_NO_PROBLEM },
	{ "init", EXITS_NO_PROBLEM },
	{ "regressions", EXITS_NO_PROBLEM },
	{ "snapshot", EXITS_NO_PROBLEM },
	{ "status", EXITS_NO_PROBLEM },
	{ "version", EXIT(WEXIT_OK) | EXIT(WEXIT_ENV) },
	{ NULL, 0 },
};

/* The exit codes of entry (every code when entry is NULL). */
static unsigned
exits_of(const struct cmd_entry *entry)
{
	size_t i;

	if (entry == NULL)
		return ~0u;
	for (i = 0; cmd_exits[i].name != NULL; i++)
		if (strcmp(cmd_exits[i].name, entry->name) == 0)
			return cmd_exits[i].exits;
	return EXITS_USUAL;
}

static void
print_exit_codes(FILE *fp, const struct cmd_entry *entry)
{
	struct buf b = BUF_INIT;
	unsigned mask = exits_of(entry);
	size_t i;
	int n = 0;

	for (i = 0; cmd_exit_codes[i].meaning != NULL; i++)
		if (mask & EXIT(cmd_exit_codes[i].code))
			buf_printf(&b, "%s %d %s", n++ ? "," : "",
			    cmd_exit_codes[i].code, cmd_exit_codes[i].meaning);
	buf_puts(&b, ".");
	print_wrapped(fp, "Exit status:", buf_cstr(&b), b.len, ',');
	buf_free(&b);
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[24][24];

	if (la >= 24 || lb >= 24)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

char *
cmd_unknown_message(const char *name)
{
	const char *near = NULL;
	size_t i, d, best = 3;	/* at most two edits away */

	for (i = 0; cmd_table[i] != NULL; i++)
		if ((d = edit_distance(name, cmd_table[i]->name)) < best) {
			best = d;
			near = cmd_table[i]->name;
		}
	if (near != NULL)
		return xasprintf("'%s' is not a warden command; did you mean "
		    "'%s'? (see 'warden help')", quote_str(name), near);
	return xasprintf("'%s' is not a warden command; see 'warden help'",
	    quote_str(name));
}

void
cmd_print_help(FILE *fp, const struct cmd_entry *entry)
{
	cmd_print_usage(fp, entry);
	fprintf(fp, "\n%s\n", entry->summary);
	if (entry->help != NULL && entry->help[0] != '\0')
		fprintf(fp, "\n%s%s", entry->help,
		    entry->help[strlen(entry->help) - 1] == '\n' ? "" : "\n");
	fprintf(fp, "\nGlobal options, before or after the command name: --repo DIR,\n"
	    "--json, -q (only data and errors), -v (more detail).\n");
	print_exit_codes(fp, entry);
	fprintf(fp, "Manual: warden-%s(1); every exit code's cases: warden(1).\n",
	    entry->name);
}

static void
print_group(FILE *fp, const char *title, const char *const *names)
{
	const struct cmd_entry *e;
	char *name;
	size_t i;

	fprintf(fp, "%s:\n", title);
	for (i = 0; names[i] != NULL; i++)
		if ((e = cmd_find(names[i])) != NULL) {
			name = xasprintf("  %-11s", e->name);
			print_wrapped(fp, name, e->summary, strlen(e->summary),
			    0);
			free(name);
		}
	fputc('\n', fp);
}

void
cmd_print_overview(FILE *fp)
{
	const char **others;
	size_t i, n = 0;

	for (i = 0; cmd_table[i] != NULL; i++)
		;
	others = xcalloc(i + 1, sizeof(*others));

	fprintf(fp, "usage: warden [--repo DIR] [--json] [--no-pager] [-q | -v] "
	    "COMMAND [ARGS]\n"
	    "       warden --version | --help\n\n"
	    "warden keeps an LLM-serving benchmark honest while the engines it\n"
	    "measures change. Commands, by task:\n\n");
	for (i = 0; cmd_groups[i].id != NULL; i++)
		print_group(fp, cmd_groups[i].title, cmd_groups[i].names);
	/* A command no group names still shows (the docs test fails it). */
	for (i = 0; cmd_table[i] != NULL; i++)
		if (group_of(cmd_table[i]->name) == NULL)
			others[n++] = cmd_table[i]->name;
	others[n] = NULL;
	if (n > 0)
		print_group(fp, "Other", others);
	free(others);
	fprintf(fp, "'warden help COMMAND' or 'warden COMMAND --help' for one command;\n"
	    "the global options also work after the command name.\n");
	print_exit_codes(fp, NULL);
	fprintf(fp, "Manual: warden(1), and warden-COMMAND(1) for each command.\n"
	    "Report bugs to %s.\n", PACKAGE_BUGREPORT);
}

static json_t *
help_entry_json(const struct cmd_entry *e)
{
	const struct cmd_group *g = group_of(e->name);
	json_t *usage = json_array(), *o, *codes;
	const char *u = e->usage, *nl;
	size_t i;

	do {
		nl = strchr(u, '\n');
		json_array_append_new(usage, json_stringn(u,
		    nl != NULL ? (size_t)(nl - u) : strlen(u)));
		u = nl != NULL ? nl + 1 : NULL;
	} while (u != NULL);
	o = json_pack("{s:s, s:o, s:s, s:s}", "name", e->name, "usage", usage,
	    "summary", e->summary, "help", e->help);
	codes = json_array();
	for (i = 0; cmd_exit_codes[i].meaning != NULL; i++)
		if (exits_of(e) & EXIT(cmd_exit_codes[i].code))
			json_array_append_new(codes,
			    json_integer(cmd_exit_codes[i].code));
	json_object_set_new(o, "exit_codes", codes);
	json_object_set_new(o, "group", g != NULL ? json_string(g->id) :
	    json_null());
	return o;
}

json_t *
cmd_help_json(const struct cmd_entry *entry)
{
	json_t *cmds, *codes, *globals, *groups, *names;
	size_t i, j;

	if (entry != NULL)
		return help_entry_json(entry);
	cmds = json_array();
	for (i = 0; cmd_table[i] != NULL; i++)
		json_array_append_new(cmds, help_entry_json(cmd_table[i]));
	groups = json_array();
	for (i = 0; cmd_groups[i].id != NULL; i++) {
		names = json_array();
		for (j = 0; cmd_groups[i].names[j] != NULL; j++)
			json_array_append_new(names,
			    json_string(cmd_groups[i].names[j]));
		json_array_append_new(groups, json_pack("{s:s, s:s, s:o}", "id",
		    cmd_groups[i].id, "title", cmd_groups[i].title, "commands",
		    names));
	}
	codes = json_array();
	for (i = 0; cmd_exit_codes[i].meaning != NULL; i++)
		json_array_append_new(codes, json_pack("{s:i, s:s}", "code",
		    cmd_exit_codes[i].code, "meaning", cmd_exit_codes[i].meaning));
	globals = json_array();
	for (i = 0; cmd_global_options[i].name != NULL; i++)
		json_array_append_new(globals, json_sprintf("--%s",
		    cmd_global_options[i].name));
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:s}", "usage",
	    "warden [--repo DIR] [--json] [--no-pager] [-q | -v] COMMAND [ARGS]",
	    "global_options", globals, "commands", cmds, "groups", groups,
	    "exit_codes", codes, "bug_report", PACKAGE_BUGREPORT);
}
