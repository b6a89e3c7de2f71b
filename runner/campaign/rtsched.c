/*
 * rtsched.c - the measuring thread's scheduling, see rtsched.h. The
 * platform code is the three small blocks below; each falls through to
 * "normal" when it is refused. Never prints.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#ifdef __APPLE__
#include <pthread/qos.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "rtsched.h"

enum { RTSCHED_NORMAL = 0, RTSCHED_FIFO, RTSCHED_NICE, RTSCHED_QOS };

#define RTSCHED_NICE_VALUE (-10)

#ifndef __APPLE__
static int
raise_fifo(struct rtsched_saved *s)
{
	struct sched_param p;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &p) != 0)
		return 0;
	s->policy = policy;
	s->priority = p.sched_priority;
	memset(&p, 0, sizeof(p));
	p.sched_priority = 1;
#if defined(__linux__) && defined(SCHED_RESET_ON_FORK)
	/* A process started from this thread (none should be) must not
	 * inherit real-time scheduling. pid 0: the calling thread. */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) == 0)
		return 1;
	return 0;
#else
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
#endif
}
#endif

#ifdef __linux__
static int
raise_nice(struct rtsched_saved *s)
{
	id_t tid = (id_t)syscall(SYS_gettid);
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, tid);
	if (old == -1 && errno != 0)
		return 0;
	if (old <= RTSCHED_NICE_VALUE)
		return 0;
	s->priority = old;
	/* On Linux this names the thread, not the process. */
	return setpriority(PRIO_PROCESS, tid, RTSCHED_NICE_VALUE) == 0;
}
#endif

const char *
rtsched_raise(struct rtsched_saved *s)
{
	memset(s, 0, sizeof(*s));
#ifdef __APPLE__
	{
		qos_class_t cls;
		int rel;

		/* Darwin's answer for latency-critical work is a QoS class
		 * (<sys/qos.h>: QOS_CLASS_USER_INTERACTIVE, "work that is
		 * interacting with the user"), not SCHED_FIFO: a call to
		 * pthread_setschedparam opts the thread out of the QoS
		 * system for good (<pthread/qos.h>,
		 * pthread_set_qos_class_self_np). */
		if (pthread_get_qos_class_np(pthread_self(), &cls, &rel) == 0 &&
		    pthread_set_qos_class_self_np(QOS_CLASS_USER_INTERACTIVE,
		    0) == 0) {
			s->how = RTSCHED_QOS;
			s->policy = (int)cls;
			s->priority = rel;
			return "qos_user_interactive";
		}
		return "normal";
	}
#else
	if (raise_fifo(s)) {
		s->how = RTSCHED_FIFO;
		return "fifo";
	}
#ifdef __linux__
	if (raise_nice(s)) {
		s->how = RTSCHED_NICE;
		return "nice";
	}
#endif
	return "normal";
#endif
}

void
rtsched_restore(const struct rtsched_saved *s)
{
	switch (s->how) {
#ifdef __APPLE__
	case RTSCHED_QOS:
		/* A thread that never asked for a class reads
		 * QOS_CLASS_UNSPECIFIED, which the setter refuses (EINVAL,
		 * <pthread/qos.h>): such a thread goes back to
		 * QOS_CLASS_DEFAULT, its relative priority 0. */
		if ((qos_class_t)s->policy == QOS_CLASS_UNSPECIFIED)
			pthread_set_qos_class_self_np(QOS_CLASS_DEFAULT, 0);
		else
			pthread_set_qos_class_self_np((qos_class_t)s->policy,
			    s->priority);
		break;
#else
	case RTSCHED_FIFO: {
		struct sched_param p;

		memset(&p, 0, sizeof(p));
		p.sched_priority = s->priority;
		pthread_setschedparam(pthread_self(), s->policy, &p);
		break;
	}
#endif
#ifdef __linux__
	case RTSCHED_NICE:
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
		    s->priority);
		break;
#endif
	default:
		break;
	}
}
