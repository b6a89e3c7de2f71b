/*
 * rtsched.h - give the calling thread first claim on a core while it
 * measures. A timestamp is only as good as the measuring thread's wake-up
 * latency: on a busy machine (the engine's own threads, a second job) an
 * ordinary thread woken by a socket can wait a whole scheduler slice,
 * several milliseconds, before it reads the clock. A thread that sleeps
 * in poll(2) and runs briefly is what real-time scheduling is for.
 *
 * In order of preference: SCHED_FIFO priority 1, reset on fork (Linux and
 * other POSIX systems; needs CAP_SYS_NICE or an RLIMIT_RTPRIO); nice -10
 * for this thread only (Linux); on macOS the user-interactive QoS class.
 * What was refused is skipped silently: measuring goes on at normal
 * priority, and the name returned says how it ran. Never prints.
 */
#ifndef WARDEN_RTSCHED_H
#define WARDEN_RTSCHED_H

struct rtsched_saved {
	int how;		/* RTSCHED_* below */
	int policy;		/* before: scheduling policy ... */
	int priority;		/* ... its priority, or the nice value */
};

/* Raise the calling thread; returns what it got: "fifo", "nice",
 * "qos_user_interactive" or "normal". */
const char *rtsched_raise(struct rtsched_saved *saved);
/* Put the calling thread back as rtsched_raise found it. */
void rtsched_restore(const struct rtsched_saved *saved);

#endif
