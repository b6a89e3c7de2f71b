/*
 * loadgen-stamp.c - when a read of the load generator happened.
 *
 * A read is timed by the moment its last packet reached the socket, as
 * the kernel stamped it, when the platform stamps TCP packets: a worker
 * that is late to read (busy, or descheduled on a loaded machine) then
 * does not make the engine look late. The stamp is CLOCK_REALTIME; it is
 * put on the monotonic clock by the two clocks' distance at the read.
 * Without a stamp the read is timed by the clock read as recv(2)
 * returned. Never prints.
 *
 * Linux stamps TCP (SO_TIMESTAMPNS, socket(7)). macOS does not: its
 * <sys/socket.h> declares SO_TIMESTAMP as "timestamp received dgram
 * traffic", and XNU adds the SCM_TIMESTAMP message only on the datagram
 * paths (ip_savecontrol, from UDP and raw input), never on TCP's. The
 * option is still asked there (setsockopt succeeds) and no message ever
 * comes: every read on a Mac is timed by the clock, kernel_stamped_reads
 * is 0 and receive_stamp "read".
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "loadgen-private.h"
#include "util.h"

#if defined(SO_TIMESTAMPNS) && defined(SCM_TIMESTAMPNS)
#define LG_STAMP_OPT	SO_TIMESTAMPNS
#define LG_STAMP_MSG	SCM_TIMESTAMPNS
typedef struct timespec lg_stamp_t;
#define LG_STAMP_NS(t)	((int64_t)(t).tv_sec * 1000000000ll + (t).tv_nsec)
#elif defined(SO_TIMESTAMP) && defined(SCM_TIMESTAMP)
#define LG_STAMP_OPT	SO_TIMESTAMP
#define LG_STAMP_MSG	SCM_TIMESTAMP
typedef struct timeval lg_stamp_t;
#define LG_STAMP_NS(t)	((int64_t)(t).tv_sec * 1000000000ll + \
			    (int64_t)(t).tv_usec * 1000)
#endif

void
lg_stamp_ask(int fd)
{
#ifdef LG_STAMP_OPT
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, LG_STAMP_OPT, &one, sizeof(one));
#else
	(void)fd;
#endif
}

/*
 * CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns, read as a pair with
 * nothing between them: the pair whose two monotonic reads lie closest
 * of three tries (a thread preempted between the reads would put the
 * stamps early by as long as it waited). Refreshed every loop pass, so
 * a step of the wall clock moves stamps for one pass at most.
 */
int64_t
lg_clock_offset(void)
{
	struct timespec rt;
	uint64_t m0, m1, best = UINT64_MAX;
	int64_t off = 0, real;
	int i;

	for (i = 0; i < 3; i++) {
		m0 = mono_ns();
		if (clock_gettime(CLOCK_REALTIME, &rt) != 0)
			return 0;
		m1 = mono_ns();
		real = (int64_t)rt.tv_sec * 1000000000ll + rt.tv_nsec;
		if (m1 - m0 < best) {
			best = m1 - m0;
			off = real - (int64_t)(m0 + (m1 - m0) / 2);
		}
		if (best < 2000)
			break;
	}
	return off;
}

/* The kernel's stamp of the read in mh on the monotonic clock, or 0 if
 * there is none (or it lies after now_mono, read after the read: the
 * wall clock stepped). */
uint64_t
lg_stamp_mono(const struct lg *lg, struct msghdr *mh, uint64_t now_mono)
{
#ifdef LG_STAMP_OPT
	struct cmsghdr *cm;
	lg_stamp_t t;
	int64_t mono;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != LG_STAMP_MSG)
			continue;
		memcpy(&t, CMSG_DATA(cm), sizeof(t));
		mono = LG_STAMP_NS(t) - lg->clock_offset;
		if (LG_STAMP_NS(t) <= 0 || lg->clock_offset == 0 ||
		    mono <= 0 || (uint64_t)mono > now_mono)
			return 0;
		return (uint64_t)mono;
	}
#else
	(void)lg;
	(void)mh;
	(void)now_mono;
#endif
	return 0;
}
