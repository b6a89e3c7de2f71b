/*
 * main.c - global options and dispatch. Prints an error once, as
 * "warden: message", and exits with the error's class.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <curl/curl.h>
#include <git2.h>
#include <jansson.h>
#include <sqlite3.h>

#include "cmd.h"
#include "output.h"
#include "quote.h"
#include "repo.h"
#include "sandbox/sandbox.h"
#include "util.h"

static struct werr *
help_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct cmd_entry *e = NULL;
	struct werr *err;
	json_t *doc;

	if ((err = cmd_no_options(ctx, &cmd_help_entry, argc, argv)) != NULL)
		return err;
	if (argc - optind > 1)
		return cmd_usage_error(&cmd_help_entry, "help takes one COMMAND");
	if (argc - optind == 1 && (e = cmd_find(argv[optind])) == NULL) {
		char *msg = cmd_unknown_message(argv[optind]);

		err = werr_usage("%s", msg);
		free(msg);
		return err;
	}
	if (ctx->json) {
		doc = cmd_help_json(e);
		output_json(doc);
		json_decref(doc);
	} else if (e != NULL)
		cmd_print_help(stdout, e);
	else
		cmd_print_overview(stdout);
	return NULL;
}

const struct cmd_entry cmd_help_entry = {
	"help", "[COMMAND]", "show the commands, or one command's options",
	"Examples:\n"
	"  warden help cycle\n"
	"  warden help --json\n",
	help_exec,
};

static struct werr *
version_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	int gmaj, gmin, grev;
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	struct werr *err;
	json_t *o;

	if ((err = cmd_no_options(ctx, &cmd_version_entry, argc, argv)) != NULL)
		return err;
	if (optind != argc)
		return cmd_usage_error(&cmd_version_entry,
		    "version takes no arguments");
	git_libgit2_version(&gmaj, &gmin, &grev);
	if (ctx->json) {
		json_t *libs = json_object();

		o = json_object();
		json_object_set_new(o, "warden", json_string(PACKAGE_VERSION));
		json_object_set_new(libs, "libgit2",
		    json_sprintf("%d.%d.%d", gmaj, gmin, grev));
		json_object_set_new(libs, "libcurl", json_string(cv->version));
		json_object_set_new(libs, "jansson", json_string(jansson_version_str()));
		json_object_set_new(libs, "libarchive",
		    json_string(archive_version_details()));
		json_object_set_new(libs, "sqlite3", json_string(sqlite3_libversion()));
		json_object_set_new(o, "libraries", libs);
		output_json(o);
		json_decref(o);
		return NULL;
	}
	printf("warden %s\n", PACKAGE_VERSION);
	printf("libgit2 %d.%d.%d\n", gmaj, gmin, grev);
	printf("libcurl %s\n", cv->version);
	printf("jansson %s\n", jansson_version_str());
	printf("%s\n", archive_version_string());
	printf("sqlite3 %s\n", sqlite3_libversion());
	return NULL;
}

const struct cmd_entry cmd_version_entry = {
	"version", "", "print warden's version and its libraries' versions",
	"Examples:\n"
	"  warden version\n"
	"  warden --json version\n",
	version_exec,
};

static char *
join_argv(int argc, char **argv)
{
	struct buf b = BUF_INIT;
	int i;

	buf_puts(&b, "warden");
	for (i = 0; i < argc; i++)
		buf_printf(&b, " %s", argv[i]);
	return buf_detach(&b);
}

/* Is argv[i] a global option (and how many words does it take)? */
static int
global_words(char **argv, int i, int argc)
{
	const char *a = argv[i];

	if (strcmp(a, "--json") == 0 || strcmp(a, "--no-pager") == 0 ||
	    strcmp(a, "-q") == 0 ||
	    strcmp(a, "-v") == 0 || strcmp(a, "--quiet") == 0 ||
	    strcmp(a, "--verbose") == 0 || strncmp(a, "--repo=", 7) == 0)
		return 1;
	if (strcmp(a, "--repo") == 0 && i + 1 < argc)
		return 2;
	return 0;
}

/*
 * Global options between the command name and its subcommand
 * ("warden journal --json show") move behind the subcommand, where the
 * subcommand's cmd_getopt reads them: after the command name they are
 * accepted wherever an option may stand.
 */
