/*
 * sockwait.c - see sockwait.h. Both back ends keep a table from socket
 * number to its slot, so registering, changing and removing are O(1) and
 * the caller keeps no per-socket state. Never prints.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/epoll.h>
#endif

#include "sockwait.h"
#include "util.h"

struct sockwait {
	int epfd;			/* -1: the poll(2) back end */
	/* poll: the watched set; slot[fd] is its index + 1, 0: absent.
	 * epoll: slot[fd] is 1 when registered. */
	struct pollfd *pfds;
	size_t npfds, cappfds;
	size_t *slot;
	size_t nslot;
	struct sockwait_ready *ready;
	size_t capready;
	int grow;			/* the last epoll batch was full */
#ifdef __linux__
	struct epoll_event *events;
#endif
};

static void
slot_reserve(struct sockwait *w, int fd)
{
	size_t n = w->nslot;

	if ((size_t)fd < n)
		return;
	while (n <= (size_t)fd)
		n = n != 0 ? n * 2 : 256;
	w->slot = xrealloc(w->slot, n * sizeof(*w->slot));
	memset(w->slot + w->nslot, 0, (n - w->nslot) * sizeof(*w->slot));
	w->nslot = n;
}

static void
ready_reserve(struct sockwait *w, size_t n)
{
	if (n <= w->capready)
		return;
	w->capready = n;
	w->ready = xrealloc(w->ready, n * sizeof(*w->ready));
#ifdef __linux__
	if (w->epfd != -1)
		w->events = xrealloc(w->events, n * sizeof(*w->events));
#endif
}

struct werr *
sockwait_new(struct sockwait **out, int portable)
{
	struct sockwait *w = xcalloc(1, sizeof(*w));

	w->epfd = -1;
#ifdef __linux__
	if (!portable && (w->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		free(w);
		return werr_errno("epoll_create1", NULL);
	}
#else
	(void)portable;
#endif
	ready_reserve(w, 64);
	*out = w;
	return NULL;
}

void
sockwait_free(struct sockwait *w)
{
	if (w == NULL)
		return;
	if (w->epfd != -1)
		close(w->epfd);
	free(w->pfds);
	free(w->slot);
	free(w->ready);
#ifdef __linux__
	free(w->events);
#endif
	free(w);
}

const char *
sockwait_kind(const struct sockwait *w)
{
	return w->epfd != -1 ? "epoll" : "poll";
}

#ifdef __linux__
static int
epoll_set(struct sockwait *w, int fd, unsigned events)
{
	struct epoll_event ev;
	int op = w->slot[fd] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

	memset(&ev, 0, sizeof(ev));
	/* edge-triggered (sockwait.h): a socket read to its end is not
	 * looked at again, as a level-triggered one is at every wait */
	ev.events = ((events & SOCKWAIT_IN) ? EPOLLIN | EPOLLRDHUP : 0) |
	    ((events & SOCKWAIT_OUT) ? EPOLLOUT : 0) | EPOLLET;
	ev.data.fd = fd;
	if (epoll_ctl(w->epfd, op, fd, &ev) != 0) {
		/* a socket closed and reused under the same number */
		if (op == EPOLL_CTL_MOD && errno == ENOENT)
			op = EPOLL_CTL_ADD;
		else if (op == EPOLL_CTL_ADD && errno == EEXIST)
			op = EPOLL_CTL_MOD;
		else
			return -1;
		if (epoll_ctl(w->epfd, op, fd, &ev) != 0)
			return -1;
	}
	w->slot[fd] = 1;
	return 0;
}
#endif

int
sockwait_set(struct sockwait *w, int fd, unsigned events)
{
	size_t i;

	if (fd < 0)
		return -1;
	slot_reserve(w, fd);
#ifdef __linux__
	if (w->epfd != -1)
		return epoll_set(w, fd, events);
#endif
	if (w->slot[fd] == 0) {
		if (w->npfds == w->cappfds) {
			w->cappfds = w->cappfds != 0 ? w->cappfds * 2 : 64;
			w->pfds = xrealloc(w->pfds,
			    w->cappfds * sizeof(*w->pfds));
		}
		i = w->npfds++;
		w->pfds[i].fd = fd;
		w->slot[fd] = i + 1;
	} else
		i = w->slot[fd] - 1;
	w->pfds[i].events = (short)(((events & SOCKWAIT_IN) ? POLLIN : 0) |
	    ((events & SOCKWAIT_OUT) ? POLLOUT : 0));
	w->pfds[i].revents = 0;
	return 0;
}

void
sockwait_del(struct sockwait *w, int fd)
{
	size_t i;

	if (fd < 0 || (size_t)fd >= w->nslot || w->slot[fd] == 0)
		return;
#ifdef __linux__
	if (w->epfd != -1) {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
		w->slot[fd] = 0;
		return;
	}
#endif
	i = w->slot[fd] - 1;
	w->slot[fd] = 0;
	if (i != --w->npfds) {
		w->pfds[i] = w->pfds[w->npfds];
		w->slot[w->pfds[i].fd] = i + 1;
	}
}

int
sockwait_wait(struct sockwait *w, int timeout_ms,
    const struct sockwait_ready **ready)
{
	size_t i, n = 0;
	int rc;

#ifdef __linux__
	if (w->epfd != -1) {
		if (w->grow) {
			ready_reserve(w, w->capready * 2);
			w->grow = 0;
		}
		*ready = w->ready;
		rc = epoll_wait(w->epfd, w->events, (int)w->capready,
		    timeout_ms);
		for (i = 0; rc > 0 && i < (size_t)rc; i++) {
			uint32_t e = w->events[i].events;

			w->ready[i].fd = w->events[i].data.fd;
			w->ready[i].flags =
			    ((e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
			    EPOLLERR)) ? SOCKWAIT_IN : 0) |
			    ((e & EPOLLOUT) ? SOCKWAIT_OUT : 0) |
			    ((e & EPOLLERR) ? SOCKWAIT_ERR : 0) |
			    ((e & (EPOLLRDHUP | EPOLLHUP)) ? SOCKWAIT_HUP : 0);
		}
		/* a full batch: make room for more next time */
		w->grow = rc > 0 && (size_t)rc == w->capready;
		return rc > 0 ? rc : 0;
	}
#endif
	rc = poll(w->pfds, (nfds_t)w->npfds, timeout_ms);
	if (rc <= 0)
		return 0;
	ready_reserve(w, w->npfds);
	*ready = w->ready;
	/* a copy: the caller may change the set while it works through it */
	for (i = 0; i < w->npfds; i++) {
		short re = w->pfds[i].revents;

		if (re == 0)
			continue;
		w->ready[n].fd = w->pfds[i].fd;
		w->ready[n].flags =
		    ((re & (POLLIN | POLLHUP | POLLERR)) ? SOCKWAIT_IN : 0) |
		    ((re & POLLOUT) ? SOCKWAIT_OUT : 0) |
		    ((re & (POLLERR | POLLNVAL)) ? SOCKWAIT_ERR : 0) |
		    ((re & POLLHUP) ? SOCKWAIT_HUP : 0);
		n++;
	}
	return (int)n;
}
