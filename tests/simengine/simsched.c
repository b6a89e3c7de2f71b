/*
 * simsched.c - the serving model: steps, batches, KV accounting. See simsched.h.
 *
 * Pure computation over the caller's clock. Must never read the time,
 * sleep, print, or touch real memory: the engine does those from the
 * numbers this file keeps.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "simsched.h"
#include "util.h"

void
simsched_init(struct simsched *s, const struct simsched_params *p)
{
	memset(s, 0, sizeof(*s));
	s->p = *p;
	if (s->p.max_batch < 1)
		s->p.max_batch = 1;
	if (s->p.mode == SIMSCHED_SERIAL)
		s->p.max_batch = 1;
	s->active = xcalloc((size_t)s->p.max_batch, sizeof(*s->active));
}

void
simsched_free(struct simsched *s)
{
	free(s->active);
	s->active = NULL;
}

uint64_t
simsched_itl_ns(const struct simsched_params *p, int n)
{
	double f;

	if (n < 1)
		n = 1;
	f = 1.0 + p->itl_growth * (double)(n - 1);
	return (uint64_t)((double)p->itl_ns * f + 0.5);
}

uint64_t
simsched_prefill_ns(const struct simsched_params *p, uint64_t tokens)
{
	if (p->prefill_rate <= 0.0)
		return 0;
	return (uint64_t)((double)tokens * 1e9 / p->prefill_rate + 0.5);
}

uint64_t
simsched_kv_resident(const struct simsched *s)
{
	if (s->p.mem_policy == SIMSCHED_MEM_RETAIN)
		return s->kv_peak;
	return s->kv_used;
}

int
simsched_waiting(const struct simsched *s)
{
	const struct simsched_req *r;
	int n = 0;

	for (r = s->head; r != NULL; r = r->next)
		n++;
	return n;
}

void
simsched_submit(struct simsched *s, struct simsched_req *r, uint64_t now)
{
	r->state = SIMSCHED_REQ_WAITING;
	r->tokens_ready = 0;
	r->submit_ns = now;
	r->admit_ns = 0;
	r->first_token_ns = 0;
	r->done_ns = 0;
	r->prefilled = 0;
	r->kv_base = 0;
	r->next = NULL;
	if (s->tail != NULL)
		s->tail->next = r;
	else
		s->head = r;
	s->tail = r;
}

static void
kv_add(struct simsched *s, uint64_t tokens)
{
	s->kv_used += tokens * s->p.kv_bytes_per_token;
	if (s->kv_used > s->kv_peak)
		s->kv_peak = s->kv_used;
}

static uint64_t
kv_reservation(const struct simsched *s, const struct simsched_req *r)
{
	return ((uint64_t)r->kv_base + (uint64_t)r->target_tokens) *
	    s->p.kv_bytes_per_token;
}

/* Take r out of the active set and give its memory back. */
static void
release(struct simsched *s, struct simsched_req *r)
{
	int i;

	for (i = 0; i < s->nactive; i++) {
		if (s->active[i] != r)
			continue;
		memmove(&s->active[i], &s->active[i + 1],
		    (size_t)(s->nactive - i - 1) * sizeof(*s->active));
		s->nactive--;
		break;
	}
	s->kv_used -= ((uint64_t)r->kv_base + (uint64_t)r->tokens_ready) *
	    s->p.kv_bytes_per_token;
	s->kv_reserved -= kv_reservation(s, r);
}

void
simsched_cancel(struct simsched *s, struct simsched_req *r)
{
	struct simsched_req **pp, *prev = NULL;

	if (r->state == SIMSCHED_REQ_WAITING) {
		for (pp = &s->head; *pp != NULL; prev = *pp, pp = &(*pp)->next) {
			if (*pp != r)
				continue;
			*pp = r->next;
			if (s->tail == r)
				s->tail = prev;
			break;
		}
	} else if (r->state == SIMSCHED_REQ_ACTIVE)
		release(s, r);
	r->next = NULL;
	r->state = SIMSCHED_REQ_DONE;
}

/* Does the memory policy let a request of that reservation in now? */
static int
mem_admits(const struct simsched *s, uint64_t extra)
{
	if (s->p.mem_policy != SIMSCHED_MEM_BOUNDED || s->nactive == 0)
		return 1;
	return s->kv_reserved + extra <= s->p.kv_cap_bytes;
}

static struct simsched_req *
pop_head(struct simsched *s)
{
	struct simsched_req *r = s->head;

	s->head = r->next;
	if (s->head == NULL)
		s->tail = NULL;
	r->next = NULL;
	return r;
}

static void
admit(struct simsched *s, struct simsched_req *r, int kv_base, uint64_t t)
{
	r->state = SIMSCHED_REQ_ACTIVE;
	r->admit_ns = t;
	r->kv_base = kv_base;
	s->active[s->nactive++] = r;
	s->kv_reserved += kv_reservation(s, r);
	kv_add(s, (uint64_t)kv_base);
}

