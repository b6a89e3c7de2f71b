/*
 * sockwait.h - wait for readiness on a changing set of sockets: the load
 * generator's only platform code. On Linux epoll(7), whose cost follows
 * the sockets that are ready rather than all that are watched (at c=1024
 * poll(2) spent most of the client's kernel time walking idle sockets);
 * elsewhere, or when asked, poll(2), so the portable path stays tested on
 * Linux too. epoll is edge-triggered: a socket is listed when it becomes
 * ready (new bytes, room to send, a hang-up), and again only after that
 * or after sockwait_set; so the caller reads until a read comes back
 * short or would block, or reads on without waiting (poll(2), level-
 * triggered, lists it anyway). Never prints.
 */
#ifndef WARDEN_SOCKWAIT_H
#define WARDEN_SOCKWAIT_H

#include "error.h"

#define SOCKWAIT_IN	0x1
#define SOCKWAIT_OUT	0x2
#define SOCKWAIT_ERR	0x4
/* the peer hung up (sent its FIN): with epoll's edge, a short read is then
 * not the end of what there is to read, the end of the stream is still
 * to come, with no further edge for it */
#define SOCKWAIT_HUP	0x8

struct sockwait;

struct sockwait_ready {
	int fd;
	unsigned flags;		/* SOCKWAIT_*; IN also on hang-up (with
				   HUP), so the reader sees the end of the
				   stream */
};

/* portable: use poll(2) even where epoll exists. */
struct werr *sockwait_new(struct sockwait **out, int portable);
void sockwait_free(struct sockwait *w);
/* "epoll" or "poll" */
const char *sockwait_kind(const struct sockwait *w);

/* Watch fd for events (SOCKWAIT_IN | SOCKWAIT_OUT; 0 keeps it registered
 * with none), adding it if new. Returns 0, or -1 if the kernel refused. */
int sockwait_set(struct sockwait *w, int fd, unsigned events);
/* Stop watching fd (before it is closed). */
void sockwait_del(struct sockwait *w, int fd);
/* Wait up to timeout_ms (0: do not block) and return how many sockets are
 * ready, listed in *ready until the next call; 0 on timeout or signal. */
int sockwait_wait(struct sockwait *w, int timeout_ms,
    const struct sockwait_ready **ready);

#endif
