/*
 * cmd-publish.c - `warden publish`: official results from a clean
 * checkout of the official tip, refused naming the condition that does
 * not hold; the work is in publish.c. This file parses and prints.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "output.h"
#include "policy.h"
#include "quote.h"
#include "util.h"
#include "results/publish.h"
#include "results/snapshot.h"

static struct werr *
publish_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "campaign", required_argument, NULL, 'c' },
		{ "fidelity", required_argument, NULL, 'f' },
		{ "no-fidelity", no_argument, NULL, 'N' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "sign-key", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_names camps = { 0 }, fids = { 0 };
	struct publish_opts o;
	struct werr *err = NULL, *gerr = NULL;
	json_t *res = NULL, *v;
	const char *env;
	size_t i;
	int ch;

	memset(&o, 0, sizeof(o));
	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_publish_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'c':
			cmd_names_add(&camps, optarg);
			break;
		case 'f':
			cmd_names_add(&fids, optarg);
			break;
		case 'N':
			o.no_fidelity = 1;
			break;
		case 's':
			o.snapshot = optarg;
			break;
		case 'k':
			o.sign_key = optarg;
			break;
		default:
			err = cmd_usage_error(&cmd_publish_entry, "bad option");
			goto out;
		}
	}
	if (gerr != NULL) {
		err = gerr;
		goto out;
	}
	if (optind != argc) {
		err = cmd_usage_error(&cmd_publish_entry, "'publish' takes no "
		    "arguments");
		goto out;
	}
	if (o.snapshot != NULL && (camps.n || fids.n || o.no_fidelity)) {
		err = cmd_usage_error(&cmd_publish_entry, "'--snapshot' "
		    "publishes the runs of the snapshot; it takes no run "
		    "options");
		goto out;
	}
	if (o.sign_key == NULL && (env = getenv("WARDEN_SIGNING_KEY")) != NULL &&
	    env[0] != '\0')
		o.sign_key = env;
	if ((err = cmd_ctx_repo(ctx, &o.repo_root)) != NULL ||
	    (err = cmd_ctx_store(ctx, &o.store)) != NULL)
		goto out;
	if (o.sign_key == NULL)
		o.sign_key = snapshot_configured_key(o.repo_root);
	o.campaigns = camps.v;
	o.ncampaigns = camps.n;
	o.fidelity = fids.v;
	o.nfidelity = fids.n;
	if ((err = publish_run(&res, &o)) != NULL)
		goto out;
	if (ctx->json) {
		output_json(res);
		goto out;
	}
	printf("published snapshot %s on '%s': commit %s, tag %s\n"
	    "  measured at %s\n  archive   %s\n  sha256    %s\n  passed   ",
	    quote_str(json_string_value(json_object_get(res, "snapshot"))),
	    quote_str(json_string_value(json_object_get(res, "branch"))),
	    quote_str(json_string_value(json_object_get(res, "commit"))),
	    quote_str(json_string_value(json_object_get(res, "tag"))),
	    quote_str(json_string_value(json_object_get(res,
	    "measured_commit"))),
	    quote_str(json_string_value(json_object_get(res, "path"))),
	    quote_str(json_string_value(json_object_get(res, "sha256"))));
	if (json_array_size(json_object_get(res, "passed")) == 0)
		printf(" none");
	json_array_foreach(json_object_get(res, "passed"), i, v)
		printf("%s %s", i ? "," : "", quote_str(json_string_value(v)));
	printf("\n");
out:
	json_decref(res);
	free(camps.v);
	free(fids.v);
	return err;
}

const struct cmd_entry cmd_publish_entry = {
	"publish",
	"[--campaign RUN]... [--fidelity RUN]... [--no-fidelity] "
	"[--snapshot FILE] [--sign-key FILE] [--json]",
	"publish official results from the official tip",
	"Writes the results tree of the runs (as 'warden snapshot' does) to\n"
	"snapshots/ID.tar.gz, commits it as results/ on the official branch\n"
	"with a Warden-Snapshot trailer, and tags the commit snapshot/ID.\n"
	"Refuses, naming the condition, unless HEAD is the official tip (a\n"
	"detached checkout of it), the tree is clean, every result was measured\n"
	"at exactly that commit with a clean tree, every commit since the last\n"
	"publish is an approved review's or changes nothing in the allowlist\n"
	"zone, and 'warden gate' ran on exactly these results.\n"
	"  --campaign RUN      a campaign run (repeatable; default: the newest)\n"
	"  --fidelity RUN      a fidelity run (repeatable; default: the newest)\n"
	"  --no-fidelity       no fidelity run\n"
	"  --snapshot FILE     publish the runs of a (merged) snapshot, verified\n"
	"                      with the official tip's policy signers\n"
	"  --sign-key FILE     sign the manifest with this SSH key (default:\n"
	"                      $WARDEN_SIGNING_KEY)\n"
	"  --json              print the result as JSON\n"
	"Exit 1 when a condition does not hold (nothing is written then).\n"
	"Examples:\n"
	"  git switch --detach official && warden publish\n"
	"  warden publish --snapshot merged.tar.gz\n",
	publish_exec,
};
