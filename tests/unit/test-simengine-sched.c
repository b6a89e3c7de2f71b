/*
 * test-simengine-sched.c - the simulated engine's serving model gives
 * exact, predictable timings: serial, padded and continuous batching,
 * ITL growth with batch size, slots, and KV memory under each policy.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "simsched.h"

#define MS 1000000ULL

static void
params(struct simsched_params *p, enum simsched_mode mode)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->prefill_rate = 1000;		/* 1 ms per prompt token */
	p->itl_ns = 10 * MS;
	p->itl_growth = 0.5;
	p->max_batch = 4;
}

static void
req(struct simsched_req *r, int prompt, int target)
{
	memset(r, 0, sizeof(*r));
	r->prompt_tokens = prompt;
	r->target_tokens = target;
}

/* Run virtual time until the engine is idle; returns the last step end. */
static uint64_t
drain(struct simsched *s, uint64_t t)
{
	uint64_t next;

	while ((next = simsched_advance(s, t)) != SIMSCHED_IDLE)
		t = next;
	return s->clock;
}

static void
test_itl_grows_with_decoders(void **state)
{
	struct simsched_params p;

	params(&p, SIMSCHED_CONTINUOUS);
	assert_int_equal(simsched_itl_ns(&p, 1), 10 * MS);
	assert_int_equal(simsched_itl_ns(&p, 4), 25 * MS);
	assert_int_equal(simsched_prefill_ns(&p, 250), 250 * MS);
	p.prefill_rate = 0;
	assert_int_equal(simsched_prefill_ns(&p, 250), 0);
}

static void
test_serial_serves_one_at_a_time(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req r[3];
	int i;

	params(&p, SIMSCHED_SERIAL);
	simsched_init(&s, &p);
	for (i = 0; i < 3; i++) {
		req(&r[i], 100, 5);
		simsched_submit(&s, &r[i], 0);
	}
	drain(&s, 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(r[i].state, SIMSCHED_REQ_DONE);
		assert_int_equal(r[i].tokens_ready, 5);
		assert_int_equal(r[i].first_token_ns, (uint64_t)(140 * i + 100) * MS);
		assert_int_equal(r[i].done_ns, (uint64_t)(140 * i + 140) * MS);
	}
	simsched_free(&s);
}

