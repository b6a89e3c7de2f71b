/*
 * cmd-export.c - `warden export SNAPSHOT --format siliconbench --output
 * DIR`: a published snapshot, verified as gate and publish verify one,
 * written in SiliconBench's own layout (export-sb.h) for its collector
 * and report generator. The writing is export-sb.c's; this file parses
 * and prints.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "output.h"
#include "quote.h"
#include "results/export-sb.h"
#include "results/snapshot.h"

/* A chip folder name: one path component SiliconBench would use. */
static int
chip_ok(const char *s)
{
	if (s[0] == '\0' || s[0] == '.')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		    *s == '.'))
			return 0;
	return 1;
}

static struct werr *
export_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "chip", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *dir = NULL, *chip = NULL, *root;
	struct werr *err, *gerr = NULL;
	struct resultset rs;
	json_t *sum = NULL, *v;
	size_t i;
	int ch;

	optind = 0;
	while ((ch = cmd_getopt(ctx, &cmd_export_entry, argc, argv, opts,
	    &gerr)) != -1) {
		if (ch == 'f')
			format = optarg;
		else if (ch == 'o')
			dir = optarg;
		else if (ch == 'c')
			chip = optarg;
	}
	if (gerr != NULL)
		return gerr;
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_export_entry, "'export' takes one "
		    "snapshot archive");
	if (format == NULL || strcmp(format, "siliconbench") != 0)
		return cmd_usage_error(&cmd_export_entry, "'--format' takes "
		    "siliconbench, not '%s'", format != NULL ? format : "");
	if (dir == NULL)
		return cmd_usage_error(&cmd_export_entry, "'export' needs "
		    "--output DIR");
	if (chip != NULL && !chip_ok(chip))
		return cmd_usage_error(&cmd_export_entry, "'--chip' takes one "
		    "folder name (letters, digits, '-', '_', '.'), not '%s'",
		    chip);
	if ((err = cmd_ctx_repo(ctx, &root)) != NULL ||
	    (err = snapshot_read_resultset(&rs, argv[optind], root)) != NULL)
		return err;
	err = export_siliconbench(&sum, &rs, dir, chip);
	resultset_free(&rs);
	if (err != NULL)
		return err;
	if (ctx->json)
		output_json(sum);
	else if (ctx->verbosity >= 0)
		json_array_foreach(json_object_get(sum, "files"), i, v)
			printf("%s\n", quote_str(json_string_value(v)));
	json_decref(sum);
	return NULL;
}

const struct cmd_entry cmd_export_entry = {
	"export",
	"SNAPSHOT --format siliconbench --output DIR [--chip NAME] [--json]",
	"write a snapshot's results in SiliconBench's own layout",
	"Verifies SNAPSHOT as gate --snapshot does (the official policy's\n"
	"signers and requirement) and writes its campaign runs as SiliconBench's\n"
	"benchmark.py writes results, one file per engine, model and split:\n"
	"DIR/results/MODEL[/CHIP]/SPLIT/ENGINE_YYYYmmdd_HHMMSS.json, with\n"
	"comparison.json per split as its collect_results.py makes it; its\n"
	"generate_report.py reads them unchanged. Prints each file written.\n"
	"  --format siliconbench  the layout (the only one)\n"
	"  --output DIR        where results/ is written\n"
	"  --chip NAME         a folder level for the machine, as SiliconBench's\n"
	"                      results/MODEL/dgxspark/\n"
	"  --json              {format, files}\n"
	"Examples:\n"
	"  warden export merged.tar.gz --format siliconbench --output sb\n"
	"  warden export merged.tar.gz --format siliconbench --output sb --chip m4\n",
	export_exec,
};
