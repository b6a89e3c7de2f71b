/*
 * stopsig.h - the stop signals of a long command (a campaign, a cycle):
 * SIGINT, SIGTERM and SIGHUP set a flag the work checks between its
 * steps, so it stops where it can resume; a second signal ends warden at
 * once. A signal ignored when warden started (nohup, a background job)
 * stays ignored, SIGTERM excepted. Only command files catch signals.
 */
#ifndef WARDEN_STOPSIG_H
#define WARDEN_STOPSIG_H

#include <signal.h>

/* The first stop signal's number since stopsig_catch(), else 0. */
extern volatile sig_atomic_t stopsig_flag;

struct stopsig_saved {
	struct sigaction old[3];
	int set[3];
};

/* Clear the flag and catch the stop signals; restore them after. */
void stopsig_catch(struct stopsig_saved *s);
void stopsig_restore(struct stopsig_saved *s);

#endif