static void
hoist_globals(int argc, char **argv)
{
	int i = 1, k, w;
	char *sub;

	while (i < argc && (w = global_words(argv, i, argc)) > 0)
		i += w;
	if (i == 1 || i >= argc || argv[i][0] == '-')
		return;
	sub = argv[i];
	for (k = i; k > 1; k--)
		argv[k] = argv[k - 1];
	argv[1] = sub;
}

/* A usage error before any command: the message, then the synopsis. */
static int
global_usage_error(const char *msg)
{
	output_error(msg,
	    "usage: warden [--repo DIR] [--json] [--no-pager] [-q | -v] COMMAND "
	    "[ARGS]\n"
	    "       warden help");
	quote_release();
	return WEXIT_INPUT;
}

int
main(int argc, char **argv)
{
	enum { OPT_VERSION = 'V', OPT_HELP = 'h' };
	static char version_name[] = "version";
	static char *version_argv[] = { version_name, NULL };
	struct option opts[9];
	struct cmd_ctx ctx;
	const struct cmd_entry *entry;
	struct werr *err;
	char *cmdline, *msg;
	int ch, code, version = 0;
	size_t n;

	/* Inside the sandbox, before anything else: the network rule. */
	if (argc > 1 && strcmp(argv[1], SANDBOX_NETLIMIT_ARG) == 0)
		return sandbox_netlimit_main(argc, argv);

	memset(&ctx, 0, sizeof(ctx));
	ctx.progname = "warden";
	/* A file-size limit makes write(2) fail with EFBIG, an error warden
	 * reports, instead of killing it halfway through a write. */
	signal(SIGXFSZ, SIG_IGN);
	for (n = 0; cmd_global_options[n].name != NULL; n++)
		opts[n] = cmd_global_options[n];
	opts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	memset(&opts[n], 0, sizeof(opts[n]));
	opterr = 0;	/* every error is warden's own message, printed once */
	/* '+': stop at the command name; its options are its own. */
	while ((ch = getopt_long(argc, argv, "+:qvVh", opts, NULL)) != -1) {
		if (cmd_global_option(&ctx, ch, optarg))
			continue;
		switch (ch) {
		case OPT_VERSION:
			version = 1;	/* after the other global options */
			break;
		case OPT_HELP:
			cmd_print_overview(stdout);
			return fflush(stdout) == 0 ? WEXIT_OK : WEXIT_ENV;
		default:
			msg = cmd_getopt_failure(ch, argv, opts);
			code = global_usage_error(msg);
			free(msg);
			return code;
		}
	}
	argc -= optind;
	argv += optind;
	if (version) {
		entry = &cmd_version_entry;
		argc = 1;
		argv = version_argv;
		goto run;
	}
	if (argc == 0) {
		fprintf(stderr, "warden: no command given\n");
		cmd_print_overview(stderr);
		return WEXIT_INPUT;
	}
	entry = cmd_find(argv[0]);
	if (entry == NULL) {
		msg = cmd_unknown_message(argv[0]);
		output_error(msg, NULL);
		free(msg);
		quote_release();
		return WEXIT_INPUT;
	}
	if (cmd_wants_help(argc, argv)) {
		cmd_print_help(stdout, entry);
		return fflush(stdout) == 0 ? WEXIT_OK : WEXIT_ENV;
	}
	hoist_globals(argc, argv);
run:
	repo_lib_init();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cmdline = join_argv(argc, argv);
	ctx.cmdline = cmdline;
	optind = 0;	/* glibc and BSD: a full getopt reset */
	output_guard_start();
	err = entry->exec(&ctx, argc, argv);
	code = WEXIT_OK;
	if (err != NULL) {
		code = err->exit;
		if (err->msg != NULL && err->msg[0] != '\0')
			output_error(err->msg, err->usage);
		werr_free(err);
	}
	output_guard_end();
	quote_release();
	cmd_ctx_release(&ctx);
	free(cmdline);
	curl_global_cleanup();
	repo_lib_shutdown();
	/* Output that never arrived is an I/O failure, said once. */
	errno = 0;
	if ((fflush(stdout) != 0 || ferror(stdout)) && code != WEXIT_ENV) {
		fprintf(stderr, "warden: cannot write standard output: %s\n",
		    errno != 0 ? strerror(errno) : "write error");
		code = WEXIT_ENV;
	}
	output_pager_end();
	return code;
}
