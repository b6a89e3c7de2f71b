/*
 * engine-port.c - the TCP ports of 127.0.0.1 engines serve on: a free
 * one for each start, and the range a sandboxed agent's own engines get
 * (sandbox.h: SANDBOX_PORTS_ENV), which warden inside that sandbox keeps
 * to. A port is free when warden can bind it now; nothing here holds one.
 * Never prints.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "sandbox/sandbox.h"
#include "util.h"

/* Bind 127.0.0.1:port (0: any) and release it; the port bound, or -1. */
static int
bind_once(int port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd, got = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		got = ntohs(sa.sin_port);
	close(fd);
	return got;
}

struct werr *
engine_free_port(int *port)
{
	const char *range = getenv(SANDBOX_PORTS_ENV);
	int lo, hi, p;

	if (range == NULL || range[0] == '\0') {
		if ((*port = bind_once(0)) == -1)
			return werr_errno("bind", "127.0.0.1");
		return NULL;
	}
	if (sandbox_ports_parse(range, &lo, &hi) != 0)
		return werr_new(WEXIT_INPUT, "%s is '%s', not a range LO-HI of "
		    "at most %d ports from 1024", SANDBOX_PORTS_ENV, range,
		    SANDBOX_PORTS_MAX);
	for (p = lo; p <= hi; p++)
		if (bind_once(p) == p) {
			*port = p;
			return NULL;
		}
	return werr_new(WEXIT_ENV, "no port of %s (%d-%d) is free",
	    SANDBOX_PORTS_ENV, lo, hi);
}

struct werr *
engine_port_range(int *lo, int *hi, int n)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	int tries, base, p;

	/* Above the ports services are given (1024-19999), below the
	 * kernel's ephemeral range (32768 on), where a free port found at
	 * random is not taken by the next outgoing connection. */
	for (tries = 0; tries < 200; tries++) {
		seed = seed * 1103515245u + 12345u;
		base = 20000 + (int)((seed >> 8) % (32768 - 20000 - (unsigned)n));
		for (p = base; p < base + n && bind_once(p) == p; p++)
			;
		if (p == base + n) {
			*lo = base;
			*hi = base + n - 1;
			return NULL;
		}
	}
	return werr_new(WEXIT_ENV, "no %d free ports in a row on 127.0.0.1", n);
}
