/*
 * test-memsample.c - the sampler sees system memory, finds every process
 * of an engine's tree (grandchildren included), sees its footprint grow,
 * keeps its schedule and peaks, and stops its thread promptly.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "memsample.h"
#include "spawn.h"
#include "util.h"

static void
test_system_memory_is_plausible(void **state)
{
	uint64_t used = 0, total = 0;

	assert_null(memsample_system(&used, &total));
	assert_true(total > 64ULL * 1024 * 1024);
	assert_true(used > 0);
	assert_true(used < total);
}

/* Wait until the tree of root has at least want processes. */
static unsigned
wait_tree(pid_t root, unsigned want, uint64_t *bytes)
{
	uint64_t deadline = mono_ns() + 60000000000ULL;	/* only a defect waits this long */
	unsigned n = 0;

	for (;;) {
		assert_null(memsample_tree(root, bytes, &n));
		if (n >= want || mono_ns() > deadline)
			return n;
		usleep(10000);
	}
}

static void
test_tree_counts_grandchildren(void **state)
{
	/* leader sh + subshell sh + its sleep, and the leader's sleep */
	char *argv[] = { "sh", "-c",
	    "(sh -c 'while :; do sleep 1; done') & while :; do sleep 1; done",
	    NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	uint64_t bytes = 0;
	unsigned n;

	o.argv = argv;
	assert_null(spawn_start(&p, &o));
	n = wait_tree(p.pid, 4, &bytes);
	assert_true(n >= 4);
	assert_true(bytes > 4 * 4096);
	assert_null(spawn_stop(&p, 1000));
	assert_null(memsample_tree(p.pid, &bytes, &n));
	assert_int_equal(n, 0);
	assert_int_equal(bytes, 0);
}

static void
test_tree_sees_a_footprint_grow(void **state)
{
	/* python allocates and touches 64 MiB after a moment */
	char *argv[] = { "python3", "-c",
	    "import time\n"
	    "time.sleep(0.3)\n"
	    "b = bytearray(64 * 1024 * 1024)\n"
	    "for i in range(0, len(b), 4096): b[i] = 1\n"
	    "time.sleep(30)\n", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	uint64_t before = 0, after = 0, deadline;
	unsigned n;

	o.argv = argv;
	assert_null(spawn_start(&p, &o));
	assert_null(memsample_tree(p.pid, &before, &n));
	/* at least python: where python3 is a version manager's shim
	 * (pyenv's, a bash script), the tree also holds what the shim runs
	 * before it execs python */
	assert_true(n >= 1);
	deadline = mono_ns() + 60000000000ULL;
	do {
		usleep(20000);
		assert_null(memsample_tree(p.pid, &after, &n));
	} while (after < before + 60ULL * 1024 * 1024 && mono_ns() < deadline);
	assert_true(after >= before + 60ULL * 1024 * 1024);
	assert_null(spawn_stop(&p, 1000));
}

/* The footprint of one process is its resident set, not its address
 * space: compare with /proc/self/statm (Linux). */
static void
test_tree_counts_resident_bytes(void **state)
{
#ifdef __linux__
	struct buf b = BUF_INIT;
	unsigned long size = 0, resident = 0;
	uint64_t bytes = 0, want;
	unsigned n;

	assert_null(memsample_tree(getpid(), &bytes, &n));
	assert_null(file_read(&b, "/proc/self/statm"));
	assert_int_equal(sscanf(b.data, "%lu %lu", &size, &resident), 2);
	want = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	assert_true(n >= 1);
	assert_true(bytes >= want / 2 && bytes <= want * 2);
	assert_true(bytes < (uint64_t)size * (uint64_t)sysconf(_SC_PAGESIZE));
	buf_free(&b);
#else
	skip();
#endif
}

static void
test_tick_keeps_schedule_and_peaks(void **state)
{
	struct memsampler s;
	uint64_t t0 = 1000000000ULL;

	memsampler_init(&s, getpid(), 100);
	assert_true(memsampler_tick(&s, t0));
	assert_false(memsampler_tick(&s, t0 + 50000000ULL));
	assert_true(memsampler_tick(&s, t0 + 100000000ULL));
	assert_false(memsampler_tick(&s, t0 + 150000000ULL));
	assert_true(memsampler_tick(&s, t0 + 250000000ULL));
	assert_int_equal(s.n, 3);
	assert_int_equal(s.samples[1].t_ns, t0 + 100000000ULL);
	assert_true(s.samples[0].engine_procs == 1);
	assert_true(s.peak_engine > 0);
	assert_true(s.peak_engine >= s.samples[0].engine_rss);
	assert_true(s.peak_system >= s.samples[2].system_used);
	assert_true(s.system_total > s.peak_system);
	memsampler_free(&s);
}

/*
 * The thread keeps its interval: samples are never closer than it (a
 * busy machine only makes them later). A second holds 50 intervals, so
 * only a sampler that stopped sampling shows fewer than the first, one
 * scheduled and the last sample.
 */
static void
test_thread_samples_at_its_interval(void **state)
{
	struct memsampler s;
	size_t i;

	memsampler_init(&s, getpid(), 20);
	assert_null(memsampler_start(&s));
	usleep(1000000);
	memsampler_stop(&s);
	assert_true(s.n >= 3);
	for (i = 1; i + 1 < s.n; i++)
		assert_true(s.samples[i].t_ns - s.samples[i - 1].t_ns >=
		    20000000ULL);
	memsampler_free(&s);
}

/* The stop wakes the thread rather than waiting out its interval: a
 * stop that waited would take the whole minute. */
static void
test_thread_stops_without_waiting_its_interval(void **state)
{
	struct memsampler s;
	uint64_t t0;

	memsampler_init(&s, getpid(), 60000);
	assert_null(memsampler_start(&s));
	usleep(20000);
	t0 = mono_ns();
	memsampler_stop(&s);
	assert_true(mono_ns() - t0 < 30000000000ULL);
	assert_true(s.n >= 1);
	memsampler_free(&s);
}

static void
test_default_interval_is_one_second(void **state)
{
	struct memsampler s;

	memsampler_init(&s, 1, 0);
	assert_int_equal(s.interval_ns, 1000000000ULL);
	memsampler_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_memory_is_plausible),
		cmocka_unit_test(test_tree_counts_grandchildren),
		cmocka_unit_test(test_tree_sees_a_footprint_grow),
		cmocka_unit_test(test_tree_counts_resident_bytes),
		cmocka_unit_test(test_tick_keeps_schedule_and_peaks),
		cmocka_unit_test(test_thread_samples_at_its_interval),
		cmocka_unit_test(test_thread_stops_without_waiting_its_interval),
		cmocka_unit_test(test_default_interval_is_one_second),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
