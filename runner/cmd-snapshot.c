/*
 * cmd-snapshot.c - `warden snapshot`: pack the results of campaign and
 * fidelity runs (report, plots, gate, manifest) into a reproducible
 * snapshots/ID.tar.gz, e.g. on each machine of a fleet before
 * `warden merge`. The work is in snapshot.c; this file parses and prints.
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
#include "quote.h"
#include "util.h"
#include "results/gate.h"
#include "results/snapshot.h"

void
cmd_snapshot_print(const json_t *sum)
{
	const json_t *v;
	size_t i;

	printf("snapshot %s\n  file     %s\n  sha256   %s\n  members  %lld%s\n"
	    "  results  %s\n  passed  ",
	    quote_str(json_string_value(json_object_get(sum, "id"))),
	    quote_str(json_string_value(json_object_get(sum, "path"))),
	    quote_str(json_string_value(json_object_get(sum, "sha256"))),
	    (long long)json_integer_value(json_object_get(sum, "members")),
	    json_is_true(json_object_get(sum, "signed")) ? ", signed" : "",
	    quote_str(json_string_value(json_object_get(sum,
	    "results_sha256"))));
	if (json_array_size(json_object_get(sum, "passed")) == 0)
		printf(" none");
	json_array_foreach(json_object_get(sum, "passed"), i, v)
		printf("%s %s", i ? "," : "", quote_str(json_string_value(v)));
	printf("\n");
}

static struct werr *
snapshot_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "campaign", required_argument, NULL, 'c' },
		{ "fidelity", required_argument, NULL, 'f' },
		{ "no-fidelity", no_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' },
		{ "tree", required_argument, NULL, 't' },
		{ "sign-key", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_names camps = { 0 }, fids = { 0 };
	const char *output = NULL, *tree = NULL, *key_arg = NULL;
	struct snapshot_params sp;
	struct gate_input in;
	struct resultset rs;
	struct snapshot s;
	struct werr *err = NULL, *gerr = NULL;
	json_t *sum = NULL;
	char commit[41];
	int ch, have_rs = 0, have_s = 0;

	memset(&in, 0, sizeof(in));
	memset(&sp, 0, sizeof(sp));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_snapshot_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'c':
			cmd_names_add(&camps, optarg);
			break;
		case 'f':
			cmd_names_add(&fids, optarg);
			break;
		case 'N':
			in.no_fidelity = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 't':
			tree = optarg;
			break;
		case 'k':
			key_arg = optarg;
			break;
		default:
			err = cmd_usage_error(&cmd_snapshot_entry, "bad option");
			goto out;
		}
	}
	if (gerr != NULL) {
		err = gerr;
		goto out;
	}
	if (optind != argc) {
		err = cmd_usage_error(&cmd_snapshot_entry, "'snapshot' takes no "
		    "arguments");
		goto out;
	}
	if ((err = cmd_ctx_repo(ctx, &in.repo_root)) != NULL ||
	    (err = cmd_ctx_policy(ctx, (struct policy **)&in.policy)) != NULL ||
	    (err = cmd_ctx_store(ctx, &in.store)) != NULL ||
	    (err = snapshot_sign_key(&sp.sign_key, in.policy,
	    key_arg, in.repo_root)) != NULL)
		goto out;
	in.campaigns = camps.v;
	in.ncampaigns = camps.n;
	in.fidelity = fids.v;
	in.nfidelity = fids.n;
	if ((err = gate_resultset(&rs, &in)) != NULL)
		goto out;
	have_rs = 1;
	sp.repo_root = in.repo_root;
	sp.policy = in.policy;
	sp.store = in.store;
	sp.commit = commit;
	if ((err = snapshot_source_date(&sp.source_date, commit, in.repo_root,
	    NULL)) != NULL || (err = snapshot_build(&s, &rs, &sp)) != NULL)
		goto out;
	have_s = 1;
	if ((err = snapshot_save(&sum, &s, in.repo_root, output)) != NULL ||
	    (tree != NULL && (err = snapshot_write_tree(&s, tree)) != NULL))
		goto out;
	if (ctx->json)
		output_json(sum);
	else
		cmd_snapshot_print(sum);
out:
	if (have_s)
		snapshot_free(&s);
	if (have_rs)
		resultset_free(&rs);
	json_decref(sum);
	free(camps.v);
	free(fids.v);
	return err;
}

const struct cmd_entry cmd_snapshot_entry = {
	"snapshot",
	"[--campaign RUN]... [--fidelity RUN]... [--no-fidelity] "
	"[--output FILE] [--tree DIR] [--sign-key FILE] [--json]",
	"pack results into a reproducible, verifiable snapshot archive",
	"Writes the results tree of the runs (per-run JSON, comparison.json,\n"
	"gate.json, fidelity.json, REPORT.md, plots/*.svg) and manifest.json\n"
	"(sha256 of every input and output) into snapshots/ID.tar.gz. The same\n"
	"inputs give the same bytes. Runs as for 'warden gate'.\n"
	"  --campaign RUN      a campaign run (repeatable; default: the newest)\n"
	"  --fidelity RUN      a fidelity run (repeatable; default: the newest)\n"
	"  --no-fidelity       no fidelity run\n"
	"  --output FILE       write the archive here instead\n"
	"  --tree DIR          also write the tree under DIR/results\n"
	"  --sign-key FILE     sign the manifest with this SSH key (default:\n"
	"                      $WARDEN_SIGNING_KEY)\n"
	"  --json              print the summary as JSON\n"
	"Examples:\n"
	"  warden snapshot\n"
	"  warden snapshot --no-fidelity --output shard-1.tar.gz\n",
	snapshot_exec,
};
