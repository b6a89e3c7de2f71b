/*
 * cmd-verify.c - `warden verify`: re-check a snapshot archive: every
 * member against the manifest, the manifest against its seal, the
 * signature against allowed_signers; exit 1 naming what differs. The
 * checks are in verify.c; this file parses and prints.
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
#include "results/sign.h"
#include "results/snapshot.h"
#include "results/verify.h"

/* The signers and whether policy requires a signature: from the trusted
 * policy of the repository we are in, if any (verify_signers_for). */
static struct werr *
signers_of(struct signers *out, int *required, struct cmd_ctx *ctx,
    const char *arg)
{
	struct policy *pol = NULL;
	const char *root = NULL;
	struct werr *err;

	if ((err = cmd_ctx_repo(ctx, &root)) != NULL) {
		werr_free(err);		/* outside a benchmark repository */
		root = NULL;
	} else if ((err = cmd_ctx_policy(ctx, &pol)) != NULL) {
		werr_free(err);
		pol = NULL;
	}
	return verify_signers_for(out, required, root, pol, arg);
}

static struct werr *
verify_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "allowed-signers", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *signers_arg = NULL;
	struct verify_report vr;
	struct signers sig;
	struct snapshot s;
	struct werr *err, *gerr = NULL;
	size_t archived;
	json_t *doc, *probs;
	int ch, required;
	size_t i;

	optind = 0;	/* 0: reinitialise, so options may follow operands */
	while ((ch = cmd_getopt(ctx, &cmd_verify_entry, argc, argv, opts,
	    &gerr)) != -1) {
		switch (ch) {
		case 'a':
			signers_arg = optarg;
			break;
		default:
			return cmd_usage_error(&cmd_verify_entry, "bad option");
		}
	}
	if (gerr != NULL)
		return gerr;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_verify_entry, "'verify' takes one "
		    "snapshot archive");
	if ((err = snapshot_read(&s, argv[optind])) != NULL)
		return err;
	if ((err = signers_of(&sig, &required, ctx, signers_arg)) == NULL)
		err = verify_snapshot(&vr, &s, sig.name != NULL ? &sig : NULL,
		    required);
	archived = s.n;		/* as snapshot counts them */
	signers_free(&sig);
	snapshot_free(&s);
	if (err != NULL)
		return err;
	if (ctx->json) {
		probs = json_array();
		for (i = 0; i < vr.nproblems; i++)
			json_array_append_new(probs, json_text(vr.problems[i]));
		doc = json_pack("{s:o, s:s, s:b, s:I, s:I, s:b, s:s?, s:o}",
		    "path", json_text(argv[optind]), "id", vr.id, "ok",
		    vr.nproblems == 0, "archive_members", (json_int_t)archived,
		    "members", (json_int_t)vr.members, "signed", vr.signed_ok,
		    "signer", vr.signer, "problems", probs);
		output_json(doc);
		json_decref(doc);
	} else {
		for (i = 0; i < vr.nproblems; i++)
			printf("%s: %s\n", quote_str(argv[optind]),
			    quote_msg(vr.problems[i]));
		if (vr.nproblems == 0)
			printf("%s: snapshot %s verifies: %zu members, the "
			    "%zu outputs matching the manifest, %s%s\n",
			    quote_str(argv[optind]), quote_str(vr.id), archived,
			    vr.members, vr.signed_ok ? "signed by " : "unsigned",
			    vr.signed_ok ? quote_str(vr.signer) : "");
	}
	if (vr.nproblems > 0)
		err = werr_new(WEXIT_PROBLEM, "%s does not verify (%zu "
		    "problem%s)", argv[optind], vr.nproblems,
		    vr.nproblems == 1 ? "" : "s");
	verify_report_free(&vr);
	return err;
}

const struct cmd_entry cmd_verify_entry = {
	"verify",
	"[--allowed-signers FILE] [--json] SNAPSHOT",
	"re-check a snapshot archive against its manifest and signature",
	"Checks every member of SNAPSHOT (a .tar.gz from snapshot, merge or\n"
	"publish) against the sha256 in its manifest, the manifest against its\n"
	"seal, the archive against the one warden writes of its members (byte\n"
	"for byte: path order, one gzip member, nothing after it), and a\n"
	"signature against allowed_signers. Names every changed, removed or\n"
	"added member and a bad signature. Reads at most 256 MiB of an archive\n"
	"($WARDEN_SNAPSHOT_MAX_MIB lowers it), 128 MiB of one member.\n"
	"  --allowed-signers FILE  ssh-keygen allowed_signers (default: the\n"
	"                      publish.allowed_signers of the policy on the\n"
	"                      official branch, never the working tree's)\n"
	"  --json              print the result as JSON\n"
	"Exit 1 when anything differs.\n"
	"Examples:\n"
	"  for s in snapshots/*.tar.gz; do warden verify \"$s\"; done\n"
	"  warden verify --allowed-signers policy/allowed_signers shard-1.tar.gz\n",
	verify_exec,
};
