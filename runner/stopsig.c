/*
 * stopsig.c - catch the stop signals of a long command. See stopsig.h.
 * The handler only sets a flag (or, the second time, dies of the
 * signal): nothing else is safe in it.
 */
#include "config.h"

#include <string.h>

#include "stopsig.h"

volatile sig_atomic_t stopsig_flag;

static const int stop_signals[3] = { SIGINT, SIGTERM, SIGHUP };

/* The first signal asks the work to stop; a second one ends warden at
 * once (its engines hear SIGTERM through their parent-death signal). */
static void
on_stop_signal(int sig)
{
	if (stopsig_flag != 0) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stopsig_flag = sig;
}

void
stopsig_catch(struct stopsig_saved *s)
{
	struct sigaction sa;
	int i;

	stopsig_flag = 0;
	memset(s, 0, sizeof(*s));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++) {
		if (sigaction(stop_signals[i], NULL, &s->old[i]) != 0 ||
		    (s->old[i].sa_handler == SIG_IGN && stop_signals[i] != SIGTERM))
			continue;
		if (sigaction(stop_signals[i], &sa, NULL) == 0)
			s->set[i] = 1;
	}
}

void
stopsig_restore(struct stopsig_saved *s)
{
	int i;

	for (i = 0; i < 3; i++)
		if (s->set[i])
			(void)sigaction(stop_signals[i], &s->old[i], NULL);
}
