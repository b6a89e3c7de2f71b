/*
 * main.c - warden-simengine: an OpenAI-compatible simulated LLM serving
 * engine with a deterministic serving model and fault injection, used by
 * warden's tests and demo roster.
 *
 * Parses options, starts the engine and the server, writes the port file,
 * and waits for SIGTERM or SIGINT, then closes connections and exits 0.
 * The only file that prints.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simeng.h"
#include "simserver.h"
#include "simconfig.h"
#include "util.h"

static int
die(struct werr *err)
{
	int code = err->exit;

	fprintf(stderr, "warden-simengine: %s\n", err->msg);
	werr_free(err);
	return code;
}

static struct werr *
write_port_file(const char *path, unsigned port)
{
	char *text = xasprintf("%u\n", port);
	struct werr *err = file_write_atomic(path, text, strlen(text));

	free(text);
	return err;
}

int
main(int argc, char **argv)
{
	struct sim_config cfg;
	struct simeng engine;
	struct simserver srv;
	struct werr *err;
	sigset_t set;
	int help, sig, code = 0;

	simconfig_defaults(&cfg);
	err = simconfig_parse_args(&cfg, argc, argv, &help);
	if (err == NULL && help) {
		simconfig_usage(stdout);
		simconfig_free(&cfg);
		return 0;
	}
	if (err == NULL)
		err = simconfig_validate(&cfg);
	if (err != NULL) {
		code = die(err);
		simconfig_free(&cfg);
		return code;
	}
	/* Every thread inherits this mask; only sigwait() sees the signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((err = simeng_start(&engine, &cfg)) != NULL) {
		code = die(err);
		simeng_stop(&engine);
		simconfig_free(&cfg);
		return code;
	}
	if ((err = simserver_start(&srv, &engine, &cfg)) == NULL &&
	    cfg.port_file != NULL)
		err = write_port_file(cfg.port_file, srv.port);
	if (err == NULL) {
		fprintf(stderr, "warden-simengine: serving '%s' on http://%s:%u "
		    "(%s schedule)\n", cfg.model, cfg.host, srv.port,
		    cfg.schedule);
		sigwait(&set, &sig);
	} else
		code = die(err);
	simeng_begin_stop(&engine);
	simserver_stop(&srv);
	simeng_stop(&engine);
	simconfig_free(&cfg);
	return code;
}
