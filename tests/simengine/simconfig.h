/*
 * simconfig.h - the settings of warden-simengine, from flags or a JSON
 * profile (--config FILE), both read through one table of options.
 *
 * The table also produces --help, so every flag is documented once. A
 * profile is an object whose keys are flag names without the dashes:
 * {"schedule": "padded", "itl-ms": 20, "crlf": true}. Later flags
 * override earlier ones and the profile, in command-line order.
 * Never starts anything: parsing and validation only.
 */
#ifndef SIM_SIMCONFIG_H
#define SIM_SIMCONFIG_H

#include <stdio.h>

#include "error.h"

struct sim_config {
	/* server */
	char *host;
	int port;
	char *port_file;
	char *model;
	double startup_delay;
	char *trace;
	int seed;
	int strict_model;
	/* serving model */
	char *schedule;
	double prefill_rate;
	double itl_ms;
	double itl_growth;
	int max_batch;
	double batch_window_ms;
	int output_tokens;
	int reasoning_tokens;
	/* memory */
	double weights_mb;
	int kv_bytes_per_token;
	char *mem_policy;
	double mem_cap_mb;
	/* faults */
	int abort_at_concurrency;
	int abort_at_connections;
	int abort_after;
	double fail_rate;
	double zero_rate;
	double stall;
	double stall_rate;
	double malformed_rate;
	double error_event_rate;
	double reset_rate;
	double close_rate;
	int fault_after;
	double template_bug_rate;
	/* fidelity task */
	char *labels;
	double accuracy;
	/* broken versions */
	char *version_file;
	char *version_from_pip;
	char *broken_versions;
	char *broken_mode;
	/* wire format */
	int events_per_write;
	int random_splits;
	int realtime;
	int crlf;
	int no_space;
	int keepalive_every;
	double huge_event_mb;
	char *usage;
	char *error_form;
	/* connections */
	int keepalive_close;
	double close_delay_ms;
	int connection_close;
};

void simconfig_defaults(struct sim_config *c);
void simconfig_free(struct sim_config *c);
/*
 * Parse argv into c (which holds the defaults). Sets *help when --help
 * was given (then nothing else is checked). Errors are usage errors.
 */
struct werr *simconfig_parse_args(struct sim_config *c, int argc,
    char **argv, int *help);
/* Apply a JSON profile file to c. */
struct werr *simconfig_load_file(struct sim_config *c, const char *path);
/* Check ranges and enumerations after everything was applied. */
struct werr *simconfig_validate(const struct sim_config *c);
void simconfig_usage(FILE *fp);

#endif
