/*
 * proctree.h - the process table, as spawn.c needs it to stop every
 * process a program started: each process with its parent and group, the
 * descendants of a set of processes, and (macOS) who listens on a TCP
 * port.
 *
 * The Linux half reads /proc (proctree-linux.c), the macOS half libproc
 * (proctree-darwin.c). On Linux warden is the child subreaper of what it
 * spawns, so every descendant stays in warden's process tree until warden
 * reaps it: the tree is the whole answer, and no port is needed. On macOS
 * an orphan goes to launchd and leaves the tree; the port an engine
 * serves on is what still names it. Never prints, never signals.
 */
#ifndef WARDEN_PROCTREE_H
#define WARDEN_PROCTREE_H

#include <sys/types.h>

#include <stddef.h>

#include "error.h"

struct proc_info {
	pid_t pid;
	pid_t ppid;
	pid_t pgid;
	int zombie;		/* dead, not yet reaped */
};

/* Every process the platform shows (*out allocated, caller frees). */
struct werr *proctree_list(struct proc_info **out, size_t *n);

/* Mark (set to 1) in marked[] the descendants of every process already
 * marked; marked has n entries, parallel to v. */
void proctree_mark_descendants(const struct proc_info *v, size_t n,
    char *marked);

/*
 * The processes of a program this process spawned with leader as its
 * process group leader: the group, the descendants of the leader, every
 * process re-parented to this process (the subreaper) that is not one of
 * others (the leaders of other programs still running, and their
 * groups), the listeners on port (macOS; 0: none), and the descendants of
 * all of these; never this process. Zombies are listed (zombie set): the
 * ones whose parent is this process are left for it to reap. *out is
 * allocated (caller frees).
 */
struct werr *proctree_program(struct proc_info **out, size_t *n,
    pid_t leader, const pid_t *others, size_t nothers, int port);

/* The processes of this user holding a listening TCP socket on port
 * (*out allocated, caller frees). macOS only; elsewhere none. */
struct werr *proctree_port_listeners(pid_t **out, size_t *n, int port);

#endif
