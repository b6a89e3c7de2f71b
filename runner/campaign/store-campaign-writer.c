/*
 * store-campaign-writer.c - the asynchronous request writer of the
 * campaign tables: a thread that commits request rows in batches through
 * store_campaign_requests_add(). See store-campaign.h for the contract.
 *
 * It must never touch SQL itself (that is store-campaign.c) and must
 * never block its caller on a database commit. Never prints.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store-campaign.h"
#include "util.h"

/* ---- the request writer ----
 * Rows are written by a thread of their own, so a database commit never
 * stalls the load generator's event loop (and with it the timestamps of
 * the other requests in flight). Each row is queued the moment its
 * request ends and committed at most WRITER_DELAY_MS later, together with
 * the rows of the requests that ended meanwhile: requests of a closed
 * loop tend to end in bursts, and one commit per burst keeps the writer
 * from competing with the event loop for a core while the burst is read.
 * (A kill loses at most that much; the interrupted sweep is re-run on
 * resume anyway.) */

#define WRITER_DELAY_MS 100

struct queued {
	struct queued *next;
	struct loadgen_record rec;
	const char *prompt_id;
};

struct store_campaign_writer {
	struct store *store;
	int64_t sweep_id;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct queued *head, *tail;
	int closing;
	struct werr *err;
};

static void
queued_free(struct queued *q)
{
	free((char *)q->rec.finish_reason);
	free((char *)q->rec.error);
	free((uint64_t *)q->rec.token_ns);
	free(q);
}

/* Write a batch: every row that was queued when the thread woke. */
static struct werr *
writer_batch(struct store_campaign_writer *w, struct queued *q)
{
	const struct loadgen_record **recs;
	const char **ids;
	struct queued *p;
	struct werr *err;
	size_t n = 0;

	for (p = q; p != NULL; p = p->next)
		n++;
	recs = xcalloc(n, sizeof(*recs));
	ids = xcalloc(n, sizeof(*ids));
	for (n = 0, p = q; p != NULL; p = p->next, n++) {
		recs[n] = &p->rec;
		ids[n] = p->prompt_id;
	}
	err = store_campaign_requests_add(w->store, w->sweep_id, recs, ids, n);
	free(recs);
	free(ids);
	return err;
}

static void *
writer_main(void *arg)
{
	struct store_campaign_writer *w = arg;
	struct queued *q, *next;
	struct werr *err;

	struct timespec ts;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->head == NULL && !w->closing)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->closing) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += WRITER_DELAY_MS * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			while (!w->closing && pthread_cond_timedwait(&w->cond,
			    &w->lock, &ts) == 0)
				;
		}
		if ((q = w->head) == NULL)
			break;
		w->head = w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		err = w->err != NULL ? NULL : writer_batch(w, q);
		for (; q != NULL; q = next) {
			next = q->next;
			queued_free(q);
		}
		pthread_mutex_lock(&w->lock);
		if (err != NULL && w->err == NULL)
			w->err = err;
		else
			werr_free(err);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct werr *
store_campaign_writer_start(struct store_campaign_writer **out,
    struct store *store, int64_t sweep_id)
{
	struct store_campaign_writer *w;
	int rc;

	*out = NULL;
	w = xcalloc(1, sizeof(*w));
	w->store = store;
	w->sweep_id = sweep_id;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if ((rc = pthread_create(&w->thread, NULL, writer_main, w)) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		errno = rc;
		return werr_errno("pthread_create", NULL);
	}
	*out = w;
	return NULL;
}

/* Queue a row; the writer is woken by the first row of a batch only. */
void
store_campaign_writer_push(struct store_campaign_writer *w,
    const struct loadgen_record *r, const char *id)
{
	struct queued *q = xcalloc(1, sizeof(*q));

	q->rec = *r;
	q->rec.finish_reason = r->finish_reason ? xstrdup(r->finish_reason) : NULL;
	q->rec.error = r->error ? xstrdup(r->error) : NULL;
	q->rec.token_ns = NULL;
	q->rec.ntoken_ns = 0;
	if (r->ntoken_ns > 0 && r->token_ns != NULL) {
		uint64_t *t = xcalloc(r->ntoken_ns, sizeof(*t));

		memcpy(t, r->token_ns, r->ntoken_ns * sizeof(*t));
		q->rec.token_ns = t;
		q->rec.ntoken_ns = r->ntoken_ns;
	}
	q->prompt_id = id;
	pthread_mutex_lock(&w->lock);
	if (w->tail != NULL) {
		w->tail->next = q;
	} else {
		w->head = q;
		pthread_cond_signal(&w->cond);
	}
	w->tail = q;
	pthread_mutex_unlock(&w->lock);
}

/* Write what is queued, stop the thread; the first error, if any. */
struct werr *
store_campaign_writer_finish(struct store_campaign_writer *w)
{
	struct werr *err;

	pthread_mutex_lock(&w->lock);
	w->closing = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	err = w->err;
	free(w);
	return err;
}
