/*
 * loadgen-target.c - where the load generator's requests go: the URL read
 * by libcurl's URL parser (plain http:// only), the address resolved once
 * before any worker runs, and the fixed head of every request. Never
 * prints.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "buf.h"
#include "loadgen-private.h"
#include "util.h"

static char *
url_part(CURLU *u, CURLUPart what)
{
	char *v = NULL, *copy;

	if (curl_url_get(u, what, &v, 0) != CURLUE_OK || v == NULL)
		return NULL;
	copy = xstrdup(v);
	curl_free(v);
	return copy;
}

/* The path and query of url ("/" when it has none), or NULL. */
static struct werr *
url_parse(const char *url, char **host, char **port, char **path)
{
	CURLU *u = curl_url();
	char *scheme, *query;
	struct werr *err = NULL;

	*host = *port = *path = NULL;
	if (u == NULL)
		return werr_new(WEXIT_ENV, "out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		return werr_new(WEXIT_INPUT, "bad url '%s'", url);
	}
	scheme = url_part(u, CURLUPART_SCHEME);
	if (scheme == NULL || strcmp(scheme, "http") != 0)
		err = werr_new(WEXIT_INPUT, "bad url '%s': the load generator "
		    "speaks plain http:// to the engine", url);
	free(scheme);
	if (err == NULL) {
		*host = url_part(u, CURLUPART_HOST);
		*port = url_part(u, CURLUPART_PORT);
		if (*port == NULL)
			*port = xstrdup("80");
		*path = url_part(u, CURLUPART_PATH);
		if (*path == NULL)
			*path = xstrdup("/");
		if ((query = url_part(u, CURLUPART_QUERY)) != NULL) {
			char *pq = xasprintf("%s?%s", *path, query);

			free(*path);
			free(query);
			*path = pq;
		}
		if (*host == NULL)
			err = werr_new(WEXIT_INPUT, "bad url '%s': no host",
			    url);
	}
	curl_url_cleanup(u);
	return err;
}

/* Does a connection to ai open within 2 s? (Only asked when the host
 * has more than one address: "localhost" may give ::1 first to an engine
 * that listens on 127.0.0.1 alone, and libcurl would have tried the
 * next.) */
static int
addr_answers(const struct addrinfo *ai)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, ok = 0;

	if ((fd = socket(ai->ai_family, SOCK_STREAM, 0)) < 0)
		return 0;
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		ok = 1;
	else if (errno == EINPROGRESS) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 2000) == 1 && getsockopt(fd, SOL_SOCKET,
		    SO_ERROR, &err, &len) == 0 && err == 0)
			ok = 1;
	}
	close(fd);
	return ok;
}

struct werr *
lg_target_new(const struct loadgen_config *cfg, struct lg_target **out)
{
	struct lg_target *t;
	struct addrinfo hints, *ai = NULL, *pick;
	char *host, *port, *path, *ppath = NULL, *hh, *h2, *p2, *bare;
	const char *const *h;
	struct buf b = BUF_INIT;
	struct werr *err;
	size_t n;
	int rc;

	*out = NULL;
	if ((err = url_parse(cfg->url, &host, &port, &path)) != NULL)
		return err;
	/* an IPv6 literal comes back in brackets */
	bare = host;
	n = strlen(host);
	if (n > 2 && host[0] == '[' && host[n - 1] == ']')
		bare = xasprintf("%.*s", (int)(n - 2), host + 1);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(bare, port, &hints, &ai);
	if (rc != 0 || ai == NULL) {
		err = werr_new(WEXIT_INPUT, "bad url '%s': cannot resolve "
		    "'%s': %s", cfg->url, bare, gai_strerror(rc));
		goto out;
	}
	if (cfg->preconnect_url != NULL &&
	    (err = url_parse(cfg->preconnect_url, &h2, &p2, &ppath)) != NULL)
		goto out;
	if (cfg->preconnect_url != NULL) {
		free(h2);
		free(p2);
	}
	pick = ai;
	if (ai->ai_next != NULL)
		for (pick = ai; pick != NULL && !addr_answers(pick);
		    pick = pick->ai_next)
			;
	if (pick == NULL)
		pick = ai;	/* none answers: the requests will say so */
	t = xcalloc(1, sizeof(*t));
	memcpy(&t->addr, pick->ai_addr, pick->ai_addrlen);
	t->addrlen = (socklen_t)pick->ai_addrlen;
	t->host = xasprintf("%s port %s", host, port);
	hh = strcmp(port, "80") == 0 ? xstrdup(host) :
	    xasprintf("%s:%s", host, port);
	buf_printf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: text/event-stream\r\n", path, hh);
	for (h = cfg->headers; h != NULL && *h != NULL; h++) {
		n = strlen(*h);
		if (n == 0 || (*h)[n - 1] == ':')
			continue;	/* "Name:" drops a header, as libcurl */
		buf_printf(&b, "%s\r\n", *h);
	}
	t->head = xstrdup(buf_cstr(&b));
	if (ppath != NULL)
		t->pre_request = xasprintf("GET %s HTTP/1.1\r\nHost: %s\r\n"
		    "\r\n", ppath, hh);
	free(hh);
	*out = t;
out:
	if (ai != NULL)
		freeaddrinfo(ai);
	if (bare != host)
		free(bare);
	free(host);
	free(port);
	free(path);
	free(ppath);
	buf_free(&b);
	return err;
}

void
lg_target_free(struct lg_target *t)
{
	if (t == NULL)
		return;
	free(t->host);
	free(t->head);
	free(t->pre_request);
	free(t);
}
