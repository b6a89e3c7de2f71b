/*
 * cmd-campaign.h - what cmd-campaign.c (the command: options, progress,
 * signals) uses of cmd-campaign-print.c (the text tables and CSV of a
 * run's report and of the list of runs). Printing only: the data comes
 * from campaign-report.h.
 */
#ifndef WARDEN_CMD_CAMPAIGN_H
#define WARDEN_CMD_CAMPAIGN_H

#include <stdio.h>

#include <jansson.h>

/* The widest line the text report prints, whatever the terminal. */
#define CAMPAIGN_TABLE_COLUMNS 80

/* A run's report as text: per (model, split) a throughput and latency
 * block and a per-token, memory and outcome block, each at most
 * CAMPAIGN_TABLE_COLUMNS wide, the reason of every sweep that did not
 * complete, and the scaling lines. */
void campaign_print_report(FILE *fp, const json_t *report);
/* One CSV line per sweep under a header line (RFC 4180 quoting). */
void campaign_print_report_csv(FILE *fp, const json_t *report);
/* The list of runs as a table, or as CSV. */
void campaign_print_runs(FILE *fp, const json_t *runs);
void campaign_print_runs_csv(FILE *fp, const json_t *runs);

#endif
