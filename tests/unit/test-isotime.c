/*
 * test-isotime.c - the ISO 8601 forms `journal show --since` takes, the
 * UTC text they become, and the forms and values it refuses; and the
 * instants of the times its other callers read: warden's stored stamps
 * (cycle status and ETAs, the SiliconBench export) and a package index's
 * upload times (update's release dates).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isotime.h"

static void
expect_utc(const char *in, const char *want)
{
	char out[ISOTIME_LEN];

	if (isotime_to_utc(out, in) != 0)
		fail_msg("'%s' refused; want '%s'", in, want);
	if (strcmp(out, want) != 0)
		fail_msg("'%s' -> '%s'; want '%s'", in, out, want);
}

static void
expect_refused(const char *in)
{
	char out[ISOTIME_LEN];

	if (isotime_to_utc(out, in) == 0)
		fail_msg("'%s' accepted as '%s'; want refused", in, out);
}

static void
test_forms(void **state)
{
	(void)state;
	expect_utc("2026-12-01", "2026-12-01T00:00:00.000Z");
	expect_utc("2026-12-01T10:05", "2026-12-01T10:05:00.000Z");
	expect_utc("2026-12-01 10:05:30", "2026-12-01T10:05:30.000Z");
	expect_utc("2026-12-01t10:05:30z", "2026-12-01T10:05:30.000Z");
	expect_utc("2026-12-01T10:05:30.25Z", "2026-12-01T10:05:30.250Z");
	expect_utc("2026-12-01T10:05:30,5", "2026-12-01T10:05:30.500Z");
	expect_utc("2024-02-29T23:59:59.999", "2024-02-29T23:59:59.999Z");
}

static void
test_zones(void **state)
{
	(void)state;
	expect_utc("2026-12-01T10:00+02:00", "2026-12-01T08:00:00.000Z");
	expect_utc("2026-12-01T10:00+0230", "2026-12-01T07:30:00.000Z");
	expect_utc("2026-12-01T10:00-05", "2026-12-01T15:00:00.000Z");
	/* across a day, a month, a year, a leap day */
	expect_utc("2026-01-01T00:30+01:00", "2025-12-31T23:30:00.000Z");
	expect_utc("2024-02-28T23:00-02:00", "2024-02-29T01:00:00.000Z");
	expect_utc("2023-02-28T23:00-02:00", "2023-03-01T01:00:00.000Z");
	expect_utc("1969-12-31T23:00-02:00", "1970-01-01T01:00:00.000Z");
	expect_utc("1900-03-01T00:00+00:01", "1900-02-28T23:59:00.000Z");
}

static void
test_fraction_rounds_up(void **state)
{
	(void)state;
	/* "since" must never take in a time earlier than the one given */
	expect_utc("2026-12-01T10:00:00.0001Z", "2026-12-01T10:00:00.001Z");
	expect_utc("2026-12-01T10:00:00.5000000Z", "2026-12-01T10:00:00.500Z");
	expect_utc("2026-12-31T23:59:59.9991Z", "2027-01-01T00:00:00.000Z");
}

