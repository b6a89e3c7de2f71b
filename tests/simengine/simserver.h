/*
 * simserver.h - the HTTP server of warden-simengine: GET /health,
 * GET /v1/models, POST /v1/chat/completions (SSE or JSON).
 *
 * Owns the libmicrohttpd daemon and nothing else; the answers come from
 * engine.h. Never prints.
 */
#ifndef SIM_SIMSERVER_H
#define SIM_SIMSERVER_H

#include <stdint.h>

#include "simeng.h"
#include "error.h"
#include "simconfig.h"

struct MHD_Daemon;

struct simserver {
	struct MHD_Daemon *daemon;
	struct simeng *engine;
	const struct sim_config *cfg;
	uint16_t port;			/* the port actually bound */
	int nconns;			/* client connections open (atomic) */
};

/* Listen on cfg->host:cfg->port (0 = any free port). */
struct werr *simserver_start(struct simserver *s, struct simeng *e,
    const struct sim_config *cfg);
/* Stop listening and close every connection (after simeng_begin_stop). */
void simserver_stop(struct simserver *s);

#endif
