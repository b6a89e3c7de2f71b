/*
 * isotime.c - ISO 8601 dates and times given on the command line, turned
 * into the UTC text warden stores ("2026-12-01T10:00:00.000Z"), so a
 * filter compares with stored times as strings; and any time warden
 * stored or read from a package index as an instant, for durations and
 * ages. See isotime.h.
 *
 * It must never guess: a form it does not list, or a field out of range
 * (a 13th month, February 30th, 25 o'clock), is refused, not normalised.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "isotime.h"

/* n digits at *p as a number, advancing *p; -1 if they are not digits. */
static long
digits(const char **p, int n)
{
	long v = 0;
	int i;

	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

static int
leap(long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
month_days(long y, long m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
	    31 };

	return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), and back. */
static int64_t
days_from_civil(long y, long m, long d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, long *y, long *m, long *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (long)(doy - (153 * mp + 2) / 5 + 1);
	*m = (long)(mp < 10 ? mp + 3 : mp - 9);
	*y = (long)(yoe + era * 400 + (*m <= 2));
}

/* s as milliseconds since the epoch in *out, *extra set when a digit
 * past the millisecond is not 0; -1 when s is not a listed form. */
static int
parse(int64_t *out, int *extra, const char *s)
{
	const char *p = s;
	long y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0;
	int64_t ms = 0, scale = 100, t;
	int sign = 0;

	*extra = 0;
	if (s == NULL)
		return -1;
	if ((y = digits(&p, 4)) < 0 || *p++ != '-' ||
	    (mo = digits(&p, 2)) < 1 || mo > 12 || *p++ != '-' ||
	    (d = digits(&p, 2)) < 1 || d > month_days(y, mo))
		return -1;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if ((h = digits(&p, 2)) < 0 || h > 23 || *p++ != ':' ||
		    (mi = digits(&p, 2)) < 0 || mi > 59)
			return -1;
		if (*p == ':') {
			p++;
			if ((sec = digits(&p, 2)) < 0 || sec > 59)
				return -1;
			if (*p == '.' || *p == ',') {
				if (p[1] < '0' || p[1] > '9')
					return -1;
				for (p++; *p >= '0' && *p <= '9'; p++) {
					if (scale > 0)
						ms += (*p - '0') * scale;
					else if (*p != '0')
						*extra = 1;
					scale /= 10;
				}
			}
		}
		if (*p == 'Z' || *p == 'z')
			p++;
		else if (*p == '+' || *p == '-') {
			sign = *p++ == '+' ? 1 : -1;
			if ((oh = digits(&p, 2)) < 0 || oh > 23)
				return -1;
			if (*p == ':')
				p++;
			if (*p != '\0' && ((om = digits(&p, 2)) < 0 || om > 59))
				return -1;
		}
	}
	if (*p != '\0')
		return -1;
	t = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec;
	t = t * 1000 + ms;
	*out = t - (int64_t)sign * (oh * 60 + om) * 60 * 1000;
	return 0;
}

int
isotime_to_ms(int64_t *out, const char *s)
{
	int extra;

	return parse(out, &extra, s);
}

double
isotime_seconds(const char *s)
{
	int64_t t, ms;

	if (isotime_to_ms(&t, s) != 0)
		return -1;
	ms = ((t % 1000) + 1000) % 1000;
	/* whole seconds plus the fraction, as strtod reads ".093" */
	return (double)((t - ms) / 1000) + (double)ms / 1000.0;
}

int
isotime_to_utc(char out[ISOTIME_LEN], const char *s)
{
	long y, mo, d;
	int64_t ms, t;
	int extra;
	char text[96];

	if (parse(&t, &extra, s) != 0)
		return -1;
	/* Digits past the millisecond round up: "since" must not take in
	 * a stored time that is earlier than the one given. */
	t += extra;
	ms = ((t % 1000) + 1000) % 1000;
	t = (t - ms) / 1000;
	civil_from_days((t >= 0 ? t : t - 86399) / 86400, &y, &mo, &d);
	t = ((t % 86400) + 86400) % 86400;
	if (y < 0 || y > 9999)
		return -1;
	snprintf(text, sizeof(text), "%04ld-%02ld-%02ldT%02ld:%02ld:%02ld.%03ldZ",
	    y, mo, d, (long)(t / 3600), (long)(t / 60 % 60), (long)(t % 60),
	    (long)ms);
	if (strlen(text) != ISOTIME_LEN - 1)
		return -1;
	memcpy(out, text, ISOTIME_LEN);
	return 0;
}

void
isotime_span(char *out, size_t n, double seconds)
{
	unsigned long long s = seconds > 0 ? (unsigned long long)(seconds +
	    0.5) : 0;

	if (s >= 3600)
		snprintf(out, n, "%llu h %llu min", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(out, n, "%llu min %llu s", s / 60, s % 60);
	else
		snprintf(out, n, "%llu s", s);
}

void
isotime_estimate(char *out, size_t n, double seconds)
{
	double s = seconds > 0 ? seconds : 0;

	if (s < 120)
		snprintf(out, n, "%.0f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.0f min", s / 60);
	else
		snprintf(out, n, "%.1f h", s / 3600);
}
