/*
 * cmd-init.c - `warden init DIR`: create a new benchmark repository.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cmd.h"
#include "initrepo.h"
#include "journal.h"
#include "output.h"
#include "store.h"
#include "util.h"

/* Who signs: git's user.email, else a local name. Caller frees. */
static char *
signer_name(void)
{
	git_config *cfg = NULL;
	git_buf v = { NULL, 0, 0 };
	char *out;

	if (git_config_open_default(&cfg) == 0 &&
	    git_config_get_string_buf(&v, cfg, "user.email") == 0 &&
	    v.ptr != NULL && v.ptr[0] != '\0' && strpbrk(v.ptr, " \t\"") ==
	    NULL)
		out = xstrdup(v.ptr);
	else
		out = xstrdup("maintainer@localhost");
	git_error_clear();
	git_buf_dispose(&v);
	git_config_free(cfg);
	return out;
}

static struct werr *
init_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sign", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	char commit[41] = "";
	char *branch = NULL, *signer = NULL;
	struct store *store = NULL;
	struct werr *err = NULL, *gerr = NULL;
	json_t *body;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_init_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 's':
			if (signer == NULL)
				signer = signer_name();
			break;
		default:
			free(signer);
			return cmd_usage_error(&cmd_init_entry, "bad option");
		}
	}
	if (gerr != NULL) {
		free(signer);
		return gerr;
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		err = cmd_usage_error(&cmd_init_entry, "init takes one "
		    "directory");
	else if ((err = text_check("DIR", argv[0])) == NULL)
		err = initrepo_create(argv[0], commit, &branch, signer);
	if (err != NULL)
		goto out;	/* text_check names the repo.init entry */
	if ((err = store_open(&store, argv[0], NULL, ctx->cmdline)) != NULL)
		goto out;
	body = json_pack("{s:s, s:s, s:s?}", "commit", commit,
	    "official_branch", branch, "signer", signer);
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
		json_t *o = json_pack("{s:s, s:s, s:s, s:s?}", "repository",
		    argv[0], "commit", commit, "official_branch", branch,
		    "signer", signer);

		output_json(o);
		json_decref(o);
	} else if (ctx->verbosity >= 0) {
		printf("initialized benchmark repository in %s (commit %.12s, "
		    "official branch '%s', HEAD detached at it)\n", argv[0],
		    commit, branch);
		if (signer != NULL)
			printf("snapshots are signed by '%s' with "
			    ".warden/signing-key (policy/allowed_signers)\n",
			    signer);
	}
out:
	store_close(store);
	free(branch);
	free(signer);
	return err;
}

const struct cmd_entry cmd_init_entry = {
	"init", "[--sign] DIR",
	"create a new benchmark repository with a default policy",
	"Creates DIR (absent, empty, or an empty clone: a git repository with no\n"
	"commit yet, whose remote stays) with policy/warden.json, an example\n"
	"adapter and profile, workloads/ (two splits and a fidelity task),\n"
	"journals/ and results/, commits it, creates the official branch at that\n"
	"commit and leaves HEAD detached there, as warden cycle wants.\n"
	"  --sign   make an SSH key (.warden/signing-key, git config\n"
	"           warden.signingKey) for git's user.email, commit it to\n"
	"           policy/allowed_signers, and require signed snapshots\n"
	"-q drops the closing lines; --json: {repository, commit,\n"
	"official_branch, signer}.\n"
	"Examples:\n"
	"  warden init bench && cd bench && warden campaign\n"
	"  warden init --sign bench\n",
	init_exec,
};
