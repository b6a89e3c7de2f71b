/*
 * loadgen-private.h - what loadgen.c (the event loop) and
 * loadgen-summary.c (the summary maths and its JSON) share. Not for any
 * other module: the public interface is loadgen.h.
 *
 * The loop owns the sockets and the requests; the tally owns everything
 * that turns finished request records into a struct loadgen_summary. The
 * loop writes only the transport counters of the summary directly
 * (submitted, max_in_flight, reads, bytes) and the tally's start_ns.
 */
#ifndef WARDEN_LOADGEN_PRIVATE_H
#define WARDEN_LOADGEN_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "loadgen.h"
#include "stats.h"

#define LG_NS_PER_MS	1e6

/* The samples and counters of one sweep, folded in as requests end. */
struct lg_tally {
	struct loadgen_summary *sum;
	uint64_t start_ns;		/* first timed submission, 0: none */
	uint64_t last_end_ns;		/* latest end of a timed request */
	size_t done, ok;		/* timed requests ended, succeeded */
	struct rusage ru0;		/* at the start of the timed list */
	struct stats_samples ttft, tpot, itl, e2el, lag;
};

/* Take this thread's CPU times as the start of the timed part. */
void lg_tally_cpu_start(struct lg_tally *t);
/* Fold an ended request (warmup or timed) into the tally. */
void lg_tally_record(struct lg_tally *t, const struct loadgen_record *rec);
/* Fill the rest of the summary once the sweep is over: nbodies were
 * asked for; end_mono and end_real are the clocks read at the end. */
void lg_tally_finish(struct lg_tally *t, size_t nbodies, uint64_t end_mono,
    int64_t end_real);
void lg_tally_free(struct lg_tally *t);

#endif
