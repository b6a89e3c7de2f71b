/*
 * memsample.h - memory traces of a sweep: system memory in use and the
 * resident footprint of an engine's whole process tree, sampled at a fixed
 * interval (1 Hz by default) on CLOCK_MONOTONIC.
 *
 * The platform half (memsample-linux.c via /proc, memsample-darwin.c via
 * host_statistics64 and proc_pid_rusage) answers three questions behind
 * one interface; the sampler here is portable. The sampler can be driven
 * from an event loop (memsampler_tick) or run in its own thread
 * (memsampler_start/memsampler_stop), never both. Never prints.
 */
#ifndef WARDEN_MEMSAMPLE_H
#define WARDEN_MEMSAMPLE_H

#include <sys/types.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* --- platform interface --- */

/* System memory in use and installed, in bytes (Linux: MemTotal minus
 * MemAvailable; macOS: app + wired + compressed pages). */
struct werr *memsample_system(uint64_t *used, uint64_t *total);

/*
 * Resident bytes summed over every process of the tree rooted at root:
 * the members of process group root and all descendants of root (macOS:
 * phys_footprint). nprocs counts them. A vanished root gives 0, 0.
 */
struct werr *memsample_tree(pid_t root, uint64_t *bytes, unsigned *nprocs);

/*
 * Does a process of the tree rooted at root hold the listening TCP socket
 * of port? 1 yes, 0 no (another process, or nobody), -1 cannot tell on
 * this platform.
 */
int memsample_tree_listens(pid_t root, int port);

/*
 * The processes whose standard output is a file under dir (their log):
 * how a resumed campaign finds the engines of a warden killed with -9.
 * *pids is allocated (caller frees); none where the platform cannot tell.
 */
struct werr *memsample_procs_logging_under(const char *dir, pid_t **pids,
    size_t *n);

/* The GPU working-set hint (Metal recommendedMaxWorkingSetSize), or 0
 * where there is none. */
uint64_t memsample_gpu_hint(void);

/* --- the sampler --- */

struct mem_sample {
	uint64_t t_ns;		/* CLOCK_MONOTONIC */
	uint64_t system_used;	/* bytes */
	uint64_t engine_rss;	/* bytes, whole process tree */
	unsigned engine_procs;
};

struct memsampler {
	pid_t root;
	uint64_t interval_ns;
	uint64_t next_ns;
	uint64_t system_total;
	uint64_t peak_system;
	uint64_t peak_engine;
	struct mem_sample *samples;
	size_t n, cap;
	unsigned errors;	/* samples the platform could not take */

	/* thread mode */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int running, stopping;
};

/* interval_ms of 0 means the default, 1000. */
void memsampler_init(struct memsampler *s, pid_t root, unsigned interval_ms);
/* Take a sample now, whatever the schedule. */
void memsampler_sample(struct memsampler *s, uint64_t now_ns);
/* Take a sample if one is due at now_ns; 1 if one was taken. */
int memsampler_tick(struct memsampler *s, uint64_t now_ns);
/* Sample in a thread of its own until memsampler_stop(). */
struct werr *memsampler_start(struct memsampler *s);
/* Stop the thread (if any) and take a last sample. */
void memsampler_stop(struct memsampler *s);
void memsampler_free(struct memsampler *s);

#endif
