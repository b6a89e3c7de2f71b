/*
 * netlimit.c - the network rule and the scopes inside the Linux sandbox,
 * kept by Landlock: warden's own executable, run inside bubblewrap as
 * `warden --sandbox-netlimit RULE -- PROGRAM ARGS...`, restricts itself
 * and executes the program, which inherits the restriction and can never
 * drop it.
 *
 *   https  outbound TCP connects only to port 443 (Landlock 4): a coding
 *          agent reaches its model service; nothing else on the machine
 *          or the network that listens on another port. Landlock keeps
 *          TCP only, so a seccomp filter refuses every other socket of
 *          the internet families (UDP, raw, SCTP: EACCES) and io_uring,
 *          which could make one behind the filter's back. Name lookups
 *          go over TCP to port 53 (RES_OPTIONS=use-vc for the C
 *          library's resolver; Landlock allows that port too)
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

int
sandbox_ports_parse(const char *s, int *lo, int *hi)
{
	char *end;
	long a, b;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	a = strtol(s, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtol(end + 1, &end, 10);
	if (*end != '\0' || a < 1024 || b > 65535 || a > b ||
	    b - a >= SANDBOX_PORTS_MAX)
		return -1;
	*lo = (int)a;
	*hi = (int)b;
	return 0;
}

#ifdef __linux__

#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>

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
#define DNS_PORT 53

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef NATIVE_ARCH
#define ARG_LOW(n) (offsetof(struct seccomp_data, args[n]))	/* little
								   endian */
#define DENY(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/*
 * The internet families for TCP only: socket(AF_INET or AF_INET6) of any
 * type but SOCK_STREAM, or of a protocol but 0 and TCP, and AF_PACKET,
 * fail with EACCES; io_uring and another architecture's system calls
 * (x32, 32-bit compatibility) are not there (ENOSYS). Written out rather
 * than with libseccomp: nineteen instructions, on one platform.
 */
static int
seccomp_tcp_only(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		DENY(ENOSYS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		DENY(ENOSYS),
#endif
#ifdef __NR_io_uring_setup
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		DENY(ENOSYS),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		ALLOW,
		/* socket(domain, type, protocol) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_PACKET, 9, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
		ALLOW,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(1)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),	/* the type,
								   less flags */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0),
		DENY(EACCES),
		ALLOW,
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])),
	    f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#endif

/* Name lookups of the C library's resolver over TCP, which the rule
 * lets through to port 53. */
static void
resolver_over_tcp(void)
{
	const char *old = getenv("RES_OPTIONS");
	char buf[512];

	snprintf(buf, sizeof(buf), "%s%suse-vc", old != NULL ? old : "",
	    old != NULL && old[0] != '\0' ? " " : "");
	(void)setenv("RES_OPTIONS", buf, 1);
}

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
		uint64_t ports[2 + SANDBOX_PORTS_MAX];
		size_t i, n = 0;
		int lo, hi, p;

		ports[n++] = HTTPS_PORT;
		ports[n++] = DNS_PORT;
		/* the agent's own engines (warden chose them free) */
		if (sandbox_ports_parse(getenv(SANDBOX_PORTS_ENV), &lo, &hi) == 0)
			for (p = lo; p <= hi; p++)
				ports[n++] = (uint64_t)p;
		for (i = 0; i < n; i++) {
			port.allowed_access = LL_ACCESS_NET_CONNECT_TCP;
			port.port = ports[i];
			if (syscall(__NR_landlock_add_rule, fd,
			    LL_RULE_NET_PORT, &port, 0) != 0)
				return fail("landlock_add_rule");
		}
	}
	if (syscall(__NR_landlock_restrict_self, fd, 0) != 0)
		return fail("landlock_restrict_self");
	close(fd);
	if (rule == SANDBOX_NET_HTTPS) {
#ifdef NATIVE_ARCH
		if (seccomp_tcp_only() != 0)
			return fail("seccomp");
#else
		fprintf(stderr, "warden: sandbox: the network rule \"https\" "
		    "keeps UDP out only on x86_64 and arm64\n");
		return 126;
#endif
		resolver_over_tcp();
	}
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
