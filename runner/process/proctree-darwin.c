/*
 * proctree-darwin.c - the macOS half of proctree.h, through libproc
 * (<libproc.h>, <sys/proc_info.h> of the macOS SDK):
 *
 *   proc_listallpids(buffer, bytes)   the pids, returned as a count (it
 *                                     is proc_listpids(PROC_ALL_PIDS)
 *                                     divided by sizeof(pid_t), in
 *                                     libproc.c); with no buffer, about
 *                                     how many there are
 *   proc_pidinfo(PROC_PIDTBSDINFO)    struct proc_bsdinfo: pbi_ppid,
 *                                     pbi_pgid, pbi_uid, pbi_status
 *                                     (SZOMB for a zombie, <sys/proc.h>)
 *   proc_pidinfo(PROC_PIDLISTFDS)     struct proc_fdinfo per descriptor,
 *                                     returned as bytes
 *   proc_pidfdinfo(PROC_PIDFDSOCKETINFO)  struct socket_fdinfo: a TCP
 *                                     socket (SOCKINFO_TCP) in
 *                                     TSI_S_LISTEN, its local port in
 *                                     network order (insi_lport)
 *
 * macOS has no child subreaper: an engine's orphan goes to launchd, and
 * the port it still holds is how warden finds it. Compiled for macOS on
 * Linux by ci/macos-check; run only on a Mac. Never prints.
 */
#include "config.h"

#ifdef __APPLE__

#include <sys/types.h>
#include <sys/proc_info.h>

#include <arpa/inet.h>
#include <libproc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctree.h"
#include "util.h"

#ifndef SZOMB
#define SZOMB 5		/* sys/proc.h: p_stat of a zombie */
#endif

/* Every pid, or NULL with *n 0. */
static pid_t *
all_pids(size_t *n)
{
	pid_t *pids;
	int cap, got;

	*n = 0;
	if ((cap = proc_listallpids(NULL, 0)) <= 0)
		return NULL;
	cap += 64;	/* processes started meanwhile */
	pids = xcalloc((size_t)cap, sizeof(*pids));
	got = proc_listallpids(pids, cap * (int)sizeof(*pids));
	if (got <= 0) {
		free(pids);
		return NULL;
	}
	*n = (size_t)got < (size_t)cap ? (size_t)got : (size_t)cap;
	return pids;
}

struct werr *
proctree_list(struct proc_info **out, size_t *n)
{
	struct proc_bsdinfo bi;
	struct proc_info *v;
	size_t npids, i, len = 0;
	pid_t *pids;

	*out = NULL;
	*n = 0;
	if ((pids = all_pids(&npids)) == NULL)
		return werr_errno("proc_listallpids", NULL);
	v = xcalloc(npids + 1, sizeof(*v));
	for (i = 0; i < npids; i++) {
		if (pids[i] <= 0)
			continue;
		/* A process gone meanwhile is simply absent. */
		if (proc_pidinfo(pids[i], PROC_PIDTBSDINFO, 0, &bi,
		    (int)sizeof(bi)) != (int)sizeof(bi))
			continue;
		v[len].pid = pids[i];
		v[len].ppid = (pid_t)bi.pbi_ppid;
		v[len].pgid = (pid_t)bi.pbi_pgid;
		v[len].zombie = bi.pbi_status == SZOMB;
		len++;
	}
	free(pids);
	*out = v;
	*n = len;
	return NULL;
}

/* Does pid hold a TCP socket listening on port? */
static int
listens_on(pid_t pid, int port)
{
	struct proc_fdinfo *fds;
	struct socket_fdinfo si;
	int size, i, count, found = 0;

	if ((size = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, NULL, 0)) <= 0)
		return 0;
	fds = xmalloc((size_t)size);
	size = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, fds, size);
	count = size > 0 ? size / (int)sizeof(*fds) : 0;
	for (i = 0; i < count && !found; i++) {
		if (fds[i].proc_fdtype != PROX_FDTYPE_SOCKET)
			continue;
		if (proc_pidfdinfo(pid, fds[i].proc_fd, PROC_PIDFDSOCKETINFO,
		    &si, (int)sizeof(si)) != (int)sizeof(si))
			continue;
		if (si.psi.soi_kind != SOCKINFO_TCP ||
		    si.psi.soi_proto.pri_tcp.tcpsi_state != TSI_S_LISTEN)
			continue;
		found = ntohs((uint16_t)si.psi.soi_proto.pri_tcp.tcpsi_ini.
		    insi_lport) == port;
	}
	free(fds);
	return found;
}

struct werr *
proctree_port_listeners(pid_t **out, size_t *n, int port)
{
	struct proc_bsdinfo bi;
	size_t npids, i;
	uid_t uid = getuid();
	pid_t *pids;

	*out = NULL;
	*n = 0;
	if (port <= 0)
		return NULL;
	if ((pids = all_pids(&npids)) == NULL)
		return werr_errno("proc_listallpids", NULL);
	for (i = 0; i < npids; i++) {
		/* Only this user's processes: nobody else's is ours to stop. */
		if (pids[i] <= 0 || proc_pidinfo(pids[i], PROC_PIDTBSDINFO, 0,
		    &bi, (int)sizeof(bi)) != (int)sizeof(bi) ||
		    bi.pbi_uid != uid || !listens_on(pids[i], port))
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = pids[i];
	}
	free(pids);
	return NULL;
}

#else
typedef int proctree_darwin_unused;
#endif
