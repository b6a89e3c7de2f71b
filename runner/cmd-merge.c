/*
 * cmd-merge.c - `warden merge`: combine snapshots from several machines
 * (shards of one campaign, a fleet) into one snapshot, refusing
 * mismatched inputs and overlapping cells. The work is in merge.c and
 * snapshot.c; this file parses and prints.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd-results.h"
#include "output.h"
#include "policy.h"
#include "util.h"
#include "results/merge.h"
#include "results/snapshot.h"
#include "results/verify.h"


static struct werr *
merge_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "tree", required_argument, NULL, 't' },
		{ "sign-key", required_argument, NULL, 'k' },
		{ "allowed-signers", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *tree = NULL, *key_arg = NULL;
	const char *signers_arg = NULL, *root;
	struct snapshot_params sp;
	struct merge_result m;
	struct snapshot s;
	struct policy *pol;
	struct werr *err, *gerr = NULL;
	struct signers signers = { NULL, BUF_INIT };
	json_t *sum = NULL;
	int ch, required = 0, have_m = 0, have_s = 0;

	memset(&sp, 0, sizeof(sp));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_merge_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'o':
			output = optarg;
			break;
		case 't':
			tree = optarg;
			break;
		case 'k':
			key_arg = optarg;
			break;
		case 'a':
			signers_arg = optarg;
			break;
		default:
			return cmd_usage_error(&cmd_merge_entry, "bad option");
		}
	}
	if (gerr != NULL)
		return gerr;
	if (argc - optind < 2)
		return cmd_usage_error(&cmd_merge_entry, "'merge' takes two "
		    "snapshots or more");
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, &pol)) != NULL ||
	    (err = snapshot_sign_key(&sp.sign_key, pol, key_arg,
	    root)) != NULL)
		goto out;
	if ((err = verify_signers_for(&signers, &required, root, pol,
	    signers_arg)) != NULL)
		goto out;
	if ((err = merge_snapshots(&m, (const char *const *)argv + optind,
	    (size_t)(argc - optind), &signers, required)) != NULL)
		goto out;
	have_m = 1;
	sp.repo_root = root;
	sp.policy = pol;
	sp.commit = m.commit;
	sp.source_date = m.source_date;
	sp.inputs = m.inputs;
	sp.merged_from = m.parts;
	if ((err = snapshot_build(&s, &m.rs, &sp)) != NULL)
		goto out;
	have_s = 1;
	if ((err = snapshot_save(&sum, &s, root, output)) != NULL ||
	    (tree != NULL && (err = snapshot_write_tree(&s, tree)) != NULL))
		goto out;
	if (ctx->json)
		output_json(sum);
	else
		cmd_snapshot_print(sum);
out:
	if (have_s)
		snapshot_free(&s);
	if (have_m)
		merge_result_free(&m);
	json_decref(sum);
	signers_free(&signers);
	return err;
}

const struct cmd_entry cmd_merge_entry = {
	"merge",
	"[--output FILE] [--tree DIR] [--sign-key FILE] "
	"[--allowed-signers FILE] [--json] SNAPSHOT SNAPSHOT...",
	"combine snapshots from several machines into one",
	"Verifies each SNAPSHOT, checks that all share their inputs (policy,\n"
	"adapters, profiles, workloads, warden version, commit) and that no\n"
	"cell is measured twice, and writes one snapshot of the union (report,\n"
	"plots and gate over all of it) to snapshots/ID.tar.gz.\n"
	"  --output FILE       write the archive here instead\n"
	"  --tree DIR          also write the tree under DIR/results\n"
	"  --sign-key FILE     sign the manifest with this SSH key\n"
	"  --allowed-signers FILE  check the parts' signatures with this file\n"
	"                      (default: as verify, the official policy's)\n"
	"  --json              print the summary as JSON\n"
	"Exit 1 when a part does not verify, inputs differ or cells overlap.\n"
	"Examples:\n"
	"  warden merge --output merged.tar.gz shard-1.tar.gz shard-2.tar.gz\n",
	merge_exec,
};
