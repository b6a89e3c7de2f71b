/*
 * cmd-results.h - what the commands of the results area (gate, snapshot,
 * merge, publish) share for printing. Only cmd-*.c files include it.
 */
#ifndef WARDEN_CMD_RESULTS_H
#define WARDEN_CMD_RESULTS_H

#include <jansson.h>

/* The gate table, its reasons and the comparison with the last
 * published snapshot, for people. */
void cmd_gate_print(const json_t *gate);
/* A written snapshot's summary (snapshot_save()), for people. */
void cmd_snapshot_print(const json_t *summary);

#endif
