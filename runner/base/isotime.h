/*
 * isotime.h - ISO 8601 dates and times: from the command line as the UTC
 * text warden stores, and any stored or fetched time as an instant. The
 * one parser of ISO 8601 in warden; and spans of time as people read
 * them. Pure string work; never prints.
 */
#ifndef WARDEN_ISOTIME_H
#define WARDEN_ISOTIME_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" and its NUL. */
#define ISOTIME_LEN 25

/* Examples of the forms accepted, for messages (warden(1) lists all). */
#define ISOTIME_EXAMPLES "2026-12-01, 2026-12-01T10:00 or " \
	"2026-12-01T10:00:30.5+02:00"

/*
 * Parse s, one of: YYYY-MM-DD; YYYY-MM-DD(T| )HH:MM[:SS[(.|,)FRACTION]]
 * followed by nothing (UTC), Z, or an offset +HH, +HH:MM or +HHMM (or -).
 * On success write the same instant as "YYYY-MM-DDTHH:MM:SS.mmmZ" (a
 * fraction past the millisecond rounds up) and return 0; -1 when s is not
 * one of those forms or a field is out of range.
 */
int isotime_to_utc(char out[ISOTIME_LEN], const char *s);

/*
 * Parse s, a form isotime_to_utc() takes (the times warden stores,
 * "2026-12-04T03:50:47.093Z", and a package index's, with microseconds
 * and "Z", "+00:00" or no zone, among them), into milliseconds since
 * 1970-01-01T00:00:00Z in *out; digits past the millisecond are dropped.
 * Return 0, or -1 when s is NULL or not one of those forms.
 */
int isotime_to_ms(int64_t *out, const char *s);

/* The instant of s (isotime_to_ms()) in seconds since the epoch, its
 * milliseconds as the fraction; -1 when s is NULL or does not parse. */
double isotime_seconds(const char *s);

/* A span of seconds as people read it, into out (n bytes): "42 s",
 * "3 min 5 s", "2 h 5 min"; rounded to the second, below 0 as 0. */
void isotime_span(char *out, size_t n, double seconds);
/* An estimate of seconds, as coarse as it is (the campaign's and the
 * cycle's ETA): "88 s" below 2 min, "9 min" below 2 h, else "2.5 h". */
void isotime_estimate(char *out, size_t n, double seconds);

#endif
