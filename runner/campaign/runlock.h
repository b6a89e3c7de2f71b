/*
 * runlock.h - locks that keep long work from running twice: one campaign
 * per machine, so two campaigns never share the CPUs they measure, and one
 * per repository, so --resume cannot take over a run that is still live.
 *
 * A lock is flock(2) on a file, taken without waiting and held until
 * released or until the process ends (even by kill -9: the kernel drops
 * it, so a lock is never stale; its descriptor is close-on-exec, so an
 * engine that outlives warden does not hold it). The holder writes who it
 * is into the file (pid, command line, repository, time, and later what
 * it runs), and whoever finds it held is told that, with exit 3.
 *
 * The machine's lock is warden-NAME.lock in $WARDEN_LOCK_DIR, else /tmp,
 * a directory every user of the machine shares (not $XDG_RUNTIME_DIR,
 * which is per user). Never prints.
 */
#ifndef WARDEN_RUNLOCK_H
#define WARDEN_RUNLOCK_H

#include "error.h"

struct runlock;

/* The machine-wide lock file of NAME ("campaign"); caller frees. */
char *runlock_machine_path(const char *name);

/*
 * Take the lock at path without waiting. what says what it guards, for
 * messages ("a campaign on this machine"); who is the command line and
 * repo the repository, written into the file. Held by another process:
 * WEXIT_ENV, "WHAT is running: pid N (COMMAND) in REPO since T[, run R]
 * (lock PATH)".
 */
struct werr *runlock_take(struct runlock **out, const char *path,
    const char *what, const char *who, const char *repo);
/* Note what the holder now runs ("run 20261203T...") in the file. */
void runlock_note(struct runlock *l, const char *detail);
/* Release and free; NULL is fine. */
void runlock_release(struct runlock *l);

#endif
