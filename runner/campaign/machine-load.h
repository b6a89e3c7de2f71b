/*
 * machine-load.h - how busy the machine is: its load averages, sampled
 * with getloadavg(3) (on Linux, /proc/loadavg's first three figures), at
 * the start of a sweep's measurement and at its end, and the verdict
 * whether the machine was quiet. Never prints.
 */
#ifndef WARDEN_MACHINE_LOAD_H
#define WARDEN_MACHINE_LOAD_H

#include <jansson.h>

/* {"load1", "load5", "load15"} now, or NULL when the system has none. */
json_t *machine_load_now(void);

/*
 * A sweep's load: {"start": machine_load_now() at its first request,
 * "end": at its last, "cpus": online cores, "quiet": bool}, start and end
 * taken (either may be NULL: then "quiet" is absent). Quiet: the
 * 1-minute load average below the number of cores at both samples, so
 * the engine and the client did not wait for a core. The load counts
 * the engine's own work too: a CPU engine that fills every core reads as
 * busy.
 */
json_t *machine_load_span(json_t *start, json_t *end);

/* "load 3.1 and 4.2 on 2 cores" of a span that was not quiet, or NULL
 * (quiet, or not known); caller frees. */
char *machine_load_warning(const json_t *span);

#endif
