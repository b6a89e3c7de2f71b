/*
 * cmd-init.c - `warden init DIR`: create a new benchmark repository.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "initrepo.h"
#include "journal.h"
#include "output.h"
#include "store.h"
#include "util.h"

static struct werr *
init_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	char commit[41] = "";
	char *branch = NULL;
	struct store *store = NULL;
	struct werr *err;
	json_t *body;

	if ((err = cmd_no_options(ctx, &cmd_init_entry, argc, argv)) != NULL)
		return err;
	argc -= optind;
	argv += optind;
	if (argc != 1)
		return cmd_usage_error(&cmd_init_entry, "init takes one directory");
	if ((err = text_check("DIR", argv[0])) != NULL)
		return err;	/* it names the repo.init entry */
	if ((err = initrepo_create(argv[0], commit, &branch)) != NULL)
		return err;
	if ((err = store_open(&store, argv[0], NULL, ctx->cmdline)) != NULL)
		goto out;
	body = json_pack("{s:s, s:s}", "commit", commit, "official_branch", branch);
	if ((err = store_begin(store)) == NULL) {
		err = journal_append(store, "repo.init", argv[0], body, NULL);
		if (err == NULL)
			err = store_commit(store);
		else
			store_rollback(store);
	}
	json_decref(body);
	if (err != NULL)
		goto out;
	if (ctx->json) {
		json_t *o = json_pack("{s:s, s:s, s:s}", "repository", argv[0],
		    "commit", commit, "official_branch", branch);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0)
		printf("initialized benchmark repository in %s (commit %.12s, "
		    "official branch '%s')\n", argv[0], commit, branch);
out:
	store_close(store);
	free(branch);
	return err;
}

const struct cmd_entry cmd_init_entry = {
	"init", "DIR",
	"create a new benchmark repository with a default policy",
	"Creates DIR (which must not exist or be empty) with policy/warden.json,\n"
	"an example adapter and profile, workloads/, journals/ and results/,\n"
	"commits it, and creates the official branch at that commit.\n"
	"-q drops the closing line; --json: {repository, commit, official_branch}.\n"
	"Examples:\n"
	"  warden init bench && cd bench && warden campaign\n",
	init_exec,
};