static void
test_padded_batch_pays_for_the_longest_prompt(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req r[5];
	const int prompt[5] = { 10, 20, 30, 100, 10 };
	int i;

	params(&p, SIMSCHED_PADDED);
	simsched_init(&s, &p);
	for (i = 0; i < 5; i++) {
		req(&r[i], prompt[i], i + 2);
		simsched_submit(&s, &r[i], 0);
	}
	drain(&s, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(r[i].first_token_ns, 400 * MS);
	/* decoders drop out one by one: 25, 20, 15, 10 ms steps */
	assert_int_equal(r[0].done_ns, 425 * MS);
	assert_int_equal(r[1].done_ns, 445 * MS);
	assert_int_equal(r[2].done_ns, 460 * MS);
	assert_int_equal(r[3].done_ns, 470 * MS);
	/* the fifth waits for the whole batch, then prefills alone */
	assert_int_equal(r[4].admit_ns, 470 * MS);
	assert_int_equal(r[4].first_token_ns, 480 * MS);
	simsched_free(&s);
}

static void
test_padded_batch_window_gathers_arrivals(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req r[4];
	const uint64_t at[4] = { 0, 2 * MS, 4 * MS, 8 * MS };
	uint64_t t = 0, next;
	int i = 0;

	params(&p, SIMSCHED_PADDED);
	p.batch_window_ns = 5 * MS;
	p.prefill_rate = 0;
	simsched_init(&s, &p);
	/* arrivals at 0, 2, 4 and 8 ms; the engine wakes when told to */
	for (;;) {
		while (i < 4 && at[i] <= t) {
			req(&r[i], 10, 2);
			simsched_submit(&s, &r[i], at[i]);
			i++;
		}
		next = simsched_advance(&s, t);
		if (next == SIMSCHED_IDLE && i == 4)
			break;
		if (i < 4 && (next == SIMSCHED_IDLE || at[i] < next))
			next = at[i];
		t = next;
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(r[i].admit_ns, 5 * MS);
	assert_int_equal(r[3].admit_ns, r[0].done_ns);
	simsched_free(&s);

	/* a full batch does not wait for the window */
	p.max_batch = 2;
	simsched_init(&s, &p);
	req(&r[0], 10, 2);
	req(&r[1], 10, 2);
	simsched_submit(&s, &r[0], 0);
	simsched_submit(&s, &r[1], 0);
	simsched_advance(&s, 0);
	assert_int_equal(r[0].state, SIMSCHED_REQ_ACTIVE);
	assert_int_equal(r[1].admit_ns, 0);
	simsched_free(&s);
}

static void
test_continuous_packs_prefill_and_fills_free_slots(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req r[5];
	const int prompt[5] = { 10, 20, 30, 100, 10 };
	int i;

	params(&p, SIMSCHED_CONTINUOUS);
	simsched_init(&s, &p);
	for (i = 0; i < 5; i++) {
		req(&r[i], prompt[i], i + 2);
		simsched_submit(&s, &r[i], 0);
	}
	drain(&s, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(r[i].first_token_ns, 160 * MS);
	assert_int_equal(r[0].done_ns, 185 * MS);
	/* slot 0 frees at 185: prefill of 10 tokens + decode step of 3 */
	assert_int_equal(r[4].admit_ns, 185 * MS);
	assert_int_equal(r[4].first_token_ns, 215 * MS);
	assert_int_equal(r[1].done_ns, 215 * MS);
	for (i = 0; i < 5; i++)
		assert_int_equal(r[i].tokens_ready, i + 2);
	simsched_free(&s);
}

static uint64_t
makespan(enum simsched_mode mode, int n)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req r[16];
	uint64_t end;
	int i;

	params(&p, mode);
	p.max_batch = 16;
	p.prefill_rate = 10000;
	p.itl_growth = 0.05;
	simsched_init(&s, &p);
	for (i = 0; i < n; i++) {
		req(&r[i], 20 + 37 * (i % 5) * (i % 3), 32);
		simsched_submit(&s, &r[i], 0);
	}
	end = drain(&s, 0);
	simsched_free(&s);
	return end;
}

static void
test_modes_scale_differently_with_concurrency(void **state)
{
	uint64_t serial = makespan(SIMSCHED_SERIAL, 16);
	uint64_t padded = makespan(SIMSCHED_PADDED, 16);
	uint64_t cont = makespan(SIMSCHED_CONTINUOUS, 16);

	/* one request: the three modes are the same engine */
	assert_int_equal(makespan(SIMSCHED_SERIAL, 1),
	    makespan(SIMSCHED_CONTINUOUS, 1));
	assert_int_equal(makespan(SIMSCHED_PADDED, 1),
	    makespan(SIMSCHED_CONTINUOUS, 1));
	/* sixteen: batching wins big, and padding costs extra prefill */
	assert_true(serial > 5 * cont);
	assert_true(padded > cont);
	assert_true(serial > padded);
}

static void
test_bounded_memory_queues_until_kv_frees(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a, b;

	params(&p, SIMSCHED_CONTINUOUS);
	p.kv_bytes_per_token = 1000;
	p.mem_policy = SIMSCHED_MEM_BOUNDED;
	p.kv_cap_bytes = 300000;
	simsched_init(&s, &p);
	req(&a, 100, 100);
	req(&b, 100, 100);
	simsched_submit(&s, &a, 0);
	simsched_submit(&s, &b, 0);
	simsched_advance(&s, 0);
	assert_int_equal(a.state, SIMSCHED_REQ_ACTIVE);
	assert_int_equal(b.state, SIMSCHED_REQ_WAITING);
	assert_int_equal(simsched_waiting(&s), 1);
	drain(&s, 0);
	assert_int_equal(b.admit_ns, a.done_ns);
	assert_true(s.kv_peak <= 300000);
	assert_int_equal(simsched_kv_resident(&s), 0);
	simsched_free(&s);
}

static void
test_kv_grows_per_token_and_policies_give_back_or_retain(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a;

	params(&p, SIMSCHED_CONTINUOUS);
	p.kv_bytes_per_token = 10;
	simsched_init(&s, &p);
	req(&a, 50, 20);
	simsched_submit(&s, &a, 0);
	simsched_advance(&s, 50 * MS);		/* prefill ends at 50 ms */
	assert_int_equal(a.tokens_ready, 1);
	assert_int_equal(s.kv_used, 510);
	simsched_advance(&s, 70 * MS);		/* two decode steps */
	assert_int_equal(s.kv_used, 530);
	drain(&s, 70 * MS);
	assert_int_equal(s.kv_peak, 700);
	assert_int_equal(simsched_kv_resident(&s), 0);
	simsched_free(&s);

	p.mem_policy = SIMSCHED_MEM_RETAIN;
	simsched_init(&s, &p);
	req(&a, 50, 20);
	simsched_submit(&s, &a, 0);
	drain(&s, 0);
	assert_int_equal(s.kv_used, 0);
	assert_int_equal(simsched_kv_resident(&s), 700);
	simsched_free(&s);
}

static void
test_padded_kv_is_sized_to_the_padded_length(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a, b;

	params(&p, SIMSCHED_PADDED);
	p.kv_bytes_per_token = 1;
	simsched_init(&s, &p);
	req(&a, 10, 5);
	req(&b, 100, 5);
	simsched_submit(&s, &a, 0);
	simsched_submit(&s, &b, 0);
	simsched_advance(&s, 200 * MS);
	/* 2 x 100 padded positions + one token each */
	assert_int_equal(s.kv_used, 202);
	simsched_free(&s);
}

static void
test_cancel_frees_the_slot_and_the_memory(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a, b, c;

	params(&p, SIMSCHED_SERIAL);
	p.kv_bytes_per_token = 1;
	simsched_init(&s, &p);
	req(&a, 10, 1000);
	req(&b, 10, 3);
	req(&c, 10, 3);
	simsched_submit(&s, &a, 0);
	simsched_submit(&s, &b, 0);
	simsched_submit(&s, &c, 0);
	simsched_advance(&s, 30 * MS);
	assert_int_equal(a.state, SIMSCHED_REQ_ACTIVE);
	simsched_cancel(&s, &b);		/* waiting */
	simsched_cancel(&s, &a);		/* active */
	assert_int_equal(s.kv_used, 0);
	assert_int_equal(s.nactive, 0);
	drain(&s, 30 * MS);
	assert_int_equal(c.state, SIMSCHED_REQ_DONE);
	assert_int_equal(c.tokens_ready, 3);
	assert_int_equal(b.tokens_ready, 0);
	simsched_free(&s);
}

static void
test_zero_itl_finishes_everything_at_once(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a, b;

	params(&p, SIMSCHED_CONTINUOUS);
	p.itl_ns = 0;
	p.prefill_rate = 0;
	simsched_init(&s, &p);
	req(&a, 10, 100000);
	req(&b, 10, 0);
	simsched_submit(&s, &a, 5);
	simsched_submit(&s, &b, 5);
	assert_int_equal(simsched_advance(&s, 5), SIMSCHED_IDLE);
	assert_int_equal(a.tokens_ready, 100000);
	assert_int_equal(a.done_ns, 5);
	assert_int_equal(b.state, SIMSCHED_REQ_DONE);
	assert_int_equal(b.first_token_ns, 0);
	simsched_free(&s);
}

static void
test_late_arrival_starts_when_it_arrives(void **state)
{
	struct simsched_params p;
	struct simsched s;
	struct simsched_req a;

	params(&p, SIMSCHED_CONTINUOUS);
	simsched_init(&s, &p);
	assert_int_equal(simsched_advance(&s, 0), SIMSCHED_IDLE);
	req(&a, 10, 2);
	simsched_submit(&s, &a, 1000 * MS);
	assert_int_equal(simsched_advance(&s, 1000 * MS), 1010 * MS);
	drain(&s, 1000 * MS);
	assert_int_equal(a.first_token_ns, 1010 * MS);
	assert_int_equal(a.done_ns, 1020 * MS);
	simsched_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_itl_grows_with_decoders),
		cmocka_unit_test(test_serial_serves_one_at_a_time),
		cmocka_unit_test(test_padded_batch_pays_for_the_longest_prompt),
		cmocka_unit_test(test_padded_batch_window_gathers_arrivals),
		cmocka_unit_test(test_continuous_packs_prefill_and_fills_free_slots),
		cmocka_unit_test(test_modes_scale_differently_with_concurrency),
		cmocka_unit_test(test_bounded_memory_queues_until_kv_frees),
		cmocka_unit_test(test_kv_grows_per_token_and_policies_give_back_or_retain),
		cmocka_unit_test(test_padded_kv_is_sized_to_the_padded_length),
		cmocka_unit_test(test_cancel_frees_the_slot_and_the_memory),
		cmocka_unit_test(test_zero_itl_finishes_everything_at_once),
		cmocka_unit_test(test_late_arrival_starts_when_it_arrives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