/* Admit waiting requests (submitted by t) into free slots. Returns the
 * number admitted and adds their prompt tokens to *prompt_sum. */
static int
admit_packed(struct simsched *s, uint64_t t, uint64_t *prompt_sum)
{
	struct simsched_req *r;
	int n = 0;

	while (s->head != NULL && s->nactive < s->p.max_batch) {
		r = s->head;
		if (r->submit_ns > t)
			break;
		if (!mem_admits(s, ((uint64_t)r->prompt_tokens +
		    (uint64_t)r->target_tokens) * s->p.kv_bytes_per_token))
			break;
		admit(s, pop_head(s), r->prompt_tokens, t);
		*prompt_sum += (uint64_t)r->prompt_tokens;
		n++;
	}
	return n;
}

/* Form a padded batch from the head of the queue. Returns its size and
 * sets *padded to the longest prompt in it. */
static int
admit_padded(struct simsched *s, uint64_t t, int *padded)
{
	struct simsched_req *r;
	int n = 0, longest = 0, most = 0, i, p, m;

	for (r = s->head; r != NULL && n < s->p.max_batch; r = r->next) {
		if (r->submit_ns > t)
			break;
		p = r->prompt_tokens > longest ? r->prompt_tokens : longest;
		m = r->target_tokens > most ? r->target_tokens : most;
		if (n > 0 && s->p.mem_policy == SIMSCHED_MEM_BOUNDED &&
		    (uint64_t)(n + 1) * ((uint64_t)p + (uint64_t)m) *
		    s->p.kv_bytes_per_token > s->p.kv_cap_bytes)
			break;
		longest = p;
		most = m;
		n++;
	}
	for (i = 0; i < n; i++)
		admit(s, pop_head(s), longest, t);
	*padded = longest;
	return n;
}

static int
count_decoding(const struct simsched *s)
{
	int i, n = 0;

	for (i = 0; i < s->nactive; i++)
		if (s->active[i]->prefilled)
			n++;
	return n;
}

/* Choose and start the step beginning at t. Returns 0 if idle. */
static int
begin_step(struct simsched *s, uint64_t t)
{
	uint64_t dur = 0, prompt_sum = 0;
	int decoding, newly = 0, padded = 0;

	decoding = count_decoding(s);
	switch (s->p.mode) {
	case SIMSCHED_SERIAL:
	case SIMSCHED_CONTINUOUS:
		if (s->p.mode == SIMSCHED_CONTINUOUS || s->nactive == 0)
			newly = admit_packed(s, t, &prompt_sum);
		dur = simsched_prefill_ns(&s->p, prompt_sum);
		break;
	case SIMSCHED_PADDED:
		if (s->nactive == 0)
			newly = admit_padded(s, t, &padded);
		dur = simsched_prefill_ns(&s->p,
		    (uint64_t)newly * (uint64_t)padded);
		if (newly > 0)
			decoding = 0;
		break;
	}
	if (newly == 0 && decoding == 0)
		return 0;
	if (decoding > 0)
		dur += simsched_itl_ns(&s->p, decoding);
	s->in_step = 1;
	s->step_end = t + dur;
	return 1;
}

static void
finish(struct simsched *s, struct simsched_req *r)
{
	release(s, r);
	r->state = SIMSCHED_REQ_DONE;
	r->done_ns = s->step_end;
}

/* Apply the effects of the step that just ended. */
static void
end_step(struct simsched *s)
{
	struct simsched_req *r;
	int i;

	s->in_step = 0;
	s->clock = s->step_end;
	s->steps++;
	s->step_changed = 1;
	for (i = 0; i < s->nactive; i++) {
		r = s->active[i];
		if (r->tokens_ready < r->target_tokens) {
			r->tokens_ready++;
			kv_add(s, 1);
			if (r->first_token_ns == 0)
				r->first_token_ns = s->step_end;
		}
		r->prefilled = 1;
		if (r->tokens_ready >= r->target_tokens) {
			finish(s, r);
			i--;
		}
	}
}

uint64_t
simsched_advance(struct simsched *s, uint64_t now)
{
	uint64_t t;

	s->step_changed = 0;
	for (;;) {
		if (s->in_step) {
			if (s->step_end > now)
				return s->step_end;
			end_step(s);
		}
		t = s->clock;
		if (s->nactive == 0) {
			if (s->head == NULL)
				return SIMSCHED_IDLE;
			if (s->head->submit_ns > t)
				t = s->head->submit_ns;
			if (s->p.mode == SIMSCHED_PADDED &&
			    simsched_waiting(s) < s->p.max_batch &&
			    s->head->submit_ns + s->p.batch_window_ns > t)
				t = s->head->submit_ns + s->p.batch_window_ns;
			if (t > now)
				return t;
		}
		if (!begin_step(s, t))
			return SIMSCHED_IDLE;
	}
}