static void
test_refused(void **state)
{
	static const char *const bad[] = {
		"", "yesterday", "now", "2026", "2026-12", "2026-1-01",
		"20261201", "2026-13-01", "2026-00-10", "2026-02-29",
		"2026-04-31", "2026-12-01T24:00", "2026-12-01T10:60",
		"2026-12-01T10:00:60", "2026-12-01T10", "2026-12-01T",
		"2026-12-01T10:00:", "2026-12-01T10:00:00.", "2026-12-01Z",
		"2026-12-01T10:00 UTC", "2026-12-01T10:00+24:00",
		"2026-12-01T10:00+02:60", "2026-12-01T10:00+2",
		"2026-12-01T10:00ZZ", "12/01/2026", " 2026-12-01",
		"2026-12-01 ", "0000-01-01T00:00+01:00", NULL,
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		expect_refused(bad[i]);
}

static void
expect_ms(const char *in, int64_t want)
{
	int64_t got = 0;

	if (isotime_to_ms(&got, in) != 0)
		fail_msg("'%s' refused; want %lld ms", in, (long long)want);
	if (got != want)
		fail_msg("'%s' -> %lld ms; want %lld", in, (long long)got,
		    (long long)want);
}

/* The stamps warden stores: "...Z" with milliseconds or without. */
static void
test_stored_stamps(void **state)
{
	(void)state;
	expect_ms("2026-12-04T03:50:47.093Z", INT64_C(1796356247093));
	expect_ms("2026-12-04T03:50:47Z", INT64_C(1796356247000));
	expect_ms("1970-01-01T00:00:00.000Z", 0);
	expect_ms("2026-12-01T10:00+02:00", INT64_C(1796112000000));
}

/* A package index's upload times: microseconds with "Z", none with no
 * zone (UTC), or "+00:00". Digits past the millisecond are dropped, not
 * rounded up as --since does: a release is never dated after itself. */
static void
test_index_times(void **state)
{
	(void)state;
	expect_ms("2023-06-08T14:34:56.123456Z", INT64_C(1686234896123));
	expect_ms("2023-06-08T14:34:56.123999Z", INT64_C(1686234896123));
	expect_ms("2023-06-08T14:34:56.123", INT64_C(1686234896123));
	expect_ms("2023-06-08T14:34:56+00:00", INT64_C(1686234896000));
	expect_ms("2023-06-08T16:34:56.123+02:00", INT64_C(1686234896123));
	expect_ms("2026-12-31T23:59:59.9999999Z", INT64_C(1798761599999));
}

/* Seconds as the callers use them: the fraction is the milliseconds,
 * the same double strtod reads from ".093", and a span across midnight
 * and a year is exact to the millisecond. */
static void
test_seconds(void **state)
{
	double a, b;

	(void)state;
	assert_true(isotime_seconds("2026-12-04T03:50:47.093Z") ==
	    1796356247.0 + strtod(".093", NULL));
	assert_true(isotime_seconds("1970-01-01T00:00:01.5Z") == 1.5);
	a = isotime_seconds("2026-12-31T23:59:58.750Z");
	b = isotime_seconds("2027-01-01T00:00:01.250Z");
	assert_true(b - a == 2.5);
}

/* NULL, an empty finished time, text a strptime prefix match took in:
 * -1 from isotime_seconds and isotime_to_ms alike. */
static void
test_unparsable(void **state)
{
	static const char *const bad[] = {
		"", "2026-12-04T03:50:47.093Zjunk", "2026-12-04T03:50:47 UTC",
		"2026-12-04T3:50:47Z", "2026-12-04T03:50:47.Z", "20261204T035047Z",
		"2026-12-04T03:50:47.093+", NULL,
	};
	int64_t ms;
	size_t i;

	(void)state;
	assert_int_equal(isotime_to_ms(&ms, NULL), -1);
	assert_true(isotime_seconds(NULL) == -1);
	for (i = 0; bad[i] != NULL; i++) {
		if (isotime_to_ms(&ms, bad[i]) == 0)
			fail_msg("'%s' accepted as %lld ms", bad[i],
			    (long long)ms);
		if (isotime_seconds(bad[i]) != -1)
			fail_msg("'%s' has seconds", bad[i]);
	}
}

/* Spans as people read them: seconds, then minutes and seconds, then
 * hours and minutes; rounded; never negative. Estimates coarser. */
static void
test_span(void **state)
{
	char b[48];

	(void)state;
	isotime_span(b, sizeof(b), 14.2);
	assert_string_equal(b, "14 s");
	isotime_span(b, sizeof(b), 59.6);
	assert_string_equal(b, "1 min 0 s");
	isotime_span(b, sizeof(b), 185);
	assert_string_equal(b, "3 min 5 s");
	isotime_span(b, sizeof(b), 2 * 3600 + 5 * 60 + 59);
	assert_string_equal(b, "2 h 5 min");
	isotime_span(b, sizeof(b), -3);
	assert_string_equal(b, "0 s");
	/* an estimate is as coarse as it is */
	isotime_estimate(b, sizeof(b), 88.4);
	assert_string_equal(b, "88 s");
	isotime_estimate(b, sizeof(b), 9 * 60 + 20);
	assert_string_equal(b, "9 min");
	isotime_estimate(b, sizeof(b), 2.5 * 3600);
	assert_string_equal(b, "2.5 h");
	isotime_estimate(b, sizeof(b), -1);
	assert_string_equal(b, "0 s");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_zones),
		cmocka_unit_test(test_fraction_rounds_up),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_stored_stamps),
		cmocka_unit_test(test_index_times),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_unparsable),
		cmocka_unit_test(test_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
