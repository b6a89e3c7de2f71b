/*
 * main.c - global options and dispatch. Prints an error once, as
 * "warden: message", and exits with the error's class.
 */
#include "config.h"

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
#include "repo.h"
#include "util.h"

static struct werr *
help_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct cmd_entry *e;

	(void)ctx;
	if (argc < 2) {
		cmd_print_overview(stdout);
		return NULL;
	}
	e = cmd_find(argv[1]);
	if (e == NULL)
		return werr_usage("'%s' is not a warden command; see 'warden help'",
		    argv[1]);
	cmd_print_help(stdout, e);
	return NULL;
}

const struct cmd_entry cmd_help_entry = {
	"help", "[COMMAND]", "show the commands, or one command's options", "",
	help_exec,
};

static struct werr *
version_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	int gmaj, gmin, grev;
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	json_t *o;

	(void)argc;
	(void)argv;
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
	"version", "", "print warden's version and its libraries' versions", "",
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_ctx ctx;
	const struct cmd_entry *entry;
	struct werr *err;
	char *cmdline;
	int ch, code;

	memset(&ctx, 0, sizeof(ctx));
	ctx.progname = "warden";
	/* A file-size limit makes write(2) fail with EFBIG, an error warden
	 * reports, instead of killing it halfway through a write. */
	signal(SIGXFSZ, SIG_IGN);
	/* '+': stop at the command name; its options are its own. */
	while ((ch = getopt_long(argc, argv, "+C:jqvVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			ctx.repo_arg = optarg;
			break;
		case 'j':
			ctx.json = 1;
			break;
		case 'q':
			ctx.verbosity = -1;
			break;
		case 'v':
			ctx.verbosity = 1;
			break;
		case 'V':
			entry = &cmd_version_entry;
			goto run_version;
		case 'h':
			cmd_print_overview(stdout);
			return 0;
		default:
			cmd_print_overview(stderr);
			return WEXIT_INPUT;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		cmd_print_overview(stderr);
		return WEXIT_INPUT;
	}
	entry = cmd_find(argv[0]);
	if (entry == NULL) {
		fprintf(stderr, "warden: '%s' is not a warden command; see 'warden help'\n",
		    argv[0]);
		return WEXIT_INPUT;
	}
	if (cmd_wants_help(argc, argv)) {
		cmd_print_help(stdout, entry);
		return 0;
	}
run_version:
	repo_lib_init();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cmdline = join_argv(argc, argv);
	ctx.cmdline = cmdline;
	optind = 0;	/* glibc and BSD: a full getopt reset */
	err = entry->exec(&ctx, argc, argv);
	code = WEXIT_OK;
	if (err != NULL) {
		code = err->exit;
		if (err->msg != NULL && err->msg[0] != '\0')
			fprintf(stderr, "warden: %s\n", err->msg);
		werr_free(err);
	}
	cmd_ctx_release(&ctx);
	free(cmdline);
	curl_global_cleanup();
	repo_lib_shutdown();
	if (fflush(stdout) != 0 && code == WEXIT_OK)
		code = WEXIT_ENV;
	return code;
}
