/*
 * netlimit.c - the network rule and the scopes inside the Linux sandbox,
 * kept by Landlock: warden's own executable, run inside bubblewrap as
 * `warden --sandbox-netlimit RULE -- PROGRAM ARGS...`, restricts itself
 * and executes the program, which inherits the restriction and can never
 * drop it.
 *
 *   https  outbound TCP connects only to port 443 (Landlock 4): a coding
 *          agent reaches its model service; nothing else on the machine
 *          or the network that listens on another port
 *   host   no port rule (engines serve on the host's loopback)
 *   none   no port rule here: bubblewrap gave it no network
 *
 * With Landlock 6 (Linux 6.12) every rule also scopes abstract unix
 * sockets and signals to the sandbox: a session bus or an agent socket
 * bound in the abstract namespace, or a process outside, is out of
 * reach. The Landlock structures are declared here because the C
 * library's headers may predate them. Prints only its own failure, on
 * stderr (the program's log), before it exits 126.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

#ifdef __linux__

#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_RULE_NET_PORT		2
#define LL_ACCESS_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#define LL_SCOPE_SIGNAL			(1ULL << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#define HTTPS_PORT 443

int
sandbox_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

static int
fail(const char *what)
{
	fprintf(stderr, "warden: sandbox: %s: %s\n", what, strerror(errno));
	return 126;
}

int
sandbox_netlimit_main(int argc, char **argv)
{
	struct ll_ruleset_attr attr = { 0 };
	struct ll_net_port_attr port = { 0 };
	size_t size = sizeof(attr);
	int abi = sandbox_landlock_abi(), rule, fd;

	if (argc < 5 || strcmp(argv[3], "--") != 0 ||
	    (rule = sandbox_net_parse(argv[2])) < 0) {
		fprintf(stderr, "warden: sandbox: usage: warden %s "
		    "host|https|none -- PROGRAM [ARG...]\n",
		    SANDBOX_NETLIMIT_ARG);
		return 126;
	}
	if (rule == SANDBOX_NET_HTTPS) {
		if (abi < 4) {
			fprintf(stderr, "warden: sandbox: the network rule "
			    "\"https\" needs Landlock 4; this kernel has %d\n",
			    abi);
			return 126;
		}
		attr.handled_access_net = LL_ACCESS_NET_CONNECT_TCP;
	}
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	else
		size = offsetof(struct ll_ruleset_attr, scoped);
	if (attr.handled_access_net == 0 && attr.scoped == 0)
		goto run;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return fail("no_new_privs");
	fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return fail("landlock_create_ruleset");
	if (attr.handled_access_net != 0) {
		port.allowed_access = LL_ACCESS_NET_CONNECT_TCP;
		port.port = HTTPS_PORT;
		if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT,
		    &port, 0) != 0)
			return fail("landlock_add_rule");
	}
	if (syscall(__NR_landlock_restrict_self, fd, 0) != 0)
		return fail("landlock_restrict_self");
	close(fd);
run:
	execvp(argv[4], argv + 4);
	fprintf(stderr, "warden: sandbox: cannot run '%s': %s\n", argv[4],
	    strerror(errno));
	return 127;
}

#else

int
sandbox_landlock_abi(void)
{
	return 0;
}

int
sandbox_netlimit_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "warden: sandbox: %s is for Linux\n",
	    SANDBOX_NETLIMIT_ARG);
	return 126;
}

#endif
